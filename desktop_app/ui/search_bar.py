"""The search field: typing searches, and result navigation keys work without leaving it."""

from __future__ import annotations

from PySide6.QtCore import QStringListModel, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QCompleter, QLineEdit, QWidget

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
    history_requested = Signal()  # Up in an empty bar, or Alt+Down: list the recent searches

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setPlaceholderText("Search by meaning or by name…   (Ctrl+K; Up for recent searches)")
        self.setClearButtonEnabled(True)
        self.history = QStringListModel(self)
        self.history_popup = QCompleter(self.history, self)
        self.history_popup.setCompletionMode(QCompleter.CompletionMode.UnfilteredPopupCompletion)
        self.history_popup.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.history_popup.setWidget(self)
        self.history_popup.activated.connect(self._pick)

    def show_history(self, queries: list[str]) -> None:
        """Offer `queries` (newest first) in a list under the bar; picking one searches for it at once."""
        self.history.setStringList(queries)
        if queries:
            self.history_popup.setCompletionPrefix("")
            self.history_popup.complete()

    def _pick(self, query: str) -> None:
        self.setText(query)
        self.submitted.emit()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt override)
        key, mods = event.key(), event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        if (key == Qt.Key.Key_Up and mods == Qt.KeyboardModifier.NoModifier and not self.text()) or (
            key == Qt.Key.Key_Down and mods == Qt.KeyboardModifier.AltModifier
        ):
            self.history_requested.emit()
        elif key in _MOVES and mods == Qt.KeyboardModifier.NoModifier:
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
