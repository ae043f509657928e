"""Literal and regex search over the indexed text: every line where the pattern occurs, one result per file.

The store's trigram index narrows the chunks to those holding the pattern's required substrings; the real
pattern then runs over their text, and each match is placed on its file's line. Chunks of one file overlap
(line windows share lines), so a match is kept once per file, line and column. Files come in path order,
as `rg --sort path` lists them.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field

from ..store.protocols import Store
from ..store.rows import Hit, HitFilter, Scope
from .results import SearchResult
from .text_pattern import TextPattern

# Lines of one file listed with their matches; a file with more says how many in its count. A regex such as
# `.` matches every line: without a cap one result could carry a whole repository.
MAX_MATCHES_PER_FILE = 1000
_NEWLINE = re.compile("\n")


@dataclass
class TextMatches:
    results: list[SearchResult] = field(default_factory=list)
    files: int = 0  # files with a match (results holds the first k in path order)
    matches: int = 0  # matches in all of them


def text_search(store: Store, scopes: list[Scope], where: HitFilter, pattern: TextPattern, k: int) -> TextMatches:
    regex = pattern.compiled()
    # The trigram index folds ASCII case only: a needle with other letters cannot narrow a search that
    # ignores case (É and é are different to it).
    needles = [n for n in pattern.needles() if pattern.case_sensitive or n.isascii()]
    scope_ids = [s.id for s in scopes]
    roots = {s.id: s.root for s in scopes}
    ids = store.chunks_containing(needles) if needles else store.scope_chunk_ids(scope_ids, where)
    files: dict[tuple[str, str], _File] = {}
    for hit in store.hits_for_chunks(scope_ids, ids.tolist(), where):
        found = _matches(regex, hit)
        if found:
            key = (roots[hit.scope_id], hit.path)
            files.setdefault(key, _File(hit)).add(found)
    out = TextMatches(files=len(files), matches=sum(len(f.matches) for f in files.values()))
    out.results = [files[key].result(key[0]) for key in sorted(files)[:k]]
    return out


def _matches(regex: re.Pattern[str], hit: Hit) -> dict[tuple[int, int], tuple[int, str]]:
    """{(line, start column): (end column, line text)} of the matches in one chunk; columns count characters
    from 0, the end is exclusive. A match never crosses a line end (as in grep and ripgrep)."""
    text = hit.text
    found: dict[tuple[int, int], tuple[int, str]] = {}
    line_starts: list[int] | None = None
    for m in regex.finditer(text):
        start, end = m.span()
        if start == end or "\n" in text[start:end]:
            continue
        if line_starts is None:
            line_starts = [0] + [n.end() for n in _NEWLINE.finditer(text)]
        row = bisect_right(line_starts, start) - 1
        line_start = line_starts[row]
        line_end = text.find("\n", line_start)
        found[(hit.start_line + row, start - line_start)] = (
            end - line_start,
            text[line_start : line_end if line_end >= 0 else len(text)],
        )
    return found


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
