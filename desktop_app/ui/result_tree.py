"""The result list: ranked hits (or files with their hits), badges saying why each is there, and hit-by-hit
keyboard movement."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFontMetrics, QKeyEvent, QPainter, QPalette
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
from .result_model import (
    COL_LOCATION,
    COL_MATCH,
    COL_SCORE,
    EVIDENCE_ROLE,
    PLACE_ROLE,
    RESULT_ROLE,
    TITLE_ROLE,
    ResultModel,
)

BADGE_COLORS = {
    "name": ("#ede9fe", "#5b21b6"),
    "words": ("#fef3c7", "#92400e"),
    "meaning": ("#dbeafe", "#1e40af"),
    "text": ("#e5e7eb", "#374151"),
}
PAGE_STEP = 10  # hits moved by PageUp/PageDown from the search bar
BADGE_PAD, BADGE_GAP = 12, 3  # a pill's width beyond its text, and the space between pills
PLACE_COLOR = QColor("#6b7280")  # the second line of a ranked row: where the result is
TEXT_MARGIN = 4  # left of a row's text, as Qt's own item view draws it
LINE_GAP = 2  # between a ranked row's two lines, and above and below them


def _rank_indent(metrics: QFontMetrics, title: str) -> int:
    """The path line starts under the definition, not under its rank."""
    return metrics.horizontalAdvance(title[: title.index(".  ") + 3]) if ".  " in title else 0


def shown_lines(metrics: QFontMetrics, title: str, place: str, width: int) -> tuple[str, str]:
    """The two lines of a ranked row as drawn in `width` pixels: the definition cut at its end (its start says
    what it is), the path cut in its folders' middle so the file name and line numbers stay whole."""
    return metrics.elidedText(title, Qt.TextElideMode.ElideRight, width), _elide_path(
        metrics, place, max(0, width - _rank_indent(metrics, title))
    )


def _elide_path(metrics: QFontMetrics, place: str, width: int) -> str:
    folder, slash, name = place.rpartition("/")
    if metrics.horizontalAdvance(place) <= width or not slash:
        return metrics.elidedText(place, Qt.TextElideMode.ElideMiddle, width)
    room = width - metrics.horizontalAdvance(slash + name)
    if room < metrics.horizontalAdvance("a…b"):  # not even the file name fits whole
        return metrics.elidedText(place, Qt.TextElideMode.ElideMiddle, width)
    return metrics.elidedText(folder, Qt.TextElideMode.ElideMiddle, room) + slash + name


class _TwoLineDelegate(QStyledItemDelegate):
    """A row of the ranked list on two lines: "1.  fn Table._calculate_column_widths" over "rich/table.py:554–573".

    On one line the two shared a ~250 px column at the default window size, and almost every row was cut
    ("fn Table._calculate_column_wid…", issue 32 item 7); rows of the grouped and text views (one line each,
    their path in the file row above) are drawn as before."""

    def sizeHint(  # noqa: N802 (Qt override)
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        size = super().sizeHint(option, index)
        if index.data(TITLE_ROLE) is None:
            return size
        return QSize(size.width(), 2 * option.fontMetrics.height() + 3 * LINE_GAP)

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        title, place = index.data(TITLE_ROLE), index.data(PLACE_ROLE)
        if title is None:
            super().paint(painter, option, index)
            return
        _draw_row_background(self, painter, option, index)
        metrics = option.fontMetrics
        rect = option.rect.adjusted(TEXT_MARGIN, LINE_GAP, -TEXT_MARGIN, -LINE_GAP)
        first, second = shown_lines(metrics, title, place, rect.width())
        indent = _rank_indent(metrics, title)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        ink = option.palette.color(QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text)
        line = metrics.height()
        painter.save()
        painter.setPen(ink)
        painter.drawText(QRect(rect.left(), rect.top(), rect.width(), line), Qt.AlignmentFlag.AlignLeft, first)
        painter.setPen(ink if selected else PLACE_COLOR)
        painter.drawText(
            QRect(rect.left() + indent, rect.top() + line + LINE_GAP, rect.width() - indent, line),
            Qt.AlignmentFlag.AlignLeft,
            second,
        )
        painter.restore()


def _draw_row_background(
    delegate: QStyledItemDelegate,
    painter: QPainter,
    option: QStyleOptionViewItem,
    index: QModelIndex | QPersistentModelIndex,
) -> None:
    """The row's background and selection as the style draws them, without its text (the delegate draws that)."""
    delegate.initStyleOption(option, index)
    option.text = ""
    widget = option.widget
    style = widget.style() if widget else None
    if style:
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, option, painter, widget)


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
        _draw_row_background(self, painter, option, index)
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
        self.setItemDelegateForColumn(COL_LOCATION, _TwoLineDelegate(self))
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
            text = response.mode == "text"
            # A ranked list has no branches: the room Qt keeps for their arrows (20 px) goes to the text.
            self.setRootIsDecorated(grouped or text)
            # Text mode has no score, and every line is there for the one reason ("text"): columns that said
            # nothing, and took the width the matching lines need (issue 32 item 9).
            self.setColumnHidden(COL_SCORE, text)
            self.setColumnHidden(COL_MATCH, text)
            for row in range(self.results.rowCount()):
                index = self.results.index(row, 0)
                if self.results.hasChildren(index):  # a file row: its name across the row, its hits below
                    self.setFirstColumnSpanned(row, QModelIndex(), True)
                    self.expand(index)
        finally:
            self.setUpdatesEnabled(True)

    def clear_results(self) -> None:
        self.results.show_response(SearchResponse(query="", mode="hybrid"))
        self.result_changed.emit(None)

    def shown_row(self, row: int) -> tuple[str, str] | None:
        """The two lines a row of the ranked list shows at the column's width now (None: a one-line row)."""
        index = self.results.index(row, COL_LOCATION)
        title, place = index.data(TITLE_ROLE), index.data(PLACE_ROLE)
        if title is None:
            return None
        return shown_lines(self.fontMetrics(), title, place, self.visualRect(index).width() - 2 * TEXT_MARGIN)

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
