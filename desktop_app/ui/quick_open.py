"""Quick Open (Ctrl+P: files by name) and Go to Symbol (Ctrl+T: definitions by name), as in VS Code.

A field and a list: typing asks the engine (fuzzy matching runs on the worker thread, never here), Up/Down
move in the list, Enter shows the choice in the preview, Ctrl+Enter opens it in the editor, Esc closes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QDialog, QLabel, QLineEdit, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

# (what to show, the choice itself) for each answer, best first.
Finder = Callable[[str], Awaitable[list[tuple[str, Any]]]]


class _Field(QLineEdit):
    moved = Signal(int)
    chosen = Signal(bool)  # True: open in the editor

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt override)
        key = event.key()
        if key in (Qt.Key.Key_Down, Qt.Key.Key_Up):
            self.moved.emit(1 if key == Qt.Key.Key_Down else -1)
        elif key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.chosen.emit(bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier))
        else:
            super().keyPressEvent(event)
            return
        event.accept()


class QuickOpen(QDialog):
    """`find` answers a query; `choose(choice, in_editor)` is called with the one picked."""

    answered = Signal()  # the list shows the answer to the latest query

    def __init__(
        self, title: str, hint: str, find: Finder, choose: Callable[[Any, bool], None], parent: QWidget | None = None
    ):
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setMinimumWidth(640)
        self._find = find
        self._choose = choose
        self._task: asyncio.Task | None = None
        self.field = _Field()
        self.field.setPlaceholderText(hint)
        self.list = QListWidget()
        self.list.itemActivated.connect(lambda item: self._pick(item, False))
        self.status = QLabel()
        self.status.setStyleSheet("color: #6b7280;")
        layout = QVBoxLayout(self)
        layout.addWidget(self.field)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.status)
        self.field.textChanged.connect(self._ask)
        self.field.moved.connect(self._move)
        self.field.chosen.connect(lambda in_editor: self._pick(self.list.currentItem(), in_editor))

    def _ask(self, text: str) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()  # a newer query supersedes it
        self._task = asyncio.ensure_future(self._answer(text))

    async def _answer(self, text: str) -> None:
        if not text.strip():
            self.list.clear()
            self.status.setText("")
            self.answered.emit()
            return
        try:
            found = await self._find(text)
        except Exception as exc:  # reported in the dialog, never left to close it
            self.status.setText(f"Cannot search: {exc}")
            return
        if text != self.field.text():
            return
        self.list.clear()
        for label, choice in found:
            item = QListWidgetItem(label)
            item.setData(Qt.ItemDataRole.UserRole, choice)
            self.list.addItem(item)
        if found:
            self.list.setCurrentRow(0)
        self.status.setText(f"{len(found)} found" if found else f"Nothing matches “{text}”.")
        self.answered.emit()

    def _move(self, step: int) -> None:
        if self.list.count():
            self.list.setCurrentRow(max(0, min(self.list.count() - 1, self.list.currentRow() + step)))

    def _pick(self, item: QListWidgetItem | None, in_editor: bool) -> None:
        if item is None:
            return
        self._choose(item.data(Qt.ItemDataRole.UserRole), in_editor)
        self.accept()
