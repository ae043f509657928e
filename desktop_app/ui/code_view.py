"""A read-only code view: real line numbers in a gutter, Pygments colours, and the hit's lines marked."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QPointF, QRect, QSize, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QResizeEvent,
    QTextCursor,
    QTextFormat,
)
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QWidget

from .highlighting import Run, TokenFormats, insert_runs
from .sticky_lines import MAX_PINNED, Header, pinned

HIT_BACKGROUND = QColor("#fff3b8")
MATCH_BACKGROUND = QColor("#ffc94d")  # a text-mode match, on top of its line's HIT_BACKGROUND
HIT_MARKER = QColor("#e0a800")
GUTTER_BACKGROUND = QColor("#f3f4f6")
GUTTER_TEXT = QColor("#9ca3af")
GUTTER_HIT_TEXT = QColor("#7a5a00")
STICKY_EDGE = QColor("#d1d5db")  # the line under the pinned signatures


class CodeView(QPlainTextEdit):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setReadOnly(True)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        # Mouse selection only: with keyboard selection Qt draws a text cursor in the read-only view.
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setStyleHint(QFont.StyleHint.Monospace)
        self.setFont(font)
        self.setTabStopDistance(4 * self.fontMetrics().horizontalAdvance(" "))
        self._formats = TokenFormats()
        self.setStyleSheet(f"QPlainTextEdit {{ background: {self._formats.background.name()}; border: none; }}")
        self.first_line = 1
        self.hit_lines = (0, -1)  # inclusive range of file line numbers to mark
        self.matches: list[tuple[int, int, int]] = []  # (file line, start column, end column) to highlight
        self.lines_above = 3  # lines shown above the hit when the view scrolls to it
        self.headers: list[Header] = []  # definitions' signature lines, pinned while the view is inside them
        self.set_wrapping(False)
        self._gutter = _Gutter(self)
        self.sticky = _Sticky(self)
        self.blockCountChanged.connect(self._fit_gutter)
        self.updateRequest.connect(self._scroll_gutter)
        self.verticalScrollBar().valueChanged.connect(self._pin)
        self._fit_gutter()

    # --- content --------------------------------------------------------------------------------

    def show_code(
        self,
        runs: list[Run],
        first_line: int,
        hit_start: int,
        hit_end: int,
        matches: Sequence[tuple[int, int, int]] = (),
        headers: Sequence[Header] = (),
    ) -> None:
        """Show lexed text (highlighting.lex_runs) whose first line is file line `first_line`, marking lines
        hit_start..hit_end and the `matches` (file line, start column, end column) within them; the `headers`
        (sticky_lines.definition_headers) are pinned above the code while the view is inside their definitions."""
        self.first_line = first_line
        self.hit_lines = (hit_start, hit_end)
        self.matches = list(matches)
        self.headers = list(headers)
        doc = self.document()
        doc.clear()
        cursor = QTextCursor(doc)
        cursor.beginEditBlock()
        insert_runs(cursor, runs, self._formats)
        cursor.endEditBlock()
        self._mark_hits()
        self._fit_gutter()
        self._reveal_hit()

    def clear_code(self) -> None:
        """Nothing shown (the preview says why in its placeholder)."""
        self.first_line, self.hit_lines, self.matches, self.headers = 1, (0, -1), [], []
        self.clear()
        self.setExtraSelections([])
        self._fit_gutter()
        self._pin()

    def _mark_hits(self) -> None:
        selections = []
        doc = self.document()
        start, end = self.hit_lines
        for line in range(max(start, self.first_line), end + 1):
            block = doc.findBlockByNumber(line - self.first_line)
            if not block.isValid():
                break
            sel = QTextEdit.ExtraSelection()
            sel.format.setBackground(HIT_BACKGROUND)
            sel.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            sel.cursor = QTextCursor(block)
            selections.append(sel)
        for line, start_col, end_col in self.matches:
            block = doc.findBlockByNumber(line - self.first_line)
            if not block.isValid() or line < self.first_line:
                continue
            sel = QTextEdit.ExtraSelection()
            sel.format.setBackground(MATCH_BACKGROUND)
            sel.cursor = QTextCursor(block)
            sel.cursor.setPosition(block.position() + min(start_col, block.length() - 1))
            sel.cursor.setPosition(block.position() + min(end_col, block.length() - 1), QTextCursor.MoveMode.KeepAnchor)
            selections.append(sel)
        self.setExtraSelections(selections)

    def _reveal_hit(self) -> None:
        """Scroll so the hit starts `lines_above` lines below the top (as far as the file allows), with the
        signature of the definition it is in on screen: scrolled into view when it is less than half a view
        above the hit, else pinned above the code (a window deep in a long function opened with its `def` line
        off screen, issue 32 item 8)."""
        hit = self.hit_lines[0]
        block = self.document().findBlockByNumber(max(0, hit - self.first_line))
        if not block.isValid():
            self._pin()
            return
        self.setTextCursor(QTextCursor(block))
        top = hit - self.lines_above
        own = [h for h in self.headers if h.line < top and hit <= h.end]  # outermost first
        if own and hit - own[-1].line < self.visible_rows() // 2:
            top = own[-1].line - min(len(own) - 1, MAX_PINNED - 1)  # just under its outer definitions' pins
        else:
            # Pinned lines cover the first lines of the view: never the hit itself.
            top = hit - max(self.lines_above, len(pinned(self.headers, top)))
        self.verticalScrollBar().setValue(max(0, top - self.first_line))
        self._pin()

    def code_background(self) -> QColor:
        return self._formats.background

    def visible_rows(self) -> int:
        return max(1, self.viewport().height() // max(1, self.fontMetrics().height()))

    # --- pinned signatures ----------------------------------------------------------------------

    def top_line(self) -> int:
        """The file line at the top of the view."""
        return self.first_line + self.firstVisibleBlock().blockNumber()

    def pinned_lines(self) -> list[int]:
        """The file lines of the signatures pinned above the code now."""
        return [h.line for h in self.sticky.headers]

    def _pin(self, *_: object) -> None:
        self.sticky.show_headers(pinned(self.headers, self.top_line()) if self.headers else [])

    def scroll_to_line(self, line: int) -> None:
        """Put file line `line` at the top of the view (a click on a pinned signature)."""
        self.verticalScrollBar().setValue(max(0, line - self.first_line))

    def set_wrapping(self, wrap: bool) -> None:
        """Long lines wrap at the view's width, or scroll sideways (the default, as in editors)."""
        mode = QPlainTextEdit.LineWrapMode.WidgetWidth if wrap else QPlainTextEdit.LineWrapMode.NoWrap
        self.setLineWrapMode(mode)

    # --- gutter ---------------------------------------------------------------------------------

    def gutter_width(self) -> int:
        digits = len(str(self.first_line + max(1, self.blockCount())))
        return 18 + self.fontMetrics().horizontalAdvance("9") * max(3, digits)

    def _fit_gutter(self, *_: object) -> None:
        self.setViewportMargins(self.gutter_width(), 0, 0, 0)

    def _scroll_gutter(self, rect: QRect, dy: int) -> None:
        if dy:
            self._gutter.scroll(0, dy)
        else:
            self._gutter.update(0, rect.y(), self._gutter.width(), rect.height())

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt override)
        super().resizeEvent(event)
        cr = self.contentsRect()
        self._gutter.setGeometry(QRect(cr.left(), cr.top(), self.gutter_width(), cr.height()))
        self.sticky.fit()

    def paint_gutter(self, event: QPaintEvent) -> None:
        painter = QPainter(self._gutter)
        painter.fillRect(event.rect(), GUTTER_BACKGROUND)
        painter.setFont(self.font())
        width = self._gutter.width()
        block = self.firstVisibleBlock()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        line_height = self.fontMetrics().height()
        start, end = self.hit_lines
        while block.isValid() and top <= event.rect().bottom():
            bottom = top + round(self.blockBoundingRect(block).height())
            if block.isVisible() and bottom >= event.rect().top():
                line = self.first_line + block.blockNumber()
                hit = start <= line <= end
                if hit:
                    painter.fillRect(0, top, 3, bottom - top, HIT_MARKER)
                painter.setPen(GUTTER_HIT_TEXT if hit else GUTTER_TEXT)
                painter.drawText(0, top, width - 8, line_height, Qt.AlignmentFlag.AlignRight, str(line))
            block = block.next()
            top = bottom
        painter.end()


class _Gutter(QWidget):
    def __init__(self, view: CodeView):
        super().__init__(view)
        self._view = view

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        return QSize(self._view.gutter_width(), 0)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt override)
        self._view.paint_gutter(event)


class _Sticky(QWidget):
    """The pinned signatures: each drawn as the view draws its line (colours, line number in the gutter),
    over the first lines of the view; a click scrolls to that definition."""

    def __init__(self, view: CodeView):
        super().__init__(view)
        self._view = view
        self.headers: list[Header] = []
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.hide()

    def show_headers(self, headers: list[Header]) -> None:
        if headers == self.headers and self.isVisible() == bool(headers):
            return
        self.headers = headers
        self.setToolTip("\n".join(f"Line {h.line}: click to scroll to it" for h in headers))
        self.fit()
        self.setVisible(bool(headers))
        self.update()

    def fit(self) -> None:
        cr = self._view.contentsRect()
        rows = len(self.headers)
        self.setGeometry(QRect(cr.left(), cr.top(), cr.width(), rows * self._view.fontMetrics().height() + 1))
        self.raise_()

    def paintEvent(self, _event: QPaintEvent) -> None:  # noqa: N802 (Qt override)
        view = self._view
        painter = QPainter(self)
        painter.fillRect(self.rect(), view.code_background())
        gutter = view.gutter_width()
        painter.fillRect(0, 0, gutter, self.height(), GUTTER_BACKGROUND)
        painter.setFont(view.font())
        line_height = view.fontMetrics().height()
        doc = view.document()
        x_offset = gutter + view.contentOffset().x() + doc.documentMargin()
        for row, header in enumerate(self.headers):
            y = row * line_height
            painter.setPen(GUTTER_TEXT)
            painter.drawText(0, y, gutter - 8, line_height, Qt.AlignmentFlag.AlignRight, str(header.line))
            block = doc.findBlockByNumber(header.line - view.first_line)
            if block.isValid():
                # A line far above the view has not been laid out yet (QPlainTextEdit lays out lazily): now it is.
                doc.documentLayout().blockBoundingRect(block)
            layout = block.layout() if block.isValid() else None
            if layout is not None and layout.lineCount():
                painter.save()
                painter.setClipRect(gutter, y, self.width() - gutter, line_height)
                layout.draw(painter, QPointF(x_offset, y - layout.lineAt(0).y()))
                painter.restore()
        painter.setPen(STICKY_EDGE)
        painter.drawLine(0, self.height() - 1, self.width(), self.height() - 1)
        painter.end()

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 (Qt override)
        row = int(event.position().y()) // max(1, self._view.fontMetrics().height())
        if 0 <= row < len(self.headers):
            # The line goes just under the pinned lines of the definitions it is in, which stay.
            self._view.scroll_to_line(self.headers[row].line - row)
