"""A read-only code view: real line numbers in a gutter, Pygments colours, and the hit's lines marked."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontDatabase, QPainter, QPaintEvent, QResizeEvent, QTextCursor, QTextFormat
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QWidget

from .highlighting import Run, TokenFormats, insert_runs

HIT_BACKGROUND = QColor("#fff3b8")
MATCH_BACKGROUND = QColor("#ffc94d")  # a text-mode match, on top of its line's HIT_BACKGROUND
HIT_MARKER = QColor("#e0a800")
GUTTER_BACKGROUND = QColor("#f3f4f6")
GUTTER_TEXT = QColor("#9ca3af")
GUTTER_HIT_TEXT = QColor("#7a5a00")


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
        self.set_wrapping(False)
        self._gutter = _Gutter(self)
        self.blockCountChanged.connect(self._fit_gutter)
        self.updateRequest.connect(self._scroll_gutter)
        self._fit_gutter()

    # --- content --------------------------------------------------------------------------------

    def show_code(
        self,
        runs: list[Run],
        first_line: int,
        hit_start: int,
        hit_end: int,
        matches: Sequence[tuple[int, int, int]] = (),
    ) -> None:
        """Show lexed text (highlighting.lex_runs) whose first line is file line `first_line`, marking lines
        hit_start..hit_end and the `matches` (file line, start column, end column) within them."""
        self.first_line = first_line
        self.hit_lines = (hit_start, hit_end)
        self.matches = list(matches)
        doc = self.document()
        doc.clear()
        cursor = QTextCursor(doc)
        cursor.beginEditBlock()
        insert_runs(cursor, runs, self._formats)
        cursor.endEditBlock()
        self._mark_hits()
        self._fit_gutter()
        self._reveal_hit()

    def show_text(self, text: str) -> None:
        """Plain text without line numbers' meaning (messages, empty state)."""
        self.first_line, self.hit_lines, self.matches = 1, (0, -1), []
        self.setPlainText(text)
        self.setExtraSelections([])
        self._fit_gutter()

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
        """Scroll so the hit starts `lines_above` lines below the top (as far as the file allows)."""
        block = self.document().findBlockByNumber(max(0, self.hit_lines[0] - self.first_line))
        if block.isValid():
            self.setTextCursor(QTextCursor(block))
            self.verticalScrollBar().setValue(max(0, block.blockNumber() - self.lines_above))

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
