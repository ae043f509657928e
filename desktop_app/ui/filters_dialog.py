"""Search filters: languages and path globs."""

from __future__ import annotations

import dataclasses

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ..indexing.languages import LANGUAGES
from ..search.request import SearchFilters


def parse_globs(text: str) -> tuple[str, ...]:
    """Comma- or space-separated gitignore-style patterns."""
    return tuple(p for p in text.replace(",", " ").split() if p)


def describe(filters: SearchFilters) -> str:
    """Short summary for the filters button, e.g. "python, rust · src/**"; empty when nothing is set."""
    parts = []
    if filters.languages:
        langs = list(filters.languages)
        parts.append(", ".join(langs[:3]) + (f" +{len(langs) - 3}" if len(langs) > 3 else ""))
    if filters.globs:
        parts.append(" ".join(filters.globs))
    hidden = [name for name, on in (("tests", filters.hide_tests), ("docs", filters.hide_docs)) if on]
    if hidden:
        parts.append("no " + ", no ".join(hidden))
    return " · ".join(parts)


class FiltersDialog(QDialog):
    def __init__(self, filters: SearchFilters, parent: QWidget | None = None):
        super().__init__(parent)
        self._given = filters  # what the dialog does not show (hide tests/docs, the minimum score) is kept
        self.setWindowTitle("Search filters")
        self.languages = QListWidget()
        self.languages.setMinimumHeight(220)
        for name in sorted(LANGUAGES):
            item = QListWidgetItem(name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if name in filters.languages else Qt.CheckState.Unchecked)
            self.languages.addItem(item)
        self.globs = QLineEdit(" ".join(filters.globs))
        self.globs.setPlaceholderText("e.g. src/**  *.py  !tests/")
        hint = QLabel(
            "Languages: none checked means all. Paths: gitignore-style patterns, space separated; "
            "a result must match one."
        )
        hint.setWordWrap(True)
        reset = QPushButton("Clear filters")
        reset.clicked.connect(self._reset)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.addButton(reset, QDialogButtonBox.ButtonRole.ResetRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form = QFormLayout()
        form.addRow("&Languages", self.languages)
        form.addRow("&Paths", self.globs)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(hint)
        layout.addWidget(buttons)

    def filters(self) -> SearchFilters:
        checked = tuple(
            self.languages.item(i).text()
            for i in range(self.languages.count())
            if self.languages.item(i).checkState() == Qt.CheckState.Checked
        )
        return dataclasses.replace(self._given, languages=checked, globs=parse_globs(self.globs.text()))

    def _reset(self) -> None:
        for i in range(self.languages.count()):
            self.languages.item(i).setCheckState(Qt.CheckState.Unchecked)
        self.globs.clear()
