"""A one-line banner under the search bar for notices, partial results and errors, with a button to close it."""

from __future__ import annotations

from typing import Literal

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QWidget

_STYLES = {  # (background, text, border)
    "info": ("#eff6ff", "#1e3a8a", "#bfdbfe"),
    "warning": ("#fffbeb", "#78350f", "#fde68a"),
    "error": ("#fef2f2", "#7f1d1d", "#fecaca"),
}

# Who put a notice up: "search" for a search's own notes (partial results, exact matching, a failure), which
# its next answer replaces; "window" for the rest (a cancelled index run, a folder gone), which outlives the
# searches that re-run by themselves when the index changes and goes when the user types or a later run ends.
Owner = Literal["", "search", "window"]


class NoticeBanner(QWidget):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)  # the kind's colours on the whole strip
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # An error stayed until the user typed, with no way to dismiss it (issue 32 item 9).
        self.close_button = QToolButton()
        self.close_button.setText("✕")
        self.close_button.setAutoRaise(True)
        self.close_button.setToolTip("Close this message")
        self.close_button.clicked.connect(self.clear_notice)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 2, 2, 2)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.close_button, 0, Qt.AlignmentFlag.AlignTop)
        self.kind = ""
        self.owner: Owner = ""
        self.hide()

    def text(self) -> str:
        return self.label.text()

    def show_notice(self, text: str, kind: str = "info", owner: Owner = "window") -> None:
        self.kind = kind
        self.owner = owner
        background, ink, border = _STYLES[kind]
        self.setStyleSheet(
            f"NoticeBanner {{ background: {background}; border: 1px solid {border}; border-radius: 4px; }}"
            f"QLabel, QToolButton {{ color: {ink}; background: transparent; border: none; }}"
        )
        self.label.setText(text)
        self.show()

    def clear_notice(self) -> None:
        self.kind = ""
        self.owner = ""
        self.label.clear()
        self.hide()
