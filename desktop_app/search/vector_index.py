"""An in-memory copy of one model's vectors, so a search is one matrix-vector product.

sqlite-vec stays the store of record; a vec0 KNN with a scope restriction costs a few ms per query
even on small stores, and a second lookup per candidate for its similarity. Here the worker keeps
the code and symbol-name vectors as numpy matrices ordered by chunk id, appends new rows as indexing
writes them, and answers "nearest chunks among these ids" and "similarity of these chunks" from memory.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..store.store import NO_FILTER, HitFilter, Store

_EMPTY_IDS = np.zeros(0, dtype=np.int64)


class _Matrix:
    """Vectors of one vec0 table, rows sorted by chunk id."""

    def __init__(self, dims: int):
        self.ids = _EMPTY_IDS
        self.rows = np.zeros((0, dims), dtype=np.float32)

    def append(self, ids: np.ndarray, rows: np.ndarray) -> None:
        self.ids = np.concatenate([self.ids, ids])
        self.rows = np.concatenate([self.rows, rows]) if len(self.rows) else rows.copy()

    def positions(self, chunk_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(row positions, mask of which chunk_ids have a row)."""
        pos = np.searchsorted(self.ids, chunk_ids)
        pos = np.minimum(pos, max(len(self.ids) - 1, 0))
        found = (self.ids[pos] == chunk_ids) if len(self.ids) else np.zeros(len(chunk_ids), dtype=bool)
        return pos, found


class VectorIndex:
    def __init__(self, store: Store, model_id: str, dims: int):
        self.store = store
        self.model_id = model_id
        self.dims = dims
        self._code = _Matrix(dims)
        self._names = _Matrix(dims)
        self._generation: tuple[int, int] | None = None
        self._allowed: dict[tuple, np.ndarray] = {}

    def refresh(self) -> None:
        """Catch up with the store: append new vectors, or reload when rows went away or changed."""
        generation = self.store.generation
        if generation == self._generation:
            return
        self._allowed.clear()
        for matrix, names in ((self._code, False), (self._names, True)):
            after = int(matrix.ids[-1]) if len(matrix.ids) else 0
            for ids, rows in self.store.iter_vectors(self.model_id, names, after):
                matrix.append(ids, rows)
            if len(matrix.ids) != self.store.vector_count(self.model_id, names):
                self._reload(matrix, names)
        self._generation = generation

    def _reload(self, matrix: _Matrix, names: bool) -> None:
        parts = list(self.store.iter_vectors(self.model_id, names))
        matrix.ids = np.concatenate([p[0] for p in parts]) if parts else _EMPTY_IDS
        matrix.rows = np.concatenate([p[1] for p in parts]) if parts else np.zeros((0, self.dims), np.float32)

    def allowed(self, scope_ids: Sequence[str], where: HitFilter = NO_FILTER) -> np.ndarray:
        """Sorted chunk ids searchable in these scopes under these filters (cached until the next write)."""
        key = (tuple(scope_ids), where)
        if key not in self._allowed:
            if len(self._allowed) > 64:
                self._allowed.clear()
            self._allowed[key] = self.store.scope_chunk_ids(scope_ids, where)
        return self._allowed[key]

    def nearest(self, query: np.ndarray, allowed: np.ndarray, k: int, names: bool = False) -> list[tuple[int, float]]:
        """(chunk id, cosine similarity) of the k allowed chunks closest to `query`, best first."""
        matrix = self._names if names else self._code
        pos, found = matrix.positions(allowed)
        pos = pos[found]
        if not len(pos):
            return []
        sims = matrix.rows[pos] @ query if len(pos) < len(matrix.ids) // 4 else (matrix.rows @ query)[pos]
        k = min(k, len(pos))
        top = np.argpartition(-sims, k - 1)[:k]
        top = top[np.argsort(-sims[top], kind="stable")]
        return [(int(matrix.ids[pos[i]]), float(sims[i])) for i in top]

    def similarities(self, query: np.ndarray, chunk_ids: Sequence[int],
                     names: bool = False) -> dict[int, float]:
        """Cosine similarity of each chunk that has a vector of this kind."""
        matrix = self._names if names else self._code
        ids = np.asarray(chunk_ids, dtype=np.int64)
        pos, found = matrix.positions(ids)
        sims = matrix.rows[pos[found]] @ query
        return {int(cid): float(sim) for cid, sim in zip(ids[found], sims, strict=True)}
