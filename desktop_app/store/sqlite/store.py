"""The SQLite store: Quarry's index in one file, with sqlite-vec for vectors and FTS5 for keywords.

A SqliteStore wraps one apsw connection, used from the worker's thread only (the thread contract:
protocols.py). Its SQL is here and in store/sqlite/, but for the statements both stores run word for word
(store/shared_sql.py) and the names of the vector tables (store/schema_names.py).
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from pathlib import Path
from typing import cast

import apsw
import numpy as np

from ..errors import Remedy, StoreError, StoreUnusable
from ..id_arrays import distinct_sorted
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
    PageCheck,
    PlaceId,
    Scope,
    ScopeSummary,
    SkippedFile,
    StoredChunk,
    outline_rows,
    outline_sources,
)
from ..schema_names import NAME_SUFFIX, chunking_meta_key, hit_columns, stored_columns, vector_table_name
from ..shared_sql import SQLITE as SQL
from ..until_next_write import PinnedGeneration, UntilNextWrite
from . import fts_query, path_globs, soundness, text_codec
from .connection import open_connection, query_value, store_error, translate_errors, use_wal, write_transaction
from .filters import filter_sql
from .json_rows import columns, json_result, json_rows
from .migrations import CHUNK_COUNT_KEY, NO_GARBAGE_KEY, check_version, migrate
from .scan_reader import ScanReader
from .sign_index import SignIndex
from .sign_packs import SignPacks
from .vec0_storage import INT8_COLUMN, Vec0Table, id_array
from .vector_search_choice import SizedVectorSearch

# BM25 weights of the keyword index's columns: symbol names, path and enclosing symbol, body text.
KEYWORD_COLUMN_WEIGHTS = (10.0, 3.0, 1.0)
# Keyword row counts of big indexes are estimated from this many rowid windows of this many rows.
KEYWORD_SAMPLE_WINDOWS = 4
KEYWORD_SAMPLE_ROWS = 5000
# Keyword search ranks up to this many times the rows asked for before checking their scope and filters.
KEYWORD_OVERFETCH = 16


IN_BATCH = 500  # values per `IN (...)` list, well under SQLite's limit on bound parameters


# Chunk text as SQL reads it: compressed once the store has a dictionary (text_codec.py).
TEXT = f"{text_codec.UNPACK}(c.text)"
HITS = hit_columns(TEXT)
SCOPE_NUMBERS_KEY = "scope_numbers"  # meta: the last scope number given (_new_scope_id)
HASH_KEY_DIGITS = 32  # the hex digits of a chunk's sha256 the store keeps (128 bits: migration 8)


def hash_key(chunk_hash: str) -> str:
    """What the chunk table holds of a chunk's hash, as text (stored as its bytes: stored_hash). The key of a key is
    itself: a stored chunk's hash, read back (stored_chunks) and written again at another place, finds the same
    row."""
    return chunk_hash[:HASH_KEY_DIGITS]


def stored_hash(key_sql: str) -> str:
    """SQL for how the chunk table stores a hash key given as text: its 16 bytes (migration 11), or the text itself
    where it is not hex (the tests' made-up hashes)."""
    return f"coalesce(unhex({key_sql}), {key_sql})"


def hash_text(column_sql: str) -> str:
    """SQL for a stored hash read back as the text key it was stored from (hash_key)."""
    return f"iif(typeof({column_sql}) = 'blob', lower(hex({column_sql})), {column_sql})"


STORED = stored_columns(TEXT, hash_text("c.hash"))


def _in_batches(values: Sequence) -> Iterator[tuple[list, str]]:
    """(values, "?,?,...") in runs short enough for one `IN (...)` list."""
    for start in range(0, len(values), IN_BATCH):
        part = list(values[start : start + IN_BATCH])
        yield part, ",".join("?" * len(part))


class SqliteStore:
    """The embedded implementation of store.protocols.Store."""

    def __init__(self, path: Path | str, on_check: Callable[[PageCheck], None] | None = None):
        """`on_check` hears of a whole read of the file for damage, at the open or before a write (soundness.py)."""
        self.path = Path(path)
        self._on_check = on_check
        if self.path.exists() and self.path.is_dir():
            raise StoreError(f"{self.path} is a folder, not an index database file", (Remedy.OTHER_STORE,))
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"cannot create the folder {self.path.parent} for the index database ({exc.strerror})",
                (Remedy.OTHER_STORE,),
            ) from exc
        conn = open_connection(self.path)
        try:
            with translate_errors(self.path):
                check_version(conn, self.path)  # before anything is written: the file may be another program's
                size = query_value(conn, int, "PRAGMA page_count") * query_value(conn, int, "PRAGMA page_size")
                if soundness.needs_check(self.path, size):
                    soundness.check_pages(self.path, on_check)
                use_wal(conn)
                migrate(conn, self.path)
        except BaseException:
            conn.close()
            raise
        path_globs.register(conn)
        self._text = text_codec.ChunkTextCodec(conn)
        self._conn = conn
        # Rows written that change no answer, which `generation` does not count: the search history, and the text
        # index's fill (waiting chunks were candidates already).
        self._unseen_rows = 0
        self._damaged = False  # a check since the open found damage
        self._pin: PinnedGeneration[tuple[int, int]] = PinnedGeneration()
        # keyword_row_counts' counts and the windows they are counted in, until the next write
        self._term_rows: UntilNextWrite[str, int] = UntilNextWrite(lambda: self.generation)
        self._keyword_windows: UntilNextWrite[None, tuple[int, list[tuple[int, int]]]] = UntilNextWrite(
            lambda: self.generation
        )
        self._scan_reader = ScanReader(self.path)

    @property
    def generation(self) -> tuple[int, int]:
        """Changes whenever the index's content may have changed: rows this connection wrote (counted by
        SQLite, the search history and the text index's fill left out: a search must not make the next one reload
        what it caches), or a commit by another process (the data version)."""
        return self._pin.get(self._read_generation)

    def _read_generation(self) -> tuple[int, int]:
        return self._conn.total_changes() - self._unseen_rows, self._rows("PRAGMA data_version")[0][0]

    def one_generation(self) -> contextlib.AbstractContextManager[None]:
        """A search reads the counter once (protocols.py): here a pragma, not a round trip as on a team index,
        but the same view of the index for the whole search."""
        return self._pin.pinned(self._read_generation)

    def check_intact(self) -> None:
        """Raise StoreUnusable when any page of the index is damaged. Reads all of it unless the file is exactly
        as it was last found sound (see soundness.py): the Linux kernel's 9 GB index was read whole before
        every index run, 46 s of a no-op run's 60."""
        if not soundness.known_sound(self.path):
            try:
                soundness.check_pages(self.path, self._on_check)
            except StoreUnusable:
                self._damaged = True  # so that closing does not record it as sound after all
                raise

    def remember_intact(self) -> None:
        """After this process's writes to an index it found sound: the file as it is now is sound."""
        soundness.remember_sound(self.path)

    def close(self) -> None:
        self._scan_reader.close()
        wrote = self._conn.total_changes() > 0
        # Closing checkpoints the WAL; if that fails (full disk, damaged file) the WAL keeps the data.
        with contextlib.suppress(apsw.Error):
            self._conn.close()
        if wrote and not self._damaged:  # found sound when opened, so sound after its own writes (soundness.py)
            soundness.remember_sound(self.path)

    def _rows(self, sql: str, args: Sequence = ()) -> list[tuple]:
        with translate_errors(self.path):
            return self._conn.execute(sql, args).fetchall()

    def _json_result(self, columns: str, rest: str, args: Sequence = ()) -> list[list]:
        """`_rows` in one step, for reads that another thread's work may slow row by row (json_rows.py)."""
        with translate_errors(self.path):
            return json_result(self._conn, columns, rest, args)

    @contextlib.contextmanager
    def _write(self) -> Iterator[None]:
        """One write transaction; SQLite's errors come out as StoreErrors that say what to do."""
        with translate_errors(self.path), write_transaction(self._conn):
            yield

    # --- models ---------------------------------------------------------------------------------

    def register_model(self, model_id: str, dims: int, source: str) -> None:
        """Create `model_id`'s vec0 tables (chunk vectors, and symbol-name vectors in `<table>_name` with the
        same rowids) on first use; the first model registered becomes the active one."""
        if self._recorded_dims(model_id, dims) == dims:
            return
        table = vector_table_name(model_id)
        with self._write():
            # Again inside the transaction: another process's first index of a new store may have created the
            # tables since (two concurrent first indexes failed with "table vec_… already exists").
            recorded = self._recorded_dims(model_id, dims)
            if recorded == dims:
                return
            if recorded is not None:
                # Recorded with another size and never given a vector (earlier builds recorded a model before
                # running it): nothing is lost by recording it again.
                self._drop_vector_tables(table)
                self._conn.execute(SQL.delete_model, (model_id,))
            for name in (table, table + NAME_SUFFIX):
                self._conn.execute(
                    f"CREATE VIRTUAL TABLE {name} USING vec0({INT8_COLUMN}[{int(dims)}] distance_metric=cosine)"
                )
                SignPacks(self._conn, name).mark_complete()  # empty, and each write adds its pack
            self._conn.execute(
                SQL.insert_model,
                (model_id, dims, table, source, time.time()),
            )
            self._conn.execute(
                "INSERT INTO meta (key, value) VALUES ('active_model', ?) ON CONFLICT DO NOTHING", (model_id,)
            )

    def _drop_vector_tables(self, table: str) -> None:
        """Inside a write: drop a model's two vec0 tables and their sign packs."""
        for name in (table, table + NAME_SUFFIX):
            self._conn.execute(f"DROP TABLE {name}")
            SignPacks(self._conn, name).drop()

    def _recorded_dims(self, model_id: str, dims: int) -> int | None:
        """The dimensions `model_id` is recorded with (None if it is not); a model recorded with other
        dimensions that has vectors cannot take `dims`."""
        rows = self._rows(SQL.model_dims, (model_id,))
        if not rows:
            return None
        if rows[0][0] != dims and (self.vector_count(model_id) or self.vector_count(model_id, names=True)):
            raise StoreError(
                f"model {model_id} is recorded with {rows[0][0]} dimensions but produces {dims}; "
                "give a changed model a new id in its quarry-model.json"
            )
        return int(rows[0][0])

    def active_model(self) -> str | None:
        """The model whose vectors searches use (the other models' vectors are never mixed in)."""
        rows = self._rows("SELECT value FROM meta WHERE key = 'active_model'")
        return rows[0][0] if rows else None

    def model_source(self, model_id: str) -> str | None:
        rows = self._rows(SQL.model_source, (model_id,))
        return rows[0][0] if rows else None

    def activate_model(self, model_id: str, keep: Sequence[str] = ()) -> None:
        """Make `model_id` the active model and drop every other model's vectors but those of `keep` (the
        fast layer), in one transaction."""
        kept = [model_id, *keep]
        marks = ",".join("?" * len(kept))
        with self._write():
            for other, table in self._rows(f"SELECT id, vector_table FROM model WHERE id NOT IN ({marks})", kept):
                self._drop_vector_tables(table)
                self._conn.execute(SQL.delete_model, (other,))
            self._conn.execute(
                "INSERT INTO meta (key, value) VALUES ('active_model', ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (model_id,),
            )

    def drop_models_without_vectors(self, keep: Sequence[str] = ()) -> list[str]:
        if not self._models_without_vectors(keep):
            return []  # the usual case: no write transaction for nothing
        with self._write():
            # Again inside the transaction: another process may have written such a model's first batch since.
            dropped = self._models_without_vectors(keep)
            for model_id, table in dropped:
                self._drop_vector_tables(table)
                self._conn.execute(SQL.delete_model, (model_id,))
        return [model_id for model_id, _ in dropped]

    def _models_without_vectors(self, keep: Sequence[str]) -> list[tuple[str, str]]:
        """(id, vector table) of the models but the active one and `keep` that have no chunk or name vector (the
        outline vectors come after every chunk's)."""
        kept = [self.active_model() or "", *keep]
        others = self._rows(f"SELECT id, vector_table FROM model WHERE id NOT IN ({','.join('?' * len(kept))})", kept)
        return [
            (model_id, table)
            for model_id, table in others
            if not self.vector_count(model_id) and not self.vector_count(model_id, names=True)
        ]

    def chunks_without_vectors(self, model_id: str, names: bool = False) -> list[ChunkId]:
        """Ids of the chunks lacking a `model_id` vector (with `names`: the chunks defining a symbol that lack
        its name's vector), those of the most recently modified files first (what the user is working on),
        then in the order they were written."""
        named = "fc.symbol_name IS NOT NULL" if names else "1"
        # Which lack one first, from the places' chunk ids alone: ordering every chunk by its files' times took
        # 2-3 s on the Linux kernel's index (3M chunks) for the few that a run after a 10-file change lacks.
        placed = id_array(self._rows(f"SELECT group_concat(chunk_id, ' ') FROM file_chunk fc WHERE {named}")[0][0])
        # np.isin, not setdiff1d: numpy 2's unique took 2-3 s of 3M ids here, isin 0.02 s.
        missing = placed[~np.isin(placed, self.vector_ids(model_id, names))]
        if not len(missing):
            return []
        # Then their order; all of them at once when most lack one (a first fill), as a list of millions
        # would only slow the statement down.
        among = named
        args: tuple[str, ...] = ()
        if 2 * len(missing) < len(placed):
            among, args = f"fc.chunk_id IN (SELECT value FROM json_each(?)) AND {named}", (json_rows(missing.tolist()),)
        text = self._rows(
            "SELECT group_concat(chunk_id, ' ') FROM (SELECT fc.chunk_id FROM file_chunk fc "
            f"JOIN file f ON f.id = fc.file_id WHERE {among} GROUP BY fc.chunk_id ORDER BY max(f.mtime_ns) DESC, "
            "fc.chunk_id)",
            args,
        )[0][0]
        ordered = id_array(text)
        return cast(list[ChunkId], ordered[np.isin(ordered, missing)].tolist())

    def stored_chunks(self, chunk_ids: Sequence[ChunkId]) -> list[StoredChunk]:
        """The chunks with these ids, each at one place it is used (enough to rebuild its document)."""
        rows = self._json_result(
            STORED,
            "FROM chunk c JOIN file_chunk fc ON fc.id = (SELECT min(id) FROM file_chunk WHERE chunk_id = c.id) "
            "JOIN file f ON f.id = fc.file_id WHERE c.id IN (SELECT value FROM json_each(?))",
            (json_rows(list(chunk_ids)),),
        )
        return [StoredChunk(*r) for r in rows]

    def chunk_ids_of_files(self, scope_id: str, paths: Sequence[str]) -> list[ChunkId]:
        """Ids of the chunks the files at `paths` in a scope are made of."""
        out: list[ChunkId] = []
        for part, marks in _in_batches(list(paths)):
            out += [
                r[0]
                for r in self._rows(
                    f"SELECT fc.chunk_id FROM file f JOIN file_chunk fc ON fc.file_id = f.id "
                    f"WHERE f.scope_id = ? AND f.path IN ({marks})",
                    (scope_id, *part),
                )
            ]
        return out

    def add_vectors(self, model_id: str, vectors: Sequence[VectorRow]) -> None:
        """Store (chunk id, vector, name vector) in one transaction, replacing those the chunks have (another
        process may have filled some in meanwhile); None leaves that vector as it is. A vec0 table has no foreign
        key, so chunks collected while the model ran (a file changed, a folder removed by another process) are
        looked for inside the transaction and get no vector: no search could find one, and it would outlive them."""
        table, dims = self._registered_vector_table(model_id)
        with self._write():
            stored = set(self._stored_chunk_ids([row[0] for row in vectors]))
            for name, column in ((table, 1), (table + NAME_SUFFIX, 2)):
                given: list[tuple[int, np.ndarray]] = []
                for row in vectors:
                    vector = row[column]
                    if isinstance(vector, np.ndarray) and row[0] in stored:
                        given.append((row[0], vector))
                Vec0Table(self._conn, name, dims).put(given)

    def claim_chunks(self, model_id: str, names: bool, chunk_ids: Sequence[ChunkId]) -> list[ChunkId]:
        """Every one: two processes filling one SQLite file each embed what they find missing (the later
        vector replaces the earlier); splitting the work between indexers is the team store's."""
        return list(chunk_ids)

    def claimed_elsewhere(self, model_id: str, names: bool) -> OthersClaims | None:
        return None

    def _stored_chunk_ids(self, chunk_ids: Sequence[ChunkId]) -> list[ChunkId]:
        """Those of `chunk_ids` that are stored."""
        text = self._rows(
            "SELECT group_concat(id, ' ') FROM chunk WHERE id IN (SELECT value FROM json_each(?))",
            (json_rows(list(chunk_ids)),),
        )[0][0]
        return [ChunkId(i) for i in id_array(text).tolist()]

    def count_chunks(self) -> int:
        return self._rows(SQL.count_chunks)[0][0]

    def _registered_vector_table(self, model_id: str) -> tuple[str, int]:
        """(vector table, dimensions) of a model about to get vectors, which register_model() must have created."""
        rows = self._rows(SQL.model_table, (model_id,))
        if not rows:
            raise StoreError(f"internal error: model {model_id} was not registered before writing vectors")
        return rows[0][0], rows[0][1]

    # --- scopes ---------------------------------------------------------------------------------

    @staticmethod
    def _scope(row: tuple) -> Scope:
        return Scope(*row)

    @property
    def bases(self) -> None:
        return None  # one person's checkouts: a linked worktree is a worktree scope over its main one

    def scope_for_root(self, root: Path | str) -> Scope | None:
        rows = self._rows(
            "SELECT id, type, root, parent_id, created_at, last_indexed_at FROM scope WHERE root = ?", (str(root),)
        )
        return self._scope(rows[0]) if rows else None

    def scope_by_id(self, scope_id: str) -> Scope | None:
        rows = self._rows(
            "SELECT id, type, root, parent_id, created_at, last_indexed_at FROM scope WHERE id = ?", (scope_id,)
        )
        return self._scope(rows[0]) if rows else None

    def create_scope(self, root: Path | str, type_: str = "main", parent_id: str | None = None) -> Scope:
        """The folder's scope, created unless another process created it since this one looked (two first
        indexes of one folder at once then share it instead of one failing on the unique root)."""
        with self._write():
            if not self._rows("SELECT 1 FROM scope WHERE root = ?", (str(root),)):
                self._conn.execute(
                    "INSERT INTO scope VALUES (?, ?, ?, ?, ?, ?)",
                    (self._new_scope_id(), type_, str(root), parent_id, time.time(), None),
                )
        scope = self.scope_for_root(root)
        if scope is None:
            raise StoreError(
                f"the folder {root} was removed from the index database {self.path} as it was being added; add it again"
            )
        return scope

    def _new_scope_id(self) -> str:
        """The next of the store's scope numbers, as text; the write lock held. A scope's id is in every place's row
        and in two of the places' indexes: as a ULID (26 characters, what the store gave before and still reads)
        it took ~200 MB of the Linux kernel's 4.46 GB index (3M places). Numbers are never reused: a scope removed
        and another added do not share an id, whatever still holds the first one's."""
        self._conn.execute(
            f"INSERT INTO meta (key, value) VALUES ('{SCOPE_NUMBERS_KEY}', '1') "
            "ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
        )
        return str(self._rows(f"SELECT value FROM meta WHERE key = '{SCOPE_NUMBERS_KEY}'")[0][0])

    def mark_indexed(self, scope_id: str) -> None:
        with self._write():
            self._conn.execute(SQL.mark_indexed, (time.time(), scope_id))

    def record_chunking(self, scope_id: str, version: int) -> None:
        with self._write():
            self._conn.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (chunking_meta_key(scope_id), str(version)),
            )

    def chunking_of(self, scope_id: str) -> int | None:
        rows = self._rows("SELECT value FROM meta WHERE key = ?", (chunking_meta_key(scope_id),))
        return int(rows[0][0]) if rows else None

    def list_scopes(self) -> list[ScopeSummary]:
        rows = self._rows("""
            SELECT s.id, s.type, s.root, s.parent_id, s.created_at, s.last_indexed_at,
                   (SELECT count(*) FROM file f WHERE f.scope_id = s.id AND f.status = 'indexed'),
                   (SELECT count(*) FROM file_chunk fc WHERE fc.scope_id = s.id)
            FROM scope s ORDER BY s.root""")
        return [ScopeSummary(self._scope(r[:6]), r[6], r[7]) for r in rows]

    def scopes(self) -> list[Scope]:
        rows = self._rows("SELECT id, type, root, parent_id, created_at, last_indexed_at FROM scope ORDER BY root")
        return [self._scope(r) for r in rows]

    def remove_scope(self, scope_id: str) -> int:
        """Delete a scope (and its worktree children); returns how many orphaned chunks were collected."""
        with self._write():
            ids = [scope_id] + [r[0] for r in self._rows(SQL.child_scopes, (scope_id,))]
            for sid in ids:
                self._delete_fts_for("SELECT id FROM file_chunk WHERE scope_id = ?", (sid,))
                self._conn.execute("DELETE FROM file_chunk WHERE scope_id = ?", (sid,))
                self._conn.execute("DELETE FROM file WHERE scope_id = ?", (sid,))
                self._conn.execute("DELETE FROM meta WHERE key = ?", (chunking_meta_key(sid),))
            self._conn.execute(SQL.delete_scope_and_children, (scope_id, scope_id))
            return self._collect_orphans()

    # --- files ----------------------------------------------------------------------------------

    def file_states(self, scope_id: str) -> dict[str, FileState]:
        rows = self._rows(SQL.file_states, (scope_id,))
        return {r[0]: FileState(*r) for r in rows}

    def known_chunks(self, hashes: Iterable[str]) -> dict[str, ChunkId]:
        """Chunk ids for those of `hashes` already stored (their text need not be written again)."""
        return self._hash_ids(list(dict.fromkeys(hashes)))

    def _hash_ids(self, unique: list[str]) -> dict[str, ChunkId]:
        """{hash: chunk id} of those of the (distinct) hashes that are stored."""
        keys: dict[str, list[str]] = {}  # a hash and its key may both be asked for (a stored row's and a new one's)
        for h in unique:
            keys.setdefault(hash_key(h), []).append(h)
        rows = self._json_result(
            f"{hash_text('hash')}, id",
            f"FROM chunk WHERE hash IN (SELECT {stored_hash('value')} FROM json_each(?))",
            (json_rows(list(keys)),),
        )
        return {h: cid for key, cid in rows for h in keys[key]}

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
        """Apply one batch of indexing results in a single transaction.

        A file row is only ever written together with all of its chunks (and their vectors, when the batch
        has them), so a crash between batches leaves whole files or nothing, and the next run resumes
        from there; chunks still lacking vectors are filled in by the vector layers.
        """
        now = time.time()
        with self._write():
            ids = self._insert_chunks(model_id, new_chunks, now) if new_chunks else {}
            # Every path the batch writes anew loses what it had first (a skipped file may have been indexed).
            self._delete_files(scope_id, [*deleted, *(sk.path for sk in skipped), *(fw.path for fw in files)])
            if touched:
                self._conn.execute(
                    # Materialized, or SQLite may read the scope's files in its outer loop and the JSON in its inner.
                    f"WITH t (path, size, mtime_ns) AS MATERIALIZED (SELECT {columns(3)} FROM json_each(?1)) "
                    "UPDATE file SET size = t.size, mtime_ns = t.mtime_ns FROM t "
                    "WHERE file.scope_id = ?2 AND file.path = t.path",
                    (json_rows(touched), scope_id),
                )
            if skipped:
                self._conn.execute(
                    "INSERT INTO file (scope_id, path, size, mtime_ns, status, skip_reason, indexed_at) "
                    "SELECT ?1, value->>0, value->>1, value->>2, 'skipped', value->>3, ?2 FROM json_each(?3)",
                    (scope_id, now, json_rows([(sk.path, sk.size, sk.mtime_ns, sk.reason) for sk in skipped])),
                )
            if files:
                self._insert_files(scope_id, files, now, ids)

    def _insert_chunks(self, model_id: str, new_chunks: Sequence[NewChunk], now: float) -> dict[str, ChunkId]:
        """The chunks not stored yet, with their vectors where the batch has them (one statement each: json_rows);
        {hash: chunk id} of the batch's chunks.

        The chunks get their ids here, as places do: the write lock is held, so the next free ones are known, and
        where every chunk was new (the rule: the indexer sends only chunks it did not find stored) none need be
        read back. Reading them back by hash was 9 % of stage 1's writer on the Linux kernel (py-spy), random
        pages of the hash index. A chunk another process stored meanwhile is not inserted: then they are read."""
        by_hash = {ch.hash: ch for ch in new_chunks}
        first = self._next_id("chunk")
        ids = {h: ChunkId(first + i) for i, h in enumerate(by_hash)}
        self._text.prepare_to_write([ch.text for ch in by_hash.values()])
        self._conn.execute(
            "INSERT INTO chunk (id, hash, text, token_count, created_at) "
            f"SELECT value->>0, {stored_hash('value->>1')}, {text_codec.PACK}(value->>2), value->>3, ?1 "
            "FROM json_each(?2) "
            "WHERE true ON CONFLICT (hash) DO NOTHING",
            (now, json_rows([(ids[h], hash_key(h), ch.text, ch.token_count) for h, ch in by_hash.items()])),
        )
        self._text.finish_write()
        if self._conn.changes() != len(by_hash):
            ids = self._chunk_ids(list(by_hash))
        if not any(ch.vector is not None for ch in new_chunks):
            return ids
        table, dims = self._registered_vector_table(model_id)
        for name, column in ((table, "vector"), (table + NAME_SUFFIX, "name_vector")):
            given: list[tuple[int, np.ndarray]] = []
            gone: list[int] = []  # chunk ids without one
            for ch in new_chunks:
                vector = getattr(ch, column)
                if vector is None:
                    gone.append(ids[ch.hash])
                else:
                    given.append((ids[ch.hash], vector))
            vectors = Vec0Table(self._conn, name, dims)
            vectors.delete(gone)
            vectors.put(given)
        return ids

    def _insert_files(self, scope_id: str, files: Sequence[FileWrite], now: float, new_ids: dict[str, ChunkId]) -> None:
        """Indexed files with their places and keyword rows, a statement for each table. The places get their
        ids here (the keyword rows' rowids): the write lock is held, so the next free ones are known. The ids of
        the chunks the batch stored are `new_ids`; the others' are read."""
        self._conn.execute(
            "INSERT INTO file (scope_id, path, size, mtime_ns, sha256, language, status, indexed_at) "
            f"SELECT ?1, {columns(5)}, 'indexed', ?2 FROM json_each(?3)",
            (scope_id, now, json_rows([(f.path, f.size, f.mtime_ns, f.sha256, f.language) for f in files])),
        )
        # Read back in one step rather than by RETURNING, which steps once a row (json_rows.py).
        file_ids = {
            path: file_id
            for path, file_id in self._json_result(
                "path, id",
                "FROM file WHERE scope_id = ?1 AND path IN (SELECT value FROM json_each(?2))",
                (scope_id, json_rows([f.path for f in files])),
            )
        }
        chunk_ids = dict(new_ids)
        stored = [ref.chunk_hash for fw in files for ref in fw.chunks if ref.chunk_hash not in new_ids]
        if stored:
            chunk_ids.update(self._chunk_ids(stored))
        next_id = self._next_id("file_chunk")
        places: list[tuple] = []
        keywords: list[tuple] = []
        for fw in files:
            file_id = file_ids[fw.path]
            for ref in fw.chunks:
                places.append((next_id, file_id, chunk_ids[ref.chunk_hash], *ref.place_columns()))
                keywords.append((next_id, ref.fts_symbol, ref.fts_path, ref.fts_body))
                next_id += 1
        if not places:
            return
        self._conn.execute(
            "INSERT INTO file_chunk (id, file_id, chunk_id, ordinal, start_line, end_line, chunk_type, symbol_name, "
            f"symbol_type, parent_symbol, scope_id) SELECT {columns(10)}, ?1 FROM json_each(?2)",
            (scope_id, json_rows(places)),
        )
        self._conn.execute(
            f"INSERT INTO fts (rowid, symbol, path, body) SELECT {columns(4)} FROM json_each(?)",
            (json_rows(keywords),),
        )

    def _next_id(self, table: str) -> int:
        """The id after the table's highest, as SQLite would give the next row: the write lock held, the writer
        numbers a batch's rows itself."""
        return int(self._rows(f"SELECT coalesce(max(id), 0) + 1 FROM {table}")[0][0])

    def _chunk_ids(self, hashes: Sequence[str]) -> dict[str, ChunkId]:
        unique = list(dict.fromkeys(hashes))
        out = self._hash_ids(unique)
        missing = set(unique) - out.keys()
        if missing:
            raise StoreError(f"internal error: {len(missing)} chunk(s) referenced before they were stored")
        return out

    def _delete_fts_for(self, select_ids_sql: str, args: Sequence) -> None:
        self._conn.execute(f"DELETE FROM fts WHERE rowid IN ({select_ids_sql})", args)

    def _delete_files(self, scope_id: str, paths: Sequence[str]) -> None:
        """Remove these files of the scope with their places and keyword rows (those not indexed are no-ops)."""
        if not paths:
            return
        of_paths = "SELECT id FROM file WHERE scope_id = ?1 AND path IN (SELECT value FROM json_each(?2))"
        args = (scope_id, json_rows(list(paths)))
        self._delete_fts_for(f"SELECT fc.id FROM file_chunk fc WHERE fc.file_id IN ({of_paths})", args)
        self._conn.execute(f"DELETE FROM file_chunk WHERE file_id IN ({of_paths})", args)
        self._conn.execute(f"DELETE FROM file WHERE id IN ({of_paths})", args)

    def collect_garbage(self) -> int:
        """Drop chunks (and their vectors) that no file in any scope refers to any more, when a place was deleted
        since the last collection; and keep the vectors' sign packs fit to read."""
        with self._write():
            collected = self._collect_orphans() if self._garbage_possible() else 0
            # A store migrated with chunks has no count yet (migrations.py, 6): counted once, here.
            if not self._rows(f"SELECT 1 FROM meta WHERE key = '{CHUNK_COUNT_KEY}'"):
                self._conn.execute(f"INSERT INTO meta (key, value) SELECT '{CHUNK_COUNT_KEY}', count(*) FROM chunk")
            # The sign packs, rewritten where deletions left them mostly stale or an earlier build wrote none
            # (about 8 s for the Linux kernel's 4.8M vectors, once), and their small packs merged.
            for vectors in self._vector_tables():
                SignPacks(self._conn, vectors.name).maintain(vectors)
            return collected

    def _garbage_possible(self) -> bool:
        """Whether a chunk may be unused: a place was deleted since the last collection (its chunk's id waits in
        chunk_unplaced), or the store has never been looked at whole (no mark: migrations.py, 5 and 12)."""
        return not self._rows(
            f"SELECT 1 FROM meta WHERE key = '{NO_GARBAGE_KEY}' AND NOT EXISTS (SELECT 1 FROM chunk_unplaced)"
        )

    def _collect_orphans(self) -> int:
        """Drop the unused chunks with their vectors: among those whose places were deleted since the last
        collection, or among all of them once, in a store never looked at whole."""
        whole = not self._rows(f"SELECT 1 FROM meta WHERE key = '{NO_GARBAGE_KEY}'")
        if whole:
            sql = "SELECT c.id FROM chunk c WHERE NOT EXISTS (SELECT 1 FROM file_chunk fc WHERE fc.chunk_id = c.id)"
        else:
            # From the waiting ids, each looked up among the chunks: written as a join, SQLite walked all 3M of the
            # Linux kernel's chunks to look each up among the waiting (2.5 s).
            sql = (
                "SELECT u.chunk_id FROM chunk_unplaced u WHERE EXISTS (SELECT 1 FROM chunk c WHERE c.id = u.chunk_id) "
                "AND NOT EXISTS (SELECT 1 FROM file_chunk fc WHERE fc.chunk_id = u.chunk_id)"
            )
        orphans = [r[0] for r in self._rows(sql)]
        for part, marks in _in_batches(orphans):
            self._text.release(marks, tuple(part))
            self._conn.execute(f"DELETE FROM chunk WHERE id IN ({marks})", part)
        self._text.drop_unused()
        for vectors in self._vector_tables():
            if whole:
                # Every vector whose chunk is gone: those of the chunks just dropped (a vec0 table has no foreign
                # key to cascade), and those earlier builds wrote for a batch whose chunks were collected while
                # the model ran (a folder removed during its model stage), which nothing read or dropped since
                # (chunk ids are never reused). add_vectors writes no such vectors now; this heals the indexes
                # those builds left. About 25 ms a table of 300,000 vectors.
                vectors.delete(vectors.ids_missing_from("chunk"))
            elif orphans:
                vectors.delete(orphans)
        self._conn.execute("DELETE FROM chunk_unplaced")
        self._conn.execute(f"INSERT OR REPLACE INTO meta (key, value) VALUES ('{NO_GARBAGE_KEY}', '1')")
        return len(orphans)

    def file_chunk_rows(self, scope_id: str, paths: Sequence[str]) -> dict[str, list[StoredChunk]]:
        """Each path's chunk mappings in a scope, in order: what a worktree copies from its main scope."""
        out: dict[str, list[StoredChunk]] = {p: [] for p in paths}
        for part, marks in _in_batches(paths):
            for row in self._rows(
                f"SELECT {STORED} FROM file f JOIN file_chunk fc ON fc.file_id = f.id "
                f"JOIN chunk c ON c.id = fc.chunk_id WHERE f.scope_id = ? AND f.path IN ({marks}) "
                f"ORDER BY f.path, fc.ordinal",
                (scope_id, *part),
            ):
                stored = StoredChunk(*row)
                out[stored.path].append(stored)
        return out

    # --- counts ---------------------------------------------------------------------------------

    def scope_counts(self, scope_id: str) -> tuple[int, int, int]:
        """(indexed files, file_chunk rows, bytes of indexed files) for one scope."""
        row = self._rows(SQL.scope_files_and_bytes, (scope_id,))[0]
        chunks = self._rows(SQL.scope_places, (scope_id,))[0][0]
        return row[0], chunks, row[1]

    # --- search reads ---------------------------------------------------------------------------

    def iter_vectors(
        self, model_id: str, names: bool = False, after_id: int = 0, batch: int = 20_000, codes: bool = False
    ) -> Generator[tuple[np.ndarray, np.ndarray], None, None]:
        """(chunk ids, float32 unit rows) batches of a model's vectors with ids above `after_id`, by id; with
        `codes`, rows stored as int8 codes come as those codes (see vec0_storage)."""
        with translate_errors(self.path):  # Vec0Table reads through the connection itself
            table = self._vec0_table(model_id, names)
            if table is not None:
                yield from table.batches(after_id, batch, codes)

    def vectors_by_id(
        self, model_id: str, names: bool, chunk_ids: np.ndarray, codes: bool = False
    ) -> Generator[tuple[np.ndarray, np.ndarray], None, None]:
        """(chunk ids, float32 unit rows, or stored codes as iter_vectors says) batches of a model's vectors for
        these chunk ids (those it has)."""
        with translate_errors(self.path):
            table = self._vec0_table(model_id, names)
            if table is not None:
                yield from table.rows(chunk_ids, codes=codes)

    def vector_count(self, model_id: str, names: bool = False) -> int:
        with translate_errors(self.path):
            table = self._vec0_table(model_id, names)
            return table.count() if table is not None else 0

    def scope_chunk_ids(self, scope_ids: Sequence[str], where: HitFilter = NO_FILTER) -> np.ndarray:
        """Sorted ids of the chunks used in `scope_ids` by files and places passing `where`. A filter on the files
        (languages, globs, a worktree's changes) reads the places of the files it passes through the places'
        index on their file, unless it names symbols (their index finds fewer), rather than every place of the
        scopes joined to its file; the ids are made distinct and sorted here, not by SQLite's DISTINCT and ORDER
        BY. On the Linux kernel's index (3M places): C (2.66M places) 1,658 -> 349 ms, the sort having been 1.1 s
        of it; Rust 232 -> 11 ms; `drivers/net/**` 376 -> 139 ms; C's kmalloc and printk 213 -> 11 ms."""
        smarks = ",".join("?" * len(scope_ids))
        cond, args = filter_sql(
            HitFilter(chunk_types=where.chunk_types, symbol_types=where.symbol_types, symbol_names=where.symbol_names)
        )
        files = HitFilter(languages=where.languages, globs=where.globs, changed_only=where.changed_only)
        among, among_args = f"fc.scope_id IN ({smarks})", list(scope_ids)
        if files != NO_FILTER:
            file_cond, file_args = filter_sql(files)
            if where.symbol_names:
                cond, args = f"{cond} AND fc.file_id IN (SELECT f.id FROM file f WHERE {file_cond})", args + file_args
            else:
                among = f"fc.file_id IN (SELECT f.id FROM file f WHERE f.scope_id IN ({smarks}) AND {file_cond})"
                among_args += file_args
        # One string of ids rather than a row each: a million rows cost 430 ms as tuples, 185 ms this way.
        sql = f"SELECT group_concat(fc.chunk_id, ' ') FROM file_chunk fc WHERE {among} AND {cond}"
        return distinct_sorted(id_array(self._rows(sql, (*among_args, *args))[0][0]))

    def chunks_of_whole_store(self, scope_ids: Sequence[str]) -> int | None:
        if not self.covers_all_scopes(scope_ids):
            return None
        if self._garbage_possible():  # some chunks may be unused: the count is not that of the chunks searched
            return None
        rows = self._rows("SELECT value FROM meta WHERE key = ?", (CHUNK_COUNT_KEY,))
        return int(rows[0][0]) if rows else None

    def covers_all_scopes(self, scope_ids: Sequence[str]) -> bool:
        """Whether these scopes are every scope in the store (the usual case: one indexed project)."""
        return len(set(scope_ids)) >= self._rows(SQL.count_scopes)[0][0]

    def hits_for_chunks(
        self, scope_ids: Sequence[str], chunk_ids: Sequence[ChunkId], where: HitFilter = NO_FILTER
    ) -> list[Hit]:
        if not chunk_ids or not scope_ids:
            return []
        smarks = ",".join("?" * len(scope_ids))
        cond, cargs = filter_sql(where)
        out: list[Hit] = []
        for part, cmarks in _in_batches(chunk_ids):
            out += [
                Hit(*r)
                for r in self._rows(
                    f"SELECT {HITS} FROM file_chunk fc JOIN file f ON f.id = fc.file_id "
                    f"JOIN chunk c ON c.id = fc.chunk_id WHERE fc.scope_id IN ({smarks}) "
                    f"AND fc.chunk_id IN ({cmarks}) AND {cond}",
                    (*scope_ids, *part, *cargs),
                )
            ]
        return out

    def hits_for_places(self, place_ids: Sequence[PlaceId]) -> list[Hit]:
        out: list[Hit] = []
        for part, marks in _in_batches(place_ids):
            out += [
                Hit(*r)
                for r in self._rows(
                    f"SELECT {HITS} FROM file_chunk fc JOIN file f ON f.id = fc.file_id "
                    f"JOIN chunk c ON c.id = fc.chunk_id WHERE fc.id IN ({marks})",
                    part,
                )
            ]
        return out

    def chunk_texts(self, chunk_ids: Sequence[ChunkId]) -> dict[ChunkId, str]:
        # Row by row: as one JSON array (json_result) the text is escaped and parsed again, half of a rare
        # pattern's time over the Linux kernel's 1 GB.
        rows = self._rows(
            f"SELECT id, {TEXT} FROM chunk c WHERE id IN (SELECT value FROM json_each(?))",
            (json_rows(list(chunk_ids)),),
        )
        return {ChunkId(cid): text for cid, text in rows}

    def chunks_containing(self, needles: Sequence[str]) -> np.ndarray:
        """See TextIndex: the chunks holding every trigram of every needle, in any order (a superset). Asking
        for the trigrams (MATCH) rather than the substring (LIKE, which reads each candidate's text to check
        it, and takes `_` for any character) took 1.6 ms instead of 12.8 for "return" in 7,576 of 26K chunks."""
        trigrams = sorted({n[i : i + 3] for n in needles for i in range(len(n) - 2)})
        if not trigrams:
            return np.zeros(0, dtype=np.int64)
        query = " AND ".join('"' + t.replace('"', '""') + '"' for t in trigrams)
        text = self._rows("SELECT group_concat(rowid, ' ') FROM chunk_text WHERE chunk_text MATCH ?", (query,))[0][0]
        waiting = self._rows("SELECT group_concat(chunk_id, ' ') FROM chunk_text_pending")[0][0]
        return distinct_sorted(np.concatenate([id_array(text), id_array(waiting)]))

    def text_pending(self) -> int:
        return int(self._rows("SELECT count(*) FROM chunk_text_pending")[0][0])

    def index_pending_text(self, limit: int) -> int:
        before = self._conn.total_changes()
        with self._write():
            # The `limit` lowest waiting ids, up to the highest of them: two statements, no list of ids.
            last = self._rows(
                "SELECT max(chunk_id) FROM (SELECT chunk_id FROM chunk_text_pending ORDER BY chunk_id LIMIT ?)",
                (limit,),
            )[0][0]
            if last is None:
                return 0
            self._conn.execute(
                f"INSERT INTO chunk_text(rowid, text) SELECT c.id, {TEXT} FROM chunk_text_pending p "
                "JOIN chunk c ON c.id = p.chunk_id WHERE p.chunk_id <= ?",
                (last,),
            )
            self._conn.execute("DELETE FROM chunk_text_pending WHERE chunk_id <= ?", (last,))
            moved = self._conn.changes()
        self._unseen_rows += self._conn.total_changes() - before
        return moved

    def place_rows(
        self,
        scope_ids: Sequence[str],
        where: HitFilter = NO_FILTER,
        chunk_ids: np.ndarray | None = None,
        file_ids: np.ndarray | None = None,
    ) -> np.ndarray:
        """See TextIndex. One string of numbers rather than a row per place: 104 ms for 115K places (the rows
        with their paths took 265 ms). The file rows are joined only for a filter on them: the join doubled the
        Linux kernel's 3M places (2.1 s)."""
        smarks = ",".join("?" * len(scope_ids))
        cond, cargs = filter_sql(where, bulk=True)
        join = "JOIN file f ON f.id = fc.file_id " if cond != "1" else ""
        among, among_args = "", []  # by the chunk or file index: a needle's chunks, a slice of files
        for column, ids in (("fc.chunk_id", chunk_ids), ("fc.file_id", file_ids)):
            if ids is not None:
                among += f"AND {column} IN (SELECT value FROM json_each(?)) "
                among_args.append(_json_ids(ids))
        # `+`: by a slice of files, SQLite chose to walk the whole scope's index (1.03 s for 20,000 of the Linux
        # kernel's files against 83 ms through the file index).
        scope = "+fc.scope_id" if file_ids is not None else "fc.scope_id"
        text = self._rows(
            "SELECT group_concat(fc.id || ' ' || fc.file_id || ' ' || fc.chunk_id, ' ') FROM file_chunk fc "
            f"{join}WHERE {scope} IN ({smarks}) {among}AND {cond}",
            (*scope_ids, *among_args, *cargs),
        )[0][0]
        return id_array(text).reshape(-1, 3)

    def scope_files(self, scope_ids: Sequence[str]) -> list[tuple]:
        smarks = ",".join("?" * len(scope_ids))
        return self._rows(f"SELECT id, scope_id, path FROM file WHERE scope_id IN ({smarks})", tuple(scope_ids))

    def keyword_matches(
        self,
        scope_ids: Sequence[str],
        terms: Sequence[str],
        every_term: bool,
        limit: int,
        where: HitFilter = NO_FILTER,
    ) -> list[tuple[PlaceId, float]]:
        """Places matching the terms, best first, with BM25 turned into a strength in 0..1 (see
        KeywordIndex). An "any term" query leaves out the commonest terms when ranking every row they are in
        would be slow (fts_query.bounded_any)."""
        if not scope_ids:
            return []
        match = fts_query.every_term(terms) if every_term else fts_query.bounded_any(terms, self.keyword_row_counts)
        if match is None:
            return []
        return cast(list[tuple[PlaceId, float]], fts_query.strengths(self._bm25_ranks(scope_ids, match, limit, where)))

    def _bm25_ranks(
        self, scope_ids: Sequence[str], match: str, limit: int, where: HitFilter
    ) -> list[tuple[int, float]]:
        """(file_chunk id, bm25; lower is better) for an FTS5 MATCH expression within the scopes."""
        smarks = ",".join("?" * len(scope_ids))
        cond, cargs = filter_sql(where)
        w = KEYWORD_COLUMN_WEIGHTS
        sql = (
            f"SELECT fts.rowid, bm25(fts, {w[0]}, {w[1]}, {w[2]}) AS rank FROM fts "
            f"JOIN file_chunk fc ON fc.id = fts.rowid JOIN file f ON f.id = fc.file_id "
            f"WHERE fts MATCH ? AND fc.scope_id IN ({smarks}) AND {cond} ORDER BY rank LIMIT ?"
        )
        try:
            # Joining every match to its place and file costs twice the ranking on a big index (the
            # rows are scattered over the file), so rank in the keyword index alone and check the best.
            # FTS5 scores every match whatever the LIMIT, so asking for many more rows costs little.
            everywhere = where == NO_FILTER and self.covers_all_scopes(scope_ids)
            wanted = limit if everywhere else limit * KEYWORD_OVERFETCH
            ranked = self._ranked(
                f"SELECT rowid, bm25(fts, {w[0]}, {w[1]}, {w[2]}) AS rank FROM fts "
                "WHERE fts MATCH ? ORDER BY rank LIMIT ?",
                (match, wanted),
            )
            if everywhere:
                return ranked
            kept: list[tuple[int, float]] = []
            for start in range(0, len(ranked), 4 * limit):  # best first, until enough pass
                part = ranked[start : start + 4 * limit]
                passing = set(self._places_passing(scope_ids, [r[0] for r in part], where))
                kept += [r for r in part if r[0] in passing]
                if len(kept) >= limit:
                    return kept[:limit]
            if len(ranked) < wanted:
                return kept
            return self._ranked(sql, (match, *scope_ids, *cargs, limit))
        except apsw.SQLError as exc:  # an FTS5 syntax error: a bug in fts_query, not a store fault
            raise StoreError(f"keyword query could not be run: {exc}") from exc
        except apsw.Error as exc:
            raise store_error(exc, self.path) from exc

    def _ranked(self, sql: str, args: Sequence) -> list[tuple[int, float]]:
        """The (rowid, bm25) rows of a keyword query: an integer and a real, which apsw cannot know."""
        return cast(list[tuple[int, float]], self._conn.execute(sql, args).fetchall())

    def symbol_matches(
        self, scope_ids: Sequence[str], names: Sequence[str], limit: int, where: HitFilter = NO_FILTER
    ) -> list[PlaceId]:
        """Places whose symbol name equals one of `names` (case-insensitive), those spelt exactly as given first:
        beyond `limit` a common name's other spellings (serde's hundreds of `deserialize` functions) must not
        crowd out the definition asked for (the `Deserialize` trait)."""
        if not scope_ids or not names:
            return []
        smarks = ",".join("?" * len(scope_ids))
        nmarks = ",".join("?" * len(names))
        cond, cargs = filter_sql(where)
        return [
            r[0]
            for r in self._rows(
                f"SELECT fc.id FROM file_chunk fc JOIN file f ON f.id = fc.file_id WHERE fc.scope_id IN ({smarks}) "
                f"AND fc.symbol_name COLLATE NOCASE IN ({nmarks}) AND {cond} "
                f"ORDER BY fc.symbol_name IN ({nmarks}) DESC, fc.ordinal, fc.id LIMIT ?",
                (*scope_ids, *names, *cargs, *names, limit),
            )
        ]

    def definition_extents(self, place_ids: Sequence[PlaceId]) -> dict[PlaceId, int]:
        chosen = "id IN (SELECT value FROM json_each(?))"
        rows = self._rows(SQL.definition_extents.format(chosen=chosen), (json_rows(list(place_ids)),))
        return {PlaceId(pid): int(lines) for pid, lines in rows}

    def symbol_places(self, scope_ids: Sequence[str]) -> list[tuple[PlaceId, str, str | None, str]]:
        smarks = ",".join("?" * len(scope_ids))
        return self._rows(
            "SELECT fc.id, fc.symbol_name, fc.parent_symbol, f.path FROM file_chunk fc JOIN file f ON f.id = "
            f"fc.file_id WHERE fc.scope_id IN ({smarks}) AND fc.symbol_name IS NOT NULL ORDER BY fc.id",
            tuple(scope_ids),
        )

    def file_row(self, scope_id: str, path: str) -> FileState | None:
        rows = self._rows(SQL.file_row, (scope_id, path))
        return FileState(*rows[0]) if rows else None

    # --- history --------------------------------------------------------------------------------

    def add_history(self, entry: HistoryEntry) -> None:
        """Record a search; best effort: a read-only, locked or full store must not fail the search itself."""
        before = self._conn.total_changes()
        try:
            with self._write():
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
        except StoreError as exc:
            if not isinstance(exc.__cause__, (apsw.ReadOnlyError, apsw.BusyError, apsw.FullError)):
                raise
        finally:
            self._unseen_rows += self._conn.total_changes() - before

    def history(self, limit: int = 50) -> list[HistoryEntry]:
        rows = self._rows(
            SQL.history,
            (limit,),
        )
        return [HistoryEntry(*r) for r in rows]

    # --- bulk vector reads ----------------------------------------------------------------------

    def vector_ids(self, model_id: str, names: bool = False) -> np.ndarray:
        """Ids of the chunks that have a vector of this kind for `model_id`, ascending."""
        with translate_errors(self.path):
            table = self._vec0_table(model_id, names)
            return table.ids() if table is not None else np.zeros(0, dtype=np.int64)

    def vector_search(self, model_id: str, dims: int) -> VectorSearch:
        """The model's vectors as searches read them, kept in step with this store: an in-memory copy while they are
        few, their sign bits once they are many (see vector_search_choice)."""
        return SizedVectorSearch(self, model_id, dims)

    def sign_index(self, model_id: str, dims: int, at_least: int) -> SignIndex | None:
        """A search of the model's vectors by their sign bits, when it has at least `at_least` vectors (code and
        name: a model's names come first, 1.86M of them on the Linux kernel) and the sign packs of both its tables
        are complete."""
        with translate_errors(self.path):
            code, names = self._vec0_table(model_id, False), self._vec0_table(model_id, True)
            if code is None or names is None or code.count() + names.count() < at_least:
                return None
            packs = SignPacks(self._conn, code.name), SignPacks(self._conn, names.name)
            if not all(p.complete for p in packs):
                return None
            return SignIndex(self, model_id, dims, *packs, self._scan_reader)

    # --- file outlines ---------------------------------------------------------------------------

    def files_without_outline(self, model_id: str, limit: int) -> list[OutlineSource]:
        """Up to `limit` indexed files lacking a `model_id` outline vector, the most recently modified first,
        each with the names it defines in order."""
        files = self._rows(
            SQL.files_without_outline,
            (model_id, limit),
        )
        names = [
            row
            for part, marks in _in_batches([f[0] for f in files])
            for row in self._rows(
                f"SELECT file_id, symbol_name FROM file_chunk WHERE file_id IN ({marks}) "
                "AND symbol_name IS NOT NULL ORDER BY file_id, ordinal",
                part,
            )
        ]
        return outline_sources(files, names)

    def count_files_without_outline(self, model_id: str) -> int:
        return cast(int, self._rows(SQL.count_files_without_outline, (model_id,))[0][0])

    def add_outlines(self, model_id: str, outlines: Sequence[tuple[OutlineSource, np.ndarray]]) -> None:
        """Store outline vectors in one transaction, each only while its file has the content it was made from."""
        with self._write():
            self._conn.executemany(
                SQL.add_outline,
                outline_rows(model_id, outlines),
            )

    def outline_vectors(self, model_id: str, files: Sequence[FileKey]) -> dict[FileKey, np.ndarray]:
        """The `model_id` outline vector of each of these files that has one."""
        out: dict[FileKey, np.ndarray] = {}
        for part, _ in _in_batches(list(dict.fromkeys(files))):
            pairs = ",".join("(?, ?)" for _ in part)
            # From the asked files through the (scope, path) index: 0.46 ms for 60 of abseil-cpp's files, where
            # `(scope_id, path) IN (VALUES ...)` scanned every outline of the model (0.9 ms).
            rows = self._rows(
                f"WITH k(scope_id, path) AS (VALUES {pairs}) SELECT f.scope_id, f.path, o.vector FROM k "
                "CROSS JOIN file f ON f.scope_id = k.scope_id AND f.path = k.path "
                "JOIN file_outline o ON o.model_id = ? AND o.file_id = f.id",
                (*(v for key in part for v in key), model_id),
            )
            out.update({(scope_id, path): np.frombuffer(blob, dtype=np.float32) for scope_id, path, blob in rows})
        return out

    def _vector_tables(self) -> list[Vec0Table]:
        """Every model's two vec0 tables (chunk and symbol-name vectors)."""
        return [
            Vec0Table(self._conn, name, dims)
            for table, dims in self._rows("SELECT vector_table, dims FROM model")
            for name in (table, table + NAME_SUFFIX)
        ]

    def _vec0_table(self, model_id: str, names: bool) -> Vec0Table | None:
        rows = self._rows(SQL.model_table, (model_id,))
        if not rows:
            return None
        return Vec0Table(self._conn, rows[0][0] + (NAME_SUFFIX if names else ""), rows[0][1])

    # --- keyword statistics ---------------------------------------------------------------------

    def _places_passing(self, scope_ids: Sequence[str], file_chunk_ids: Sequence[int], where: HitFilter) -> list[int]:
        """Those of `file_chunk_ids` in these scopes whose place and file pass `where`."""
        smarks = ",".join("?" * len(scope_ids))
        cond, cargs = filter_sql(where)
        join = "JOIN file f ON f.id = fc.file_id " if cond != "1" else ""
        out: list[int] = []
        for part, marks in _in_batches(file_chunk_ids):
            out += [
                r[0]
                for r in self._rows(
                    # `+`: keep SQLite on the id lookups rather than walking the scope's index (250 ms vs 5 ms at 1M).
                    f"SELECT fc.id FROM file_chunk fc {join}WHERE fc.id IN ({marks}) "
                    f"AND +fc.scope_id IN ({smarks}) AND {cond}",
                    (*part, *scope_ids, *cargs),
                )
            ]
        return out

    def keyword_row_counts(self, terms: Sequence[str]) -> dict[str, int]:
        """Roughly how many keyword-index rows (file_chunk places, all scopes) hold each term.

        Exact on small indexes; on big ones, counted in KEYWORD_SAMPLE_WINDOWS rowid windows spread over
        the index and scaled up, so each term costs a few thousand postings at most, not a walk of all. A term's
        count is kept until the index changes: each key press searches again with mostly the same words, and
        the counts were 1-2 ms of a 12-15 ms search (nvm, abseil-cpp).
        """
        return {t: self._term_rows.get(t, functools.partial(self._count_term_rows, t)) for t in terms}

    def _count_term_rows(self, term: str) -> int:
        span, windows = self._keyword_windows.get(None, self._read_keyword_windows)
        if not windows:
            return 0
        phrase = fts_query.quote(term)
        hits = sum(
            self._rows("SELECT count(*) FROM fts WHERE fts MATCH ? AND rowid BETWEEN ? AND ?", (phrase, a, b))[0][0]
            for a, b in windows
        )
        return hits * span // sum(b - a + 1 for a, b in windows)

    def _read_keyword_windows(self) -> tuple[int, list[tuple[int, int]]]:
        """The keyword index's rowid span and the windows of it counted (none on an empty index)."""
        # Two subqueries: SQLite answers a lone min() or max() from the index, both together by a full scan.
        low, high = self._rows("SELECT (SELECT min(id) FROM file_chunk), (SELECT max(id) FROM file_chunk)")[0]
        if low is None:
            return 0, []
        span = high - low + 1
        size = KEYWORD_SAMPLE_ROWS
        if span <= KEYWORD_SAMPLE_WINDOWS * size:
            return span, [(low, high)]
        step = (span - size) // (KEYWORD_SAMPLE_WINDOWS - 1)
        return span, [(low + i * step, low + i * step + size - 1) for i in range(KEYWORD_SAMPLE_WINDOWS)]


def check_sqlite_store(path: Path | str) -> None:
    """Raise StoreUnusable when the store at `path` cannot be used as it is: not a database, written by a newer
    Quarry, or damaged anywhere. Reads the whole file, so it is for repairs, not for every open."""
    store = SqliteStore(path)
    try:
        soundness.check_pages(store.path)
    finally:
        store.close()


def _json_ids(ids: np.ndarray) -> str:
    """Ids as a JSON array, for `IN (SELECT value FROM json_each(?))`: one bound value, however many ids."""
    return "[" + ",".join(map(str, np.asarray(ids, dtype=np.int64).tolist())) + "]"
