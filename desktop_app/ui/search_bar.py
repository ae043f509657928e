"""The search field: typing searches, and result navigation keys work without leaving it."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QLineEdit, QWidget

from .result_tree import PAGE_STEP

# Keyed by int, as QKeyEvent.key() returns: Qt.Key is an IntEnum, so its members look up the same.
_MOVES: dict[int, int] = {
    Qt.Key.Key_Down: 1,
    Qt.Key.Key_Up: -1,
    Qt.Key.Key_PageDown: PAGE_STEP,
    Qt.Key.Key_PageUp: -PAGE_STEP,
}


class SearchBar(QLineEdit):
    submitted = Signal()  # Enter: search now
    move_requested = Signal(int)  # hits to move the current result by
    open_requested = Signal()  # Ctrl+Enter: open the current result in the editor
    clear_requested = Signal()  # Esc

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setPlaceholderText("Search by meaning or by name…   (Ctrl+K)")
        self.setClearButtonEnabled(True)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt override)
        key, mods = event.key(), event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        if key in _MOVES and mods == Qt.KeyboardModifier.NoModifier:
            self.move_requested.emit(_MOVES[key])
        elif key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if mods & Qt.KeyboardModifier.ControlModifier:
                self.open_requested.emit()
            else:
                self.submitted.emit()
        elif key == Qt.Key.Key_Escape and mods == Qt.KeyboardModifier.NoModifier:
            self.clear_requested.emit()
        else:
            super().keyPressEvent(event)
            return
        event.accept()
