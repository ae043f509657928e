"""The preview: a header naming the file and lines, the code with context, and a "more context" button.

Lines are read by the engine's worker (with a check that the file still matches the index); a
newer preview request makes any read still in flight stale, so moving fast never shows old lines.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QStackedWidget, QVBoxLayout, QWidget

from ..bridge import EngineBridge
from ..worker import ops
from .code_view import CodeView
from .highlighting import Run, lex_runs
from .sticky_lines import Header, definition_headers

# The preview holds the hit's whole file, scrolled to the hit, up to this many lines on each side of it (a
# generated file of 100K lines would stall the window while its text is laid out; More context adds more).
PREVIEW_LINES = 3000
IDLE_MESSAGE = "Type to search. Results appear as you type; Up/Down moves through them."


@dataclass(frozen=True)
class PreviewTarget:
    """What to preview: lines of an indexed file (content hash for the freshness check)."""

    root: str
    path: str  # POSIX, relative to root
    sha256: str
    start_line: int  # the hit; a whole-file preview has end_line < start_line (nothing marked)
    end_line: int
    language: str
    title: str  # e.g. "L21–35  fn fetch_with_retry"
    snippet: str = ""  # the indexed text of the hit, shown when the file changed since indexing
    matches: tuple[tuple[int, int, int], ...] = ()  # text mode: (line, start column, end column) to highlight

    @property
    def abs_path(self) -> str:
        return f"{self.root.rstrip('/')}/{self.path}"


class PreviewPane(QWidget):
    def __init__(self, bridge: EngineBridge, context_lines: int, parent: QWidget | None = None):
        super().__init__(parent)
        self._bridge = bridge
        self.context_lines = context_lines
        self.target: PreviewTarget | None = None
        self.shown_lines: tuple[int, int] | None = None  # first and last file line on screen
        self.task: asyncio.Task | None = None  # the newest read
        self._extra = 0
        self._seq = 0
        self.header = QLabel()
        self.header.setTextFormat(Qt.TextFormat.PlainText)
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.header.setStyleSheet("font-weight: 600; padding: 4px 2px;")
        self.detail = QLabel()
        self.detail.setStyleSheet("color: #6b7280; padding: 4px 2px;")
        self.more = QPushButton("More context")
        self.more.setToolTip("Show more lines above and below (Ctrl+M)")
        self.more.setEnabled(False)
        self.more.clicked.connect(self.more_context)
        top = QHBoxLayout()
        top.setContentsMargins(6, 2, 6, 2)
        top.addWidget(self.header)
        top.addWidget(self.detail, 1)
        top.addWidget(self.more)
        self.code = CodeView()
        # Messages (the empty state, "No results", a file that changed) are said in a placeholder, not shown as
        # line 1 of code with a line number beside them (issue 32 item 9).
        self.placeholder = QLabel()
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setWordWrap(True)
        self.placeholder.setTextFormat(Qt.TextFormat.PlainText)
        self.placeholder.setContentsMargins(24, 24, 24, 24)
        self.placeholder.setStyleSheet(f"color: #6b7280; background: {self.code.code_background().name()};")
        self.stack = QStackedWidget()
        self.stack.addWidget(self.code)
        self.stack.addWidget(self.placeholder)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(top)
        layout.addWidget(self.stack, 1)
        self.show_message(IDLE_MESSAGE)

    # --- loading --------------------------------------------------------------------------------

    def preview(self, target: PreviewTarget | None) -> None:
        """Show `target` with the configured context (None: keep the screen, drop reads in flight)."""
        self._extra = 0
        self._seq += 1
        if target is not None:
            self._load(target)

    def more_context(self) -> None:
        if self.target is not None:
            self._extra += PREVIEW_LINES
            self._seq += 1
            self._load(self.target)

    def _load(self, target: PreviewTarget) -> None:
        context = PREVIEW_LINES + self._extra
        self.task = asyncio.ensure_future(self._read(self._seq, target, context))

    async def _read(self, seq: int, target: PreviewTarget, context: int) -> None:
        try:
            lines = await self._bridge.run(
                ops.read_lines(target.abs_path, target.sha256, target.start_line, target.end_line, context)
            )
        except Exception as exc:  # an unreadable file is a message in the preview, not a crash
            if seq == self._seq:
                self.show_message(f"Cannot read {target.path}: {exc}", target)
            return
        if seq != self._seq:
            return  # the user moved on; a newer preview is on its way
        if lines is not None:
            first, last, text, lead = lines
            note = ""
        elif target.snippet:
            first, last, text, lead = target.start_line, target.end_line, target.snippet, ""
            note = "changed on disk since it was indexed: showing the indexed text (F5 re-indexes)"
        else:
            self.show_message(
                f"{target.path} changed or disappeared since it was indexed; press F5 to re-index.", target
            )
            return
        # Pygments and tree-sitter on a thousand lines take tens of milliseconds: not on the UI thread.
        runs, headers = await asyncio.to_thread(_prepare, text, target, first, lead)
        if seq == self._seq:
            self.show_lines(target, first, last, runs, note, headers)

    # --- display --------------------------------------------------------------------------------

    def show_lines(
        self,
        target: PreviewTarget,
        first: int,
        last: int,
        runs: list[Run],
        note: str = "",
        headers: list[Header] | None = None,
    ) -> None:
        self.target, self.shown_lines = target, (first, last)
        self.header.setText(target.path)
        self.detail.setText(f"{target.title}   ·   {note or f'lines {first}–{last}'}")
        self.code.lines_above = self.context_lines
        self.stack.setCurrentWidget(self.code)
        self.code.show_code(runs, first, target.start_line, target.end_line, target.matches, headers or [])
        self.more.setEnabled(True)

    def show_message(self, message: str, target: PreviewTarget | None = None) -> None:
        """Show a message instead of code; reads still in flight will not replace it."""
        self._seq += 1
        self.target, self.shown_lines = target, None
        self.header.setText(target.path if target else "")
        self.detail.setText(target.title if target else "")
        self.code.clear_code()
        self.placeholder.setText(message)
        self.stack.setCurrentWidget(self.placeholder)
        self.more.setEnabled(False)


def _prepare(text: str, target: PreviewTarget, first: int, lead: str) -> tuple[list[Run], list[Header]]:
    """The coloured runs of `text` and the signature lines of its definitions, to pin while scrolling."""
    return lex_runs(text, target.language, lead), definition_headers(text, target.language, target.path, first)
