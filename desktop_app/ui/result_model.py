"""Search results as a two-level item model: one row per file, one child row per hit."""

from __future__ import annotations

from dataclasses import replace
from itertools import groupby

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QStandardItem, QStandardItemModel

from ..search.results import SearchResponse, SearchResult

RESULT_ROLE = Qt.ItemDataRole.UserRole + 1  # the SearchResult on a hit row; None on a file row
COLUMNS = ("Result", "Score", "Match")
COL_LOCATION, COL_SCORE, COL_MATCH = range(3)
_SYMBOL_TYPE_LABELS = {
    "function": "fn",
    "method": "fn",
    "class": "class",
    "struct": "struct",
    "interface": "interface",
    "enum": "enum",
    "trait": "trait",
    "impl": "impl",
    "module": "mod",
    "type": "type",
    "object": "object",
    "protocol": "protocol",
    "extension": "extension",
    "instance": "instance",
    "data": "data",
    "newtype": "newtype",
    "actor": "actor",
    "opaque": "opaque",
    "constructor": "fn",
    "union": "union",
}


class ResultModel(QStandardItemModel):
    def __init__(self) -> None:
        super().__init__(0, len(COLUMNS))
        self.setHorizontalHeaderLabels(list(COLUMNS))
        self.hits: list[SearchResult] = []  # in display order

    def show_response(self, response: SearchResponse) -> None:
        """Replace the rows; files appear in the order of their best hit, and hits by rank within a file,
        so the first hit shown is the best one."""
        self.removeRows(0, self.rowCount())
        self.hits = []
        order: dict[tuple[str, str], int] = {}
        for r in response.results:
            order.setdefault((r.scope_root, r.path), len(order))
        # sorted() is stable: within a file, hits keep the engine's ranking.
        ranked = sorted(response.results, key=lambda r: order[(r.scope_root, r.path)])
        bold = QFont()
        bold.setBold(True)
        if response.mode == "text":
            self._show_lines(response.results, bold)
            return
        for (_, path), group in groupby(ranked, key=lambda r: (r.scope_root, r.path)):
            hits = list(group)
            file_item = QStandardItem(f"{path}   ({len(hits)} {'hit' if len(hits) == 1 else 'hits'})")
            file_item.setFont(bold)
            file_item.setToolTip(f"{hits[0].scope_root}/{path}")
            file_item.setData(None, RESULT_ROLE)
            for r in hits:
                file_item.appendRow(_hit_row(r))
                self.hits.append(r)
            self.appendRow([file_item, _blank(), _blank()])

    def _show_lines(self, results: list[SearchResult], bold: QFont) -> None:
        """Text mode: a row per file (in path order) with its match count, and a row per line it matches on."""
        for r in results:
            count = f"{r.match_count} {'match' if r.match_count == 1 else 'matches'}"
            file_item = QStandardItem(f"{r.path}   ({count})")
            file_item.setFont(bold)
            file_item.setToolTip(f"{r.scope_root}/{r.path}")
            file_item.setData(None, RESULT_ROLE)
            for line, group in groupby(r.matches or [], key=lambda m: m["line"]):
                on_line = list(group)
                one = replace(r, start_line=line, end_line=line, snippet=on_line[0]["text"], matches=on_line)
                file_item.appendRow(_hit_row(one))
                self.hits.append(one)
            self.appendRow([file_item, _blank(), _blank()])


def hit_label(r: SearchResult) -> str:
    if r.matches is not None:  # a line of text mode: the line itself
        text = r.snippet.strip()
        return f"L{r.start_line}   {text[:117] + '…' if len(text) > 120 else text}"
    lines = f"L{r.start_line}" if r.start_line == r.end_line else f"L{r.start_line}–{r.end_line}"
    if not r.symbol_name:
        return f"{lines}   {r.chunk_type}"
    kind = _SYMBOL_TYPE_LABELS.get(r.symbol_type or "", r.symbol_type or "")
    return f"{lines}   {kind} {r.symbol_name}" if kind else f"{lines}   {r.symbol_name}"


def _hit_row(r: SearchResult) -> list[QStandardItem]:
    location = QStandardItem(hit_label(r))
    location.setData(r, RESULT_ROLE)
    owner = f", in {r.parent_symbol}" if r.parent_symbol else ""
    location.setToolTip(f"{r.path}:{r.start_line}-{r.end_line}  ({r.language}, {r.chunk_type}{owner})")
    score = QStandardItem(f"{r.score:.2f}")
    score.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    score.setData(r, RESULT_ROLE)
    match = QStandardItem(r.relevance)
    match.setData(r, RESULT_ROLE)
    return [location, score, match]


def _blank() -> QStandardItem:
    item = QStandardItem()
    item.setData(None, RESULT_ROLE)
    return item
