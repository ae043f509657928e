"""Literal and regex search over the indexed text: every line where the pattern occurs, one result per file.

The store's trigram index narrows the chunks to those holding the pattern's required substrings; the real
pattern then runs over their text, and each match is placed on its file's line. Chunks of one file overlap
(line windows share lines), so a match is kept once per file, line and column. Files come in path order,
as `rg --sort path` lists them.

Every pattern ends: RE2 (linear time) runs each one it can match as Python's `re` does, on any text; `re` runs
the rest (look-arounds, back-references) and the lines RE2 may read otherwise (an é next to `\\b`), in a child
process that is stopped after QUARRY_REGEX_BUDGET_MS, when the search says its results may be incomplete.
"""

from __future__ import annotations

import functools
import heapq
import os
import re
import time
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np

from ..store.id_arrays import distinct_sorted
from ..store.protocols import Store
from ..store.rows import ChunkId, Hit, HitFilter, PlaceId, Scope
from ..store.until_next_write import UntilNextWrite
from .bounded_re import BoundedRe, Piece
from .chunk_text_cache import ChunkTextCache
from .request import SearchError
from .results import SearchResult
from .text_pattern import WORD_BYTES, Re2Pattern, TextPattern

# Lines of one file listed with their matches; a file with more says how many in its count. A regex such as
# `.` matches every line: without a cap one result could carry a whole repository.
MAX_MATCHES_PER_FILE = 1000


# Places whose text is read at a time, in path order; after each batch the search stops if the first k files
# are complete. Measured on abseil-cpp (26K chunks), "return" in 7,576 chunks: 80 ms reading them all.
READ_BATCH = 256

# How long `re` may run in one search (bounded_re.py), for the patterns and lines RE2 cannot match alike; then
# the search stops and says its results may be incomplete. The back-reference (\w+) = \1\b takes 2.5 s over
# 50 MB of Python (3,428 files of site-packages), look-behinds 0.3-1 s: a repository needs twice that before a
# pattern is stopped, and `(a+)+$` on one line of 60 a's would never end.
REGEX_BUDGET_MS = 5000
REGEX_BUDGET_ENV = "QUARRY_REGEX_BUDGET_MS"


@dataclass
class TextMatches:
    results: list[SearchResult] = field(default_factory=list)
    files: int = 0  # files with a match among those read
    matches: int = 0  # matches in them
    complete: bool = True  # every candidate was read: the counts are the totals, not lower bounds
    # `re` ran out of its budget (this many seconds) on some lines: the search stopped there and left them out.
    stopped_after_s: float | None = None


# Up to this many candidate chunks, their places are read by chunk id; past it (or with no candidates: a pattern
# without a needle), the places are read a slice of files at a time in path order, until the first k files with
# a match are whole. Every place of the Linux kernel (3M) took 1.75 s to read, paid by each search after a write;
# "EXPORT_SYMBOL_GPL(kmalloc"'s few hundred candidates' take milliseconds.
PLACES_BY_CHUNK = 100_000
FIRST_FILES = 256  # files of the first slice; each next slice is twice the last


class TextSearch:
    """Text mode over one store. The searched scopes' file order, and the slices of their places searches have
    read, are kept until the next write: the Linux kernel's 84K files take 50 ms to read, its 3M places 1.75 s, and
    a keystroke must not pay that again."""

    def __init__(self, store: Store):
        self.store = store
        self._order: UntilNextWrite[tuple[str, ...], _FileOrder] = UntilNextWrite(lambda: store.generation)
        self._read: UntilNextWrite[tuple[tuple[str, ...], HitFilter], _SlicesRead] = UntilNextWrite(
            lambda: store.generation
        )
        self._bounded = BoundedRe()
        self._texts = ChunkTextCache(store)

    def _slices(
        self, roots: dict[str, str], where: HitFilter, candidates: np.ndarray | None, order: _FileOrder
    ) -> Iterator[np.ndarray]:
        """The places that can hold a match, in path order, in slices."""
        scope_ids = list(roots)
        if candidates is not None and len(candidates) <= PLACES_BY_CHUNK:
            yield order.sorted(self.store.place_rows(scope_ids, where, chunk_ids=candidates))
            return
        read = self._read.get((tuple(roots), where), lambda: _SlicesRead(order))
        for rows in read.slices(lambda files: self.store.place_rows(scope_ids, where, file_ids=files)):
            yield rows if candidates is None else rows[np.isin(rows[:, 2], candidates)]

    def search(self, scopes: list[Scope], where: HitFilter, pattern: TextPattern, k: int) -> TextMatches:
        engines = _Engines(pattern, self._bounded, regex_budget_ms() / 1000)
        needles = pattern.needles()
        # A literal is its own needle: looking for it line by line first would only do the work twice.
        lines = _Lines(needles if pattern.regex else [], pattern.case_sensitive)
        roots = {s.id: s.root for s in scopes}
        candidates = _candidates(self.store, needles, pattern.case_sensitive)
        order = self._order.get(tuple(roots), lambda: _FileOrder(self.store.scope_files(list(roots)), roots))
        files: dict[tuple[str, str], _File] = {}
        out = TextMatches()
        for batch, last in _batches(self._slices(roots, where, candidates, order), READ_BATCH):
            for hit, found in self._matches(engines, lines, batch):
                files.setdefault((roots[hit.scope_id], hit.path), _File(hit)).add(found)
            if engines.stopped:
                out.complete, out.stopped_after_s = False, engines.budget_s
                break
            # Once k files are found and a batch has read past the k-th (path order), the first k are whole.
            if len(files) >= k and order.key(int(batch[-1, 1])) > sorted(files)[k - 1]:
                out.complete = last
                break
        ordered = sorted(files)
        out.files, out.matches = len(files), sum(len(f.matches) for f in files.values())
        out.results = [files[key].result(key[0]) for key in ordered[:k]]
        return out

    def _matches(self, engines: _Engines, lines: _Lines, batch: np.ndarray) -> list[tuple[Hit, _Found]]:
        """The places of `batch` (rows of place_rows) whose text holds a match, with their matches (_matches). The
        pattern runs over the chunks' text first; only the places with a match are read whole: reading every
        place of the Linux kernel as a Hit was 65 % of a rare pattern's 10.7 s (`x{4}y`, 3 matches)."""
        # Joined in place order, as the places' rows came before: a look-behind at a chunk's start sees the chunk
        # before it in the joined text (_matches).
        batch = batch[np.argsort(batch[:, 0], kind="stable")]
        texts = self._texts.texts(distinct_sorted(batch[:, 2]).tolist())
        found = _matches(engines, lines, [texts.get(ChunkId(int(c)), "") for c in batch[:, 2]])
        hits = {h.place_id: h for h in self.store.hits_for_places([PlaceId(int(batch[i, 0])) for i, _ in found])}
        out = []
        for i, rows in found:
            hit = hits.get(PlaceId(int(batch[i, 0])))
            if hit is not None:  # gone since the places were read (another process's write)
                out.append((hit, {(hit.start_line + row, col): match for (row, col), match in rows.items()}))
        return out


class _SlicesRead:
    """The places of the searched scopes read so far, a slice of files at a time in path order."""

    def __init__(self, order: _FileOrder):
        self._order = order
        self._slices: list[np.ndarray] = []
        self._files_read = 0

    def slices(self, read: Callable[[np.ndarray], np.ndarray]) -> Iterator[np.ndarray]:
        """Those read before, then more through `read` (the places of some files) as they are asked for."""
        yield from self._slices
        files = self._order.files
        while self._files_read < len(files):
            part = files[self._files_read : self._files_read + (FIRST_FILES << len(self._slices))]
            rows = self._order.sorted(read(part))
            self._slices.append(rows)
            self._files_read += len(part)
            yield rows


def _batches(slices: Iterator[np.ndarray], size: int) -> Iterator[tuple[np.ndarray, bool]]:
    """The rows of the slices in batches of at most `size`, each with whether it is the last."""
    held: np.ndarray | None = None
    for rows in slices:
        for start in range(0, len(rows), size):
            if held is not None:
                yield held, False
            held = rows[start : start + size]
    if held is not None:
        yield held, True


def regex_budget_ms() -> int:
    """QUARRY_REGEX_BUDGET_MS, or REGEX_BUDGET_MS."""
    raw = os.environ.get(REGEX_BUDGET_ENV, "").strip()
    if not raw:
        return REGEX_BUDGET_MS
    if not raw.isdigit():
        raise SearchError(f"{REGEX_BUDGET_ENV} must be a whole number of milliseconds (got {raw!r}); fix or unset it")
    return int(raw)


class _FileOrder:
    """The searched scopes' files in path order."""

    def __init__(self, files: list[tuple], roots: dict[str, str]):
        self._keys = {file_id: (roots[scope_id], path) for file_id, scope_id, path in files}
        ranked = sorted(self._keys, key=self._keys.__getitem__)
        self.files = np.array(ranked, dtype=np.int64)  # their ids, in path order
        self._rank = np.zeros(max(ranked, default=0) + 1, dtype=np.int64)
        self._rank[ranked] = np.arange(len(ranked))

    def sorted(self, rows: np.ndarray) -> np.ndarray:
        """(place id, file id, chunk id) rows in path order, a file's places in id order."""
        return rows[np.lexsort((rows[:, 0], self._rank[rows[:, 1]]))] if len(rows) else rows

    def key(self, file_id: int) -> tuple[str, str]:
        return self._keys[file_id]


def _candidates(store: Store, groups: list[list[str]], case_sensitive: bool) -> np.ndarray | None:
    """The chunks that can hold a match (those holding one alternative's needles, TextPattern.needles); None:
    any chunk can."""
    # The trigram index folds ASCII case only: a needle with other letters cannot narrow a search that
    # ignores case (É and é are different to it).
    if not groups or (not case_sensitive and any(not n.isascii() for group in groups for n in group)):
        return None
    return distinct_sorted(np.concatenate([store.chunks_containing(group) for group in groups]))


class _Lines:
    r"""The lines of a text that can hold a match: those holding every needle of one alternative. The pattern
    runs over those lines only (at C speed the needles are found first): `[A-Z][a-zA-Z]+Exception\b` over
    the whole of 5,452 chunks took 60 ms, mostly trying `[A-Z]+` at every position."""

    def __init__(self, groups: list[list[str]], case_sensitive: bool):
        flags = 0 if case_sensitive else re.IGNORECASE
        self._groups = [[re.compile(re.escape(n), flags) for n in group] for group in groups]

    @property
    def narrow(self) -> bool:
        """Whether some lines can be told to hold no match."""
        return bool(self._groups)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """(start, end) of each such line, end before its newline, in order."""
        if not self._groups:
            return [(0, len(text))]
        out = set()
        for first, *rest in self._groups:
            end = -1
            for m in first.finditer(text):
                if m.start() <= end:
                    continue  # on the line just looked at: a long line with many would be read once for each
                start = text.rfind("\n", 0, m.start()) + 1
                end = text.find("\n", m.end())
                end = len(text) if end < 0 else end
                if all(r.search(text, start, end) for r in rest):
                    out.add((start, end))
        return sorted(out)


_Found = dict[tuple[int, int], tuple[int, str]]  # (line, start column) -> (end column, line text)
# A place where a match may start with `word`: the text's start, or after a byte that is no ASCII letter, digit
# or _ (a byte of a character beyond ASCII is no word character on the lines RE2 matches, Re2Pattern.differs_on).
# A pattern that can look behind where it starts (a look-behind, \A) is given the whole text around the lines
# `re` runs on; any other gets only those lines.
_LOOKS_BACK = re.compile(r"\(\?<[=!]|\\A")


class _Engines:
    """The pattern in RE2 (TextPattern.compiled_re2) where it matches as `re` does, and in `re` elsewhere, which
    runs in a child process for at most `budget_s` a search (bounded_re.py); past that, `stopped`."""

    def __init__(self, pattern: TextPattern, bounded: BoundedRe, budget_s: float):
        self.re = pattern.compiled()
        self.re2 = pattern.compiled_re2()
        self.budget_s = budget_s
        self.stopped = False
        self._left_s = budget_s
        self._bounded = bounded
        self._looks_back = pattern.regex and _LOOKS_BACK.search(pattern.text) is not None

    def find(self, text: str, lines: _Lines, beyond_ascii: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """(start, end) of the matches in `text`, in characters, in order; after `stopped`, those `re` found.
        `beyond_ascii`: the parts of `text` that are not all ASCII (in order), where RE2 may read a line otherwise."""
        if self.re2 is None:
            return self._re(text, lines.spans(text))
        fast = _re2_spans(self.re2, text)
        narrow = functools.cache(lambda: lines.spans(text)) if lines.narrow else None
        # `re` matches the lines RE2 may read otherwise, and those where RE2 matched an empty string: after one,
        # `re` looks for a longer match at the same place (`.*?` matches each character), RE2 goes on after it.
        slow = set(_lines_at(text, [s for s, e in fast if s == e]))
        differs_on = self.re2.differs_on
        if differs_on is not None:
            # Only the parts beyond ASCII are read: [^\W\x00-\x7f] over 209K characters of serde took 2.4 ms, where
            # RE2 found `fn \w+` in 0.6. Where they are most of the text, the lines holding the needles are found
            # first (as long again), and only they are read.
            parts = [(0, len(text))] if self.re2.differs_in_ascii else beyond_ascii
            if narrow is not None and sum(end - start for start, end in parts) * 2 > len(text):
                starts = [s for s, _ in parts]
                parts = [line for line in narrow() if _within(parts, starts, line[0])]
            slow.update(
                _lines_at(text, (m.start() for start, end in parts for m in differs_on.finditer(text, start, end)))
            )
        if slow and narrow is not None:
            slow &= set(narrow())
        if not slow:
            return fast
        ordered = sorted(slow)
        starts = [s for s, _ in ordered]
        return list(heapq.merge([m for m in fast if not _within(ordered, starts, m[0])], self._re(text, ordered)))

    def _re(self, text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """The matches of `re` within these spans of `text` (each from a line's start), as finditer with pos and
        endpos finds them: `^`, `$` and `\\b` see the line's ends (a pattern that looks further back gets the text
        before it too)."""
        self.stopped = self.stopped or self._left_s <= 0
        if self.stopped:
            return []
        pieces: list[Piece] = [(0, text, spans)]
        if not self._looks_back:
            pieces = [(start, text[start:end], [(0, end - start)]) for start, end in spans]
        started = time.monotonic()
        found = self._bounded.find(self.re.pattern, self.re.flags, pieces, self._left_s)
        self._left_s -= time.monotonic() - started
        self.stopped = found is None
        return found or []


def _lines_at(text: str, positions: Iterable[int]) -> list[tuple[int, int]]:
    """(start, end) of the lines holding these positions (in order), each once."""
    out: list[tuple[int, int]] = []
    for at in positions:
        if out and at <= out[-1][1]:
            continue  # on the line just found: a long line with many is read once
        end = text.find("\n", at)
        out.append((text.rfind("\n", 0, at) + 1, len(text) if end < 0 else end))
    return out


def _within(spans: list[tuple[int, int]], starts: list[int], at: int) -> bool:
    i = bisect_right(starts, at) - 1
    return i >= 0 and at <= spans[i][1]


def _re2_spans(pattern: Re2Pattern, text: str) -> list[tuple[int, int]]:
    r"""The matches of `pattern` in `text`, in characters, as `re`'s finditer gives them up to the first empty one:
    RE2 gives no other at its place, and goes on after it (as RE2's own finditer does).

    `word` is `re`'s (?<!\w)(?:pattern)(?!\w): the first place p from `pos` on where the character before is no
    word character and the pattern then a non-word character or line end match (RE2 picks the one `re` would,
    leftmost-first). `at` tries p = pos; `find` the places after it, its first group after the line start or the
    non-word character it takes (which may lie before `pos` only at p = pos, hence the two)."""
    data = text.encode()
    if pattern.at is None and len(data) == len(text):  # ASCII: bytes are characters, RE2's own loop will do
        return [m.span() for m in pattern.find.finditer(data)]
    spans = []
    pos = 0
    while pos <= len(data):
        if pattern.at is None:
            m = pattern.find.search(data, pos)
            group = 0
        else:
            m = pattern.at.match(data, pos) if pos == 0 or data[pos - 1] not in WORD_BYTES else None
            m = m or pattern.find.search(data, pos)
            group = 1
        if m is None:
            break
        start, end = m.span(group)
        pos = end
        if start == end:
            # RE2's \B holds between the bytes of a character too: an empty match there is placed at its start.
            while start < len(data) and data[start] & 0xC0 == 0x80:
                start -= 1
            end = start
            pos += 1
            while pos < len(data) and data[pos] & 0xC0 == 0x80:  # on to the next character's first byte
                pos += 1
        spans.append((start, end))
    if len(data) == len(text):  # ASCII: bytes are characters
        return spans
    return _in_characters(data, spans)


def _in_characters(data: bytes, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Byte spans in UTF-8 `data` (in order, apart) as spans of characters."""
    out = []
    done_bytes = done_chars = 0
    for start, end in spans:
        start_chars = done_chars + len(data[done_bytes:start].decode())
        done_bytes, done_chars = end, start_chars + len(data[start:end].decode())
        out.append((start_chars, done_chars))
    return out


def _matches(engines: _Engines, lines: _Lines, texts: list[str]) -> list[tuple[int, _Found]]:
    r"""For each text with a match, its index and {(line, start column): (end column, line text)}; lines count
    from 0 at the text's first, columns count characters from 0, the end is exclusive. A match never crosses a
    line end (as in grep and ripgrep).

    The chunks are searched as one text, joined by line ends: a match cannot span two of them, and `^`, `$`,
    `\b` and look-behinds see a line end at each chunk's edge as they would in the file. One pass over a batch
    instead of one per chunk: `[A-Z][a-zA-Z]+Exception\b` over 115K chunks spent 2/3 of its 32 ms in
    per-chunk Python (bench_text.py)."""
    text = "\n".join(texts)
    starts = [0]
    for t in texts[:-1]:
        starts.append(starts[-1] + len(t) + 1)
    beyond_ascii = [(start, start + len(t)) for start, t in zip(starts, texts, strict=True) if not t.isascii()]
    out: dict[int, _Found] = {}
    counted = (-1, 0, 0)  # (chunk, position, its row): rows counted on from the chunk's previous match
    line_start, line_end, line = 0, -1, ""  # the line of the previous match: a long line with many is read once
    for start, end in engines.find(text, lines, beyond_ascii):
        if start == end or "\n" in text[start:end]:
            continue
        chunk = bisect_right(starts, start) - 1
        base, row = (counted[1], counted[2]) if counted[0] == chunk else (starts[chunk], 0)
        row += text.count("\n", base, start)
        counted = (chunk, start, row)
        if start > line_end:
            line_start = text.rfind("\n", 0, start) + 1
            line_end = text.find("\n", start)
            line_end = len(text) if line_end < 0 else line_end
            line = text[line_start:line_end]
        out.setdefault(chunk, {})[(row, start - line_start)] = (end - line_start, line)
    return list(out.items())


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
