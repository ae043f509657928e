"""Search results as an item model: a ranked list, or files with their hits, or text mode's matching lines."""

from __future__ import annotations

from dataclasses import replace
from itertools import groupby

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QStandardItem, QStandardItemModel

from ..identifiers import qualified
from ..search.results import SearchResponse, SearchResult
from ..wording import counted

RESULT_ROLE = Qt.ItemDataRole.UserRole + 1  # the SearchResult on a hit row; None on a file row
COLUMNS = ("Result", "Score", "Why")
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


# Why a row is there, as the badges say it (search.results: SearchResult.evidence), strongest first.
EVIDENCE_LABELS = {"name": "name", "keyword": "words", "meaning": "meaning", "text": "text"}
_EVIDENCE_TIPS = {
    "name": "defines a name you typed",
    "keyword": "holds the words you typed (in its names, path or text)",
    "meaning": "close in meaning to what you typed",
    "text": "holds the text you typed",
}
EVIDENCE_ROLE = Qt.ItemDataRole.UserRole + 2  # the badge labels of a hit row's match column
# A row of the ranked list is drawn on two lines (result_tree): what it is, then where it is.
TITLE_ROLE = Qt.ItemDataRole.UserRole + 3  # "1.  fn Table._calculate_column_widths"
PLACE_ROLE = Qt.ItemDataRole.UserRole + 4  # "rich/table.py:554–573"


class ResultModel(QStandardItemModel):
    def __init__(self) -> None:
        super().__init__(0, len(COLUMNS))
        self.setHorizontalHeaderLabels(list(COLUMNS))
        self.hits: list[SearchResult] = []  # in display order

    def show_response(self, response: SearchResponse, grouped: bool = False) -> None:
        """Replace the rows. The ranked modes show one row per result in rank order, or `grouped` by file
        (files in the order of their best hit, each hit numbered with its rank); text mode shows each file
        in path order with a row per matching line."""
        self.removeRows(0, self.rowCount())
        self.hits = []
        bold = QFont()
        bold.setBold(True)
        if response.mode == "text":
            self._show_lines(response.results, bold)
        elif grouped:
            self._show_grouped(response.results, bold)
        else:
            for rank, r in enumerate(response.results, start=1):
                self.appendRow(_hit_row(r, rank, with_path=True))
                self.hits.append(r)

    def _show_grouped(self, results: list[SearchResult], bold: QFont) -> None:
        order: dict[tuple[str, str], int] = {}
        for r in results:
            order.setdefault((r.scope_root, r.path), len(order))
        ranks = {id(r): rank for rank, r in enumerate(results, start=1)}
        # sorted() is stable: within a file, hits keep the engine's ranking.
        ranked = sorted(results, key=lambda r: order[(r.scope_root, r.path)])
        for (_, path), group in groupby(ranked, key=lambda r: (r.scope_root, r.path)):
            hits = list(group)
            file_item = QStandardItem(f"{path}   ({counted(len(hits), 'hit')})")
            file_item.setFont(bold)
            file_item.setToolTip(f"{hits[0].scope_root}/{path}")
            file_item.setData(None, RESULT_ROLE)
            for r in hits:
                file_item.appendRow(_hit_row(r, ranks[id(r)]))
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
    # Qualified by its parent: three `get_event_loop` methods of three classes must not look the same.
    joint = " › " if r.symbol_type == "heading" else "."  # a section under its heading, a member in its type
    name = qualified(r.symbol_name, r.parent_symbol, joint)
    kind = _SYMBOL_TYPE_LABELS.get(r.symbol_type or "", r.symbol_type or "")
    return f"{lines}   {kind} {name}" if kind else f"{lines}   {name}"


def score_tip(r: SearchResult) -> str:
    """What the score is made of, for the score's and the badges' tooltips."""
    reasons = [_EVIDENCE_TIPS[e] for e in r.evidence if e in _EVIDENCE_TIPS]
    parts = [f"Score {r.score:.2f} of 1: " + ("; ".join(reasons) if reasons else r.relevance)]
    if r.semantic_score is not None:
        layer = {"fast": "the fast model's vectors", "full": "the model's vectors"}.get(r.stage, r.stage)
        parts.append(f"meaning similarity {r.semantic_score:.2f} ({layer})")
    return "\n".join(parts)


def _hit_row(r: SearchResult, rank: int | None = None, with_path: bool = False) -> list[QStandardItem]:
    label = hit_label(r)
    place = what = ""
    if with_path:  # the definition first, where a narrow column cuts least of it; then where it is
        lines, _, what = label.partition("   ")
        place = f"{r.path}:{lines[1:]}"
        label = f"{what}   {place}" if r.symbol_name else f"{place}   {what}"
    number = f"{rank}.  " if rank is not None else ""
    location = QStandardItem(number + label)
    location.setData(r, RESULT_ROLE)
    if place:
        location.setData(number + what, TITLE_ROLE)
        location.setData(place, PLACE_ROLE)
    owner = f", in {r.parent_symbol}" if r.parent_symbol else ""
    location.setToolTip(f"{r.scope_root}/{r.path}:{r.start_line}-{r.end_line}  ({r.language}, {r.chunk_type}{owner})")
    tip = score_tip(r)
    score = QStandardItem("" if r.matches is not None else f"{r.score:.2f}")
    score.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    score.setData(r, RESULT_ROLE)
    score.setToolTip(tip)
    badges = [EVIDENCE_LABELS[e] for e in r.evidence if e in EVIDENCE_LABELS]
    match = QStandardItem(" ".join(badges))
    match.setData(r, RESULT_ROLE)
    match.setData(badges, EVIDENCE_ROLE)
    match.setToolTip(tip)
    return [location, score, match]


def _blank() -> QStandardItem:
    item = QStandardItem()
    item.setData(None, RESULT_ROLE)
    return item
