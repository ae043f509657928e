"""Which definition lines the preview pins above the code: the signatures of the definitions the top of the view
is inside, as editors' "sticky scroll" shows them (issue 32 item 8: a hit deep in a long function opened with
its `def` line off screen)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..indexing.syntax import COMMENT, LEADING, Definition, outline

MAX_PINNED = 3  # nested definitions pinned at most (class, method, inner function); deeper ones are cut
_SIGNATURE_SEARCH = 30  # lines after a definition's first (decorators, comments) looked through for its name


@dataclass(frozen=True)
class Header:
    line: int  # file line (1-based) of the definition's signature: the line naming it
    end: int  # file line of the definition's last line


def definition_headers(text: str, language: str, rel_path: str, first_line: int) -> list[Header]:
    """The signature lines of the definitions in `text` (file lines from `first_line` on), outermost first; none
    for a language without a grammar. Runs tree-sitter, off the UI thread with the lexing (rich's console.py,
    2,698 lines: about 18 ms on a shared 2-core machine, against tens of milliseconds for Pygments)."""
    found = outline(text, language, rel_path)
    if found is None:
        return []
    lines = text.split("\n")
    headers: list[Header] = []

    def visit(definitions: Iterable[Definition]) -> None:
        for d in definitions:
            row = _signature_row(lines, found.line_flags, d)
            if row < d.end:  # a one-line definition has nothing below it to pin its line over
                headers.append(Header(first_line + row, first_line + d.end))
            visit(d.members)

    visit(found.definitions)
    return sorted(headers, key=lambda h: (h.line, -h.end))


def _signature_row(lines: list[str], flags: bytearray, d: Definition) -> int:
    """The first line of `d` that names it and is not a comment or an attribute above it (its start line when
    none does: a name the grammar made up)."""
    for row in range(d.start, min(d.end, d.start + _SIGNATURE_SEARCH) + 1):
        if row < len(flags) and flags[row] & (COMMENT | LEADING):
            continue
        if row < len(lines) and d.name in lines[row]:
            return row
    return d.start


def pinned(headers: list[Header], top: int) -> list[Header]:
    """The headers to pin when file line `top` is the first line in view: of each definition that line is
    inside whose signature is above it, outermost first. Pinned lines cover the first lines of the view, so the
    line checked is the first one they leave visible."""
    shown: list[Header] = []
    for _ in range(MAX_PINNED + 1):
        below = top + len(shown)
        now = [h for h in headers if h.line < below <= h.end][-MAX_PINNED:]
        if len(now) == len(shown):
            return now
        shown = now
    return shown
