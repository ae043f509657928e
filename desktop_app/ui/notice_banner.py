"""A one-line banner under the search bar for notices, partial results and errors."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

_STYLES = {
    "info": "background: #eff6ff; color: #1e3a8a; border: 1px solid #bfdbfe;",
    "warning": "background: #fffbeb; color: #78350f; border: 1px solid #fde68a;",
    "error": "background: #fef2f2; color: #7f1d1d; border: 1px solid #fecaca;",
}


class NoticeBanner(QLabel):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.kind = ""
        # Who put the notice up: "search" for a search's own notes (partial results, exact matching, a failure),
        # which the next answer replaces; anything else (a cancelled index, a folder gone) outlives the searches
        # that re-run by themselves when the index changes, and goes when the user types or acts again.
        self.owner = ""
        self.hide()

    def show_notice(self, text: str, kind: str = "info", owner: str = "window") -> None:
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
