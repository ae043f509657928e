"""What the engine needs of a store, as typed protocols: the seam between Quarry and where its index lives.

`SqliteStore` (embedded, one file) is the first implementation. Nothing above `store/` knows a store's
query language or score conventions: keyword search takes terms and gives strengths in 0..1, vector search
takes a query vector and gives cosine similarities, filters are a `HitFilter` each store applies inside
its own retrieval.

The thread contract, the one place it is written: a store is called from the worker's thread, with one
exception. During a search the worker hands the vector lookups (`VectorSearch.nearest`, by code and by name
vectors) to the scan pool's two threads (search/pipeline.py) and waits for them while it asks the keyword side.
So `nearest` may run beside the worker's calls and must touch nothing the worker's calls use: the SQLite store
answers it from its vectors in memory (loaded by `refresh`, on the worker's thread), the PostgreSQL store on a
connection of each scan thread's own, never the store's, which the worker's thread may replace after a dropped
connection (tests/test_team_index.py checks it from the server's side). Every other method runs on the worker's
thread only.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol

import numpy as np

from .rows import (
    NO_FILTER,
    ChunkId,
    FileState,
    FileWrite,
    HistoryEntry,
    Hit,
    HitFilter,
    NewChunk,
    OthersClaims,
    OutlineSource,
    PlaceId,
    Scope,
    ScopeSummary,
    SkippedFile,
    StoredChunk,
)

# (chunk id, its code vector, its symbol name's vector); None leaves that vector as it is.
VectorRow = tuple[ChunkId, "np.ndarray | None", "np.ndarray | None"]
# A file as search knows it: (scope id, path in the scope).
FileKey = tuple[str, str]


class Bases(Protocol):
    """A team index's repositories: each has one base scope holding its committed content as of one commit,
    shared by every checkout, and each checkout an overlay scope of its own over it (create_scope with type
    "overlay"): its working tree, files identical to the base's mapped to the base's chunks."""

    def base_scope(self, repository: str) -> Scope | None:
        """The base of the repository with this key (identity.repository_key)."""
        ...

    def create_base(self, repository: str) -> Scope:
        """The repository's base, made unless it exists. Its `root` is the repository's key: a base is one commit's
        files, searched through the checkouts' overlays, never as a folder of its own."""
        ...

    def publish(self, scope_id: str, commit: str, branch: str) -> None:
        """Record that the base now holds `commit` of `branch`, put there by this machine now."""
        ...

    def overlay_differences(self, overlay_id: str) -> int:
        """How many of the overlay's files differ from its base's: changed, added, or deleted in the checkout."""
        ...


class Catalog(Protocol):
    """Scopes (indexed folders), their files, and the chunks and places the files are made of."""

    @property
    def generation(self) -> Hashable:
        """Changes whenever the index's content may have changed (by this process or another), so readers
        know when what they cached is stale. Recording a search does not change it."""
        ...

    def one_generation(self) -> AbstractContextManager[None]:
        """Within it (one search), `generation` is read once and then given again: what the search checks its
        cached values against is the index as the search began."""
        ...

    def close(self) -> None: ...

    def check_intact(self) -> None:
        """Raise StoreUnusable when the index is damaged. May read all of it, so it runs before each write
        (nothing is written into a damaged index), not before each read."""
        ...

    def remember_intact(self) -> None:
        """This process found the index intact and has written to it since: record that it is still intact, so
        that the next check_intact (of any process) need not read it again while nothing else changes it."""
        ...

    def scope_for_root(self, root: Path | str) -> Scope | None: ...

    @property
    def bases(self) -> Bases | None:
        """A team index's shared bases (see Bases); None in a local index, which one person's checkouts share."""
        ...

    def scope_by_id(self, scope_id: str) -> Scope | None: ...

    def create_scope(self, root: Path | str, type_: str = "main", parent_id: str | None = None) -> Scope: ...

    def mark_indexed(self, scope_id: str) -> None: ...

    def record_chunking(self, scope_id: str, version: int) -> None:
        """Record the version of the chunker that cut all of the scope's files (Indexer compares it with its own, to
        cut them again after an upgrade)."""

    def chunking_of(self, scope_id: str) -> int | None:
        """The chunker version last recorded for the scope, None if none was."""

    def list_scopes(self) -> list[ScopeSummary]: ...

    def scopes(self) -> list[Scope]:
        """The scopes list_scopes gives, in its order, without counting their files and chunks: a search of every
        scope asks each time (the counts read every place of the index)."""
        ...

    def remove_scope(self, scope_id: str) -> int:
        """Delete a scope and its worktree children; how many chunks no scope uses any more were dropped."""
        ...

    def scope_counts(self, scope_id: str) -> tuple[int, int, int]:
        """(indexed files, places, bytes of indexed files) of one scope."""
        ...

    def file_states(self, scope_id: str) -> dict[str, FileState]: ...

    def file_row(self, scope_id: str, path: str) -> FileState | None: ...

    def symbol_places(self, scope_ids: Sequence[str]) -> list[tuple[PlaceId, str, str | None, str]]:
        """(place, symbol name, parent symbol, path) of every place defining a symbol in these scopes (Go to
        Symbol ranks them by name)."""
        ...

    def known_chunks(self, hashes: Iterable[str]) -> dict[str, ChunkId]:
        """Ids of those of `hashes` already stored (their text need not be written again)."""
        ...

    def write_batch(
        self,
        scope_id: str,
        model_id: str,
        new_chunks: Sequence[NewChunk],
        files: Sequence[FileWrite] = (),
        skipped: Sequence[SkippedFile] = (),
        touched: Sequence[tuple[str, int, int]] = (),
        deleted: Sequence[str] = (),
    ) -> None:
        """Apply one batch of indexing results atomically: a file is written with all of its chunks or not
        at all, so an interruption between batches leaves whole files and the next run resumes."""
        ...

    def collect_garbage(self) -> int:
        """Drop the chunks (and their vectors) no file uses any more, and any vector left without its chunk; how
        many chunks."""
        ...

    def count_chunks(self) -> int: ...

    def stored_chunks(self, chunk_ids: Sequence[ChunkId]) -> list[StoredChunk]:
        """These chunks, each at one place it is used (enough to rebuild the document that is embedded)."""
        ...

    def file_chunk_rows(self, scope_id: str, paths: Sequence[str]) -> dict[str, list[StoredChunk]]:
        """Each path's chunks in a scope, in order: what a worktree copies from its main scope."""
        ...

    def chunk_ids_of_files(self, scope_id: str, paths: Sequence[str]) -> list[ChunkId]: ...

    def scope_chunk_ids(self, scope_ids: Sequence[str], where: HitFilter = NO_FILTER) -> np.ndarray:
        """Sorted ids of the chunks used in these scopes at places passing `where`."""
        ...

    def chunks_of_whole_store(self, scope_ids: Sequence[str]) -> int | None:
        """How many chunks these scopes use, when the store knows it without reading them: they are every scope
        and it holds no unused chunk. None otherwise."""
        ...

    def hits_for_chunks(
        self, scope_ids: Sequence[str], chunk_ids: Sequence[ChunkId], where: HitFilter = NO_FILTER
    ) -> list[Hit]:
        """Every place in these scopes, passing `where`, that uses one of these chunks."""
        ...

    def hits_for_places(self, place_ids: Sequence[PlaceId]) -> list[Hit]: ...


class KeywordIndex(Protocol):
    """Search by words and by symbol names."""

    def keyword_matches(
        self,
        scope_ids: Sequence[str],
        terms: Sequence[str],
        every_term: bool,
        limit: int,
        where: HitFilter = NO_FILTER,
    ) -> list[tuple[PlaceId, float]]:
        """Up to `limit` places matching the terms (all of them with `every_term`, else any), best first,
        each with a strength in 0..1 relative to the best match (1.0). Symbol names weigh most, then the path
        and enclosing symbol, then the text. A store may drop terms so common that ranking them would cost
        more than they tell."""
        ...

    def symbol_matches(
        self, scope_ids: Sequence[str], names: Sequence[str], limit: int, where: HitFilter = NO_FILTER
    ) -> list[PlaceId]:
        """Places defining a symbol named one of `names` (case-insensitive)."""
        ...

    def definition_extents(self, place_ids: Sequence[PlaceId]) -> dict[PlaceId, int]:
        """For each of these places that defines a symbol, how many lines its definition spans in its file: from
        the first line of its first place (a long definition has several, windows and overloads of one name in
        one enclosing symbol) to the last line of those places and of its members' (the places whose enclosing
        symbol is it, or lies inside it)."""
        ...


class TextIndex(Protocol):
    """Literal and regex search: which chunks can hold a piece of text."""

    def chunks_containing(self, needles: Sequence[str]) -> np.ndarray:
        """Sorted ids of the chunks whose text contains every one of `needles` (each of 3 characters or more:
        search/text_pattern.py keeps no shorter one), ignoring case; possibly more (callers run the real pattern
        over the chunks' text)."""
        ...

    def place_rows(
        self,
        scope_ids: Sequence[str],
        where: HitFilter = NO_FILTER,
        chunk_ids: np.ndarray | None = None,
        file_ids: np.ndarray | None = None,
    ) -> np.ndarray:
        """Every place in these scopes passing `where` (with `chunk_ids`, only the places of those chunks; with
        `file_ids`, only those of these files) as an (n, 3) int64 array of (place id, file id, chunk id), without
        text: text mode orders the places by path (scope_files) and reads the text of the first files only."""
        ...

    def scope_files(self, scope_ids: Sequence[str]) -> list[tuple]:
        """(file id, scope id, path) of the files of these scopes."""
        ...

    def chunk_texts(self, chunk_ids: Sequence[ChunkId]) -> dict[ChunkId, str]:
        """{chunk id: text} of those of these chunks that are stored: text mode runs the pattern over them before
        it reads any place's row (hits_for_places), for the places whose chunk holds a match."""
        ...

    def text_pending(self) -> int:
        """How many chunks wait to enter the text index (written since its last fill)."""
        ...

    def index_pending_text(self, limit: int) -> int:
        """Move up to `limit` waiting chunks into the text index, in one write; how many it moved (0: none wait).
        Until then `chunks_containing` counts a waiting chunk as a candidate of every pattern."""
        ...


class VectorSearch(Protocol):
    """One model's vectors as searches read them: nearest chunks and similarities by cosine."""

    def refresh(self, budget_s: float | None = None) -> bool:
        """Catch up with the store's vectors; with a budget, stop after about that many seconds (0: only say
        whether there is anything new). True when caught up."""
        ...

    @property
    def loading(self) -> bool:
        """A load in slices (budgeted refreshes) has begun and not caught up: searches meanwhile take what is
        loaded (refresh with budget 0) rather than finish the load themselves."""
        ...

    @property
    def loaded_share(self) -> float:
        """How much of the store's vectors a search sees now, 0..1."""
        ...

    def ids(self) -> np.ndarray:
        """Ids of the chunks that have a code vector searches see."""
        ...

    def holds_any(self) -> bool:
        """Whether searches see any vector of this model, a code or a name vector (as of the last refresh): with
        none, a query's embedding by the model would find and score nothing."""
        ...

    def allowed(self, scope_ids: Sequence[str], where: HitFilter = NO_FILTER) -> np.ndarray | None:
        """The chunk ids a search in these scopes under these filters may return, sorted; None for all."""
        ...

    def nearest(
        self, query: np.ndarray, allowed: np.ndarray | None, k: int, names: bool = False
    ) -> list[tuple[ChunkId, float]]:
        """(chunk id, cosine similarity) of the k allowed chunks closest to `query` (by their code vectors, or
        with `names` their symbol names' vectors), best first."""
        ...

    def similarities(
        self, query: np.ndarray, chunk_ids: Sequence[ChunkId], names: bool = False
    ) -> dict[ChunkId, float]:
        """Cosine similarity of each of these chunks that has a vector of this kind."""
        ...


class VectorStore(Protocol):
    """The embedding models a store holds vectors of, and their vectors."""

    def register_model(self, model_id: str, dims: int, source: str) -> None:
        """Make room for `model_id`'s vectors on first use; the first model registered becomes active."""
        ...

    def active_model(self) -> str | None:
        """The model whose vectors searches use."""
        ...

    def model_source(self, model_id: str) -> str | None:
        """Where the model came from (see embedding.choice.embedder_for_source)."""
        ...

    def activate_model(self, model_id: str, keep: Sequence[str] = ()) -> None:
        """Make `model_id` active and drop every other model's vectors but those of `keep`, atomically."""
        ...

    def drop_models_without_vectors(self, keep: Sequence[str] = ()) -> list[str]:
        """Drop each model but the active one and `keep` that has no vector (nor, in a team store, a live claim
        on a chunk to embed): a switch to it began and stopped before its first batch. Their ids."""
        ...

    def chunks_without_vectors(self, model_id: str, names: bool = False) -> list[ChunkId]:
        """Chunks lacking a `model_id` vector (with `names`: chunks defining a symbol that lack its name's
        vector), those of the most recently modified files first."""
        ...

    def vector_ids(self, model_id: str, names: bool = False) -> np.ndarray:
        """Ids of the chunks that have a vector of this kind for `model_id`, ascending."""
        ...

    def add_vectors(self, model_id: str, vectors: Sequence[VectorRow]) -> None:
        """Store vectors in one transaction, replacing those the chunks have; a chunk no longer stored (collected
        while the model ran: its file changed, or its folder was removed) gets none."""
        ...

    def claim_chunks(self, model_id: str, names: bool, chunk_ids: Sequence[ChunkId]) -> list[ChunkId]:
        """Those of `chunk_ids` this process should embed now (`names`: their symbol names' vectors): on a
        store several indexers fill at once, the ones nobody else is embedding, claimed for a while."""
        ...

    def claimed_elsewhere(self, model_id: str, names: bool) -> OthersClaims | None:
        """The chunks other indexers hold live claims on; None when they hold none (or there are no others)."""
        ...

    def vector_search(self, model_id: str, dims: int) -> VectorSearch: ...

    def files_without_outline(self, model_id: str, limit: int) -> list[OutlineSource]:
        """Up to `limit` indexed files lacking a `model_id` outline vector (one vector of the file's path and
        the names it defines), the most recently modified first."""
        ...

    def count_files_without_outline(self, model_id: str) -> int:
        """How many indexed files lack a `model_id` outline vector."""
        ...

    def add_outlines(self, model_id: str, outlines: Sequence[tuple[OutlineSource, np.ndarray]]) -> None:
        """Store outline vectors in one transaction, each only if its file still has the content it was made
        from; a file's vector goes with the file (and with the model)."""
        ...

    def outline_vectors(self, model_id: str, files: Sequence[FileKey]) -> dict[FileKey, np.ndarray]:
        """The `model_id` outline vector of each of these files that has one."""
        ...


class SearchHistory(Protocol):
    def add_history(self, entry: HistoryEntry) -> None:
        """Record a search; best effort (a read-only or busy store must not fail the search)."""
        ...

    def history(self, limit: int = 50) -> list[HistoryEntry]: ...


class Store(Catalog, KeywordIndex, TextIndex, VectorStore, SearchHistory, Protocol):
    """Everything the engine asks of a store."""
