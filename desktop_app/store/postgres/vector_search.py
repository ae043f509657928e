"""Vector search in the server: pgvector's cosine distance through an HNSW index, score = 1 - distance.

Unfiltered searches walk the HNSW index with `hnsw.ef_search` candidates (DEFAULT_EF_SEARCH, or as many as
asked for where that is more; `--ef-search` trades speed for recall). A search restricted to some chunks (a
scope in a shared index, a language, a glob) takes whichever of two ways costs less in the server: scoring every
allowed chunk exactly, or walking the index for enough candidates that, at the allowed share of all chunks, a
quarter more than asked for are expected to be allowed, and keeping those. That walk is the cost model's guess
for pgvector before 0.8 (pgserver bundles 0.6.2), which filters only after its walk. Where the server's pgvector
has iterative index scans (0.8 and later, read from the extension's version at run time), the walk instead
checks each candidate against the filter in the server (its SQL, a semi-join on the places) and goes on until k
pass, so no guess of ef falls short; exact scoring still serves allowed sets small enough to cost less. The
allowed ids stay in this process; only the exact way sends them. A process makes its first set since a write with
the store's statement and the later ones from the scopes' places read once as columns (store/place_columns.py).
The search's code and name lookups each have a connection of their own, so they run side by side.

Measured on 100K chunks of 384 dims (bench_team.py's store, pgserver on two quiet cores): scoring exactly
costs ~4.5 us a chunk (2,000 chunks 9 ms; every chunk by a sequential scan 43 ms), a walk ~70 us a candidate
(ef_search 40: 2.2 ms, 400: 20 ms, 1,000: 72 ms). Rejected: the allowed ids as `chunk_id = ANY(...)` in the
walk's own query, which the planner also chose for exact scoring of large sets: 50,000 ids took 14 ms to
plan, the walk still stopped after ef_search candidates (19 of 50 results), and without the index the
list is searched row by row (5.8 s).

Measured on 1.1M chunks (bench_team.py's store, pgvector 0.8.2 on PostgreSQL 18, two cores, load 1.1), for a
filter allowing 42,248 chunks (3.8%): exact scoring 102 ms, a walk of ef 1,000 kept 37.5 of the 50 asked for,
an iterative walk found all 50 in 109 ms. An iterative walk starts from ef_search candidates (here 1,000, so
that it keeps at least what the cost model's walk finds), which costs a walk of 1,000 even where 70 would
do (77-320 ms for shares of 15-91%), so it serves only past ef_search's ceiling.
"""

from __future__ import annotations

import functools
import math
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..id_arrays import among
from ..place_columns import PlaceColumns
from ..rows import NO_FILTER, ChunkId, HitFilter
from ..until_next_write import UntilNextWrite
from .pgvector_features import ITERATIVE_SCAN_SINCE

if TYPE_CHECKING:
    import psycopg

    from .store import PostgresStore

# The HNSW graph a model's vector tables get, and the candidates an unfiltered walk visits. Recall@10 against
# exact search on real vectors (bench_team.py --real-vectors over the semble-dev stores: 46,435 distinct MiniLM
# code vectors, 200 name vectors as the questions; halfvec on pgvector 0.8.2; builds vary by a few points): the
# seed specification's ef_construction 64 gave 0.82-0.83 at ef_search 40, 0.84-0.85 at 50 (what a search of 50
# candidates walked), 0.89-0.91 at 100; ef_construction 128 0.90-0.91 / 0.94-0.97 at 50 / 100; 200 0.93-0.94 /
# 0.97 (0.99 at 200); 256 0.93 / 0.97. m 24 instead of 16 did no better than ef_construction alone. A walk of
# 100 took 0.8-1.0 ms there against 0.55-0.65 for 50; on bench_team.py's 100K random vectors 6.2-8.0 ms against
# 3.4-4.4 at 40, whole searches there and at 1M about 1 ms slower (tests/benchmarks/README.md). The build took
# 10.8-11.5 s against 5.6-6.0 (inserts cost the same share more, far below what embedding a chunk costs).
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 200
DEFAULT_EF_SEARCH = 100

# The cost model that picks a restricted search's way (microseconds, measured as above).
EXACT_US_PER_CHUNK = 4.5
WALK_US_PER_CANDIDATE = 70.0
# A restricted walk expects this many allowed candidates for each one asked for.
WALK_MARGIN = 1.25
# pgvector's ceiling for hnsw.ef_search.
MAX_EF_SEARCH = 1000
# The candidates an iterative index scan may read (pgvector's default).
MAX_SCAN_TUPLES = 20_000
ITERATIVE_US_PER_CANDIDATE = 70.0


class _Asked:
    """Whether an allowed set was made for some scopes since the last write, and their columns once read."""

    def __init__(self) -> None:
        self.made = False
        self.columns: PlaceColumns | None = None


class PgVectorSearch:
    def __init__(self, store: PostgresStore, model_id: str, dims: int):
        self.store = store
        self.model_id = model_id
        self.dims = dims
        self._tables: dict[bool, str] = {}
        until_next_write = functools.partial(UntilNextWrite, lambda: store.generation)
        self._ids: UntilNextWrite[None, np.ndarray] = until_next_write()
        self._any: UntilNextWrite[None, bool] = until_next_write()
        self._allowed: UntilNextWrite[tuple, np.ndarray] = until_next_write()
        self._asked: UntilNextWrite[tuple[str, ...], _Asked] = until_next_write()
        # Rows by vector table, with the generation they were counted at (read on the scan thread's connection).
        self._counts: dict[str, tuple[int, int]] = {}
        # Each allowed set handed out and still held (by _allowed until the next write, or by a caller), by its
        # identity: (a weak reference to it, its scopes, its filter). Its entry goes when the set does: a bound of
        # 32 entries here once outlived by the sets _allowed kept made a process that had asked for more filters
        # since the last write walk its first ones the cost model's way, short of k under a small share.
        self._filters: dict[int, tuple[weakref.ref[np.ndarray], tuple[str, ...], HitFilter]] = {}
        # Whether the server's pgvector walks iteratively (0.8 and later; a server whose library was upgraded runs
        # ALTER EXTENSION vector UPDATE to use them). bench_team.py sets it off to measure the cost model alone.
        self.walks_iteratively = store.pgvector_version >= ITERATIVE_SCAN_SINCE

    def _table(self, names: bool, conn: psycopg.Connection | None = None) -> str | None:
        """The model's vector table, looked up once it exists (a search asks for it four times)."""
        if names not in self._tables:
            table = self.store._table(self.model_id, names, conn)
            if table is None:
                return None
            self._tables[names] = table[0]
        return self._tables[names]

    def refresh(self, budget_s: float | None = None) -> bool:
        return True  # the server is the index: nothing to load

    @property
    def loading(self) -> bool:
        return False

    @property
    def loaded_share(self) -> float:
        return 1.0

    def ids(self) -> np.ndarray:
        return self._ids.get(None, lambda: self.store.vector_ids(self.model_id))

    def holds_any(self) -> bool:
        def read() -> bool:
            tables = [t for t in (self._table(False), self._table(True)) if t is not None]
            return any(self.store._rows(f"SELECT 1 FROM {t} LIMIT 1") for t in tables)

        return self._any.get(None, read)

    def allowed(self, scope_ids: Sequence[str], where: HitFilter = NO_FILTER) -> np.ndarray | None:
        """None when every chunk is allowed (no filter, every scope); else the allowed ids, cached until the
        next write anywhere. A set handed out here stands for its filter too: where the server walks its index
        iteratively, nearest() gives the server the filter, never the ids."""
        if where == NO_FILTER and self.store.covers_all_scopes(scope_ids):
            return None

        def read() -> np.ndarray:
            ids = self._allowed_ids(scope_ids, where)
            key = id(ids)

            def forget(gone: weakref.ref[np.ndarray]) -> None:
                # Called as the set is freed, before its identity can be another's.
                if (entry := self._filters.get(key)) is not None and entry[0] is gone:
                    self._filters.pop(key, None)

            self._filters[key] = (weakref.ref(ids, forget), tuple(scope_ids), where)
            return ids

        return self._allowed.get((tuple(scope_ids), where), read)

    def _allowed_ids(self, scope_ids: Sequence[str], where: HitFilter) -> np.ndarray:
        """A set by the store's statement, or, from the second set these scopes need since the last write, by the
        scopes' columns (place_columns.py, which says why not from the first)."""
        asked = self._asked.get(tuple(scope_ids), _Asked)
        first, asked.made = not asked.made, True
        if not PlaceColumns.answers(where) or (asked.columns is None and first):
            return self.store.scope_chunk_ids(scope_ids, where)
        if asked.columns is None:
            asked.columns = self.store.scope_place_columns(scope_ids)
        globs = self.store.glob_file_ids(scope_ids, where.globs) if where.globs else ()
        return asked.columns.allowed(where, globs)

    def nearest(
        self, query: np.ndarray, allowed: np.ndarray | None, k: int, names: bool = False
    ) -> list[tuple[ChunkId, float]]:
        """Runs on a scan thread (protocols.py): every statement goes to that thread's own connection, never to
        the store's, which the worker's thread uses meanwhile and may replace after a dropped connection."""
        if allowed is not None and not len(allowed):
            return []
        with self.store.vector_transaction() as conn:
            table = self._table(names, conn)
            if table is None:
                return []
            return self._nearest_in(conn, table, np.asarray(query, dtype=np.float32), allowed, k)

    def _nearest_in(
        self, conn: psycopg.Connection, table: str, vector: np.ndarray, allowed: np.ndarray | None, k: int
    ) -> list[tuple[ChunkId, float]]:
        if allowed is None:
            return self._walk(conn, table, vector, max(self.store.ef_search, k), k)
        share = min(1.0, len(allowed) / max(1, self._vector_count(conn, table)))
        # Candidates a walk is expected to visit before k of them are allowed.
        needed = math.ceil(WALK_MARGIN * k / share)
        issued = self._filters.get(id(allowed))
        if needed > MAX_EF_SEARCH and issued is not None and issued[0]() is allowed and self.walks_iteratively:
            # Past ef_search's ceiling a walk would fall short of k; an iterative one goes on.
            if len(allowed) * EXACT_US_PER_CHUNK <= needed * ITERATIVE_US_PER_CANDIDATE:
                return self._exact(conn, table, vector, allowed, k)
            return self._walk_filtered(conn, table, vector, issued[1], issued[2], k)
        ef = min(MAX_EF_SEARCH, max(self.store.ef_search, k, needed))
        if len(allowed) * EXACT_US_PER_CHUNK <= ef * WALK_US_PER_CANDIDATE:
            return self._exact(conn, table, vector, allowed, k)
        walked = self._walk(conn, table, vector, ef, ef)
        ids = np.fromiter((cid for cid, _ in walked), dtype=np.int64, count=len(walked))
        kept = among(ids, allowed)
        return [hit for hit, keep in zip(walked, kept, strict=True) if keep][:k]

    def _walk(
        self, conn: psycopg.Connection, table: str, vector: np.ndarray, ef: int, limit: int
    ) -> list[tuple[ChunkId, float]]:
        """The `limit` nearest of `ef` candidates from the HNSW index (in the caller's transaction: the setting
        is local to it)."""
        conn.execute(f"SET LOCAL hnsw.ef_search = {int(ef)}")
        rows = conn.execute(
            f"SELECT chunk_id, 1 - (embedding <=> %s) FROM {table} ORDER BY embedding <=> %s LIMIT %s",
            (vector, vector, limit),
        ).fetchall()
        return [(ChunkId(r[0]), float(r[1])) for r in rows]

    def _walk_filtered(
        self,
        conn: psycopg.Connection,
        table: str,
        vector: np.ndarray,
        scope_ids: tuple[str, ...],
        where: HitFilter,
        k: int,
    ) -> list[tuple[ChunkId, float]]:
        """The k nearest allowed chunks by an iterative walk that checks each candidate against the filter in
        the server and goes on until k pass (or it has read MAX_SCAN_TUPLES). Relaxed order: the walk may
        yield a candidate after a nearer one it finds later, so the k found are sorted again: here, not in SQL,
        where PostgreSQL 17 and later took the inner ORDER BY's order for the outer's (the two distances are one
        expression once the query's vector is bound) and left the relaxed order as it came."""
        cond, args = self.store.filter_sql(scope_ids, where)
        files = self.store.file_join(where)
        # The first MAX_EF_SEARCH candidates are those of the cost model's walk; the walk goes on from there.
        conn.execute(f"SET LOCAL hnsw.ef_search = {MAX_EF_SEARCH}")
        conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        conn.execute(f"SET LOCAL hnsw.max_scan_tuples = {MAX_SCAN_TUPLES}")
        rows = conn.execute(
            f"WITH w AS MATERIALIZED (SELECT v.chunk_id, v.embedding <=> %s AS d FROM {table} v "
            f"WHERE EXISTS (SELECT 1 FROM file_chunk fc {files}"
            f"WHERE fc.chunk_id = v.chunk_id AND {cond}) ORDER BY v.embedding <=> %s LIMIT %s) "
            "SELECT chunk_id, 1 - d FROM w",
            [vector, *args, vector, k],
        ).fetchall()
        return sorted(((ChunkId(r[0]), float(r[1])) for r in rows), key=lambda hit: -hit[1])

    def _exact(
        self, conn: psycopg.Connection, table: str, vector: np.ndarray, allowed: np.ndarray, k: int
    ) -> list[tuple[ChunkId, float]]:
        """The k nearest of the allowed chunks, every one scored (materialized first, so that the planner
        cannot answer the ORDER BY with the HNSW walk, which would drop allowed chunks beyond its candidates)."""
        rows = conn.execute(
            f"WITH c AS MATERIALIZED (SELECT chunk_id, embedding <=> %s AS d FROM {table} "
            "WHERE chunk_id = ANY(%s)) SELECT chunk_id, 1 - d FROM c ORDER BY d LIMIT %s",
            (vector, allowed.tolist(), k),
        ).fetchall()
        return [(ChunkId(r[0]), float(r[1])) for r in rows]

    def _vector_count(self, conn: psycopg.Connection, table: str) -> int:
        """Rows in a vector table, from the server's statistics (no row read), counted again after a write."""
        generation = self.store.generation_on(conn)
        counted = self._counts.get(table)
        if counted is None or counted[0] != generation:
            counted = self._counts[table] = (generation, self.store.row_estimate(table, conn))
        return counted[1]

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
