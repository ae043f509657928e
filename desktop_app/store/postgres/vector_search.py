"""Vector search in the server: pgvector's cosine distance through an HNSW index, score = 1 - distance.

Unfiltered searches walk the HNSW index with `hnsw.ef_search` candidates (the seed specification's 40 by
default, `--ef-search` to trade speed for recall). A search restricted to some chunks (a scope in a shared
index, a language, a glob) is exact when they are few enough to score them all (EXACT_LIMIT), and otherwise
walks the index with more candidates, since pgvector applies a filter after the index scan and would
otherwise return fewer than asked for.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..rows import NO_FILTER, ChunkId, HitFilter

if TYPE_CHECKING:
    from .store import PostgresStore

# Chunks a restricted search scores exactly: 50,000 cosine distances of 384 dims cost ~15 ms in the server.
EXACT_LIMIT = 50_000
# A restricted search through the index asks for this many times more candidates than it keeps.
FILTERED_EF_FACTOR = 8


class PgVectorSearch:
    def __init__(self, store: PostgresStore, model_id: str, dims: int):
        self.store = store
        self.model_id = model_id
        self.dims = dims
        self._ids: tuple[Hashable, np.ndarray] | None = None
        self._tables: dict[bool, str] = {}
        self._allowed: dict[tuple, np.ndarray] = {}
        self._allowed_generation: Hashable = None

    def _table(self, names: bool) -> str | None:
        """The model's vector table, looked up once it exists (a search asks for it four times)."""
        if names not in self._tables:
            table = self.store._table(self.model_id, names)
            if table is None:
                return None
            self._tables[names] = table[0]
        return self._tables[names]

    def refresh(self, budget_s: float | None = None) -> bool:
        return True  # the server is the index: nothing to load

    @property
    def loaded_share(self) -> float:
        return 1.0

    def ids(self) -> np.ndarray:
        generation = self.store.generation
        if self._ids is None or self._ids[0] != generation:
            self._ids = (generation, self.store.vector_ids(self.model_id))
        return self._ids[1]

    def allowed(self, scope_ids: Sequence[str], where: HitFilter = NO_FILTER) -> np.ndarray | None:
        """None when every chunk is allowed (no filter, every scope); else the allowed ids, cached until the
        next write anywhere."""
        if where == NO_FILTER and self.store.covers_all_scopes(scope_ids):
            return None
        generation = self.store.generation
        if generation != self._allowed_generation:
            self._allowed.clear()
            self._allowed_generation = generation
        key = (tuple(scope_ids), where)
        if key not in self._allowed:
            self._allowed[key] = self.store.scope_chunk_ids(scope_ids, where)
        return self._allowed[key]

    def nearest(
        self, query: np.ndarray, allowed: np.ndarray | None, k: int, names: bool = False
    ) -> list[tuple[ChunkId, float]]:
        table = self._table(names)
        if table is None or (allowed is not None and not len(allowed)):
            return []
        vector = np.asarray(query, dtype=np.float32)
        if allowed is not None and len(allowed) <= EXACT_LIMIT:
            rows = self.store.execute_read(
                f"SELECT chunk_id, 1 - (embedding <=> %s) FROM {table} WHERE chunk_id = ANY(%s) "
                "ORDER BY embedding <=> %s LIMIT %s",
                (vector, allowed.tolist(), vector, k),
            )
            return [(ChunkId(r[0]), float(r[1])) for r in rows]
        ef = self.store.ef_search if allowed is None else max(self.store.ef_search, k) * FILTERED_EF_FACTOR
        restrict = "" if allowed is None else "WHERE chunk_id = ANY(%s) "
        args: list = [vector] + ([] if allowed is None else [allowed.tolist()]) + [vector, k]
        with self.store.read_transaction() as conn:
            conn.execute(f"SET LOCAL hnsw.ef_search = {int(max(ef, k))}")
            rows = conn.execute(
                f"SELECT chunk_id, 1 - (embedding <=> %s) FROM {table} {restrict}ORDER BY embedding <=> %s LIMIT %s",
                args,
            ).fetchall()
        return [(ChunkId(r[0]), float(r[1])) for r in rows]

    def similarities(
        self, query: np.ndarray, chunk_ids: Sequence[ChunkId], names: bool = False
    ) -> dict[ChunkId, float]:
        table = self._table(names)
        if table is None or not chunk_ids:
            return {}
        rows = self.store.execute_read(
            f"SELECT chunk_id, 1 - (embedding <=> %s) FROM {table} WHERE chunk_id = ANY(%s)",
            (np.asarray(query, dtype=np.float32), [int(c) for c in chunk_ids]),
        )
        return {ChunkId(r[0]): float(r[1]) for r in rows}
