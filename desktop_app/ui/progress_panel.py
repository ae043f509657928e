"""Live index progress in a strip under the results: a bar, a line of text and a Cancel button.

Not in the status bar: a status bar hides its widgets under every temporary message, and each search's
"N results in M ms" hid the bar and Cancel for the rest of a run (re-runs while indexing kept posting one).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QSizePolicy, QWidget

from ..indexing.progress import Progress
from ..store.rows import OthersClaims

PHASE_LABELS = {
    "analyzing": "Scanning files",
    "started": "Starting",
    "in_progress": "Indexing",
    "completed": "Indexed",
    "cancelled": "Cancelled",
}


_STAGE_LABELS = {"keyword": "keywords", "fast": "fast meaning", "full": "meaning"}
# What a step of stages 2 and 3 counts, and its unit per second.
_STEP_WORDS = {"names": ("symbol names", "names")}
# A re-embed (a newly chosen model) has one stage: every chunk's vector again.
_REEMBED_LABELS = {
    "analyzing": "Preparing to re-embed",
    "started": "Re-embedding",
    "in_progress": "Re-embedding",
    "completed": "Re-embedded",
    "cancelled": "Re-embedding cancelled",
}


def progress_text(p: Progress) -> str:
    """One line: phase, stage, then files and bytes (stage 1) or chunks (stage 3 first: symbol names) and their
    rate (stages 2 and 3), and the step's ETA, e.g.
    "Indexing repo (meaning) · 3,000/25,000 chunks · 61 chunks/s · about 6 min left"."""
    if p.task == "reembed":
        parts = [f"{_REEMBED_LABELS.get(p.phase, p.phase)} with {p.root}"]
    else:
        stage = "text index" if p.step == "text" else _STAGE_LABELS.get(p.stage, p.stage)
        parts = [f"{PHASE_LABELS.get(p.phase, p.phase)} {Path(p.root).name} ({stage})"]
        if p.publishing:  # stage 1 over the commit's files, before the checkout's own
            parts.append(f"team base to commit {p.publishing[:12]}")
    if p.phase == "analyzing" and p.task == "index":
        if p.files_found:
            parts.append(f"{p.files_found:,} files found")
    elif p.stage == "keyword":
        if p.files_total:
            parts.append(f"{p.files_done:,}/{p.files_total:,} files")
        if p.bytes_total:
            parts.append(f"{_size(p.bytes_done)} of {_size(p.bytes_total)}")
    elif p.step == "outlines":  # the chunks are done: the files' outlines are the last step
        parts.append(f"{p.outlines_done:,}/{p.outlines_total:,} file outlines")
    elif p.chunks_total:
        # Stage 3 embeds the symbol names first: counted as "chunks" of meaning, they ran to 827/880 while the
        # search coverage beside them said "meaning 0%" (it counts the chunks' own vectors, the next step).
        what, unit = _STEP_WORDS.get(p.step, ("chunks", "chunks"))
        parts.append(f"{p.chunks_embedded:,}/{p.chunks_total:,} {what}")
        if p.chunks_embedded:
            parts.append(f"{p.chunks_per_s:.0f} {unit}/s")
    eta = p.eta_s
    if p.awaiting is not None:
        parts.append(_awaiting_text(p.awaiting))
    elif p.phase == "in_progress" and eta:
        parts.append(f"about {_duration(eta)} left")
    return " · ".join(parts)


def _awaiting_text(others: OthersClaims) -> str:
    """e.g. "waiting for 456 chunks claimed by another indexer (its claims expire in 1 min 52 s)"."""
    whose = "another indexer (its" if others.indexers == 1 else f"{others.indexers} other indexers (their"
    expiry = _duration(others.expire_in_s)
    return f"waiting for {others.chunks:,} chunks claimed by {whose} claims expire in {expiry})"


def _size(n: int) -> str:
    if n < 1024 * 1024:
        return f"{n / 1024:.0f} KB"
    return f"{n / (1024 * 1024):.1f} MB"


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes} min {secs:02d} s" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"


class FittedLabel(QLabel):
    """A one-line label that shortens its text with an ellipsis to the room it has, the whole text in its
    tooltip: a long line was drawn under the Cancel button beside it ("300/561 chur")."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.full_text = ""
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setTextFormat(Qt.TextFormat.PlainText)

    def set_full_text(self, text: str) -> None:
        self.full_text = text
        self.setToolTip(text)
        self._fit()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt override)
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        self.setText(self.fontMetrics().elidedText(self.full_text, Qt.TextElideMode.ElideRight, self.width()))


class ProgressPanel(QWidget):
    cancel_requested = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.bar = QProgressBar()
        self.bar.setFixedWidth(160)
        self.bar.setTextVisible(False)
        self.label = FittedLabel()
        self.cancel = QPushButton("Cancel")
        self.cancel.setToolTip("Stop indexing; what is done so far stays searchable, and F5 goes on from there")
        self.cancel.clicked.connect(self.cancel_requested)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 0)
        layout.addWidget(self.bar)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.cancel)
        self.last: Progress | None = None
        self._cancelling = False
        self.hide()

    def show_progress(self, p: Progress) -> None:
        self.last = p
        self.label.set_full_text(progress_text(p) + (" · cancelling…" if self._cancelling else ""))
        done, total = p.measure()
        if p.phase == "analyzing" or not total:
            self.bar.setRange(0, 0)  # busy: totals are not known yet
        else:
            self.bar.setRange(0, 1000)
            self.bar.setValue(round(1000 * min(1.0, done / total)))
        self.show()

    def mark_cancelling(self) -> None:
        """Cancel was asked for; the run stops at its next batch boundary."""
        self._cancelling = True
        self.cancel.setEnabled(False)
        if self.last is not None:
            self.show_progress(self.last)

    def finish(self) -> None:
        self._cancelling = False
        self.cancel.setEnabled(True)
        self.last = None
        self.hide()
