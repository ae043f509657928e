"""Which of the two vector searches a SQLite store's model gets: all in memory while it is small, by sign bits
once it is large (sign_index.py says why and where the line is)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..rows import NO_FILTER, ChunkId, HitFilter
from .sign_index import SIGN_SEARCH_MIN, SignIndex
from .vector_index import VectorIndex

if TYPE_CHECKING:
    from .store import SqliteStore


class SizedVectorSearch:
    """A model's vector search: vector_index.py's until the store holds enough of its vectors (with complete sign
    packs), then sign_index.py's for good. A process that watched an index grow past the line lets go of its
    in-memory copy there."""

    def __init__(self, store: SqliteStore, model_id: str, dims: int):
        self._store = store
        self._model_id = model_id
        self._dims = dims
        self._inner: VectorIndex | SignIndex = VectorIndex(store, model_id, dims)
        self._checked: tuple[int, int] | None = None
        self._choose()

    def _choose(self) -> None:
        if isinstance(self._inner, SignIndex) or self._checked == self._store.generation:
            return
        self._checked = self._store.generation
        large = self._store.sign_index(self._model_id, self._dims, SIGN_SEARCH_MIN)
        if large is not None:
            self._inner = large

    def refresh(self, budget_s: float | None = None) -> bool:
        self._choose()
        return self._inner.refresh(budget_s)

    @property
    def loading(self) -> bool:
        return self._inner.loading

    @property
    def loaded_share(self) -> float:
        return self._inner.loaded_share

    def ids(self) -> np.ndarray:
        return self._inner.ids()

    def holds_any(self) -> bool:
        return self._inner.holds_any()

    def allowed(self, scope_ids: Sequence[str], where: HitFilter = NO_FILTER) -> np.ndarray | None:
        return self._inner.allowed(scope_ids, where)

    def nearest(
        self, query: np.ndarray, allowed: np.ndarray | None, k: int, names: bool = False
    ) -> list[tuple[ChunkId, float]]:
        return self._inner.nearest(query, allowed, k, names)

    def similarities(
        self, query: np.ndarray, chunk_ids: Sequence[ChunkId], names: bool = False
    ) -> dict[ChunkId, float]:
        return self._inner.similarities(query, chunk_ids, names)
