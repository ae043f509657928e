"""Search filters: the project's languages and path globs, in a bar under the search field."""

from __future__ import annotations

import dataclasses

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QToolButton, QWidget

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


class FilterBar(QWidget):
    """The filters as a bar under the search field, applied as they change (no dialog to confirm): the open
    project's own languages, with how many files each has, and path patterns."""

    changed = Signal(object)  # the SearchFilters now asked for

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._filters = SearchFilters()
        self._buttons: dict[str, QToolButton] = {}
        self._languages = QHBoxLayout()
        self._languages.setSpacing(2)
        self.globs = QLineEdit()
        self.globs.setPlaceholderText("paths: src/**  *.py  !vendor/  (gitignore patterns; Enter applies)")
        self.globs.setClearButtonEnabled(True)
        self.globs.editingFinished.connect(self._emit)
        self.clear = QPushButton("Clear")
        self.clear.setToolTip("Drop every filter")
        self.clear.clicked.connect(lambda: self.set_filters(SearchFilters(), emit=True))
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 2)
        self.label = QLabel("Languages:")
        layout.addWidget(self.label)
        layout.addLayout(self._languages)
        layout.addWidget(self.globs, 1)
        layout.addWidget(self.clear)

    def set_languages(self, counts: list[tuple[str, int]]) -> None:
        """The project's languages (most files first) as toggles; those filtered on stay, even if absent."""
        for button in self._buttons.values():
            self._languages.removeWidget(button)
            button.deleteLater()
        self._buttons.clear()
        known = dict(counts)
        for language in [
            *(lang for lang, _ in counts),
            *(lang for lang in self._filters.languages if lang not in known),
        ]:
            button = QToolButton()
            button.setText(f"{language} {known[language]}" if language in known else language)
            button.setCheckable(True)
            button.setChecked(language in self._filters.languages)
            button.setToolTip(f"Only {language} (several: any of them)")
            button.toggled.connect(lambda _on: self._emit())
            self._buttons[language] = button
            self._languages.addWidget(button)
        self.label.setVisible(bool(self._buttons))

    def language_counts(self) -> dict[str, int]:
        """The languages offered, with the file counts their toggles show."""
        return {lang: int(b.text().rpartition(" ")[2]) for lang, b in self._buttons.items() if b.text() != lang}

    def set_filters(self, filters: SearchFilters, emit: bool = False) -> None:
        """Show `filters` (without telling anyone, unless `emit`)."""
        self._filters = filters
        for language, button in self._buttons.items():
            button.blockSignals(True)
            button.setChecked(language in filters.languages)
            button.blockSignals(False)
        self.globs.setText(" ".join(filters.globs))
        if emit:
            self.changed.emit(filters)

    def _emit(self) -> None:
        chosen = tuple(lang for lang, button in self._buttons.items() if button.isChecked())
        filters = dataclasses.replace(self._filters, languages=chosen, globs=parse_globs(self.globs.text()))
        if filters != self._filters:
            self._filters = filters
            self.changed.emit(filters)
