"""The rows a store reads and writes, the same for every store implementation.

Ids: a chunk (`ChunkId`) is one distinct text, stored once however many files use it and keyed by its
content hash; a place (`PlaceId`) is one use of a chunk at some lines of one file in one scope. Vectors
belong to chunks, keyword matches and search results to places.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NewType

if TYPE_CHECKING:  # numpy is not among a parse process's imports (parse_pool.py)
    import numpy as np

ChunkId = NewType("ChunkId", int)
PlaceId = NewType("PlaceId", int)


@dataclass(frozen=True)
class Scope:
    id: str
    # "main" | "worktree" in a local index; in a team index "base" (a repository's committed content, shared),
    # "overlay" (one checkout's working tree over its base, never shown to another checkout) or "main" (a
    # folder outside git)
    type: str
    root: str  # a team index's base: its repository's key (store/identity.py), not a folder
    parent_id: str | None
    created_at: float
    last_indexed_at: float | None
    published: Published | None = None  # a base's commit, once one is in it


@dataclass(frozen=True)
class Published:
    """The commit a team index's base holds, and who put it there when."""

    commit: str
    branch: str
    host: str
    at: float


@dataclass(frozen=True)
class ScopeSummary:
    scope: Scope
    files: int
    chunks: int
    differing: int | None = None  # an overlay's files that differ from its base (changed, added or deleted)


@dataclass(frozen=True)
class FileState:
    path: str
    size: int
    mtime_ns: int
    sha256: str | None
    status: str  # "indexed" | "skipped"


@dataclass(frozen=True)
class ChunkRef:
    """One chunk's place in one file, plus the keyword-index text for that place."""

    chunk_hash: str
    ordinal: int
    start_line: int
    end_line: int
    chunk_type: str
    symbol_name: str | None
    symbol_type: str | None
    parent_symbol: str | None
    fts_symbol: str
    fts_path: str
    fts_body: str

    def place_columns(self) -> tuple[int, int, int, str, str | None, str | None, str | None]:
        """The place's columns after its file and chunk, as both stores write them: ordinal, start and end line,
        chunk type, symbol name and type, parent symbol."""
        return (
            self.ordinal,
            self.start_line,
            self.end_line,
            self.chunk_type,
            self.symbol_name,
            self.symbol_type,
            self.parent_symbol,
        )


@dataclass(frozen=True)
class FileWrite:
    path: str
    size: int
    mtime_ns: int
    sha256: str
    language: str
    chunks: list[ChunkRef] = field(default_factory=list)
    # The parent scope whose file at this path, with this sha256, holds the same places (a worktree's or an
    # overlay's unchanged file). A team index copies them in the server, keyword index and all, and is given
    # no `chunks`; where the parent's file changed meanwhile it leaves this file unwritten, for the next run.
    copy_of: str | None = None


@dataclass(frozen=True)
class NewChunk:
    hash: str
    text: str
    token_count: int
    # A first index writes chunks without vectors (stage 1: keyword search at once); the vector layers
    # fill them in afterwards with add_vectors().
    vector: np.ndarray | None = None
    name_vector: np.ndarray | None = None  # embedding of the symbol's name text, for chunks defining one


@dataclass(frozen=True)
class StoredChunk:
    """A stored chunk at one place it is used: enough to rebuild its Chunk and the document that was embedded."""

    chunk_id: ChunkId
    chunk_hash: str
    path: str
    ordinal: int
    start_line: int
    end_line: int
    chunk_type: str
    symbol_name: str | None
    symbol_type: str | None
    parent_symbol: str | None
    text: str
    token_count: int


@dataclass(frozen=True)
class OutlineSource:
    """What a file's outline vector is made from: its path and the names it defines, in order. The vector is
    written only while the file still has this content (`sha256`)."""

    scope_id: str
    path: str
    sha256: str
    names: Sequence[str]


def outline_sources(
    files: Sequence[tuple[int, str, str, str | None]], names: Iterable[tuple[int, str]]
) -> list[OutlineSource]:
    """OutlineSources from a store's rows: (file id, scope id, path, sha256) per file, in order, and (file id,
    name) per definition, in each file's order."""
    by_file: dict[int, list[str]] = {f[0]: [] for f in files}
    for file_id, name in names:
        by_file[file_id].append(name)
    return [OutlineSource(scope_id, path, sha or "", by_file[file_id]) for file_id, scope_id, path, sha in files]


def outline_rows(
    model_id: str, outlines: Sequence[tuple[OutlineSource, np.ndarray]]
) -> list[tuple[str, bytes, str, str, str]]:
    """(model id, float32 vector bytes, scope id, path, sha256) per outline: the values both stores bind to write
    a file's outline vector only while the file has the content it was made from."""
    import numpy as np

    return [
        (model_id, np.ascontiguousarray(v, dtype=np.float32).tobytes(), src.scope_id, src.path, src.sha256)
        for src, v in outlines
    ]


@dataclass(frozen=True)
class SkippedFile:
    path: str
    size: int
    mtime_ns: int
    reason: str


@dataclass(frozen=True)
class PageCheck:
    """An index file read whole for damage before it is used, because it is not as it was when last found sound
    (copied, written by something other than Quarry, or left by a run that was cut off): told when the check
    starts, each second while it reads, and when it ends (`done`)."""

    size_bytes: int  # the file and its write-ahead log
    seconds: float  # spent reading so far
    done: bool = False


@dataclass(frozen=True)
class OthersClaims:
    """Chunks other indexers hold live claims on (they are embedding them, or were killed doing so), how many
    indexers hold them, and the seconds until the last of those claims runs out (when a killed indexer's
    chunks are free to take over)."""

    chunks: int
    indexers: int
    expire_in_s: float


@dataclass(frozen=True)
class Hit:
    """One place (a chunk at some lines of a file in a scope) as search sees it."""

    place_id: PlaceId
    chunk_id: ChunkId
    scope_id: str
    path: str
    language: str
    start_line: int
    end_line: int
    chunk_type: str
    symbol_name: str | None
    symbol_type: str | None
    parent_symbol: str | None
    text: str
    file_sha256: str
    file_mtime_ns: int
    indexed_at: float


@dataclass(frozen=True)
class HitFilter:
    """Search filters; a store applies them inside retrieval (in its SQL)."""

    languages: Sequence[str] = ()
    chunk_types: Sequence[str] = ()
    symbol_types: Sequence[str] = ()
    symbol_names: Sequence[str] = ()
    changed_only: bool = False  # worktree scopes: only files whose content differs from the parent scope's
    globs: Sequence[str] = ()  # gitignore-style patterns over the path in the scope; a file must match


NO_FILTER = HitFilter()


@dataclass(frozen=True)
class HistoryEntry:
    at: float
    query: str
    scope_root: str | None
    mode: str
    result_count: int
    top_score: float | None
    duration_ms: float
