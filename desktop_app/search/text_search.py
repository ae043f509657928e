"""Literal and regex search over the indexed text: every line where the pattern occurs, one result per file.

The store's trigram index narrows the chunks to those holding the pattern's required substrings; the real
pattern then runs over their text, and each match is placed on its file's line. Chunks of one file overlap
(line windows share lines), so a match is kept once per file, line and column. Files come in path order,
as `rg --sort path` lists them.
"""

from __future__ import annotations

import functools
import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..store.protocols import Store
from ..store.rows import Hit, HitFilter, Scope
from ..store.until_next_write import UntilNextWrite
from .results import SearchResult
from .text_pattern import TextPattern

# Lines of one file listed with their matches; a file with more says how many in its count. A regex such as
# `.` matches every line: without a cap one result could carry a whole repository.
MAX_MATCHES_PER_FILE = 1000


# Places whose text is read at a time, in path order; after each batch the search stops if the first k files
# are complete. Measured on abseil-cpp (26K chunks), "return" in 7,576 chunks: 80 ms reading them all.
READ_BATCH = 256


@dataclass
class TextMatches:
    results: list[SearchResult] = field(default_factory=list)
    files: int = 0  # files with a match among those read
    matches: int = 0  # matches in them
    complete: bool = True  # every candidate was read: the counts are the totals, not lower bounds


class TextSearch:
    """Text mode over one store. The searched scopes' places in path order are kept until the next write:
    reading them took 110 ms for 115K places, and a keystroke must not pay that again."""

    def __init__(self, store: Store):
        self.store = store
        self._places: UntilNextWrite[tuple[tuple[str, ...], HitFilter], _Places] = UntilNextWrite(
            lambda: store.generation
        )

    def search(self, scopes: list[Scope], where: HitFilter, pattern: TextPattern, k: int) -> TextMatches:
        engines = _Engines(pattern)
        needles = pattern.needles()
        # A literal is its own needle: looking for it line by line first would only do the work twice.
        lines = _Lines(needles if pattern.regex else [], pattern.case_sensitive)
        roots = {s.id: s.root for s in scopes}
        places = self._places.get(
            (tuple(roots), where), lambda: _Places(*self.store.place_table(list(roots), where), roots)
        )
        candidates = _candidates(self.store, needles, pattern.case_sensitive)
        rows = places.rows if candidates is None else places.rows[np.isin(places.rows[:, 2], candidates)]
        files: dict[tuple[str, str], _File] = {}
        out = TextMatches()
        for start in range(0, len(rows), READ_BATCH):
            batch = rows[start : start + READ_BATCH]
            for hit, found in _matches(engines, lines, self.store.hits_for_places(batch[:, 0].tolist())):
                files.setdefault((roots[hit.scope_id], hit.path), _File(hit)).add(found)
            # Once k files are found and a batch has read past the k-th (path order), the first k are whole.
            if len(files) >= k and places.key(int(batch[-1, 1])) > sorted(files)[k - 1]:
                out.complete = start + READ_BATCH >= len(rows)
                break
        ordered = sorted(files)
        out.files, out.matches = len(files), sum(len(f.matches) for f in files.values())
        out.results = [files[key].result(key[0]) for key in ordered[:k]]
        return out


class _Places:
    """The places of the searched scopes as (place id, file id, chunk id) rows, in path order."""

    def __init__(self, rows: np.ndarray, files: list[tuple], roots: dict[str, str]):
        self._keys = {file_id: (roots[scope_id], path) for file_id, scope_id, path in files}
        ranked = sorted(self._keys, key=self._keys.__getitem__)
        rank = np.zeros(max(ranked, default=0) + 1, dtype=np.int64)
        rank[ranked] = np.arange(len(ranked))
        self.rows = rows[np.lexsort((rows[:, 0], rank[rows[:, 1]]))] if len(rows) else rows

    def key(self, file_id: int) -> tuple[str, str]:
        return self._keys[file_id]


def _candidates(store: Store, groups: list[list[str]], case_sensitive: bool) -> np.ndarray | None:
    """The chunks that can hold a match (those holding one alternative's needles, TextPattern.needles); None:
    any chunk can."""
    # The trigram index folds ASCII case only: a needle with other letters cannot narrow a search that
    # ignores case (É and é are different to it).
    if not groups or (not case_sensitive and any(not n.isascii() for group in groups for n in group)):
        return None
    return functools.reduce(np.union1d, (store.chunks_containing(group) for group in groups))


class _Lines:
    r"""The lines of a text that can hold a match: those holding every needle of one alternative. The pattern
    runs over those lines only (at C speed the needles are found first): `[A-Z][a-zA-Z]+Exception\b` over
    the whole of 5,452 chunks took 60 ms, mostly trying `[A-Z]+` at every position."""

    def __init__(self, groups: list[list[str]], case_sensitive: bool):
        flags = 0 if case_sensitive else re.IGNORECASE
        self._groups = [[re.compile(re.escape(n), flags) for n in group] for group in groups]

    def spans(self, text: str) -> list[tuple[int, int]]:
        """(start, end) of each such line, end before its newline, in order."""
        if not self._groups:
            return [(0, len(text))]
        out = set()
        for first, *rest in self._groups:
            for m in first.finditer(text):
                start = text.rfind("\n", 0, m.start()) + 1
                end = text.find("\n", m.end())
                end = len(text) if end < 0 else end
                if all(r.search(text, start, end) for r in rest):
                    out.add((start, end))
        return sorted(out)


_Found = dict[tuple[int, int], tuple[int, str]]  # (line, start column) -> (end column, line text)


class _Engines:
    """The pattern in `re` and, where RE2 matches alike, in RE2 (TextPattern.compiled_re2)."""

    def __init__(self, pattern: TextPattern):
        self.re = pattern.compiled()
        self.re2 = pattern.compiled_re2()
        self._spaces = pattern.regex and ("\\s" in pattern.text or "\\S" in pattern.text)

    def fast_on(self, text: str) -> Any | None:
        """RE2 when this text is one it matches alike on, else None."""
        if self.re2 is None or not text.isascii():
            return None
        return None if self._spaces and _RE2_SPACES.search(text) else self.re2


# ASCII characters `re` takes for `\s` and RE2 does not.
_RE2_SPACES = re.compile("[\x0b\x1c-\x1f]")


def _matches(engines: _Engines, lines: _Lines, hits: list[Hit]) -> list[tuple[Hit, _Found]]:
    r"""For each chunk with a match: {(line, start column): (end column, line text)}; columns count characters
    from 0, the end is exclusive. A match never crosses a line end (as in grep and ripgrep).

    The chunks are searched as one text, joined by line ends: a match cannot span two of them, and `^`, `$`,
    `\b` and look-behinds see a line end at each chunk's edge as they would in the file. One pass over a batch
    instead of one per chunk: `[A-Z][a-zA-Z]+Exception\b` over 115K chunks spent 2/3 of its 32 ms in
    per-chunk Python (bench_text.py)."""
    text = "\n".join(h.text for h in hits)
    # RE2 reads the whole batch faster than `re` reads the lines holding the needles, finding those included.
    fast = engines.fast_on(text)
    found = fast.finditer(text.encode("ascii")) if fast is not None else _in_spans(engines.re, text, lines.spans(text))
    starts = [0]
    for h in hits[:-1]:
        starts.append(starts[-1] + len(h.text) + 1)
    out: dict[int, _Found] = {}
    counted = (-1, 0, 0)  # (chunk, position, its row): rows counted on from the chunk's previous match
    for m in found:
        start, end = m.span()
        if start == end or "\n" in text[start:end]:
            continue
        chunk = bisect_right(starts, start) - 1
        base, row = (counted[1], counted[2]) if counted[0] == chunk else (starts[chunk], 0)
        row += text.count("\n", base, start)
        counted = (chunk, start, row)
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", start)
        out.setdefault(chunk, {})[(hits[chunk].start_line + row, start - line_start)] = (
            end - line_start,
            text[line_start : line_end if line_end >= 0 else len(text)],
        )
    return [(hits[chunk], places) for chunk, places in out.items()]


def _in_spans(regex: re.Pattern[str], text: str, spans: list[tuple[int, int]]) -> Iterator[re.Match[str]]:
    """The matches of `regex` within each span; pos/endpos keep the text around the span in view, so `^`, `$`,
    `\\b` and look-behinds see the real line ends."""
    for span_start, span_end in spans:
        yield from regex.finditer(text, span_start, span_end)


class _File:
    def __init__(self, hit: Hit):
        self.hit = hit  # a place in the file, for what every result says about its file
        self.matches: dict[tuple[int, int], tuple[int, str]] = {}

    def add(self, found: dict[tuple[int, int], tuple[int, str]]) -> None:
        self.matches.update(found)

    def result(self, root: str) -> SearchResult:
        listed = sorted(self.matches.items())[:MAX_MATCHES_PER_FILE]
        lines: dict[int, str] = {line: text for (line, _), (_, text) in listed}
        h = self.hit
        return SearchResult(
            path=h.path,
            start_line=listed[0][0][0],
            end_line=listed[-1][0][0],
            score=1.0,
            relevance="text",
            language=h.language,
            chunk_type="text",
            symbol_name=None,
            symbol_type=None,
            parent_symbol=None,
            snippet="\n".join(lines.values()),
            semantic_score=None,
            stage="keyword",
            scope_root=root,
            file_sha256=h.file_sha256,
            evidence=("text",),
            matches=[
                {"line": line, "start_col": start, "end_col": end, "text": text}
                for (line, start), (end, text) in listed
            ],
            match_count=len(self.matches),
        )
