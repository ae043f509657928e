"""Status bar fields: the project (scope), its chunk count, the execution provider and the model."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QLabel, QStatusBar

from ..embedding.providers import shown_provider
from ..search.results import Coverage
from ..store.rows import ScopeSummary
from .team_text import own_changes


def coverage_text(coverage: Coverage) -> str:
    """e.g. "keyword 100% · meaning 40%": what the last search could draw on in its scopes."""
    shares = coverage.to_dict()
    text = f"keyword 100% · meaning {shares['full']:.0%}"
    if shares["full"] < 1 and shares["fast"] > 0:
        text += f" (fast {shares['fast']:.0%})"
    return text


def provider_label(provider: str | None) -> str:
    """ "CPUExecutionProvider" -> "the CPU", as the terminal says it; None (model not loaded yet) -> "not loaded"."""
    return shown_provider(provider) if provider else "not loaded"


class EngineStatus:
    def __init__(self, bar: QStatusBar):
        self.scope = QLabel("No project")
        self.chunks = QLabel("")
        self.coverage = QLabel("")
        self.coverage.setToolTip(
            "How much of the project each index stage covers: keywords and names at once, meaning once the model "
            "has embedded a chunk (until then its fast static vectors stand in)"
        )
        self.skipped = QLabel("")  # a "Skipped (N)" link after an index run that passed files over
        self.skipped.setToolTip("Files the last index run passed over, and why")
        # The model and where it runs share a label: the bar has room for a team index's server and base beside them.
        self.model = QLabel("Model: loading…")
        for label in (self.scope, self.chunks, self.coverage, self.skipped, self.model):
            label.setContentsMargins(6, 0, 6, 0)
            bar.addPermanentWidget(label)

    def show_scope(self, root: str | None, summary: ScopeSummary | None) -> None:
        if root is None:
            self.scope.setText("No project")
            self.scope.setToolTip("File → Open Folder… or drop a folder on the window")
            self.chunks.setText("")
            return
        self.scope.setText(f"Scope: {Path(root).name}")
        self.scope.setToolTip(root)
        if summary is None:
            self.chunks.setText("not indexed")
        else:
            self.chunks.setText(f"{summary.chunks:,} chunks · {summary.files:,} files{own_changes(summary)}")

    def show_skipped(self, count: int) -> None:
        self.skipped.setText(f'<a href="skipped">Skipped ({count:,})</a>' if count else "")

    def show_coverage(self, coverage: Coverage | None) -> None:
        self.coverage.setText(coverage_text(coverage) if coverage is not None and coverage.chunks else "")

    def show_engine(self, model: str | None, provider: str | None, problem: str = "") -> None:
        self.model.setText(f"Model: {model} on {provider_label(provider)}" if model else "Model: unavailable")
        self.model.setToolTip(problem or f"Runs on {provider_label(provider)}")
