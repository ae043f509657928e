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
        self.hide()

    def show_notice(self, text: str, kind: str = "info") -> None:
        self.kind = kind
        self.setStyleSheet(f"QLabel {{ {_STYLES[kind]} border-radius: 4px; padding: 4px 8px; }}")
        self.setText(text)
        self.show()

    def clear_notice(self) -> None:
        self.kind = ""
        self.clear()
        self.hide()
