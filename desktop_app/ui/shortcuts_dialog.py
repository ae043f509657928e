"""F1: every keyboard shortcut, listed from the window's own actions so the list cannot drift."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QFont, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
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
        # A standard key the platform leaves unbound (Quit on some) gives an empty text: no row for no key.
        keys = [k for k in (s.toString(QKeySequence.SequenceFormat.NativeText) for s in action.shortcuts()) if k]
        if keys:
            rows.append((" or ".join(keys), action.text().replace("&", "").rstrip("…").rstrip(".")))
    return rows + list(WIDGET_KEYS)


class ShortcutsDialog(QDialog):
    """A list to read, not a grid to fill in: no cell grid, no cell to select or edit, no focus frame; the keys
    in bold beside what they do (it was an editable-looking spreadsheet, issue 32 item 9)."""

    def __init__(self, actions: Iterable[QAction], parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        rows = shortcut_rows(actions)
        table = QTableWidget(len(rows), 2)
        table.setHorizontalHeaderLabels(["Keys", "Does"])
        table.verticalHeader().hide()
        table.setShowGrid(False)
        table.setAlternatingRowColors(True)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        table.setWordWrap(True)
        table.setStyleSheet("QTableWidget::item { padding: 2px 16px 2px 4px; }")  # the keys apart from what they do
        header = table.horizontalHeader()
        header.setSectionsClickable(False)
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        bold = QFont(table.font())
        bold.setBold(True)
        for i, (keys, what) in enumerate(rows):
            for column, text in ((0, keys), (1, what)):
                item = QTableWidgetItem(text)
                item.setFlags(Qt.ItemFlag.ItemIsEnabled)  # read only: neither editable nor selectable
                if column == 0:
                    item.setFont(bold)
                table.setItem(i, column, item)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        table.resizeRowsToContents()
        self.table = table
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(table)
        layout.addWidget(buttons)
        self.resize(640, 620)
