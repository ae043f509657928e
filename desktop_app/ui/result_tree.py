"""The result list: ranked hits (or files with their hits), badges saying why each is there, and hit-by-hit
keyboard movement."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QKeyEvent, QPainter
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTreeView,
    QWidget,
)

from ..search.results import SearchResponse, SearchResult
from .result_model import COL_LOCATION, COL_MATCH, COL_SCORE, EVIDENCE_ROLE, RESULT_ROLE, ResultModel

BADGE_COLORS = {
    "name": ("#ede9fe", "#5b21b6"),
    "words": ("#fef3c7", "#92400e"),
    "meaning": ("#dbeafe", "#1e40af"),
    "text": ("#e5e7eb", "#374151"),
}
PAGE_STEP = 10  # hits moved by PageUp/PageDown from the search bar
BADGE_PAD, BADGE_GAP = 12, 3  # a pill's width beyond its text, and the space between pills


class _BadgeDelegate(QStyledItemDelegate):
    """Draws why a row is there (name, words, meaning, text) as coloured pills, strongest first."""

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        badges = index.data(EVIDENCE_ROLE)
        if not badges:
            super().paint(painter, option, index)
            return
        # Selection background first, so the badges sit on the row highlight like the other columns.
        self.initStyleOption(option, index)
        option.text = ""
        widget = option.widget
        style = widget.style() if widget else None
        if style:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, option, painter, widget)
        metrics = option.fontMetrics
        height = metrics.height() + 2
        left = option.rect.left() + 4
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        for text in badges:
            fill, ink = BADGE_COLORS.get(text, BADGE_COLORS["text"])
            width = metrics.horizontalAdvance(text) + BADGE_PAD
            rect = QRectF(left, option.rect.center().y() - height / 2 + 1, width, height)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor(fill))
            painter.drawRoundedRect(rect, height / 2, height / 2)
            painter.setPen(QColor(ink))
            painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)
            left += width + BADGE_GAP
        painter.restore()


class ResultTree(QTreeView):
    result_changed = Signal(object)  # the SearchResult now current, or None
    result_activated = Signal(object)  # Enter on a hit: show it in the preview
    open_requested = Signal(object)  # double click on a hit: open it in the editor

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.results = ResultModel()
        self.setModel(self.results)
        self.setUniformRowHeights(True)
        self.setAlternatingRowColors(False)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setExpandsOnDoubleClick(False)
        self.setItemDelegateForColumn(COL_MATCH, _BadgeDelegate(self))
        header = self.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(COL_LOCATION, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(COL_SCORE, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(COL_MATCH, QHeaderView.ResizeMode.Fixed)
        header.resizeSection(COL_MATCH, self._badges_width())
        self.selectionModel().currentRowChanged.connect(self._on_current_changed)
        self.doubleClicked.connect(self._on_double_clicked)

    def _badges_width(self) -> int:
        """Room for the most a hybrid row shows (name, words and meaning) in this font: a fixed 150 px cut the
        third badge off ("meanin"), seen in the before/after screenshots of issue 14."""
        metrics = self.fontMetrics()
        pills = [metrics.horizontalAdvance(text) + BADGE_PAD for text in ("name", "words", "meaning")]
        return 4 + sum(pills) + BADGE_GAP * len(pills) + 4

    # --- content --------------------------------------------------------------------------------

    def show_response(self, response: SearchResponse, grouped: bool = False) -> None:
        self.setUpdatesEnabled(False)
        try:
            self.results.show_response(response, grouped)
            for row in range(self.results.rowCount()):
                index = self.results.index(row, 0)
                if self.results.hasChildren(index):  # a file row: its name across the row, its hits below
                    self.setFirstColumnSpanned(row, QModelIndex(), True)
                    self.expand(index)
        finally:
            self.setUpdatesEnabled(True)

    def clear_results(self) -> None:
        self.results.show_response(SearchResponse(query="", mode=""))
        self.result_changed.emit(None)

    @property
    def hit_count(self) -> int:
        return len(self.results.hits)

    def current_result(self) -> SearchResult | None:
        return self._result_at(self.currentIndex())

    def current_hit_position(self) -> int:
        """Position of the current hit in display order, or -1 (none, or a file row)."""
        result = self.current_result()
        return next((i for i, hit in enumerate(self.results.hits) if hit is result), -1)

    # --- movement -------------------------------------------------------------------------------

    def select_hit(self, position: int) -> None:
        """Make hit number `position` (display order, clamped) current and scroll to it."""
        if not self.results.hits:
            return
        position = max(0, min(len(self.results.hits) - 1, position))
        index = self._hit_index(position)
        self.setCurrentIndex(index)
        self.scrollTo(index)

    def move_hits(self, step: int, wrap: bool = False) -> None:
        """Move the current hit by `step` hits; from no current hit, the first step lands on the first hit."""
        count = len(self.results.hits)
        if not count:
            return
        pos = self.current_hit_position()
        if pos < 0:
            target = 0 if step > 0 else count - 1
        elif wrap:
            target = (pos + step) % count
        else:
            target = pos + step
        self.select_hit(target)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt override)
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and event.modifiers() in (
            Qt.KeyboardModifier.NoModifier,
            Qt.KeyboardModifier.KeypadModifier,
        ):
            result = self.current_result()
            if result is not None:
                self.result_activated.emit(result)
                return
        super().keyPressEvent(event)

    # --- plumbing -------------------------------------------------------------------------------

    def _hit_index(self, position: int) -> QModelIndex:
        target = self.results.hits[position]
        for row in range(self.results.rowCount()):
            item = self.results.item(row, 0)
            if item.data(RESULT_ROLE) is target:  # a row of the ranked list
                return item.index()
            for child in range(item.rowCount()):
                if item.child(child, 0).data(RESULT_ROLE) is target:
                    return item.child(child, 0).index()
        return QModelIndex()

    @staticmethod
    def _result_at(index: QModelIndex) -> SearchResult | None:
        if not index.isValid():
            return None
        return index.siblingAtColumn(COL_LOCATION).data(RESULT_ROLE)

    def _on_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        result = self._result_at(current)
        if result is None and current.isValid() and self.results.hasChildren(current.siblingAtColumn(0)):
            # A file row previews the file's first hit.
            result = self._result_at(self.results.index(0, 0, current.siblingAtColumn(0)))
        self.result_changed.emit(result)

    def _on_double_clicked(self, index: QModelIndex) -> None:
        result = self._result_at(index)
        if result is not None:
            self.open_requested.emit(result)
