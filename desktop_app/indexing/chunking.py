"""Cut a file into chunks: runs of whole lines that fit the embedding model's token budget.

Source code with a tree-sitter grammar is cut along its definitions, one symbol per chunk, so that
a search for a name lands on the function itself and an embedding describes one thing. Markdown is
cut at headings, key/value configuration before top-level keys, everything else into overlapping
line windows.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from itertools import accumulate
from typing import NamedTuple

from desktop_app.indexing.chunk import Chunk
from desktop_app.indexing.languages import EXTENSIONS
from desktop_app.indexing.syntax import COMMENT, Definition, outline

# The version of how files are cut into chunks: bump it with every change that cuts a file differently, so that
# an index made before the change is cut again on its next index (unchanged chunks keep their vectors: chunks
# are stored by content). 1: everything before this was recorded; 2: parsing again after a lost stretch; 3: C macros,
# C functions in a lost stretch, JavaScript's assigned and nested functions and object literals' methods; 4: shell
# functions inside `{ ... }` and `if` blocks; 5: C's definitions between the functions whose parse ran over them;
# 6: C and C++ macros the grammar cannot read blanked for the parser, and `.h` headers holding C++ cut as C++.
CHUNKING_VERSION = 6

_PROSE_LANGUAGES = frozenset(kind.language for kind in EXTENSIONS.values() if kind.kind == "docs")
_CONFIG_LANGUAGES = frozenset(kind.language for kind in EXTENSIONS.values() if kind.kind == "config")


def chunk_file(
    text: str,
    language: str,
    rel_path: str,
    count_tokens: Callable[[Sequence[str]], list[int]],
    max_tokens: int = 256,
    overlap_tokens: int = 32,
) -> list[Chunk]:
    """The chunks of one file; `text` has "\\n" line endings, `count_tokens` counts model tokens."""
    if not text.strip():
        return []
    lines = text.split("\n")
    doc = _Lines(lines, _line_tokens(lines, count_tokens), max_tokens, overlap_tokens)
    return [doc.chunk(span) for span in _spans(doc, text, language, rel_path)]


def _line_tokens(lines: list[str], count_tokens: Callable[[Sequence[str]], list[int]]) -> list[int]:
    """Tokens per line, each distinct line counted once: the same counts, for half the tokenizer's work on code
    (commons-lang: 101,832 lines, 46,732 distinct within their files; the tokenizer was 2.9 s of its 4.4 s of
    chunking). Lines are counted as they are, not stripped: a byte-level tokenizer counts indentation too."""
    distinct = list(dict.fromkeys(lines))
    if len(distinct) == len(lines):
        return count_tokens(lines)
    counts = dict(zip(distinct, count_tokens(distinct), strict=True))
    return [counts[line] for line in lines]


class _Span(NamedTuple):
    start: int  # 0-based row
    end: int  # 0-based row, inclusive
    chunk_type: str
    symbol_name: str | None = None
    symbol_type: str | None = None
    parent_symbol: str | None = None


def _spans(doc: _Lines, text: str, language: str, rel_path: str) -> list[_Span]:
    if language == "markdown":
        return _markdown_spans(doc)
    if language in _KEYED_CONFIG:
        return _keyed_config_spans(doc, language)
    if language in _CONFIG_LANGUAGES:
        return _window_spans(doc, "config")
    if language in _PROSE_LANGUAGES:
        return _window_spans(doc, "prose")
    found = outline(text, language, rel_path)
    if found is None:
        return _window_spans(doc, "code")
    return _SyntaxCutter(doc, found.line_flags).cut(found.definitions)


class _Lines:
    """The file's lines, their token counts, and the window arithmetic over them."""

    def __init__(self, lines: list[str], counts: Sequence[int], max_tokens: int, overlap_tokens: int) -> None:
        self.lines = lines
        self.budget = max_tokens
        # More overlap than half a window would make the windows crawl forward a line at a time.
        self.overlap = min(max(overlap_tokens, 0), max_tokens // 2)
        self.cumulative = list(accumulate(counts, initial=0))
        self.blank = [not line.strip() for line in lines]
        content = [not blank for blank in self.blank]
        # One extra entry so that "the first content line after the last line" is defined.
        self._next_content = _nearest(content, forward=True) + [len(lines)]
        self._prev_content = _nearest(content, forward=False)
        self._prev_blank = _nearest(self.blank, forward=False)

    def tokens(self, start: int, end: int) -> int:
        return self.cumulative[end + 1] - self.cumulative[start]

    def fits(self, start: int, end: int) -> bool:
        return self.tokens(start, end) <= self.budget

    def trim(self, start: int, end: int) -> tuple[int, int] | None:
        """`start..end` without blank lines at either end, or None when all of it is blank."""
        if start > end:
            return None
        first, last = self._next_content[start], self._prev_content[end]
        return (first, last) if first <= last else None

    def windows(self, start: int, end: int) -> list[tuple[int, int]]:
        """Windows of at most `budget` tokens covering every non-blank line of `start..end`,
        each starting about `overlap` tokens before the previous one ended."""
        bounds = self.trim(start, end)
        if bounds is None:
            return []
        first, end = bounds
        found = []
        while True:
            last = self._prev_content[self._cut(first, end)]
            found.append((first, last))
            if last == end:
                return found
            first = self._overlap_start(first, last, self._next_content[last + 1])

    def _cut(self, first: int, end: int) -> int:
        # The furthest row that keeps first..row within budget; a lone oversized line stands alone.
        reach = bisect_right(self.cumulative, self.cumulative[first] + self.budget, first + 1, end + 2) - 2
        reach = max(reach, first)
        if reach >= end:
            return end
        # A blank line in the window's last third is a natural seam (between functions, paragraphs).
        blank = self._prev_blank[reach + 1]
        return blank - 1 if blank > first + (reach - first) * 2 // 3 else reach

    def _overlap_start(self, first: int, last: int, following: int) -> int:
        """Where the window after first..last starts: the lines of its last `overlap` tokens."""
        start = bisect_left(self.cumulative, self.cumulative[last + 1] - self.overlap, first + 1, last + 1)
        start = self._next_content[start]
        # Overlap must not crowd out the next new line, or the window would repeat the last one.
        return start if start <= last and self.fits(start, following) else following

    def chunk(self, span: _Span) -> Chunk:
        return Chunk(
            text="\n".join(self.lines[span.start : span.end + 1]),
            start_line=span.start + 1,
            end_line=span.end + 1,
            chunk_type=span.chunk_type,
            symbol_name=span.symbol_name,
            symbol_type=span.symbol_type,
            parent_symbol=span.parent_symbol,
            token_count=self.tokens(span.start, span.end),
        )


def _nearest(marked: list[bool], forward: bool) -> list[int]:
    """For each row, the nearest marked row at or after it (`forward`; else len) or at or before it (else -1)."""
    found = [0] * len(marked)
    nearest = len(marked) if forward else -1
    for row in range(len(marked) - 1, -1, -1) if forward else range(len(marked)):
        if marked[row]:
            nearest = row
        found[row] = nearest
    return found


def _window_spans(doc: _Lines, chunk_type: str) -> list[_Span]:
    return [_Span(start, end, chunk_type) for start, end in doc.windows(0, len(doc.lines) - 1)]


# ---- source code -----------------------------------------------------------------------------------

# A line that only closes what the lines above opened: `}`, `});`, `end`, `}  // namespace geo`.
_CLOSER = re.compile(r"\s*(?:[)\]};,]+|end)\s*(?:(?://|#|/\*).*)?$")


class _SyntaxCutter:
    """One chunk per definition; types are opened into their members, long functions windowed."""

    def __init__(self, doc: _Lines, line_flags: bytearray) -> None:
        self.doc = doc
        self.flags = line_flags
        self.spans: list[_Span] = []

    def cut(self, definitions: list[Definition]) -> list[_Span]:
        self._region(definitions, 0, len(self.doc.lines) - 1, None)
        return self.spans

    def _region(
        self, definitions: Sequence[Definition], start: int, end: int, parent: str | None, owner: _Span | None = None
    ) -> None:
        row = start
        for definition in definitions:
            self._between(row, definition.start - 1, parent, owner)
            self._definition(definition)
            row = definition.end + 1
        self._between(row, end, parent, owner)

    def _definition(self, definition: Definition) -> None:
        bounds = self.doc.trim(definition.start, definition.end)
        if bounds is None:
            return
        first, last = bounds
        chunk_type = "function" if definition.is_function else "type"
        # A type with members is opened up: its header with the fields declared before the first member
        # makes the type chunk, then each member is cut on its own. Keeping even a small class whole
        # would hide its methods from exact-name search and blur what each chunk is about. A function is
        # opened into the functions defined in it only where it needs more than one chunk anyway (a module
        # written as one factory function): a small closure reads best inside its function.
        opened = bool(definition.members) and not (definition.is_function and self.doc.fits(first, last))
        header_end = definition.members[0].start - 1 if opened else last
        own = _Span(first, header_end, chunk_type, definition.name, definition.symbol_type, definition.parent)
        self.spans.extend(own._replace(start=start, end=end) for start, end in self.doc.windows(first, header_end))
        if opened:
            # The function's own lines between the ones it defines are still windows of that function.
            owner = own if definition.is_function else None
            self._region(definition.members, definition.members[0].start, last, definition.path, owner)

    def _between(self, start: int, end: int, parent: str | None, owner: _Span | None = None) -> None:
        """Imports, constants and statements between definitions, grouped up to the budget; inside an opened
        function (`owner`), that function's statements."""
        bounds = self.doc.trim(start, end)
        if bounds is None:
            return
        if self._closes_previous(*bounds):
            self.spans[-1] = self.spans[-1]._replace(end=bounds[1])
            return
        for first, last in self.doc.windows(*bounds):
            if self._only_comments(first, last):
                self.spans.append(_Span(first, last, "comment", parent_symbol=parent))
            elif owner is not None:
                self.spans.append(owner._replace(start=first, end=last))
            else:
                self.spans.append(_Span(first, last, "code", parent_symbol=parent))

    def _closes_previous(self, start: int, end: int) -> bool:
        """Closing braces after a type's last member read best at the end of that member's chunk."""
        if not self.spans or not self.doc.fits(self.spans[-1].start, end):
            return False
        return all(self.doc.blank[row] or _CLOSER.match(self.doc.lines[row]) for row in range(start, end + 1))

    def _only_comments(self, start: int, end: int) -> bool:
        return all(self.flags[row] & COMMENT or self.doc.blank[row] for row in range(start, end + 1))


# ---- markdown --------------------------------------------------------------------------------------

_ATX_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT_UNDERLINE = re.compile(r" {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_FRONT_MATTER_END = ("---", "...")


class _Heading(NamedTuple):
    row: int
    level: int
    title: str | None


def _markdown_spans(doc: _Lines) -> list[_Span]:
    """A chunk per section, named by its heading; the parent is the enclosing heading."""
    headings = _headings(doc.lines)
    section_starts = [heading.row for heading in headings] + [len(doc.lines)]
    spans = [_Span(start, end, "prose") for start, end in doc.windows(0, section_starts[0] - 1)]
    enclosing: list[_Heading] = []
    for heading, following in zip(headings, section_starts[1:], strict=True):
        while enclosing and enclosing[-1].level >= heading.level:
            enclosing.pop()
        parent = enclosing[-1].title if enclosing else None
        enclosing.append(heading)
        spans.extend(
            _Span(start, last, "prose", heading.title, "heading", parent)
            for start, last in doc.windows(heading.row, following - 1)
        )
    return spans


def _headings(lines: list[str]) -> list[_Heading]:
    found: list[_Heading] = []
    fence = ""  # the open code fence, inside which "#" starts a comment, not a heading
    paragraph_row = -2  # the last row of plain paragraph text, which an underline turns into a heading
    for row in range(_front_matter_end(lines), len(lines)):
        line = lines[row]
        marker = _FENCE.match(line)
        if fence:
            if marker and marker.group(1).startswith(fence) and not line[marker.end() :].strip():
                fence = ""
        elif marker:
            fence = marker.group(1)
        elif atx := _ATX_HEADING.match(line):
            found.append(_Heading(row, len(atx.group(1)), (atx.group(2) or "").strip() or None))
        elif (underline := _SETEXT_UNDERLINE.match(line)) and paragraph_row == row - 1:
            level = 1 if underline.group(1).startswith("=") else 2
            found.append(_Heading(row - 1, level, lines[row - 1].strip()))
        elif line.strip():
            paragraph_row = row
    return found


def _front_matter_end(lines: list[str]) -> int:
    """The first row after a leading `---` ... `---` metadata block (0 when there is none)."""
    if lines[0].strip() != "---":
        return 0
    for row in range(1, len(lines)):
        if lines[row].strip() in _FRONT_MATTER_END:
            return row + 1
    return 0


# ---- key/value configuration -----------------------------------------------------------------------

_YAML_KEY = re.compile(r"([^\s#:\-][^:#]*?)[ \t]*:(?:\s|$)")
_YAML_DOCUMENT = re.compile(r"(?:---|\.\.\.)(?:\s|$)")
_SECTION = re.compile(r"[ \t]*\[\[?([^\[\]]+)\]\]?")
_KEY = re.compile(r"([^\s=:#;\[][^=:]*?)[ \t]*[=:]")
_KEYED_CONFIG = {"yaml": ("#",), "toml": ("#",), "ini": ("#", ";")}  # language -> comment markers


def _keyed_config_spans(doc: _Lines, language: str) -> list[_Span]:
    """A chunk per section (or YAML document), with small top-level keys packed up to the budget;
    each chunk is named by the entry it starts with."""
    entries = _top_level_entries(doc.lines, language)
    if not entries or entries[0].start > 0:
        entries.insert(0, _Span(0, 0, "config"))
    spans: list[_Span] = []
    packable = False  # whether spans[-1] is whole entries, so the next entry may join it
    for entry, following in zip(entries, [*entries[1:], _Span(len(doc.lines), 0, "config")], strict=True):
        bounds = doc.trim(entry.start, following.start - 1)
        if bounds is None:
            continue
        if packable and entry.symbol_type == "key" and doc.fits(spans[-1].start, bounds[1]):
            spans[-1] = spans[-1]._replace(end=bounds[1])
            continue
        windows = doc.windows(*bounds)
        spans.append(entry._replace(start=windows[0][0], end=windows[0][1]))
        spans.extend(_Span(start, end, "config") for start, end in windows[1:])
        packable = len(windows) == 1
    return spans


def _top_level_entries(lines: list[str], language: str) -> list[_Span]:
    """Where each top-level key or section starts, the comment lines right above it included."""
    comment_markers = _KEYED_CONFIG[language]
    entries: list[_Span] = []
    in_section = False
    for row, line in enumerate(lines):
        named = _top_level_name(line, language, in_section)
        if named is None:
            continue
        in_section = in_section or named[1] == "section"
        start = row
        while start > 0 and lines[start - 1].lstrip().startswith(comment_markers):
            start -= 1
        entries.append(_Span(start, start, "config", *named))
    return entries


def _top_level_name(line: str, language: str, in_section: bool) -> tuple[str | None, str | None] | None:
    """(name, symbol type) when `line` starts a top-level entry, else None."""
    if language == "yaml":
        if _YAML_DOCUMENT.match(line):
            return None, None
        key = _YAML_KEY.match(line)
        return (key.group(1).strip("\"'"), "key") if key else None
    section = _SECTION.match(line)
    if section:
        return section.group(1).strip(), "section"
    # Keys inside a section belong to it; only the ones before the first section are top-level.
    key = None if in_section else _KEY.match(line)
    return (key.group(1).strip("\"'"), "key") if key else None
