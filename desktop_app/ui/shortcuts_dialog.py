"""F1: every keyboard shortcut, listed from the window's own actions so the list cannot drift."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

# Keys handled by widgets rather than actions.
WIDGET_KEYS = (
    ("Up / Down", "Previous / next result (from the search bar too)"),
    ("PageUp / PageDown", "Move ten results"),
    ("Enter (search bar)", "Search now"),
    ("Enter (result list)", "Show the result in the preview"),
    ("Tab / Shift+Tab", "Move between search bar, results and preview"),
)


def shortcut_rows(actions: Iterable[QAction]) -> list[tuple[str, str]]:
    rows = []
    for action in actions:
        keys = [s.toString(QKeySequence.SequenceFormat.NativeText) for s in action.shortcuts()]
        if keys:
            rows.append((" or ".join(keys), action.text().replace("&", "").rstrip("…").rstrip(".")))
    return rows + list(WIDGET_KEYS)


class ShortcutsDialog(QDialog):
    def __init__(self, actions: Iterable[QAction], parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        rows = shortcut_rows(actions)
        table = QTableWidget(len(rows), 2)
        table.setHorizontalHeaderLabels(["Keys", "Action"])
        table.verticalHeader().hide()
        table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        for i, (keys, what) in enumerate(rows):
            table.setItem(i, 0, QTableWidgetItem(keys))
            table.setItem(i, 1, QTableWidgetItem(what))
        table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        table.horizontalHeader().setStretchLastSection(True)
        self.table = table
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(table)
        layout.addWidget(buttons)
        self.resize(520, 560)
