"""Search results as the CLI prints them and the GUI shows them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from ..store.rows import ChunkId

if TYPE_CHECKING:
    from ..indexing.progress import Stage
    from .request import Mode


@dataclass
class SearchResult:
    path: str  # POSIX, relative to the scope root
    start_line: int
    end_line: int
    score: float  # 0..1, higher is better; see search/fusion.py for how it is made
    relevance: str  # "exact" | "semantic" | "both"
    language: str
    chunk_type: str
    symbol_name: str | None
    symbol_type: str | None
    parent_symbol: str | None
    snippet: str
    semantic_score: float | None  # cosine similarity to the query, where it was computed
    stage: Stage  # the index stage the result's evidence came from: "keyword", "fast" or "full" vectors
    scope_root: str
    context_start_line: int | None = None
    context_end_line: int | None = None
    context: str | None = None
    stale: bool = False  # the file changed on disk since it was indexed
    # Why it was found, strongest first: "name" (a definition named in the query), "keyword", "meaning".
    evidence: tuple[str, ...] = ()
    file_sha256: str = field(default="", repr=False)  # content hash at indexing, for the stale check
    chunk_id: ChunkId = field(default=ChunkId(0), repr=False)  # the chunk shown (queued to be embedded first)
    # Text mode: each match, {"line", "start_col", "end_col", "text"} (columns count characters from 0, the end
    # exclusive; "text" is the whole line), in file order, and how many the file has (the list stops at 1000).
    matches: list[dict] | None = None
    match_count: int = 0

    def to_dict(self, with_context: bool) -> dict:
        out = asdict(self)
        out.pop("file_sha256")
        out.pop("chunk_id")
        if self.matches is None:
            out.pop("matches")
            out.pop("match_count")
        if not with_context:
            for key in ("context_start_line", "context_end_line", "context"):
                out.pop(key)
        return out


@dataclass(frozen=True)
class Coverage:
    """How much of the searched scopes each index stage covers (stage 1, keywords, covers every chunk)."""

    chunks: int = 0
    full: int = 0  # chunks with a vector of the active model
    fast: int = 0  # chunks with a vector of the fast model or of the active one (a meaning of some quality)

    def to_dict(self) -> dict:
        return {"chunks": self.chunks, "keyword": 1.0, "fast": self._share(self.fast), "full": self._share(self.full)}

    def _share(self, count: int) -> float:
        return round(count / self.chunks, 4) if self.chunks else 1.0


@dataclass
class SearchResponse:
    query: str
    mode: Mode  # the mode asked for
    results: list[SearchResult] = field(default_factory=list)
    elapsed_ms: float = 0.0
    notice: str | None = None  # e.g. why search fell back to exact matching
    effective_mode: Mode = "hybrid"  # the mode actually used
    partial: bool = False  # an index of a searched scope is still running
    vectors_loaded: float = 1.0  # share of the index's vectors in memory when it ran (below 1 while loading)
    coverage: Coverage = field(default_factory=Coverage)
    below_cutoff: int = 0  # results left out under the request's relative cut-off
    # Text mode: files with a match and matches in them (results holds the first k files in path order); with
    # `text_complete` False the search stopped once it had those k files, and the counts are lower bounds.
    files_matched: int | None = None
    matches_total: int | None = None
    text_complete: bool | None = None
    # Text mode: Python's `re` ran out of its time (this many seconds) and the search stopped there, also leaving
    # text_complete False; `notice` says so.
    text_stopped_after_s: float | None = None
    scopes_searched: list[str] = field(default_factory=list)  # their roots (the search history records them)

    def to_dict(self, with_context: bool = False) -> dict:
        totals = {}
        if self.files_matched is not None:
            totals = {"files_matched": self.files_matched, "matches_total": self.matches_total}
            totals["complete"] = self.text_complete
        return totals | {
            "query": self.query,
            "mode": self.mode,
            "effective_mode": self.effective_mode,
            "results": [r.to_dict(with_context) for r in self.results],
            "elapsed_ms": round(self.elapsed_ms, 3),
            "notice": self.notice,
            "partial": self.partial,
            "vectors_loaded": round(self.vectors_loaded, 3),
            "coverage": self.coverage.to_dict(),
            "below_cutoff": self.below_cutoff,
        }
