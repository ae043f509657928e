"""The team index: Quarry's index on a PostgreSQL server with pgvector, shared by everyone pointed at it.

The same seam as the SQLite store (store.protocols.Store), with three differences a team needs:

* a repository is known by its identity (identity.py), not by a path: its base scope holds its committed
  content, shared by every teammate's checkout, and each checkout has an overlay scope of its own (its working
  tree over the base, found only from that checkout; see protocols.Bases). `Scope.root` is this machine's path
  for a scope (the one asked about, or the last one this host indexed it from);
* chunks are keyed by content hash across all users, so a chunk embedded by anyone is never embedded again;
* several indexers may fill in vectors at once: each claims the chunks it embeds (claim_chunks, with a
  lease a killed indexer's claims run out of), so together they embed each chunk once.

Search runs in the server: keyword search on a weighted tsvector, nearest neighbours through an HNSW index
(vector_search.py), filters as SQL. Used from the worker's thread on the store's connection, and by a search's
vector lookups on a connection of each scan thread's own (the thread contract: protocols.py).
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import psycopg

from ..errors import ScopeRemoved, StoreError
from ..id_arrays import distinct_sorted
from ..identity import scope_key
from ..keyword_budget import affordable_terms
from ..path_globs import path_matches, patterns_argument
from ..place_columns import PlaceColumns
from ..protocols import FileKey, VectorRow, VectorSearch
from ..rows import (
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
    Published,
    Scope,
    ScopeSummary,
    SkippedFile,
    StoredChunk,
    outline_rows,
    outline_sources,
)
from ..schema_names import (
    CHANGED_FROM_PARENT,
    NAME_SUFFIX,
    chunking_meta_key,
    hit_columns,
    new_ulid,
    stored_columns,
    vector_table_name,
)
from ..shared_sql import POSTGRES as SQL
from ..until_next_write import PinnedGeneration, UntilNextWrite
from .connection import ReadOnlyStore, connect, display_url, store_error
from .pgvector_features import installed_version, vector_type
from .vector_search import DEFAULT_EF_SEARCH, HNSW_EF_CONSTRUCTION, HNSW_M, PgVectorSearch

_STORED = stored_columns()  # the chunk text as stored: PostgreSQL compresses a value over 2 KB itself
_HITS = hit_columns()
# The team store writes files and chunks a row a statement; the SQLite store writes a batch's rows in one statement
# (sqlite/json_rows.py says why).
_DELETE_FILE = "DELETE FROM file WHERE scope_id = %s AND path = %s"
_TOUCH_FILE = "UPDATE file SET size = %s, mtime_ns = %s WHERE scope_id = %s AND path = %s"
_INSERT_SKIPPED_FILE = (
    "INSERT INTO file (scope_id, path, size, mtime_ns, status, skip_reason, indexed_at) "
    "VALUES (%s, %s, %s, %s, 'skipped', %s, %s)"
)
_INSERT_INDEXED_FILE = (
    "INSERT INTO file (scope_id, path, size, mtime_ns, sha256, language, status, indexed_at) "
    "VALUES (%s, %s, %s, %s, %s, %s, 'indexed', %s) RETURNING id"
)
_INSERT_CHUNK = (
    "INSERT INTO chunk (hash, text, token_count, created_at) VALUES (%s, %s, %s, %s) ON CONFLICT (hash) DO NOTHING"
)

_T = TypeVar("_T")
# ts_rank weights, in PostgreSQL's order {D, C, B, A}: symbol names (A) weigh most, then the path and the
# enclosing symbol (B), then the text (C); the same 10 : 3 : 1 as the SQLite store's BM25 column weights.
KEYWORD_WEIGHTS = "{0, 0.1, 0.3, 1.0}"
# How long a claim on chunks to embed holds: an indexer killed mid-batch leaves claims that others take over
# once they run out. A batch of 512 chunks takes ~20 s on two cores. QUARRY_CLAIM_LEASE_S changes it (a team
# with slow machines raises it; the tests lower it so that a killed indexer's work is taken over sooner).
CLAIM_LEASE_S = 120.0
CLAIM_LEASE_ENV = "QUARRY_CLAIM_LEASE_S"
# Rows one keyword query may rank (see keyword_budget.py). ts_rank reads each matching row's keywords: 18,099
# rows took 92 ms here (~5 us a row, against FTS5's ~1.3), so the budget is a third of the SQLite store's.
KEYWORD_RANK_BUDGET = 1500
# A query matching more places than a search can afford to rank by their whole keywords ranks (keyword_matches):
# at most KEYWORD_NAMED_CAP places matching by their names (their name keywords alone, a tenth of the whole), the
# KEYWORD_NAMED_RANKED best of those and at most KEYWORD_TEXT_CAP places matching by their text alone by their
# whole keywords (under a filter, those of the first KEYWORD_TEXT_EXAMINED text matches that pass it).
KEYWORD_NAMED_CAP = 4 * KEYWORD_RANK_BUDGET
KEYWORD_NAMED_RANKED = 500
KEYWORD_TEXT_CAP = KEYWORD_RANK_BUDGET
KEYWORD_TEXT_EXAMINED = 4 * KEYWORD_RANK_BUDGET
# Keyword queries of scopes holding at least this share of all places leave the scope's index out.
SCOPE_INDEX_SHARE = 0.25
# Transactions that lose a race with another indexer (a deadlock, a unique key written meanwhile) are tried
# again this many times: the work is the same whoever wins.
WRITE_ATTEMPTS = 5

_KEYWORDS = """setweight(to_tsvector('simple', %s), 'A') || setweight(to_tsvector('simple', %s), 'B')
    || setweight(to_tsvector('simple', %s), 'C')"""


# Of the overlay `s`: its files whose content is not its base's (changed or added in the checkout), and its base's
# files the checkout lacks (deleted there).
_OVERLAY_DIFFERENCES = """
    ((SELECT count(*) FROM file o WHERE o.scope_id = s.id AND o.status = 'indexed' AND NOT EXISTS (
        SELECT 1 FROM file b WHERE b.scope_id = s.parent_id AND b.path = o.path AND b.status = 'indexed'
        AND b.sha256 = o.sha256))
     + (SELECT count(*) FROM file b WHERE b.scope_id = s.parent_id AND b.status = 'indexed' AND NOT EXISTS (
        SELECT 1 FROM file o WHERE o.scope_id = s.id AND o.path = b.path AND o.status = 'indexed')))"""

# A bigint[] in PostgreSQL's binary format (array_send): its dimensions, a flag for nulls and the element type (32
# bits each), a size and lower bound per dimension, then per element a 32-bit length and the value (big-endian).
_ARRAY_ELEMENT = np.dtype([("length", ">i4"), ("value", ">i8")])


def _scope_sql(scope_index: bool) -> str:
    """The places' scope condition; without `scope_index` checked on each row another index found (`|| ''` keeps
    the planner off the scope's own index, see keyword_matches)."""
    return "fc.scope_id = ANY(%s)" if scope_index else "fc.scope_id || '' = ANY(%s)"


def _within_scopes(scope_ids: Sequence[str], scope_index: bool, cond: str, args: list[Any]) -> tuple[str, list[Any]]:
    """filter_only_sql's condition and arguments with the scopes' condition before them."""
    scope = _scope_sql(scope_index)
    return (f"{scope} AND {cond}" if cond else scope), [list(scope_ids), *args]


def _binary_ids(data: bytes) -> np.ndarray:
    start = 12 + 8 * int.from_bytes(data[:4], "big")  # an empty array has no dimension
    return np.frombuffer(data, dtype=_ARRAY_ELEMENT, offset=start)["value"].astype(np.int64)


def _lease_from_env() -> float:
    raw = os.environ.get(CLAIM_LEASE_ENV, "").strip()
    try:
        value = float(raw) if raw else CLAIM_LEASE_S
    except ValueError:
        value = -1.0
    if value <= 0:
        raise StoreError(f"{CLAIM_LEASE_ENV} must be a positive number of seconds (got {raw!r}); fix or unset it")
    return value


class PostgresStore:
    """The team implementation of store.protocols.Store."""

    def __init__(self, url: str, ef_search: int = DEFAULT_EF_SEARCH, host: str | None = None):
        self.url = url
        self.ef_search = ef_search  # HNSW candidates per unfiltered vector query (vector_search.py)
        self.shown = display_url(url)
        self.host = host or socket.gethostname()
        self.owner = f"{self.host}:{new_ulid()}"  # this process, as the owner of its embedding claims
        self.claim_lease_s = _lease_from_env()
        self._conn = connect(url)
        # What the server's pgvector can do (pgvector_features.py): read once, on the worker's connection.
        self.pgvector_version = installed_version(self._conn)
        self._vector_conns = threading.local()  # each vector-search thread's connection, opened on first use
        self._vector_opened: list[psycopg.Connection] = []
        self._roots: dict[str, str] = {}  # scope id -> this machine's root for it, as last asked about
        self._pin: PinnedGeneration[int] = PinnedGeneration()
        self._keyword_stats: UntilNextWrite[None, dict[str, int]] = UntilNextWrite(lambda: self.generation)
        self._scope_shares: UntilNextWrite[None, dict[str, float]] = UntilNextWrite(lambda: self.generation)
        self._glob_files: UntilNextWrite[tuple, list[int]] = UntilNextWrite(lambda: self.generation)

    # --- plumbing -------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        try:
            yield
        except psycopg.Error as exc:
            raise store_error(exc, self.shown) from None

    def _reconnect_if_lost(self) -> None:
        """After a dropped connection (a server restart, a network blip) the next call connects again; the
        call that found it dropped has already failed with a message."""
        if self._conn.closed or self._conn.broken:
            self._conn.close()
            self._conn = connect(self.url)

    def _rows(self, sql: str, args: Sequence | dict = (), conn: psycopg.Connection | None = None) -> list[tuple]:
        """A read on the store's connection (the worker thread's), or on `conn`: a scan thread's own."""
        if conn is None:
            self._reconnect_if_lost()
            conn = self._conn
        with self._errors():
            return conn.execute(sql, args).fetchall()

    def _write(self, work: Callable[[psycopg.Connection], _T]) -> _T:
        """Run `work` in one transaction that also moves the change counter; tried again if it lost a race
        with another indexer writing the same rows."""
        self._reconnect_if_lost()
        for attempt in range(WRITE_ATTEMPTS):
            try:
                with self._conn.transaction():
                    result = work(self._conn)
                    self._conn.execute("UPDATE generation SET n = n + 1 WHERE id = 1")
                    return result
            except (psycopg.errors.DeadlockDetected, psycopg.errors.UniqueViolation) as exc:
                # The race is told by the server's own error class, caught before it becomes a StoreError
                # (whose `from None` hides it): three indexers starting together lost such races 1 run in 2.
                if attempt == WRITE_ATTEMPTS - 1:
                    raise store_error(exc, self.shown) from None
            except psycopg.errors.ForeignKeyViolation as exc:
                if (exc.diag.constraint_name or "").endswith("_scope_id_fkey"):
                    # The files of a folder another window or command removed meanwhile (its scope row is gone).
                    raise ScopeRemoved(
                        f"the folder being written to the team index {self.shown} was removed from it meanwhile "
                        "(by another window or command); index the folder again to add it back"
                    ) from None
                raise store_error(exc, self.shown) from None
            except psycopg.Error as exc:
                raise store_error(exc, self.shown) from None
        raise AssertionError("unreachable")

    @property
    def generation(self) -> int:
        """The change counter every write transaction moves, by any process on any machine."""
        return self.generation_on()

    def generation_on(self, conn: psycopg.Connection | None = None) -> int:
        """`generation`, read on `conn` where given (a scan thread's own connection), unless a search has it."""
        return self._pin.get(lambda: int(self._rows("SELECT n FROM generation WHERE id = 1", conn=conn)[0][0]))

    def one_generation(self) -> contextlib.AbstractContextManager[None]:
        """A search reads the counter once: each value it keeps until the next write checked it again, a round
        trip each, ~7 a search. At 100K chunks (bench_team.py's store, two cores) those reads were 2.7 ms of a
        search's 17 ms at the median; the slowest searches, under load, spent up to 10 ms on them."""
        return self._pin.pinned(self.generation_on)

    def check_intact(self) -> None:
        """Nothing to do: the server checks each page it reads (and replays its own log after a crash)."""

    def remember_intact(self) -> None:
        """Nothing to remember: check_intact reads nothing."""

    def close(self) -> None:
        for conn in (self._conn, *self._vector_opened):
            with contextlib.suppress(psycopg.Error):
                conn.close()

    # --- models ---------------------------------------------------------------------------------

    def register_model(self, model_id: str, dims: int, source: str) -> None:
        rows = self._rows(SQL.model_dims, (model_id,))
        if rows and rows[0][0] == dims:
            return
        table = vector_table_name(model_id)

        def work(conn: psycopg.Connection) -> None:
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (table,))
            recorded = conn.execute(SQL.model_dims, (model_id,)).fetchone()
            if recorded and recorded[0] == dims:
                return  # another indexer registered it meanwhile
            if recorded:
                vectors = any(
                    conn.execute(f"SELECT 1 FROM {name} LIMIT 1").fetchone() for name in (table, table + NAME_SUFFIX)
                )
                if vectors:
                    raise StoreError(
                        f"model {model_id} is recorded with {recorded[0]} dimensions but produces {dims}; "
                        "give a changed model a new id in its quarry-model.json"
                    )
                # Recorded with another size and never given a vector (earlier builds recorded a model before
                # running it): nothing is lost by recording it again.
                for name in (table, table + NAME_SUFFIX):
                    conn.execute(f"DROP TABLE {name}")
                conn.execute(SQL.delete_model, (model_id,))
            kind = vector_type(self.pgvector_version)
            for name in (table, table + NAME_SUFFIX):
                conn.execute(
                    f"CREATE TABLE {name} (chunk_id bigint PRIMARY KEY REFERENCES chunk(id) ON DELETE CASCADE, "
                    f"embedding {kind}({int(dims)}) NOT NULL)"
                )
                # A deeper graph than the seed specification's ef_construction 64 (vector_search.py: recall@10
                # 0.89-0.91 -> 0.97 at ef_search 100 on real vectors).
                conn.execute(
                    f"CREATE INDEX {name}_hnsw ON {name} USING hnsw (embedding {kind}_cosine_ops) "
                    f"WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION})"
                )
            conn.execute(
                SQL.insert_model,
                (model_id, dims, table, source, time.time()),
            )
            conn.execute(
                "INSERT INTO quarry_meta (key, value) VALUES ('active_model', %s) ON CONFLICT DO NOTHING",
                (model_id,),
            )

        self._write(work)

    def active_model(self) -> str | None:
        rows = self._rows("SELECT value FROM quarry_meta WHERE key = 'active_model'")
        return rows[0][0] if rows else None

    def model_source(self, model_id: str) -> str | None:
        rows = self._rows(SQL.model_source, (model_id,))
        return rows[0][0] if rows else None

    def activate_model(self, model_id: str, keep: Sequence[str] = ()) -> None:
        kept = [model_id, *keep]

        def work(conn: psycopg.Connection) -> None:
            for other, table in conn.execute(
                "SELECT id, vector_table FROM model WHERE NOT (id = ANY(%s))", (kept,)
            ).fetchall():
                conn.execute(f"DROP TABLE IF EXISTS {table}, {table}{NAME_SUFFIX}")
                conn.execute(SQL.delete_model, (other,))
                conn.execute("DELETE FROM claim WHERE model = %s", (other,))
            conn.execute(
                "INSERT INTO quarry_meta (key, value) VALUES ('active_model', %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (model_id,),
            )

        self._write(work)

    def drop_models_without_vectors(self, keep: Sequence[str] = ()) -> list[str]:
        kept = [self.active_model() or "", *keep]
        # Another indexer filling in such a model claims its chunks before embedding them (claim_chunks).
        unused = (
            "SELECT id, vector_table FROM model m WHERE NOT (id = ANY(%s)) AND NOT EXISTS "
            "(SELECT 1 FROM claim c WHERE c.model = m.id AND c.expires_at >= now())"
        )

        def without_vectors(conn: psycopg.Connection) -> list[tuple[str, str]]:
            return [
                (model_id, table)
                for model_id, table in conn.execute(unused, (kept,)).fetchall()
                if not any(
                    conn.execute(f"SELECT 1 FROM {name} LIMIT 1").fetchone() for name in (table, table + NAME_SUFFIX)
                )
            ]

        self._reconnect_if_lost()
        with self._errors():
            if not without_vectors(self._conn):
                return []  # the usual case: no write transaction for nothing

        def work(conn: psycopg.Connection) -> list[str]:
            dropped = without_vectors(conn)  # again in the transaction: another indexer may have begun since
            for model_id, table in dropped:
                conn.execute(f"DROP TABLE IF EXISTS {table}, {table}{NAME_SUFFIX}")
                conn.execute(SQL.delete_model, (model_id,))
                conn.execute("DELETE FROM claim WHERE model = %s", (model_id,))  # expired ones
            return [model_id for model_id, _ in dropped]

        return self._write(work)

    def _table(
        self, model_id: str, names: bool = False, conn: psycopg.Connection | None = None
    ) -> tuple[str, int] | None:
        rows = self._rows(SQL.model_table, (model_id,), conn)
        if not rows:
            return None
        return rows[0][0] + (NAME_SUFFIX if names else ""), rows[0][1]

    def chunks_without_vectors(self, model_id: str, names: bool = False) -> list[ChunkId]:
        table = self._table(model_id, names)
        named = "WHERE fc.symbol_name IS NOT NULL " if names else ""
        missing = f"AND NOT EXISTS (SELECT 1 FROM {table[0]} v WHERE v.chunk_id = x.chunk_id)" if table else ""
        rows = self._rows(
            "SELECT x.chunk_id FROM (SELECT fc.chunk_id, max(f.mtime_ns) AS newest FROM file_chunk fc "
            f"JOIN file f ON f.id = fc.file_id {named}GROUP BY fc.chunk_id) x WHERE true {missing} "
            "ORDER BY x.newest DESC, x.chunk_id"
        )
        return [ChunkId(r[0]) for r in rows]

    def vector_ids(self, model_id: str, names: bool = False) -> np.ndarray:
        table = self._table(model_id, names)
        if table is None:
            return np.zeros(0, dtype=np.int64)
        return np.sort(self.ids_of(f"SELECT chunk_id FROM {table[0]}"))

    def add_vectors(self, model_id: str, vectors: Sequence[VectorRow]) -> None:
        table = self._table(model_id)
        if table is None:
            raise StoreError(f"internal error: model {model_id} was not registered before writing vectors")

        def work(conn: psycopg.Connection) -> None:
            # Only chunks still stored get vectors: another indexer (a file changed, a folder removed) may have
            # collected some while the model ran, and their vectors' foreign key then failed the whole batch.
            # KEY SHARE keeps the rest from being collected until this transaction ends.
            stored = {
                r[0]
                for r in conn.execute(
                    "SELECT id FROM chunk WHERE id = ANY(%s) FOR KEY SHARE", ([int(row[0]) for row in vectors],)
                )
            }
            with conn.cursor() as cur:
                for name, column in ((table[0], 1), (table[0] + NAME_SUFFIX, 2)):
                    given = [
                        (row[0], np.asarray(row[column], dtype=np.float32))
                        for row in vectors
                        if row[column] is not None and row[0] in stored
                    ]
                    if given:
                        cur.executemany(
                            f"INSERT INTO {name} (chunk_id, embedding) VALUES (%s, %s) "
                            "ON CONFLICT (chunk_id) DO UPDATE SET embedding = excluded.embedding",
                            given,
                        )
            conn.execute(
                "DELETE FROM claim WHERE model = %s AND owner = %s AND chunk_id = ANY(%s)",
                (model_id, self.owner, [int(row[0]) for row in vectors]),
            )

        self._write(work)

    # --- file outlines ---------------------------------------------------------------------------

    def files_without_outline(self, model_id: str, limit: int) -> list[OutlineSource]:
        # Two indexers may take the same files: the second write replaces the first with the same vector.
        files = self._rows(
            SQL.files_without_outline,
            (model_id, limit),
        )
        names = self._rows(
            "SELECT file_id, symbol_name FROM file_chunk WHERE file_id = ANY(%s) AND symbol_name IS NOT NULL "
            "ORDER BY file_id, ordinal",
            ([f[0] for f in files],),
        )
        return outline_sources(files, names)

    def count_files_without_outline(self, model_id: str) -> int:
        return int(self._rows(SQL.count_files_without_outline, (model_id,))[0][0])

    def add_outlines(self, model_id: str, outlines: Sequence[tuple[OutlineSource, np.ndarray]]) -> None:
        rows = outline_rows(model_id, outlines)

        def work(conn: psycopg.Connection) -> None:
            with conn.cursor() as cur:
                cur.executemany(
                    SQL.add_outline,
                    rows,
                )

        self._write(work)

    def outline_vectors(self, model_id: str, files: Sequence[FileKey]) -> dict[FileKey, np.ndarray]:
        keys = list(dict.fromkeys(files))
        if not keys:
            return {}
        rows = self._rows(
            "SELECT f.scope_id, f.path, o.vector FROM file f JOIN file_outline o ON o.file_id = f.id "
            "JOIN unnest(%s::text[], %s::text[]) AS k(scope_id, path) ON k.scope_id = f.scope_id AND k.path = f.path "
            "WHERE o.model_id = %s",
            ([k[0] for k in keys], [k[1] for k in keys], model_id),
        )
        return {(scope_id, path): np.frombuffer(bytes(blob), dtype=np.float32) for scope_id, path, blob in rows}

    def claim_chunks(self, model_id: str, names: bool, chunk_ids: Sequence[ChunkId]) -> list[ChunkId]:
        """Those of `chunk_ids` this process may embed now: lacking the vector, and claimed by no other indexer
        (or by one whose claim ran out). The claim holds for CLAIM_LEASE_S."""
        table = self._table(model_id, names)
        if table is None or not chunk_ids:
            return list(chunk_ids)

        def work(conn: psycopg.Connection) -> list[ChunkId]:
            rows = conn.execute(
                "INSERT INTO claim (model, names, chunk_id, owner, expires_at) "
                "SELECT %(model)s, %(names)s, c.id, %(owner)s, now() + make_interval(secs => %(lease)s) "
                f"FROM unnest(%(ids)s::bigint[]) AS c(id) WHERE NOT EXISTS (SELECT 1 FROM {table[0]} v "
                "WHERE v.chunk_id = c.id) AND EXISTS (SELECT 1 FROM chunk WHERE chunk.id = c.id) "
                "ON CONFLICT (model, names, chunk_id) DO UPDATE SET owner = excluded.owner, "
                "expires_at = excluded.expires_at WHERE claim.owner = excluded.owner OR claim.expires_at < now() "
                "RETURNING chunk_id",
                {
                    "model": model_id,
                    "names": names,
                    "owner": self.owner,
                    "lease": self.claim_lease_s,
                    "ids": [int(c) for c in chunk_ids],
                },
            ).fetchall()
            # The statement above saw the vectors as they were when it began. Another indexer's add_vectors
            # that committed while it ran (it may have waited on that indexer's claim, which the same commit
            # deleted) wrote a vector the check missed, and the chunk was claimed again: two indexers at once
            # embedded 44 of 300 chunks twice in one CI run. A second statement sees every commit before it; such
            # claims go back.
            late = conn.execute(
                "DELETE FROM claim WHERE model = %s AND names = %s AND owner = %s AND chunk_id = ANY(%s) "
                f"AND EXISTS (SELECT 1 FROM {table[0]} v WHERE v.chunk_id = claim.chunk_id) RETURNING chunk_id",
                (model_id, names, self.owner, [r[0] for r in rows]),
            ).fetchall()
            embedded = {r[0] for r in late}
            return [ChunkId(r[0]) for r in rows if r[0] not in embedded]

        claimed = set(self._write(work))
        return [c for c in chunk_ids if c in claimed]

    def claimed_elsewhere(self, model_id: str, names: bool) -> OthersClaims | None:
        """The chunks other indexers hold live claims on (this one waits for them to be embedded or let go)."""
        chunks, indexers, expire_in_s = self._rows(
            "SELECT count(*), count(DISTINCT owner), extract(epoch FROM max(expires_at) - now()) FROM claim "
            "WHERE model = %s AND names = %s AND owner <> %s AND expires_at >= now()",
            (model_id, names, self.owner),
        )[0]
        return OthersClaims(int(chunks), int(indexers), max(0.0, float(expire_in_s))) if chunks else None

    def vector_search(self, model_id: str, dims: int) -> VectorSearch:
        return PgVectorSearch(self, model_id, dims)

    # --- scopes ---------------------------------------------------------------------------------

    def _scope(self, row: tuple, root: str | None = None) -> Scope:
        scope_id, type_, key, parent_id, created_at, last_indexed_at, commit, branch, host, at = row
        if root is not None:
            self._roots[scope_id] = root
        shown = root or self._roots.get(scope_id) or self._local_root(scope_id) or key
        published = Published(commit, branch, host, at) if commit is not None else None
        return Scope(scope_id, type_, shown, parent_id, created_at, last_indexed_at, published)

    def _local_root(self, scope_id: str) -> str | None:
        rows = self._rows(
            "SELECT root FROM checkout WHERE scope_id = %s AND host = %s ORDER BY seen_at DESC LIMIT 1",
            (scope_id, self.host),
        )
        return rows[0][0] if rows else None

    _SCOPE_COLUMNS = (
        "id, type, key, parent_id, created_at, last_indexed_at, base_commit, base_branch, published_by, published_at"
    )

    def scope_for_root(self, root: Path | str) -> Scope | None:
        rows = self._rows(f"SELECT {self._SCOPE_COLUMNS} FROM scope WHERE key = %s", (scope_key(root, self.host),))
        return self._scope(rows[0], str(root)) if rows else None

    def scope_by_id(self, scope_id: str) -> Scope | None:
        rows = self._rows(f"SELECT {self._SCOPE_COLUMNS} FROM scope WHERE id = %s", (scope_id,))
        return self._scope(rows[0]) if rows else None

    def create_scope(self, root: Path | str, type_: str = "main", parent_id: str | None = None) -> Scope:
        return self._create(scope_key(root, self.host), root, type_, parent_id)

    def _create(self, key: str, root: Path | str | None, type_: str, parent_id: str | None) -> Scope:
        """The scope with this key, made unless it exists; `root`: this machine's folder for it (a base has none:
        it is a commit's files, not a folder's)."""

        def work(conn: psycopg.Connection) -> tuple:
            conn.execute(
                "INSERT INTO scope (id, key, type, parent_id, created_at) VALUES (%s, %s, %s, %s, %s) "
                "ON CONFLICT (key) DO NOTHING",
                (new_ulid(), key, type_, parent_id, time.time()),
            )
            row = conn.execute(f"SELECT {self._SCOPE_COLUMNS} FROM scope WHERE key = %s", (key,)).fetchone()
            assert row is not None
            if root is not None:
                self._record_checkout(conn, row[0], str(root))
            return row

        return self._scope(self._write(work), None if root is None else str(root))

    def _record_checkout(self, conn: psycopg.Connection, scope_id: str, root: str) -> None:
        conn.execute(
            "INSERT INTO checkout (scope_id, host, root, seen_at) VALUES (%s, %s, %s, %s) "
            "ON CONFLICT (scope_id, host, root) DO UPDATE SET seen_at = excluded.seen_at",
            (scope_id, self.host, root, time.time()),
        )

    def mark_indexed(self, scope_id: str) -> None:
        root = self._roots.get(scope_id)

        def work(conn: psycopg.Connection) -> None:
            conn.execute(SQL.mark_indexed, (time.time(), scope_id))
            if root is not None:
                self._record_checkout(conn, scope_id, root)

        self._write(work)

    # --- bases and overlays (protocols.Bases) ---------------------------------------------------

    @property
    def bases(self) -> PostgresStore:
        return self

    def base_scope(self, repository: str) -> Scope | None:
        rows = self._rows(f"SELECT {self._SCOPE_COLUMNS} FROM scope WHERE key = %s AND type = 'base'", (repository,))
        return self._scope(rows[0]) if rows else None

    def create_base(self, repository: str) -> Scope:
        return self._create(repository, None, "base", None)

    def publish(self, scope_id: str, commit: str, branch: str) -> None:
        self._write(
            lambda conn: conn.execute(
                "UPDATE scope SET base_commit = %s, base_branch = %s, published_by = %s, published_at = %s "
                "WHERE id = %s",
                (commit, branch, self.host, time.time(), scope_id),
            )
        )

    def overlay_differences(self, overlay_id: str) -> int:
        return int(self._rows(f"SELECT {_OVERLAY_DIFFERENCES} FROM scope s WHERE s.id = %s", (overlay_id,))[0][0])

    # Every scope but other machines' overlays, which only their own checkout sees.
    _VISIBLE_SCOPES = (
        "FROM scope s WHERE s.type <> 'overlay' OR EXISTS (SELECT 1 FROM checkout c WHERE c.scope_id = s.id "
        "AND c.host = %s)"
    )

    def list_scopes(self) -> list[ScopeSummary]:
        rows = self._rows(
            f"""
            SELECT {self._SCOPE_COLUMNS},
                   (SELECT count(*) FROM file f WHERE f.scope_id = s.id AND f.status = 'indexed'),
                   (SELECT count(*) FROM file_chunk fc WHERE fc.scope_id = s.id),
                   CASE WHEN s.type = 'overlay' THEN {_OVERLAY_DIFFERENCES} END
            {self._VISIBLE_SCOPES}""",
            (self.host,),
        )
        summaries = [ScopeSummary(self._scope(r[:10]), r[10], r[11], r[12]) for r in rows]
        return sorted(summaries, key=lambda s: s.scope.root)

    def scopes(self) -> list[Scope]:
        rows = self._rows(f"SELECT {self._SCOPE_COLUMNS} {self._VISIBLE_SCOPES}", (self.host,))
        return sorted((self._scope(r) for r in rows), key=lambda s: s.root)

    def record_chunking(self, scope_id: str, version: int) -> None:
        self._write(
            lambda conn: conn.execute(
                "INSERT INTO quarry_meta (key, value) VALUES (%s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (chunking_meta_key(scope_id), str(version)),
            )
        )

    def chunking_of(self, scope_id: str) -> int | None:
        rows = self._rows("SELECT value FROM quarry_meta WHERE key = %s", (chunking_meta_key(scope_id),))
        return int(rows[0][0]) if rows else None

    def remove_scope(self, scope_id: str) -> int:
        def work(conn: psycopg.Connection) -> int:
            children = [r[0] for r in conn.execute(SQL.child_scopes, (scope_id,))]
            keys = [chunking_meta_key(sid) for sid in (scope_id, *children)]
            conn.execute("DELETE FROM quarry_meta WHERE key = ANY(%s)", (keys,))
            conn.execute(SQL.delete_scope_and_children, (scope_id, scope_id))
            return self._collect_orphans(conn)

        return self._write(work)

    def chunks_of_whole_store(self, scope_ids: Sequence[str]) -> int | None:
        """None: a team index keeps no count of its chunks (its scopes are many, and its writers many)."""
        return None

    def covers_all_scopes(self, scope_ids: Sequence[str]) -> bool:
        """Whether these are every scope in the index (a search then needs no scope restriction)."""
        return len(set(scope_ids)) >= int(self._rows(SQL.count_scopes)[0][0])

    def scope_counts(self, scope_id: str) -> tuple[int, int, int]:
        files, size = self._rows(SQL.scope_files_and_bytes, (scope_id,))[0]
        places = self._rows(SQL.scope_places, (scope_id,))[0][0]
        return int(files), int(places), int(size)

    # --- files and chunks -----------------------------------------------------------------------

    def file_states(self, scope_id: str) -> dict[str, FileState]:
        rows = self._rows(SQL.file_states, (scope_id,))
        return {r[0]: FileState(*r) for r in rows}

    def symbol_places(self, scope_ids: Sequence[str]) -> list[tuple[PlaceId, str, str | None, str]]:
        rows = self._rows(
            "SELECT fc.id, fc.symbol_name, fc.parent_symbol, f.path FROM file_chunk fc JOIN file f ON f.id = "
            "fc.file_id WHERE fc.scope_id = ANY(%s) AND fc.symbol_name IS NOT NULL ORDER BY fc.id",
            (list(scope_ids),),
        )
        return [(r[0], r[1], r[2], r[3]) for r in rows]

    def file_row(self, scope_id: str, path: str) -> FileState | None:
        rows = self._rows(SQL.file_row, (scope_id, path))
        return FileState(*rows[0]) if rows else None

    def known_chunks(self, hashes: Iterable[str]) -> dict[str, ChunkId]:
        unique = list(dict.fromkeys(hashes))
        rows = self._rows("SELECT hash, id FROM chunk WHERE hash = ANY(%s)", (unique,))
        return {h: ChunkId(cid) for h, cid in rows}

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
        now = time.time()
        table = self._table(model_id) if any(ch.vector is not None for ch in new_chunks) else None

        def work(conn: psycopg.Connection) -> None:
            with conn.cursor() as cur:
                if new_chunks:
                    cur.executemany(
                        _INSERT_CHUNK,
                        [(ch.hash, ch.text, ch.token_count, now) for ch in new_chunks],
                    )
                if table is not None:
                    ids = self._chunk_ids(conn, [ch.hash for ch in new_chunks])
                    for name, attr in ((table[0], "vector"), (table[0] + NAME_SUFFIX, "name_vector")):
                        given = [
                            (ids[ch.hash], getattr(ch, attr)) for ch in new_chunks if getattr(ch, attr) is not None
                        ]
                        if given:
                            cur.executemany(
                                f"INSERT INTO {name} (chunk_id, embedding) VALUES (%s, %s) "
                                "ON CONFLICT (chunk_id) DO UPDATE SET embedding = excluded.embedding",
                                [(cid, np.asarray(v, dtype=np.float32)) for cid, v in given],
                            )
                for path in deleted:
                    cur.execute(_DELETE_FILE, (scope_id, path))
                if touched:
                    cur.executemany(
                        _TOUCH_FILE,
                        [(size, mtime, scope_id, path) for path, size, mtime in touched],
                    )
                for sk in skipped:
                    cur.execute(_DELETE_FILE, (scope_id, sk.path))
                    cur.execute(
                        _INSERT_SKIPPED_FILE,
                        (scope_id, sk.path, sk.size, sk.mtime_ns, sk.reason, now),
                    )
                for fw in files:
                    self._write_file(conn, cur, scope_id, fw, now)

        self._write(work)

    @staticmethod
    def _chunk_ids(conn: psycopg.Connection, hashes: Sequence[str]) -> dict[str, int]:
        rows = conn.execute("SELECT hash, id FROM chunk WHERE hash = ANY(%s)", (list(hashes),)).fetchall()
        return {h: cid for h, cid in rows}

    def _write_file(
        self, conn: psycopg.Connection, cur: psycopg.Cursor, scope_id: str, fw: FileWrite, now: float
    ) -> None:
        if fw.copy_of is not None:
            self._copy_file(cur, scope_id, fw, now)
            return
        hashes = list(dict.fromkeys(c.chunk_hash for c in fw.chunks))
        ids = self._chunk_ids(conn, hashes)
        missing = set(hashes) - ids.keys()
        if missing:
            raise StoreError(f"internal error: {len(missing)} chunk(s) referenced before they were stored")
        file_id = self._replace_file_row(cur, scope_id, fw, now)
        if fw.chunks:
            cur.executemany(
                "INSERT INTO file_chunk (file_id, scope_id, chunk_id, ordinal, start_line, end_line, chunk_type, "
                f"symbol_name, symbol_type, parent_symbol, keywords) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
                f"{_KEYWORDS})",
                [
                    (
                        file_id,
                        scope_id,
                        ids[ref.chunk_hash],
                        *ref.place_columns(),
                        ref.fts_symbol,
                        ref.fts_path,
                        ref.fts_body,
                    )
                    for ref in fw.chunks
                ],
            )

    @staticmethod
    def _replace_file_row(cur: psycopg.Cursor, scope_id: str, fw: FileWrite, now: float) -> int:
        """The file's row written afresh (its old row and places dropped); its id."""
        cur.execute(_DELETE_FILE, (scope_id, fw.path))
        row = cur.execute(
            _INSERT_INDEXED_FILE,
            (scope_id, fw.path, fw.size, fw.mtime_ns, fw.sha256, fw.language, now),
        ).fetchone()
        assert row is not None  # RETURNING gives the new row
        return int(row[0])

    def _copy_file(self, cur: psycopg.Cursor, scope_id: str, fw: FileWrite, now: float) -> None:
        """A file identical to its parent scope's copy, its places copied in the server: a checkout's first index
        over a base of 998 files (31,679 places) spent 5 of its 7.6 s sending each place and ranking its text
        into keywords again."""
        parent = cur.execute(
            "SELECT id FROM file WHERE scope_id = %s AND path = %s AND sha256 = %s AND status = 'indexed'",
            (fw.copy_of, fw.path, fw.sha256),
        ).fetchone()
        if parent is None:
            return  # the parent's file changed since the run compared it: the next run reads this one again
        cur.execute(
            "INSERT INTO file_chunk (file_id, scope_id, chunk_id, ordinal, start_line, end_line, chunk_type, "
            "symbol_name, symbol_type, parent_symbol, keywords) SELECT %s, %s, chunk_id, ordinal, start_line, "
            "end_line, chunk_type, symbol_name, symbol_type, parent_symbol, keywords FROM file_chunk "
            "WHERE file_id = %s ORDER BY ordinal",
            (self._replace_file_row(cur, scope_id, fw, now), scope_id, parent[0]),
        )

    def collect_garbage(self) -> int:
        return self._write(self._collect_orphans)

    @staticmethod
    def _collect_orphans(conn: psycopg.Connection) -> int:
        # Vectors and claims go with their chunks (ON DELETE CASCADE).
        rows = conn.execute(
            "DELETE FROM chunk c WHERE NOT EXISTS (SELECT 1 FROM file_chunk fc WHERE fc.chunk_id = c.id) RETURNING id"
        ).fetchall()
        return len(rows)

    def count_chunks(self) -> int:
        return int(self._rows(SQL.count_chunks)[0][0])

    def stored_chunks(self, chunk_ids: Sequence[ChunkId]) -> list[StoredChunk]:
        rows = self._rows(
            f"SELECT DISTINCT ON (c.id) {_STORED} FROM chunk c JOIN file_chunk fc ON fc.chunk_id = c.id "
            "JOIN file f ON f.id = fc.file_id WHERE c.id = ANY(%s) ORDER BY c.id, fc.id",
            ([int(c) for c in chunk_ids],),
        )
        return [StoredChunk(*r) for r in rows]

    def file_chunk_rows(self, scope_id: str, paths: Sequence[str]) -> dict[str, list[StoredChunk]]:
        out: dict[str, list[StoredChunk]] = {p: [] for p in paths}
        for row in self._rows(
            f"SELECT {_STORED} FROM file f JOIN file_chunk fc ON fc.file_id = f.id "
            "JOIN chunk c ON c.id = fc.chunk_id WHERE f.scope_id = %s AND f.path = ANY(%s) ORDER BY f.path, fc.ordinal",
            (scope_id, list(paths)),
        ):
            stored = StoredChunk(*row)
            out[stored.path].append(stored)
        return out

    def chunk_ids_of_files(self, scope_id: str, paths: Sequence[str]) -> list[ChunkId]:
        rows = self._rows(
            "SELECT fc.chunk_id FROM file f JOIN file_chunk fc ON fc.file_id = f.id "
            "WHERE f.scope_id = %s AND f.path = ANY(%s)",
            (scope_id, list(paths)),
        )
        return [ChunkId(r[0]) for r in rows]

    # --- search reads ---------------------------------------------------------------------------

    def filter_sql(self, scope_ids: Sequence[str], where: HitFilter, scope_index: bool = True) -> tuple[str, list[Any]]:
        """A condition over `fc` (file_chunk) and `f` (file) for places in these scopes passing `where`; without
        `scope_index` the scope is checked on each row another index found (`|| ''` keeps the planner off the
        scope's own index, see keyword_matches)."""
        return _within_scopes(scope_ids, scope_index, *self.filter_only_sql(scope_ids, where))

    def filter_only_sql(self, scope_ids: Sequence[str], where: HitFilter) -> tuple[str, list[Any]]:
        """filter_sql's condition without the scopes' ("" for no filter)."""
        clauses: list[str] = []
        args: list[Any] = []
        if where.globs:
            # On the place's own row (in the scope indexes' INCLUDE), not the file's: checked against the file
            # row, the list became an index condition of every file probe, each sorting the list again (a glob
            # of 959 files in bench_team.py's store of 100K chunks: 2,598 probes, 34 of the statement's 58 ms).
            clauses.append("fc.file_id = ANY(%s::bigint[])")
            args.append(self.glob_file_ids(scope_ids, where.globs))
        if where.changed_only:
            clauses.append(CHANGED_FROM_PARENT)
        for column, values in (
            ("f.language", where.languages),
            ("fc.chunk_type", where.chunk_types),
            ("fc.symbol_type", where.symbol_types),
        ):
            if values:
                clauses.append(f"{column} = ANY(%s)")
                args.append(list(values))
        if where.symbol_names:
            clauses.append("lower(fc.symbol_name) = ANY(%s)")
            args.append([n.lower() for n in where.symbol_names])
        return " AND ".join(clauses), args

    @staticmethod
    def file_join(where: HitFilter) -> str:
        """The join of the file row (`f`) where filter_sql's condition for `where` names it, else nothing."""
        return "JOIN file f ON f.id = fc.file_id " if where.changed_only or where.languages else ""

    def glob_file_ids(self, scope_ids: Sequence[str], globs: Sequence[str]) -> list[int]:
        """Ids of the files in these scopes whose paths the globs match (gitignore rules, as in every store),
        kept until the next write: a search asks once for each of its sides, and each keystroke again (9 ms
        a time for the 10,000 files of 100K chunks)."""

        def read() -> list[int]:
            patterns = patterns_argument(globs)
            rows = self._rows("SELECT id, path FROM file WHERE scope_id = ANY(%s)", (list(scope_ids),))
            return [fid for fid, path in rows if path_matches(path, patterns)]

        return self._glob_files.get((tuple(scope_ids), tuple(globs)), read)

    def scope_chunk_ids(self, scope_ids: Sequence[str], where: HitFilter = NO_FILTER) -> np.ndarray:
        """Read from the covering index on (scope, chunk) alone, joined to the file rows only for a filter on
        them, sent as one binary array (ids_of) and made distinct here: the server's DISTINCT hashed and sorted
        100,000 ids again (~150 ms of a 247 ms query)."""
        cond, args = self.filter_sql(scope_ids, where)
        files = self.file_join(where)
        return distinct_sorted(self.ids_of(f"SELECT fc.chunk_id FROM file_chunk fc {files}WHERE {cond}", args))

    def scope_place_columns(self, scope_ids: Sequence[str]) -> PlaceColumns:
        """The scopes' places as columns (place_columns.py): the places grouped by kind from the covering index on
        (scope, chunk), then the files by language, each group's ids as binary arrays (ids_of)."""
        places = self._rows(
            "SELECT fc.chunk_type, fc.symbol_type, array_send(array_agg(fc.chunk_id)), "
            "array_send(array_agg(fc.file_id)) FROM file_chunk fc WHERE fc.scope_id = ANY(%s) GROUP BY 1, 2",
            (list(scope_ids),),
        )
        files = self._rows(
            "SELECT language, array_send(array_agg(id)) FROM file WHERE scope_id = ANY(%s) GROUP BY 1",
            (list(scope_ids),),
        )
        return PlaceColumns.of(
            [(r[0], r[1], _binary_ids(r[2]), _binary_ids(r[3])) for r in places],
            [(r[0], _binary_ids(r[1])) for r in files],
        )

    def ids_of(self, sql: str, args: Sequence = ()) -> np.ndarray:
        """The one bigint column of a query, in no given order, as one array in PostgreSQL's binary format read
        straight into numpy: a binary COPY came a row at a time through the driver (1.25M vector ids at 1M chunks:
        0.92-1.24 s, against 0.28-0.29 s as one array; as Python tuples, a scope's 100,000 ids took 538 ms)."""
        rows = self._rows(f"SELECT array_send(coalesce(array_agg(x), '{{}}'::bigint[])) FROM ({sql}) AS q(x)", args)
        return _binary_ids(rows[0][0])

    def hits_for_chunks(
        self, scope_ids: Sequence[str], chunk_ids: Sequence[ChunkId], where: HitFilter = NO_FILTER
    ) -> list[Hit]:
        if not chunk_ids or not scope_ids:
            return []
        cond, args = self.filter_sql(scope_ids, where)
        rows = self._rows(
            f"SELECT {_HITS} FROM file_chunk fc JOIN file f ON f.id = fc.file_id "
            f"JOIN chunk c ON c.id = fc.chunk_id WHERE fc.chunk_id = ANY(%s) AND {cond}",
            [[int(c) for c in chunk_ids], *args],
        )
        return [Hit(*r) for r in rows]

    def chunk_texts(self, chunk_ids: Sequence[ChunkId]) -> dict[ChunkId, str]:
        rows = self._rows("SELECT id, text FROM chunk WHERE id = ANY(%s)", ([int(c) for c in chunk_ids],))
        return {ChunkId(cid): text for cid, text in rows}

    def hits_for_places(self, place_ids: Sequence[PlaceId]) -> list[Hit]:
        rows = self._rows(
            f"SELECT {_HITS} FROM file_chunk fc JOIN file f ON f.id = fc.file_id "
            "JOIN chunk c ON c.id = fc.chunk_id WHERE fc.id = ANY(%s)",
            ([int(p) for p in place_ids],),
        )
        return [Hit(*r) for r in rows]

    def place_rows(
        self,
        scope_ids: Sequence[str],
        where: HitFilter = NO_FILTER,
        chunk_ids: np.ndarray | None = None,
        file_ids: np.ndarray | None = None,
    ) -> np.ndarray:
        cond, args = self.filter_sql(scope_ids, where)
        files = self.file_join(where)
        for column, ids in (("fc.chunk_id", chunk_ids), ("fc.file_id", file_ids)):
            if ids is not None:
                cond, args = f"{cond} AND {column} = ANY(%s)", [*args, np.asarray(ids, dtype=np.int64).tolist()]
        rows = self._rows(f"SELECT fc.id, fc.file_id, fc.chunk_id FROM file_chunk fc {files}WHERE {cond}", args)
        return np.array(rows, dtype=np.int64).reshape(-1, 3)

    def scope_files(self, scope_ids: Sequence[str]) -> list[tuple]:
        return self._rows("SELECT id, scope_id, path FROM file WHERE scope_id = ANY(%s)", (list(scope_ids),))

    def chunks_containing(self, needles: Sequence[str]) -> np.ndarray:
        """See TextIndex. The bundled server has no pg_trgm, so this reads every chunk's text (ILIKE folds
        Unicode case); measured on 100K chunks: see tests/benchmarks/bench_text.py."""
        if not needles:
            return np.zeros(0, dtype=np.int64)
        patterns = ["%" + re.sub(r"([\\%_])", r"\\\1", n) + "%" for n in needles]
        rows = self._rows("SELECT id FROM chunk WHERE text ILIKE ALL(%s) ORDER BY id", (patterns,))
        return np.array([r[0] for r in rows], dtype=np.int64)

    def text_pending(self) -> int:
        return 0  # text search reads every chunk's text on the server (chunks_containing): nothing waits

    def index_pending_text(self, limit: int) -> int:
        return 0

    def keyword_matches(
        self,
        scope_ids: Sequence[str],
        terms: Sequence[str],
        every_term: bool,
        limit: int,
        where: HitFilter = NO_FILTER,
    ) -> list[tuple[PlaceId, float]]:
        """Places whose keywords match the terms, ranked by ts_rank over the weighted fields, as 0..1 of
        the best. Each term is one plainto_tsquery, so no character in it is ever an operator."""
        if not every_term:
            terms = affordable_terms(terms, self._term_rows(terms), KEYWORD_RANK_BUDGET)
        if not scope_ids or not terms:
            return []
        joiner = " && " if every_term else " || "
        query = "(" + joiner.join(["plainto_tsquery('simple', %s)"] * len(terms)) + ")"
        # Scopes holding most of the places gain nothing from their index beside the keywords' own: the planner
        # still ANDed a bitmap of the whole scope (1M places, 35-40 ms) into every query of bench_team.py at 1M.
        # The same 200 queries' keyword statements run again, side by side: p95 110 -> 72 ms, p50 32 -> 30 ms.
        small = self._share_of_places(scope_ids) < SCOPE_INDEX_SHARE
        only, only_args = self.filter_only_sql(scope_ids, where)  # read once: a glob's files are looked up for it
        cond, args = _within_scopes(scope_ids, small, only, only_args)
        files = self.file_join(where)
        # A name weighs 3-10 times a text word (KEYWORD_WEIGHTS), so the best places are mostly among those matching
        # by their names: those are ranked by their name keywords first, and only the best of them, with the places
        # matching by their text alone, by their whole keywords (ts_rank reads a place's text words, 1.9 KB on
        # average, 44 % of them stored apart from the row, at random). Over a large match set the places read are a
        # subset either way (the first ones of the table before, which lie in the first files written); now every
        # place whose names match is among them. bench_team.py's 200 queries' keyword statements: see
        # tests/benchmarks/README.md, "The keyword side's names first (stop 57)".
        text, text_args = self._text_matches(scope_ids, small, only, only_args, files)
        rows = self._rows(
            f"WITH k AS (SELECT {query} AS q), "
            "named AS MATERIALIZED (SELECT fc.id, ts_rank(%s::float4[], fc.name_keywords, k.q) AS r "
            f"FROM file_chunk fc {files}, k WHERE fc.name_keywords @@ k.q AND {cond} LIMIT %s), "
            "best AS (SELECT id FROM named ORDER BY r DESC, id LIMIT %s), "
            f"text AS MATERIALIZED ({text}) "
            "SELECT id, rank FROM (SELECT fc.id, ts_rank(%s::float4[], fc.keywords, k.q) AS rank "
            "FROM best JOIN file_chunk fc USING (id), k "
            "UNION ALL SELECT text.id, ts_rank(%s::float4[], text.keywords, k.q) FROM text, k) ranked "
            "ORDER BY rank DESC, id LIMIT %s",
            [
                *terms,
                KEYWORD_WEIGHTS,
                *args,
                KEYWORD_NAMED_CAP,
                KEYWORD_NAMED_RANKED,
                *text_args,
                KEYWORD_WEIGHTS,
                KEYWORD_WEIGHTS,
                limit,
            ],
        )
        if not rows:
            return []
        best = max(float(r[1]) for r in rows) or 1.0
        return [(PlaceId(r[0]), min(1.0, float(r[1]) / best)) for r in rows]

    @staticmethod
    def _text_matches(
        scope_ids: Sequence[str], scope_index: bool, cond: str, args: list[Any], files: str
    ) -> tuple[str, list[Any]]:
        """The statement (over the query `k`) of at most KEYWORD_TEXT_CAP places matching by their text alone, in
        the scopes and passing filter_only_sql's `cond` (its file join `files`). Under a filter, among at most
        KEYWORD_TEXT_EXAMINED of the scopes' matches: a filter that few matches pass made the statement read every
        match's row (46,266 for three words over 1M places, a language and a kind allowing 486 of them: 265 ms),
        where the places matching by their names are a tenth as many."""
        scope = _scope_sql(scope_index)
        if not cond:
            return (
                "SELECT fc.id, fc.keywords FROM file_chunk fc, k WHERE fc.keywords @@ k.q "
                f"AND NOT fc.name_keywords @@ k.q AND {scope} LIMIT %s"
            ), [list(scope_ids), KEYWORD_TEXT_CAP]
        return (
            f"SELECT fc.id, fc.keywords FROM (SELECT fc.* FROM file_chunk fc, k WHERE fc.keywords @@ k.q AND {scope} "
            f"LIMIT %s) fc {files}, k WHERE NOT fc.name_keywords @@ k.q AND {cond} LIMIT %s"
        ), [list(scope_ids), KEYWORD_TEXT_EXAMINED, *args, KEYWORD_TEXT_CAP]

    def _term_rows(self, terms: Sequence[str]) -> dict[str, int]:
        """Estimated keyword rows holding each term, from the server's own statistics of the keywords column
        (its most common lexemes and their frequencies, kept by ANALYZE): no row is read. A term not among
        them is taken to be rare."""

        def read() -> dict[str, int]:
            rows = self._rows(
                "SELECT most_common_elems::text::text[], most_common_elem_freqs, "
                "(SELECT reltuples FROM pg_class WHERE oid = 'file_chunk'::regclass) "
                "FROM pg_stats WHERE tablename = 'file_chunk' AND attname = 'keywords'"
            )
            if not rows or rows[0][0] is None:
                return {}
            elems, freqs, tuples = rows[0]
            return {e: int(f * max(tuples, 0)) for e, f in zip(elems, freqs, strict=False)}

        frequent = self._keyword_stats.get(None, read)
        return {t: frequent.get(t.lower(), 0) for t in terms}

    def _share_of_places(self, scope_ids: Sequence[str]) -> float:
        """The share of all places these scopes hold, from the server's statistics of the scope column (its most
        common values and their frequencies, kept by ANALYZE): no row is read. A scope not among them is small."""

        def read() -> dict[str, float]:
            rows = self._rows(
                "SELECT most_common_vals::text::text[], most_common_freqs FROM pg_stats "
                "WHERE tablename = 'file_chunk' AND attname = 'scope_id'"
            )
            if not rows or rows[0][0] is None:
                return {}
            return dict(zip(rows[0][0], rows[0][1], strict=False))

        shares = self._scope_shares.get(None, read)
        return sum(shares.get(s, 0.0) for s in scope_ids)

    def symbol_matches(
        self, scope_ids: Sequence[str], names: Sequence[str], limit: int, where: HitFilter = NO_FILTER
    ) -> list[PlaceId]:
        if not scope_ids or not names:
            return []
        cond, args = self.filter_sql(scope_ids, where)
        rows = self._rows(
            "SELECT fc.id FROM file_chunk fc JOIN file f ON f.id = fc.file_id WHERE lower(fc.symbol_name) = ANY(%s) "
            f"AND {cond} ORDER BY fc.symbol_name = ANY(%s) DESC, fc.ordinal, fc.id LIMIT %s",
            [[n.lower() for n in names], *args, list(names), limit],
        )
        return [PlaceId(r[0]) for r in rows]

    def definition_extents(self, place_ids: Sequence[PlaceId]) -> dict[PlaceId, int]:
        rows = self._rows(SQL.definition_extents.format(chosen="id = ANY(%s)"), ([int(p) for p in place_ids],))
        return {PlaceId(pid): int(lines) for pid, lines in rows}

    def execute_read(self, sql: str, args: Sequence | dict = ()) -> list[tuple]:
        """For the vector search next door: a read through this store's connection and error handling."""
        return self._rows(sql, args)

    @contextlib.contextmanager
    def vector_transaction(self) -> Iterator[psycopg.Connection]:
        """A read transaction on a connection of the calling thread's own (for SET LOCAL settings such as
        hnsw.ef_search): a search's vector lookups then run in the server side by side, and beside its
        keyword side on the first connection, which serves one statement at a time."""
        conn = getattr(self._vector_conns, "conn", None)
        if conn is None or conn.closed or conn.broken:
            if conn is not None:
                conn.close()
                self._vector_opened.remove(conn)
            conn = self._vector_conns.conn = connect(self.url)
            self._vector_opened.append(conn)
        with self._errors(), conn.transaction():
            yield conn

    def row_estimate(self, table: str, conn: psycopg.Connection | None = None) -> int:
        """Rows in one of this store's tables: the server's estimate, or a count before its first ANALYZE."""
        rows = self._rows("SELECT reltuples::bigint FROM pg_class WHERE oid = %s::regclass", (table,), conn)
        if rows and rows[0][0] >= 0:
            return int(rows[0][0])
        return int(self._rows(f"SELECT count(*) FROM {table}", conn=conn)[0][0])

    # --- history --------------------------------------------------------------------------------

    def add_history(self, entry: HistoryEntry) -> None:
        try:
            with self._errors():
                self._conn.execute(
                    SQL.add_history,
                    (
                        entry.at,
                        entry.query,
                        entry.scope_root,
                        entry.mode,
                        entry.result_count,
                        entry.top_score,
                        entry.duration_ms,
                    ),
                )
        except ReadOnlyStore:
            pass  # a search-only role searches without leaving history

    def history(self, limit: int = 50) -> list[HistoryEntry]:
        rows = self._rows(
            SQL.history,
            (limit,),
        )
        return [HistoryEntry(*r) for r in rows]
