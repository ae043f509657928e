"""The definitions in a source file, found with tree-sitter: the lines the chunker cuts along.

Only the outline matters here (which lines each function, method or type spans, and what it is
called), so the walk visits the top level and the bodies of types and namespaces, never the
inside of a function: the Python work grows with the number of top-level statements and members,
while the parsing itself runs in C.
"""

from __future__ import annotations

import importlib
import re
import time
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, replace
from functools import cache
from typing import NamedTuple

from tree_sitter import Language, Node, Parser, Tree

# Bits of Outline.line_flags.
COMMENT = 1  # the line is a comment or a docstring
LEADING = 2  # the line is a comment or an attribute that belongs to the definition right below it

# A function-like macro (`#define kmalloc(size, flags) ...`) is cut and searched like a function.
_FUNCTIONS = frozenset({"function", "method", "macro"})
# A function directly inside one of these is a method.
_CLASS_LIKE = frozenset(
    {
        "class",
        "struct",
        "union",
        "enum",
        "interface",
        "trait",
        "impl",
        "record",
        "object",
        "actor",
        "extension",
        "instance",
        "opaque",
    }
)


@dataclass(frozen=True)
class Definition:
    name: str
    symbol_type: str  # "function", "method", "class", "struct", "impl", "namespace", ...
    start: int  # 0-based row of the first line, leading comments and decorators included
    end: int  # 0-based row of the last line
    parent: str | None  # enclosing type and namespace names joined with "."
    members: tuple[Definition, ...] = ()  # methods and nested types, for a type or namespace

    @property
    def is_function(self) -> bool:
        return self.symbol_type in _FUNCTIONS

    @property
    def path(self) -> str:
        """The parent symbol of this definition's members."""
        return _join(self.parent, self.name) or self.name


@dataclass(frozen=True)
class Outline:
    definitions: list[Definition]  # top-level definitions in file order, none sharing a line
    line_flags: bytearray  # COMMENT / LEADING bits per line


# A resolver says whether a node is a definition: (symbol type, name as written) or None.
Resolver = Callable[[Node], tuple[str, str] | None]


@dataclass(frozen=True)
class _Grammar:
    module: str  # the grammar wheel
    entry: str  # its function returning the language
    kinds: dict[str, Resolver]  # node type -> resolver
    # Nodes whose children are looked at as if they were the node's siblings (bodies, #ifdef, ...).
    transparent: frozenset[str] = frozenset()
    # Nodes (export, decorators, template<>) whose definition starts where they start.
    wrappers: frozenset[str] = frozenset()
    comments: frozenset[str] = frozenset({"comment"})
    attributes: frozenset[str] = frozenset()  # stand-alone attribute lines above a definition
    # Body-less namespace declarations that name everything after them (C# `namespace A;`).
    scopes: frozenset[str] = frozenset()
    docstrings: bool = False  # bare string statements are documentation (Python)
    # Bodies of functions whose own definitions (a function declared in a function, a method assigned to an
    # object) are looked for, so that a module written as one factory function (fastify's `function
    # fastify(options) { ... function setErrorHandler(...) {...} }`) still has named functions.
    function_bodies: frozenset[str] = frozenset()
    # Top-level bodies open with `{` alone at the start of a line and close with `}` there (C's K&R and kernel
    # style): a function whose parse went astray is found again from its braces (_with_line_start_bodies).
    line_start_bodies: bool = False
    # Functions written as clauses (a Haskell signature and its equations, Elixir's `def` per pattern):
    # a function following one of the same name and parent extends it instead of starting another.
    clauses: bool = False
    # Macros the grammar cannot read are blanked before parsing (_blank_bare_macros): lines holding one macro alone
    # (C's and C++'s), and attribute macros between `class` and its name (C++'s).
    bare_macros: bool = False
    class_attribute_macros: bool = False


def outline(text: str, language: str, rel_path: str) -> Outline | None:
    """The definitions in `text`, or None when `language` has no grammar or it fails to load."""
    key = "tsx" if language == "typescript" and rel_path.endswith(".tsx") else language
    grammar = _GRAMMARS.get(key)
    loaded = _load(key) if grammar is not None else None
    if grammar is None or loaded is None:
        return None
    # Rows count "\n" only, like str.split("\n"), so the replacement cannot shift line numbers.
    source = text.encode("utf-8", "replace")
    if grammar.bare_macros:
        source = _blank_bare_macros(source, grammar.class_attribute_macros)
    rows = source.count(b"\n") + 1
    flags = bytearray(rows)
    definitions: list[Definition] = []
    start, text_from_start = 0, source  # the row this pass parses from: 0, then where a declaration begins again
    lines: list[bytes] | None = None  # the file's lines, split only when a pass lost its way
    for attempt in range(MAX_REPARSES + 1):
        walker = _Walker(grammar, text_from_start, rows)
        root = _parse(Parser(loaded), text_from_start).root_node
        lost = _first_lost_stretch(root)
        if lost is not None and lines is None:
            lines = source.split(b"\n")
        resume = _next_declaration(lines, lost) if lines is not None and lost is not None else None
        found = walker.walk(root)
        if resume is None or lines is None or lost is None or attempt == MAX_REPARSES:
            # The last pass keeps what it found after its lost stretch too: better than nothing there.
            definitions += found
            flags[start:] = walker.flags[start:]
            break
        first = lost.start_point.row
        rescued = _rescue(grammar, loaded, lines, first, resume)
        kept_until = resume if rescued is None else first
        definitions += [d for d in found if d.end < kept_until]
        flags[start:kept_until] = walker.flags[start:kept_until]
        if rescued is not None:
            definitions += rescued.definitions
            flags[first:resume] = rescued.line_flags[first:resume]
        # Rows before `start` are blank to the next pass, so its rows are the file's.
        start, text_from_start = resume, b"\n" * resume + b"\n".join(lines[resume:])
    if grammar.line_start_bodies:
        lines = lines if lines is not None else source.split(b"\n")
        definitions = _with_line_start_bodies(grammar, loaded, lines, definitions, flags)
    return Outline(definitions, flags)


# A line holding one upper-case macro and nothing else (`NLOHMANN_JSON_NAMESPACE_BEGIN`, `ABSL_NAMESPACE_BEGIN`,
# `G_BEGIN_DECLS`, `Q_OBJECT`), and upper-case attribute macros between `class` or `struct` and the name
# (`class LEVELDB_EXPORT DB`, `class ABSL_NULLABILITY_COMPATIBLE ABSL_ATTRIBUTE_OWNER AnyInvocable`): the C and C++
# grammars read neither, and their error recovery loses the rest of the scope. nlohmann-json's adl_serializer.hpp
# gave no definition at all (`adl_serializer`, a name search's answer, ranked below a misparse of another file);
# over the 667 files of semble-dev's abseil-cpp and nlohmann-json that hold such macros, the outlines' definitions
# went 6,163 -> 14,393 (523 files more, 11 fewer: spurious pieces of the old recovery, such as `function p_` in
# discrete_distribution.h, now the class with its members). Spaces keep every byte's offset. The line's pattern
# opens with its line end, so that the regex engine looks for the newline first (119 MB/s against 31 with `^`
# in multi-line mode; a file's first line is never such a macro in practice); the attributes' only in C++, where
# they occur (94 MB/s).
_BARE_MACRO_LINE = re.compile(rb"\n[ \t]*_*[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+_*[ \t\r]*(?=\n)")
_CLASS_ATTRIBUTE_MACROS = re.compile(
    rb"(?:class|struct|union)((?:[ \t]+_*[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+_*)+)"  # the keyword, then its macros
    rb"(?=[ \t]+[A-Za-z_]\w*[ \t\r]*(?:final\b|[:{<\n]))"  # before the name and what follows a class's name
)


def _blank_bare_macros(source: bytes, attributes: bool) -> bytes:
    """`source` with its bare macro lines (and, where `attributes`, its class attribute macros) made spaces."""
    source = _BARE_MACRO_LINE.sub(lambda m: b"\n" + b" " * (len(m.group()) - 1), source)
    if not attributes:
        return source

    def blank(m: re.Match[bytes]) -> bytes:
        before = source[m.start() - 1 : m.start()]
        if before.isalnum() or before == b"_":
            return m.group()  # `subclass`, `my_struct`: not the keyword (a lookbehind halved the pattern's speed)
        return m.group()[: m.start(1) - m.start()] + b" " * (m.end(1) - m.start(1))

    return _CLASS_ATTRIBUTE_MACROS.sub(blank, source)


# A top-level stretch of at least this many lines that the parser could not make sense of ends a pass: a
# construct its grammar does not know (Kotlin's `value class X\n@PublishedApi internal constructor(...)`) would
# otherwise hide every definition after it (`interface Channel` and 250 more lines of kotlinx-coroutines'
# Channel.kt). The next pass parses from the first line after its start that begins a declaration. Measured on
# semble-dev's code: 4.3% of Kotlin's lines, 2.9% of C++'s and 1.9% of C's sat in such stretches.
LOST_STRETCH_ROWS = 20
MAX_REPARSES = 8


def _first_lost_stretch(root: Node) -> Node | None:
    for child in root.children:
        if child.is_error and child.end_point.row - child.start_point.row >= LOST_STRETCH_ROWS:
            return child
    return None


def _next_declaration(lines: list[bytes], lost: Node) -> int | None:
    """The first row after the lost stretch's first that starts, unindented, with a word, an annotation or a
    preprocessor line (where a top-level declaration can begin), or the comments right above it. Where the
    stretch holds a brace closing at the start of a line, the search starts after the first one: that brace
    ends the definition the parser stumbled in, while the lines before it are that definition's own
    (a `#define` or a label inside a C function would otherwise start the next pass inside the function)."""
    first = lost.start_point.row
    last = min(lost.end_point.row + 1, len(lines))
    closer = next((row for row in range(first + 1, last) if _COLUMN_ZERO_CLOSER.match(lines[row])), first)
    for after in dict.fromkeys((closer, first)):
        for row in range(after + 1, last):
            line = lines[row]
            if line[:1].isalpha() or line[:1] in (b"@", b"_", b"#", b"$"):
                # From the comments right above it, which document it.
                while row - 1 > after and lines[row - 1].lstrip()[:1] in (b"/", b"*", b"#", b"-", b"@"):
                    row -= 1
                return row
    return None


# `}` or `};` at the start of a line, a comment after it allowed: how C-family code closes a top-level block.
_COLUMN_ZERO_CLOSER = re.compile(rb"\}[;,]?\s*(?://.*|/\*.*)?$")
# The line before a `{` that opens a block of definitions or data, not a function's body (C++ in a .h file
# read as C: `namespace std _GLIBCXX_VISIBILITY(default)` would otherwise become one function of the file).
_HOLDS_DEFINITIONS = re.compile(rb"\s*(?:template\b.*|namespace|extern|class|struct|union|enum|typedef)\b|.*=\s*$")
_COLUMN_ZERO_OPENER = re.compile(rb"\{\s*(?://.*|/\*.*)?$")


def _rescue(
    grammar: _Grammar, language: Language, lines: list[bytes], first: int, resume: int, skip: range = range(0)
) -> Outline | None:
    """The definitions of rows `first` to `resume` - 1, which the parser lost, parsed again with the bodies of
    blocks that open and close at the start of a line (`{` ... `}`, as C functions are written) left blank:
    a preprocessor line inside a function (`#define N(val) case NETDEV_##val: ...` in the Linux kernel's
    net/core/dev.c) or a macro the grammar cannot read sends its error recovery astray for the rest of the
    file, while the function's header and braces alone parse. The rows in `skip` are left blank too (the other
    branches of an `#if` choosing between headers). None where the rows hold no such block."""
    piece = lines[first:resume]
    blanked: list[bytes] = []
    inside = False
    above = b""  # the last line with text before this one
    for row, line in enumerate(piece, first):
        if inside and _COLUMN_ZERO_CLOSER.match(line):
            inside = False
        blanked.append(b"" if inside or row in skip else line)
        inside = inside or bool(_COLUMN_ZERO_OPENER.match(line) and not _HOLDS_DEFINITIONS.match(above))
        above = line if line.strip() else above
    if blanked == piece:
        return None
    source = b"\n" * first + b"\n".join(blanked)
    walker = _Walker(grammar, source, first + len(piece))
    found = walker.walk(Parser(language).parse(source).root_node)
    return Outline(found, walker.flags)


def _with_line_start_bodies(
    grammar: _Grammar, language: Language, lines: list[bytes], definitions: list[Definition], flags: bytearray
) -> list[Definition]:
    """`definitions` with the functions whose `{` ... `}` at the start of a line no definition covers, found by
    parsing their header and braces alone (_rescue). The grammar's error recovery can spill a function into
    pieces without erroring for 20 rows: in the Linux kernel's kernel/sched/core.c a macro loop
    (`for_each_possible_cpu(i) sum += ...;`) left nr_context_switches unnamed, and the rest of its body and
    the next function became one function named `cpu_rq`. Such a definition (starting on an indented line
    inside a body, or holding several such blocks: one function has one body) gives way to the functions
    found from the braces."""
    blocks = _line_start_blocks(lines)
    if not blocks:
        return definitions
    openers = [block.opener for block in blocks]
    suspect = [d for d in definitions if d.is_function and _suspect(d, lines, blocks, openers)]
    kept = [d for d in definitions if d not in suspect]
    found: list[Definition] = []
    for header, opener, closer, skip in blocks:
        if any(d.start <= opener <= d.end for d in kept) or header == opener:
            continue
        if any(header <= d.start and d.end <= closer for d in kept):
            continue  # it holds whole definitions: a namespace or `extern "C"` block, not a function's body
        rescued = _rescue(grammar, language, lines, header, closer + 1, skip)
        candidates = [d for d in rescued.definitions if d.is_function] if rescued is not None else []
        written = b"\n".join(lines[header : skip.start if skip else opener])
        if not candidates and (name := _header_name(written)) is not None:
            # A header the grammar cannot read at all (`static __printf(3, 4) void slab_err(...)`).
            candidates = [Definition(name, "function", header, closer, None)]
        for d in candidates:
            if not any(k.start <= d.end and d.start <= k.end for k in kept + found):
                # With the comment right above it, which documents it.
                start = d.start
                while (
                    start > 0 and lines[start - 1].lstrip()[:1] in (b"/", b"*") and not _inside(kept + found, start - 1)
                ):
                    start -= 1
                found.append(replace(d, start=start))
    if not found:
        return definitions
    # A suspect stays where nothing found from the braces overlaps it.
    dropped = [d for d in suspect if any(f.start <= d.end and d.start <= f.end for f in found)]
    kept += [d for d in suspect if d not in dropped]
    kept += _between_blocks(grammar, language, lines, dropped, kept + found)
    return sorted(kept + found, key=lambda d: d.start)


def _between_blocks(
    grammar: _Grammar, language: Language, lines: list[bytes], dropped: list[Definition], covered: list[Definition]
) -> list[Definition]:
    """The definitions in the rows of dropped suspects that no definition covers, each run of such rows parsed
    alone: what lies between the functions found from their braces is top-level code the suspect swallowed. In
    the Linux kernel's include/linux/slab.h the parse of `kmalloc_noprof` ran on for 245 rows (an attribute
    macro in its header), over the `#define kmalloc(...)` right after its body and 27 more macros, which a
    search by name then never found."""
    taken = [False] * len(lines)
    for d in covered:
        for covered_row in range(d.start, min(d.end, len(lines) - 1) + 1):
            taken[covered_row] = True
    out: list[Definition] = []
    for suspect in dropped:
        row = suspect.start
        while row <= suspect.end:
            if taken[row]:
                row += 1
                continue
            end = row
            while end + 1 <= suspect.end and not taken[end + 1]:
                end += 1
            source = b"\n" * row + b"\n".join(lines[row : end + 1])
            root = Parser(language).parse(source).root_node
            for d in _Walker(grammar, source, end + 1).walk(root):
                # A run the grammar cannot read either gives its macros alone (preprocessor lines parse line by
                # line): in net/core/pktgen.c a run of 327 rows of `pf(...)` lists came out as one function.
                if row <= d.start and d.end <= end and (not root.has_error or d.symbol_type == "macro"):
                    out.append(d)
            row = end + 1
    return out


_HEADER_CALL = re.compile(rb"([A-Za-z_]\w*)\s*\(")
# What may follow a function's parameter list before its body: attribute macros (`__releases(x)`), `const`.
_AFTER_PARAMETERS = re.compile(rb"(?:\s|const\b|[A-Za-z_]\w*\s*\((?:[^()]|\([^()]*\))*\))*")


def _header_name(header: bytes) -> str | None:
    """The function's name in a header, read as text: the identifier before the first parenthesised group after
    which only attribute macros follow (`static __printf(3, 4) void slab_err(...)` -> slab_err)."""
    for match in _HEADER_CALL.finditer(header):
        depth, end = 0, None
        for index in range(match.end() - 1, len(header)):
            depth += {40: 1, 41: -1}.get(header[index], 0)  # ( and )
            if depth == 0:
                end = index
                break
        if end is None:
            return None
        if _AFTER_PARAMETERS.fullmatch(header, end + 1):
            return match.group(1).decode("utf-8", "replace")
    return None


def _suspect(definition: Definition, lines: list[bytes], blocks: list[_Block], openers: list[int]) -> bool:
    """Whether a function found by the parse is a piece of its recovery: it starts on an indented line or inside
    another block's body, or it holds several bodies (one function has one)."""
    if lines[definition.start][:1] in (b" ", b"\t"):
        return True
    holding = bisect_right(openers, definition.end) - bisect_left(openers, definition.start)
    around = bisect_right(openers, definition.start) - 1  # the last block opening at or before its start
    return holding > 1 or (around >= 0 and blocks[around].opener < definition.start <= blocks[around].closer)


def _inside(definitions: list[Definition], row: int) -> bool:
    return any(d.start <= row <= d.end for d in definitions)


class _Block(NamedTuple):
    header: int  # the header's first row
    opener: int  # the `{` row
    closer: int  # the `}` row
    skip: range  # rows of the header left out: the other branches of an `#if` choosing between headers


def _line_start_blocks(lines: list[bytes]) -> list[_Block]:
    """Each block opening and closing at the start of a line, with its header: the run of lines right above the
    `{` back to a blank line, a preprocessor line or the end of a statement. Where an `#if` chooses between
    headers right above the `{` (kernel/fork.c's `SYSCALL_DEFINE5(clone, ...)` in four variants), the header
    is its first branch's."""
    blocks: list[_Block] = []
    row = 0
    while row < len(lines):
        if not _COLUMN_ZERO_OPENER.match(lines[row]):
            row += 1
            continue
        opener = row
        closer = next((r for r in range(opener + 1, len(lines)) if _COLUMN_ZERO_CLOSER.match(lines[r])), None)
        if closer is None:
            break
        header, skip = opener, range(0)
        if opener > 0 and _ENDIF.match(lines[opener - 1]) and (branches := _first_branch(lines, opener - 1)):
            header, skip = branches[0], range(branches[1], opener)
        while header > 0:
            above = lines[header - 1].rstrip()
            if not above or above[:1] == b"#" or above.endswith((b";", b"}", b"*/", b"{")):
                break
            header -= 1
        if not _HOLDS_DEFINITIONS.match(lines[opener - 1] if opener else b"") or skip:
            blocks.append(_Block(header, opener, closer, skip))
        row = closer + 1
    return blocks


_ENDIF = re.compile(rb"\s*#\s*endif\b")
_IF = re.compile(rb"\s*#\s*if")
_ELSE = re.compile(rb"\s*#\s*(?:else|elif)")


def _first_branch(lines: list[bytes], endif: int) -> tuple[int, int] | None:
    """(first row, end row) of the first branch of the `#if` that the `#endif` at row `endif` closes."""
    depth, branch_end = 0, endif
    for row in range(endif - 1, -1, -1):
        line = lines[row]
        if _ENDIF.match(line):
            depth += 1
        elif _IF.match(line):
            if depth == 0:
                return (row + 1, branch_end) if branch_end > row + 1 else None
            depth -= 1
        elif depth == 0 and _ELSE.match(line):
            branch_end = row
    return None


# Whether a parse yields the GIL as it goes (_reader). A parse process has no other thread to yield to: there the
# parser takes the whole text at once. py-spy put 10 % of a kernel parse process's samples in the read callback;
# its CPU time over 101 kernel C files (3.8 MB, the same outlines): 0.51-0.56 s with the callback, 0.49-0.53 s
# without (under load: each yield may also hand the core to another process).
_yield_while_parsing = True


def parse_without_yielding() -> None:
    """This process parses on no thread that another waits on (a parse process): give the parser whole texts."""
    global _yield_while_parsing
    _yield_while_parsing = False


def _parse(parser: Parser, source: bytes) -> Tree:
    return parser.parse(_reader(source) if _yield_while_parsing else source)


def _reader(source: bytes, piece: int = 16384):
    """Feed the parser in pieces, yielding the GIL once per piece: a parse holds it throughout otherwise,
    and a 500 KB file would stall the UI thread for ~60 ms (measured: 31 ms -> 7 ms on a 230 KB file).
    The parser asks for text far more often than once a piece (27,000 calls over 8 MB of the standard
    library), so it yields only when it has moved on by a piece: 3.3 s of a first index's 20 s were yields."""
    yielded = [-piece]

    def read(offset: int, _point) -> bytes:
        if offset - yielded[0] >= piece:
            yielded[0] = offset
            time.sleep(0)
        return source[offset : offset + piece]

    return read


@cache
def _load(key: str) -> Language | None:
    grammar = _GRAMMARS[key]
    try:
        return Language(getattr(importlib.import_module(grammar.module), grammar.entry)())
    except Exception:  # a missing or ABI-incompatible wheel must only cost the definition awareness
        return None


# Walking the bodies of every function doubled the outline's time on JavaScript made of small functions; below
# this many rows a function fits the 256-token chunk (a line of code is 5-15 tokens), and the chunker opens
# only functions that do not fit.
NESTED_MIN_ROWS = 12


class _Walker:
    def __init__(self, grammar: _Grammar, source: bytes, line_count: int) -> None:
        self.grammar = grammar
        self.source = source
        self.flags = bytearray(line_count)
        # The last row taken by a definition or a type header; rows only ever grow, which keeps the
        # definitions in file order and disjoint even when several share a line.
        self.last = -1

    def walk(self, root: Node) -> list[Definition]:
        """The definitions under the tree's root; names are read from this walker's source meanwhile."""
        token = _SOURCE.set(self.source)
        try:
            return self.collect(root, None, in_class=False)
        finally:
            _SOURCE.reset(token)

    def collect(self, node: Node, parent: str | None, in_class: bool) -> list[Definition]:
        found: list[Definition] = []
        scope = parent
        for child in node.named_children:
            if child.type in self.grammar.scopes and child.child_by_field_name("body") is None:
                qualifier, name = _split_name(_text(child.child_by_field_name("name")))
                scope = _join(parent, *qualifier, name)
            else:
                self._visit(child, scope, in_class, found)
        return found

    def _visit(self, node: Node, parent: str | None, in_class: bool, found: list[Definition]) -> None:
        grammar = self.grammar
        if node.type in grammar.comments:
            self._mark(node, COMMENT | LEADING)
        elif node.type in grammar.attributes:
            self._mark(node, LEADING)
        elif grammar.docstrings and _is_docstring(node):
            self._mark(node, COMMENT)
        elif (resolved := self._resolve(node)) is not None:
            self._define(node, *resolved, parent, in_class, found)
        elif node.type in grammar.transparent or node.is_error:
            # Definitions inside a stretch the parser could not make sense of are still definitions.
            found.extend(self.collect(node, parent, in_class))

    def _resolve(self, node: Node) -> tuple[Node, str, str] | None:
        """(definition node, symbol type, name) for a definition, looking inside wrappers."""
        if node.type in self.grammar.wrappers:
            for child in node.named_children:
                if (resolved := self._resolve(child)) is not None:
                    return resolved
            return None
        resolver = self.grammar.kinds.get(node.type)
        described = resolver(node) if resolver is not None else None
        return (node, *described) if described is not None else None

    def _define(
        self,
        outer: Node,
        node: Node,
        symbol_type: str,
        written: str,
        parent: str | None,
        in_class: bool,
        found: list[Definition],
    ) -> None:
        qualifier, name = _split_name(written)
        parent = _join(parent, *qualifier)
        header, end = outer.start_point.row, _end_row(outer, self.source)
        if symbol_type in _FUNCTIONS:
            if (body := _detached_body(outer)) is not None:
                end = _end_row(body, self.source)
            if header > self.last and name:
                previous = found[-1] if found else None
                if (
                    self.grammar.clauses
                    and previous is not None
                    and previous.is_function
                    and previous.name == name
                    and previous.parent == parent
                ):
                    found[-1] = replace(previous, end=end)
                else:
                    kind = symbol_type if symbol_type == "macro" else "method" if in_class or qualifier else "function"
                    start = self._leading_start(header)
                    self.last = header
                    # A function this short fits one chunk and is never opened: its body is not walked.
                    short = end - header < NESTED_MIN_ROWS
                    nested = () if short else self._nested(node, _join(parent, name))
                    found.append(Definition(name, kind, start, end, parent, nested))
                self.last = end
            return
        if header <= self.last or not name:
            # Shares its first line with what came before (`namespace a { namespace b {`): it cannot
            # be a chunk of its own, but its members still can.
            self.last = max(self.last, header)
            found.extend(self.collect(node, _join(parent, name), symbol_type in _CLASS_LIKE))
            return
        start = self._leading_start(header)
        self.last = header
        members = self.collect(node, _join(parent, name), symbol_type in _CLASS_LIKE)
        found.append(Definition(name, symbol_type, start, end, parent, tuple(members)))
        self.last = end

    def _nested(self, node: Node, path: str | None) -> tuple[Definition, ...]:
        """The definitions in the body of function `node`, where its grammar looks into function bodies."""
        bodies = self.grammar.function_bodies
        for _ in range(4):  # from a declaration to its function value and that value's body
            if not bodies or node.type in bodies:
                break
            inner = next(
                (node.child_by_field_name(field) for field in _FUNCTION_PARTS if node.child_by_field_name(field)),
                node.named_children[0] if node.type in _DECLARATIONS and node.named_children else None,
            )
            if inner is None:
                break
            node = inner
        return tuple(self.collect(node, path, in_class=False)) if bodies and node.type in bodies else ()

    def _leading_start(self, header: int) -> int:
        row = header
        while row - 1 > self.last and self.flags[row - 1] & LEADING:
            row -= 1
        return row

    def _mark(self, node: Node, bits: int) -> None:
        line_start = node.start_byte - node.start_point.column
        if self.source[line_start : node.start_byte].strip():
            return  # a trailing comment after code: the line is code
        for row in range(node.start_point.row, _end_row(node, self.source) + 1):
            self.flags[row] |= bits


def _end_row(node: Node, source: bytes) -> int:
    row, column = node.end_point
    # Some grammars end a node after its newline: a comment at column 0 of the next line, a Scala
    # definition without braces in the indentation of the next one.
    ends_in_indent = not source[node.end_byte - column : node.end_byte].strip()
    return row - 1 if ends_in_indent and row > node.start_point.row else row


def _is_docstring(node: Node) -> bool:
    return (
        node.type == "expression_statement"
        and node.named_child_count == 1
        and node.named_children[0].type in ("string", "concatenated_string")
    )


# The bytes the tree being walked was parsed from. A tree parsed through a read callback (_reader) reads a node's
# text through that callback again: 43 us a name against 1.3 us for a slice (net/core/dev.c), 40 % of the
# outline's time on JavaScript full of assigned functions.
_SOURCE: ContextVar[bytes | None] = ContextVar("_SOURCE", default=None)


def _text(node: Node | None) -> str:
    if node is None:
        return ""
    source = _SOURCE.get()
    raw = source[node.start_byte : node.end_byte] if source is not None else node.text
    return raw.decode("utf-8", "replace") if raw is not None else ""


def _join(*parts: str | None) -> str | None:
    return ".".join(part for part in parts if part) or None


_GENERIC_ARGS = re.compile(r"<[^<>]*>|\[[^\[\]]*\]")
_NAME_SEPARATOR = re.compile(r"::|\.|\\")
_WORD = re.compile(r"\w")


def _split_name(written: str) -> tuple[list[str], str]:
    """(qualifier parts, plain name): `Widget<T>::grow` -> (["Widget"], "grow"), `*Server` -> ([], "Server")."""
    text = " ".join(written.split())
    if not _WORD.search(text):
        # An operator (Haskell's `<+>`, Scala's `<*>`, Ruby's `[]=`): its `<...>`, `[]` and `.` are the name.
        return [], text
    text = text.strip("*&\"' ")
    if "operator" not in text:  # operator[] and operator< are names, not type arguments
        previous = None
        while previous != text:
            previous, text = text, _GENERIC_ARGS.sub("", text)
    parts = [part.strip("*& ") for part in _NAME_SEPARATOR.split(text)]
    parts = [part for part in parts if part]
    return (parts[:-1], parts[-1]) if parts else ([], "")


# ---- resolvers -------------------------------------------------------------------------------------


def _named(symbol_type: str, *, needs_body: bool = False) -> Resolver:
    """A definition named by its `name` field; `needs_body` rejects declarations and prototypes."""

    def resolve(node: Node) -> tuple[str, str] | None:
        name = node.child_by_field_name("name")
        if name is None or (needs_body and node.child_by_field_name("body") is None):
            return None
        return symbol_type, _text(name)

    return resolve


def _c_function(node: Node) -> tuple[str, str] | None:
    # The name sits at the bottom of a declarator chain: pointer -> function -> (qualified) identifier.
    target = node.child_by_field_name("declarator")
    while target is not None and target.type.endswith("declarator"):
        inner = target.child_by_field_name("declarator")
        target = inner if inner is not None else next(iter(target.named_children), None)
    return ("function", _text(target)) if target is not None else None


def _c_macro_function(node: Node) -> tuple[str, str] | None:
    """`SYSCALL_DEFINE3(socket, int, family, ...) { ... }`: a function whose header a macro writes parses as a
    call missing its `;` followed by a block; it is named by the macro's first argument, the function's name
    in the kernel's SYSCALL_DEFINEn, BPF_CALL_n and their kind (ctags names it after the macro)."""
    call = node.named_children[0] if node.named_child_count == 1 else None
    if call is None or call.type != "call_expression" or _detached_body(node) is None:
        return None
    arguments = call.child_by_field_name("arguments")
    first = arguments.named_children[0] if arguments is not None and arguments.named_children else None
    return ("function", _text(first)) if first is not None and first.type == "identifier" else None


def _detached_body(node: Node) -> Node | None:
    """The block right after a C statement that lacks its `;` (a macro-written function header), if any."""
    if node.type != "expression_statement" or not node.children or not node.children[-1].is_missing:
        return None
    body = node.next_named_sibling
    return body if body is not None and body.type == "compound_statement" else None


_C_TYPES = {
    "struct_specifier": "struct",
    "union_specifier": "union",
    "enum_specifier": "enum",
    "class_specifier": "class",
}


def _c_typedef(node: Node) -> tuple[str, str] | None:
    """`typedef struct { ... } Name;` defines the struct Name."""
    spec = node.child_by_field_name("type")
    declarator = node.child_by_field_name("declarator")
    if spec is None or declarator is None or spec.type not in _C_TYPES:
        return None
    return (_C_TYPES[spec.type], _text(declarator)) if spec.child_by_field_name("body") else None


def _rust_impl(node: Node) -> tuple[str, str] | None:
    # Named after the implementing type so its methods' parent is the type they belong to.
    target = node.child_by_field_name("type")
    return ("impl", _text(target)) if target is not None else None


def _go_method(node: Node) -> tuple[str, str] | None:
    name = node.child_by_field_name("name")
    receiver = node.child_by_field_name("receiver")
    receiver_types = [p.child_by_field_name("type") for p in receiver.named_children] if receiver else []
    if name is None or not receiver_types or receiver_types[0] is None:
        return None
    return "method", f"{_split_name(_text(receiver_types[0]))[1]}.{_text(name)}"


_GO_TYPES = {"struct_type": "struct", "interface_type": "interface"}


def _go_type(node: Node) -> tuple[str, str] | None:
    specs = [child for child in node.named_children if child.type == "type_spec"]
    if len(specs) != 1:
        return None
    name, value = specs[0].child_by_field_name("name"), specs[0].child_by_field_name("type")
    kind = _GO_TYPES.get(value.type) if value is not None else None
    return (kind, _text(name)) if kind and name is not None else None


_JS_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function"})
# The fields leading from a definition to its function's body, and the declarations holding a declarator.
_FUNCTION_PARTS = ("body", "value", "right")
_DECLARATIONS = frozenset({"lexical_declaration", "variable_declaration", "expression_statement"})
# Objects whose properties are the module's exports: `exports.send = ...` defines the function send.
_JS_EXPORTS = frozenset({"exports", "module.exports", "this"})


def _js_assignment(node: Node) -> tuple[str, str] | None:
    """`res.sendFile = function sendFile(...)`, `fastify.route = function (...)`, `exports.x = () => ...`:
    a function assigned to a property is a method of the object written before it (`Router.prototype.use`
    is Router's)."""
    target, value = node.child_by_field_name("left"), node.child_by_field_name("right")
    if target is None or value is None or target.type != "member_expression" or value.type not in _JS_FUNCTION_VALUES:
        return None
    owner, name = target.child_by_field_name("object"), target.child_by_field_name("property")
    if owner is None or name is None or name.type != "property_identifier":
        return None
    written = " ".join(_text(owner).split())
    written = written.removesuffix(".prototype")
    return "function", _text(name) if written in _JS_EXPORTS else f"{written}.{_text(name)}"


def _js_pair(node: Node) -> tuple[str, str] | None:
    """`post: async (url) => ...` in an object literal is a method of that object."""
    key, value = node.child_by_field_name("key"), node.child_by_field_name("value")
    if key is None or value is None or value.type not in _JS_FUNCTION_VALUES:
        return None
    return "function", _text(key).strip("\"'")


def _js_object(value: Node) -> bool:
    """An object literal holding at least one function (`const api = { get(url) {...}, post: ... }`)."""
    return value.type == "object" and any(
        child.type == "method_definition" or (child.type == "pair" and _js_pair(child) is not None)
        for child in value.named_children
    )


def _js_variable(node: Node) -> tuple[str, str] | None:
    """`const add = (a, b) => a + b` defines the function add; `const api = { get(url) {...} }` the object api,
    its functions the object's methods."""
    declarators = [child for child in node.named_children if child.type == "variable_declarator"]
    if len(declarators) != 1:
        return None
    name = declarators[0].child_by_field_name("name")
    value = declarators[0].child_by_field_name("value")
    if name is None or name.type != "identifier" or value is None:
        return None
    if _js_object(value):
        return "object", _text(name)
    return ("function", _text(name)) if value.type in _JS_FUNCTION_VALUES else None


def _js_field(node: Node) -> tuple[str, str] | None:
    """A class field holding an arrow function (`onClick = () => {...}`) is a method."""
    name = node.child_by_field_name("name")
    name = name if name is not None else node.child_by_field_name("property")
    value = node.child_by_field_name("value")
    if name is None or value is None or value.type not in _JS_FUNCTION_VALUES:
        return None
    return "function", _text(name)


def _keyword(symbol_type: str, name: str) -> Resolver:
    """A definition named by its keyword: Swift's `init` and `subscript`, Kotlin's `constructor`."""
    return lambda node: (symbol_type, name)


def _first(node: Node | None, node_type: str) -> Node | None:
    """The first node of `node_type` in `node`'s subtree, depth first (a type's head in a type pattern)."""
    stack = [node] if node is not None else []
    while stack:
        current = stack.pop()
        if current.type == node_type:
            return current
        stack.extend(reversed(current.named_children))
    return None


def _kotlin_class(node: Node) -> tuple[str, str] | None:
    # `class`, `interface` and `enum class` are all class_declaration: the keyword or modifier tells.
    name = node.child_by_field_name("name")
    if name is None:
        return None
    if any(child.type == "interface" for child in node.children):
        kind = "interface"
    elif any(
        modifier.type == "class_modifier" and modifier.text == b"enum"
        for child in node.named_children
        if child.type == "modifiers"
        for modifier in child.named_children
    ):
        kind = "enum"
    else:
        kind = "class"
    return kind, _text(name).strip("`")


_KOTLIN_BODIES = frozenset({"class_body", "enum_class_body"})


def _kotlin_function(node: Node) -> tuple[str, str] | None:
    name = node.child_by_field_name("name")
    # Abstract and interface members without a body are declarations, left out as in Java.
    if name is None or not any(child.type == "function_body" for child in node.named_children):
        return None
    written = _text(name).strip("`")
    if node.parent is None or node.parent.type in _KOTLIN_BODIES or node.parent.type == "lambda_literal":
        return "function", written
    # A top-level extension function (`fun Cart.total()`) is filed under the type it extends, as a Go
    # method is under its receiver: the receiver is the type written before the name.
    for child in node.named_children:
        if child.start_byte >= name.start_byte:
            break
        if child.type in ("user_type", "nullable_type"):
            return "function", f"{_split_name(_text(child).rstrip('?'))[1]}.{written}"
    return "function", written


def _kotlin_companion(node: Node) -> tuple[str, str] | None:
    # An unnamed companion object is called Companion, which is also how Kotlin names it.
    name = node.child_by_field_name("name")
    return "object", _text(name) if name is not None else "Companion"


def _swift_type(node: Node) -> tuple[str, str] | None:
    # class, struct, enum, extension and actor are all class_declaration: its keyword is the symbol type.
    # An extension is named after the type it extends, so its methods' parent is that type.
    kind = node.child_by_field_name("declaration_kind")
    name = node.child_by_field_name("name")
    return (_text(kind), _text(name)) if kind is not None and name is not None else None


def _scala_extension(node: Node) -> tuple[str, str] | None:
    """`extension (xs: List[A]) def ...` is named after the type it extends."""
    parameters = node.child_by_field_name("parameters")
    candidates = parameters.named_children if parameters is not None else []
    first = next((child for child in candidates if child.type == "parameter"), None)
    extended = first.child_by_field_name("type") if first is not None else None
    return ("extension", _text(extended)) if extended is not None else None


def _scala_given(node: Node) -> tuple[str, str] | None:
    """A given instance is named by its name or, when anonymous, by the type it provides."""
    name = node.child_by_field_name("name")
    name = name if name is not None else node.child_by_field_name("return_type")
    return ("instance", _text(name)) if name is not None else None


def _lua_function(node: Node) -> tuple[str, str] | None:
    # `function M:draw()` is as much a method of M as `function M.draw()`.
    name = node.child_by_field_name("name")
    return ("function", _text(name).replace(":", ".")) if name is not None else None


_LUA_NAMES = frozenset({"identifier", "dot_index_expression"})


def _lua_assignment(node: Node) -> tuple[str, str] | None:
    """`M.draw = function() ... end` (one target, one function value) defines M.draw."""
    lists = {child.type: child.named_children for child in node.named_children}
    targets, values = lists.get("variable_list", []), lists.get("expression_list", [])
    if (
        len(targets) != 1
        or len(values) != 1
        or targets[0].type not in _LUA_NAMES
        or values[0].type != "function_definition"
    ):
        return None
    return "function", _text(targets[0])


def _haskell_name(node: Node) -> Node | None:
    name = node.child_by_field_name("name")
    if name is None:  # `foo, bar :: Int` names several; the first one's equations follow
        names = node.child_by_field_name("names")
        name = names.named_children[0] if names is not None and names.named_children else None
    if name is None:  # an operator defined infix: `x <+> y = ...`
        infix = next((child for child in node.named_children if child.type == "infix"), None)
        name = infix.child_by_field_name("operator") if infix is not None else None
    if name is not None and name.type == "prefix_id":  # `(<+>)`
        name = name.named_children[0] if name.named_children else None
    return name


def _haskell_function(node: Node) -> tuple[str, str] | None:
    # A signature and the equations after it come out as one function: the grammar groups clauses.
    name = _haskell_name(node)
    return ("function", _text(name).strip("`")) if name is not None else None


def _haskell_signature(node: Node) -> tuple[str, str] | None:
    resolved = _haskell_function(node)
    # In a class, a signature without a default equation below it is a declaration, left out as in Java:
    # the class stays whole rather than cut into one-line methods.
    if resolved is not None and node.parent is not None and node.parent.type == "class_declarations":
        following = node.next_named_sibling
        if following is None or following.type not in ("function", "bind") or _haskell_function(following) != resolved:
            return None
    return resolved


def _haskell_instance(node: Node) -> tuple[str, str] | None:
    """Named after the type it is for, as a Rust impl is (`instance Show (Tree a)` -> Tree), so that its
    equations' parent is that type; the class's name when the type has none (`instance C [a]`)."""
    target = _first(node.child_by_field_name("patterns"), "name")
    target = target if target is not None else node.child_by_field_name("name")
    return ("instance", _text(target)) if target is not None else None


_ELIXIR_FUNCTIONS = frozenset(
    {"def", "defp", "defmacro", "defmacrop", "defguard", "defguardp", "defdelegate", "defn", "defnp"}
)
_ELIXIR_TYPES = {"defmodule": "module", "defprotocol": "protocol", "defimpl": "impl"}


def _elixir_call(node: Node) -> tuple[str, str] | None:
    # Elixir's definitions are ordinary macro calls (`def name(args) do ... end`): the call's target says
    # which, its first argument names it.
    target = node.child_by_field_name("target")
    keyword = _text(target) if target is not None and target.type == "identifier" else ""
    if keyword not in _ELIXIR_FUNCTIONS and keyword not in _ELIXIR_TYPES:
        return None
    arguments = next((child for child in node.named_children if child.type == "arguments"), None)
    if arguments is None or not arguments.named_children:
        return None
    head = arguments.named_children[0]
    if keyword in _ELIXIR_FUNCTIONS:
        signature: Node | None = head
        if head.type == "binary_operator":  # `def name(x) when is_integer(x)`
            signature = head.child_by_field_name("left")
        if signature is not None and signature.type == "call":  # `def name(args)`; a bare identifier has none
            signature = signature.child_by_field_name("target")
        return ("function", _text(signature)) if signature is not None and signature.type == "identifier" else None
    if head.type != "alias":
        return None
    name = _text(head)
    if keyword == "defimpl":
        # Named as Elixir names the module it compiles to: `defimpl Size, for: Map` -> Size.Map.
        keywords = [child for child in arguments.named_children if child.type == "keywords"]
        for pair in (pair for child in keywords for pair in child.named_children):
            key, value = pair.child_by_field_name("key"), pair.child_by_field_name("value")
            if _text(key).strip().rstrip(":") == "for" and value is not None and value.type == "alias":
                name = f"{name}.{_text(value)}"
    return _ELIXIR_TYPES[keyword], name


_ZIG_CONTAINERS = {
    "struct_declaration": "struct",
    "enum_declaration": "enum",
    "union_declaration": "union",
    "opaque_declaration": "opaque",
}


def _zig_container(node: Node) -> tuple[str, str] | None:
    """`const Point = struct { ... }`: a Zig type is a value, named by the constant that holds it."""
    children = node.named_children
    name = next((child for child in children if child.type == "identifier"), None)
    kind = next((_ZIG_CONTAINERS[child.type] for child in children if child.type in _ZIG_CONTAINERS), None)
    return (kind, _text(name)) if name is not None and kind is not None else None


# ---- grammars --------------------------------------------------------------------------------------

_FUNCTION = _named("function")
_FUNCTION_WITH_BODY = _named("function", needs_body=True)

_JAVASCRIPT = _Grammar(
    "tree_sitter_javascript",
    "language",
    kinds={
        "function_declaration": _FUNCTION,
        "generator_function_declaration": _FUNCTION,
        "class_declaration": _named("class"),
        "method_definition": _FUNCTION,
        "lexical_declaration": _js_variable,
        "variable_declaration": _js_variable,
        "field_definition": _js_field,
        "assignment_expression": _js_assignment,
        "pair": _js_pair,
    },
    # An object literal's members are looked for only in a declaration resolved as an object (_js_variable).
    transparent=frozenset({"class_body", "variable_declarator", "object"}),
    wrappers=frozenset({"export_statement", "expression_statement"}),
    attributes=frozenset({"decorator"}),
    function_bodies=frozenset({"statement_block"}),
)

_TYPESCRIPT = replace(
    _JAVASCRIPT,
    module="tree_sitter_typescript",
    entry="language_typescript",
    kinds={
        **_JAVASCRIPT.kinds,
        "abstract_class_declaration": _named("class"),
        "interface_declaration": _named("interface"),
        "enum_declaration": _named("enum"),
        "internal_module": _named("namespace"),
        "public_field_definition": _js_field,
    },
    transparent=frozenset({"class_body", "variable_declarator", "object", "statement_block"}),
    # `namespace X {}` parses as an expression statement; `declare ...` as an ambient declaration.
    wrappers=frozenset({"export_statement", "expression_statement", "ambient_declaration"}),
)

_C_KINDS: dict[str, Resolver] = {
    "function_definition": _c_function,
    "preproc_function_def": _named("macro"),
    "expression_statement": _c_macro_function,
    "type_definition": _c_typedef,
    "struct_specifier": _named("struct", needs_body=True),
    "union_specifier": _named("union", needs_body=True),
    "enum_specifier": _named("enum", needs_body=True),
}
_PREPROCESSOR = frozenset({"preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef"})

_GRAMMARS: dict[str, _Grammar] = {
    "python": _Grammar(
        "tree_sitter_python",
        "language",
        kinds={"function_definition": _FUNCTION, "class_definition": _named("class")},
        transparent=frozenset({"block"}),
        wrappers=frozenset({"decorated_definition"}),
        docstrings=True,
    ),
    "javascript": _JAVASCRIPT,
    "typescript": _TYPESCRIPT,
    "tsx": replace(_TYPESCRIPT, entry="language_tsx"),
    "rust": _Grammar(
        "tree_sitter_rust",
        "language",
        kinds={
            "function_item": _FUNCTION,
            "struct_item": _named("struct"),
            "enum_item": _named("enum"),
            "union_item": _named("union"),
            "trait_item": _named("trait"),
            "impl_item": _rust_impl,
            "mod_item": _named("module", needs_body=True),
        },
        transparent=frozenset({"declaration_list"}),
        comments=frozenset({"line_comment", "block_comment"}),
        attributes=frozenset({"attribute_item"}),
    ),
    "go": _Grammar(
        "tree_sitter_go",
        "language",
        kinds={
            "function_declaration": _FUNCTION_WITH_BODY,
            "method_declaration": _go_method,
            "type_declaration": _go_type,
        },
    ),
    "java": _Grammar(
        "tree_sitter_java",
        "language",
        kinds={
            "class_declaration": _named("class"),
            "interface_declaration": _named("interface"),
            "enum_declaration": _named("enum"),
            "record_declaration": _named("record"),
            "method_declaration": _FUNCTION_WITH_BODY,
            "constructor_declaration": _FUNCTION,
        },
        transparent=frozenset({"class_body", "interface_body", "enum_body", "enum_body_declarations"}),
        comments=frozenset({"line_comment", "block_comment"}),
    ),
    "csharp": _Grammar(
        "tree_sitter_c_sharp",
        "language",
        kinds={
            "namespace_declaration": _named("namespace"),
            "class_declaration": _named("class"),
            "struct_declaration": _named("struct"),
            "interface_declaration": _named("interface"),
            "enum_declaration": _named("enum"),
            "record_declaration": _named("record"),
            "method_declaration": _FUNCTION_WITH_BODY,
            "constructor_declaration": _FUNCTION,
        },
        transparent=frozenset({"declaration_list"}),
        scopes=frozenset({"file_scoped_namespace_declaration"}),
    ),
    "c": _Grammar(
        "tree_sitter_c",
        "language",
        kinds=_C_KINDS,
        transparent=_PREPROCESSOR,
        line_start_bodies=True,
        bare_macros=True,
    ),
    "cpp": _Grammar(
        "tree_sitter_cpp",
        "language",
        kinds={
            **_C_KINDS,
            "class_specifier": _named("class", needs_body=True),
            "namespace_definition": _named("namespace"),
        },
        # An anonymous namespace is no symbol, but the functions in it are.
        transparent=_PREPROCESSOR
        | {"namespace_definition", "declaration_list", "field_declaration_list", "linkage_specification"},
        wrappers=frozenset({"template_declaration"}),
        bare_macros=True,
        class_attribute_macros=True,
    ),
    "ruby": _Grammar(
        "tree_sitter_ruby",
        "language",
        kinds={
            "class": _named("class"),
            "module": _named("module"),
            "method": _FUNCTION,
            "singleton_method": _FUNCTION,
        },
        transparent=frozenset({"body_statement", "singleton_class"}),
    ),
    "php": _Grammar(
        "tree_sitter_php",
        "language_php",
        kinds={
            "class_declaration": _named("class"),
            "interface_declaration": _named("interface"),
            "trait_declaration": _named("trait"),
            "enum_declaration": _named("enum"),
            "function_definition": _FUNCTION,
            "method_declaration": _FUNCTION_WITH_BODY,
            "namespace_definition": _named("namespace", needs_body=True),
        },
        transparent=frozenset({"declaration_list", "compound_statement", "namespace_definition"}),
        scopes=frozenset({"namespace_definition"}),
    ),
    "bash": _Grammar(
        "tree_sitter_bash",
        "language",
        kinds={"function_definition": _FUNCTION},
        # nvm.sh wraps its whole script in `{ ... }` (so a half-downloaded file runs nothing), and scripts define
        # functions inside `if`s: 0 of nvm.sh's functions were symbols, 116 are (semble-dev's nvm 0.800 ->
        # 0.982 at the end of stage 2: its tests' one-line mocks of `nvm_has` were the only `nvm_has` found).
        transparent=frozenset({"compound_statement", "if_statement", "elif_clause", "else_clause"}),
    ),
    "kotlin": _Grammar(
        "tree_sitter_kotlin",
        "language",
        kinds={
            "class_declaration": _kotlin_class,
            "object_declaration": _named("object"),
            "companion_object": _kotlin_companion,
            "function_declaration": _kotlin_function,
            "secondary_constructor": _keyword("function", "constructor"),
        },
        # `class A : B by b { ... }` parses its body as a lambda passed to `b`: the members are in there.
        transparent=_KOTLIN_BODIES
        | {
            "delegation_specifiers",
            "delegation_specifier",
            "explicit_delegation",
            "call_expression",
            "annotated_lambda",
            "lambda_literal",
        },
        comments=frozenset({"line_comment", "block_comment"}),
    ),
    "swift": _Grammar(
        "tree_sitter_swift",
        "language",
        kinds={
            "class_declaration": _swift_type,
            "protocol_declaration": _named("protocol"),
            "function_declaration": _FUNCTION,
            "init_declaration": _keyword("function", "init"),
            "deinit_declaration": _keyword("function", "deinit"),
            "subscript_declaration": _keyword("function", "subscript"),
        },
        # Protocol requirements (protocol_function_declaration) are declarations, left out as in Java.
        transparent=frozenset({"class_body", "enum_class_body", "protocol_body"}),
        comments=frozenset({"comment", "multiline_comment"}),
    ),
    "scala": _Grammar(
        "tree_sitter_scala",
        "language",
        kinds={
            "class_definition": _named("class"),
            "object_definition": _named("object"),
            "trait_definition": _named("trait"),
            "enum_definition": _named("enum"),
            "package_object": _named("object"),
            "extension_definition": _scala_extension,
            "given_definition": _scala_given,
            # function_declaration is an abstract `def` without a body, left out as in Java.
            "function_definition": _FUNCTION,
        },
        transparent=frozenset({"template_body", "enum_body", "with_template_body"}),
        comments=frozenset({"comment", "block_comment"}),
    ),
    "lua": _Grammar(
        "tree_sitter_lua",
        "language",
        kinds={"function_declaration": _lua_function, "assignment_statement": _lua_assignment},
        # `local draw = function() ... end` is an assignment inside a local variable declaration.
        wrappers=frozenset({"variable_declaration"}),
    ),
    "haskell": _Grammar(
        "tree_sitter_haskell",
        "language",
        kinds={
            "signature": _haskell_signature,
            "function": _haskell_function,
            "bind": _haskell_function,
            "data_type": _named("data"),
            "newtype": _named("newtype"),
            "class": _named("class"),
            "instance": _haskell_instance,
        },
        # The haddock comment above the first declaration is parsed as part of the imports.
        transparent=frozenset({"declarations", "imports", "class_declarations", "instance_declarations"}),
        comments=frozenset({"comment", "haddock"}),
        attributes=frozenset({"pragma"}),
        clauses=True,
    ),
    "elixir": _Grammar(
        "tree_sitter_elixir",
        "language",
        kinds={"call": _elixir_call},
        transparent=frozenset({"do_block"}),
        # Module attributes: @doc, @spec and @impl belong to the def below them.
        attributes=frozenset({"unary_operator"}),
        clauses=True,
    ),
    "zig": _Grammar(
        "tree_sitter_zig",
        "language",
        kinds={"function_declaration": _FUNCTION_WITH_BODY, "variable_declaration": _zig_container},
        transparent=frozenset(_ZIG_CONTAINERS),
    ),
}
