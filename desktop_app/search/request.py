"""What a search asks for and what it answers, with validation of user input."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args

import pathspec

from ..indexing.chunk import CHUNK_TYPES
from ..indexing.languages import EXTENSIONS, LANGUAGES
from ..store.rows import HitFilter
from .evidence import TEST_GLOBS

DOC_GLOBS = tuple(sorted(f"*{ext}" for ext, kind in EXTENSIONS.items() if kind.kind == "docs"))
Mode = Literal["hybrid", "semantic", "exact", "text"]  # text: a literal or regex, every line it occurs on
MODES: tuple[Mode, ...] = get_args(Mode)


def as_mode(name: str) -> Mode | None:
    """`name` as a search mode, None when it is not one (a front end's input, a saved setting)."""
    return next((mode for mode in MODES if mode == name), None)


MAX_K = 100
MAX_CONTEXT = 200
MIN_SEMANTIC_CHARS = 3
# Symbol types are the chunker's lower-case names: function, method, class, struct, heading, ...
_SYMBOL_TYPE = re.compile(r"[a-z_]+")


class SearchRemedy(enum.Enum):
    """What the user can do about a SearchError, where each front end says it its own way."""

    NAME_SCOPE = "name_scope"  # say which indexed folder to search (or every one)
    INDEX_FIRST = "index_first"  # index `subject` (a folder), or any folder when None
    PASS_FOLDER = "pass_folder"  # name the indexed folder rather than a file in it
    PASS_WORKTREE = "pass_worktree"  # name a linked worktree


class SearchError(ValueError):
    """Bad search input; the message is one line saying what is wrong (and, when the same for every front
    end, what to do). `remedy` names what the front end should add; `subject` is the path it concerns."""

    def __init__(self, problem: str, remedy: SearchRemedy | None = None, subject: str | None = None):
        super().__init__(problem)
        self.remedy = remedy
        self.subject = subject


@dataclass(frozen=True)
class RerankOptions:
    """Weights applied after retrieval (after the seed spec's RerankingOptions)."""

    similarity_weight: float = 1.0  # multiplies the fused retrieval score
    # Chunks that are a named definition (function, class...). 0.05 until the file's meaning became evidence; now
    # it only lifts a file's lesser definitions over other files' answers: semble-dev 0.852 at 0.05, 0.855 at 0.
    symbol_boost: float = 0.0
    preferred_chunk_types: tuple[str, ...] = ("function", "type")
    chunk_type_boost: float = 0.03
    recency_boost: float = 0.0  # up to this much for files indexed most recently
    recency_half_life_days: float = 30.0
    # Private helpers (`_name`, not `__dunder__`) rank a little below the public API people ask about (the
    # public `copytree` over the `_copytree` it calls). Stdlib dev set nl MRR@10: 0 0.539, 0.05 0.561, 0.1 0.571,
    # 0.15 0.573; semble-dev the same at 0.05 and 0.1 (0.862 / 0.861 over 17 repositories).
    private_penalty: float = 0.1


CODE_SEARCH_PRESET = RerankOptions()
NO_RERANK = RerankOptions(symbol_boost=0.0, chunk_type_boost=0.0, recency_boost=0.0, private_penalty=0.0)


@dataclass(frozen=True)
class SearchFilters:
    languages: tuple[str, ...] = ()
    chunk_types: tuple[str, ...] = ()
    symbol_types: tuple[str, ...] = ()
    symbol_names: tuple[str, ...] = ()
    globs: tuple[str, ...] = ()  # gitignore-style patterns; a result must match one
    min_score: float = 0.0
    changed_only: bool = False  # worktree scopes: only files that differ from the main scope
    hide_tests: bool = False  # leave out test files and folders (evidence.TEST_GLOBS)
    hide_docs: bool = False  # leave out documentation files (Markdown, reStructuredText, text...)

    def hit_filter(self) -> HitFilter:
        """All but the minimum score, as the store applies them in SQL."""
        hidden = (TEST_GLOBS if self.hide_tests else ()) + (DOC_GLOBS if self.hide_docs else ())
        globs = self.globs + tuple(f"!{g}" for g in hidden)
        return HitFilter(
            self.languages, self.chunk_types, self.symbol_types, self.symbol_names, self.changed_only, globs
        )


@dataclass(frozen=True)
class TextOptions:
    """How text mode reads the query: a literal unless `regex`; case ignored unless `case_sensitive`."""

    regex: bool = False
    case_sensitive: bool = False
    word: bool = False  # whole words only


@dataclass(frozen=True)
class SearchRequest:
    query: str
    roots: tuple[str, ...] = ()  # scope roots to search; empty with all_scopes=True means every scope
    all_scopes: bool = False
    k: int = 10
    mode: Mode = "hybrid"
    filters: SearchFilters = field(default_factory=SearchFilters)
    context: int = 0
    overlap_threshold: float = 0.5  # merge same-file results overlapping more than this share
    rerank: RerankOptions = CODE_SEARCH_PRESET
    record_history: bool = True
    text: TextOptions = field(default_factory=TextOptions)  # text mode only
    # Ranked modes: leave out results scoring under this share of the best one (0: pad to k). The window
    # shows the strong ones only; the list was padded to 30 with licence headers at 0.27.
    relative_cutoff: float = 0.0


def validate(request: SearchRequest) -> SearchRequest:
    """Raise SearchError for input a user must fix; return the request with the query trimmed."""
    # Text mode looks for the query as typed: two spaces are not one there.
    query = request.query if request.mode == "text" else " ".join(request.query.split())
    if not query.strip():
        raise SearchError("the query is empty; type what you are looking for")
    if not 1 <= request.k <= MAX_K:
        raise SearchError(f"k must be between 1 and {MAX_K} (got {request.k})")
    if request.mode not in MODES:
        raise SearchError(f"unknown mode {request.mode!r}; use one of {', '.join(MODES)}")
    if not 0 <= request.context <= MAX_CONTEXT:
        raise SearchError(f"context must be between 0 and {MAX_CONTEXT} lines (got {request.context})")
    if not 0 <= request.relative_cutoff < 1:
        raise SearchError(f"the relative cut-off must be at least 0 and below 1 (got {request.relative_cutoff})")
    if not 0 < request.overlap_threshold <= 1:
        raise SearchError("the overlap threshold must be above 0 and at most 1")
    if not request.roots and not request.all_scopes:
        raise SearchError("no project was named to search", SearchRemedy.NAME_SCOPE)
    for root in request.roots:
        if Path(root).expanduser().is_file():
            raise SearchError(f"{root} is a file, not an indexed folder", SearchRemedy.PASS_FOLDER, str(root))
    _validate_filters(request.filters)
    return SearchRequest(**{**request.__dict__, "query": query})


def _validate_filters(f: SearchFilters) -> None:
    unknown = sorted(set(f.languages) - LANGUAGES)
    if unknown:
        raise SearchError(
            f"unknown language {unknown[0]!r}; use lowercase names such as python, rust, typescript, markdown"
        )
    bad_types = sorted(set(f.chunk_types) - set(CHUNK_TYPES))
    if bad_types:
        raise SearchError(f"unknown chunk type {bad_types[0]!r}; use one of {', '.join(CHUNK_TYPES)}")
    if not 0 <= f.min_score <= 1:
        raise SearchError(f"min score must be between 0 and 1 (got {f.min_score})")
    for pattern in f.globs:
        if not pattern.strip():
            raise SearchError("an empty path pattern matches nothing; remove it or give a pattern")
        try:
            pathspec.GitIgnoreSpec.from_lines([pattern])
        except (ValueError, TypeError) as exc:
            raise SearchError(f"invalid glob {pattern!r}: {exc}") from exc
    if any(not n.strip() for n in f.symbol_names):
        raise SearchError("an empty symbol name filter matches nothing")
    for symbol_type in f.symbol_types:
        if not _SYMBOL_TYPE.fullmatch(symbol_type):
            raise SearchError(
                f"invalid symbol type {symbol_type!r}; use a lowercase name such as function, "
                "method, class, struct or heading"
            )
