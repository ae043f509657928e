"""Status bar fields: the project (scope), its chunk count, the execution provider and the model."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QLabel, QStatusBar

from ..store.store import ScopeSummary


def provider_label(provider: str | None) -> str:
    """ "CPUExecutionProvider" -> "CPU"; None (model not loaded yet) -> "not loaded"."""
    if not provider:
        return "not loaded"
    return provider.removesuffix("ExecutionProvider") or provider


class EngineStatus:
    def __init__(self, bar: QStatusBar):
        self.scope = QLabel("No project")
        self.chunks = QLabel("")
        self.provider = QLabel(f"Provider: {provider_label(None)}")
        self.model = QLabel("Model: loading…")
        for label in (self.scope, self.chunks, self.provider, self.model):
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
            self.chunks.setText(f"{summary.chunks:,} chunks · {summary.files:,} files")

    def show_engine(self, model: str | None, provider: str | None, problem: str = "") -> None:
        self.provider.setText(f"Provider: {provider_label(provider)}")
        self.model.setText(f"Model: {model}" if model else "Model: unavailable")
        self.model.setToolTip(problem)
