"""A one-line banner under the search bar for notices, partial results and errors."""

from __future__ import annotations

from typing import Literal

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

_STYLES = {
    "info": "background: #eff6ff; color: #1e3a8a; border: 1px solid #bfdbfe;",
    "warning": "background: #fffbeb; color: #78350f; border: 1px solid #fde68a;",
    "error": "background: #fef2f2; color: #7f1d1d; border: 1px solid #fecaca;",
}

# Who put a notice up: "search" for a search's own notes (partial results, exact matching, a failure), which
# its next answer replaces; "window" for the rest (a cancelled index run, a folder gone), which outlives the
# searches that re-run by themselves when the index changes and goes when the user types or a later run ends.
Owner = Literal["", "search", "window"]


class NoticeBanner(QLabel):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.kind = ""
        self.owner: Owner = ""
        self.hide()

    def show_notice(self, text: str, kind: str = "info", owner: Owner = "window") -> None:
        self.kind = kind
        self.owner = owner
        self.setStyleSheet(f"QLabel {{ {_STYLES[kind]} border-radius: 4px; padding: 4px 8px; }}")
        self.setText(text)
        self.show()

    def clear_notice(self) -> None:
        self.kind = ""
        self.owner = ""
        self.clear()
        self.hide()
