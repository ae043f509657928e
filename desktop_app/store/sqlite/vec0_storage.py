"""Reading a vec0 table's vectors in bulk, from sqlite-vec's own storage tables where it can.

Through the virtual table, `WHERE rowid > ? ORDER BY rowid` is a full scan plus a sort on every call
(so reading a million vectors in batches is quadratic: loading 1.7 million took 85-90 s), `count(*)`
is a full scan, and a lookup by rowid walks a 1.5 MB blob's overflow pages (~0.4 ms a vector).
sqlite-vec 0.1 keeps its data in plain tables: `<t>_rowids(rowid, id, chunk_id, chunk_offset)` has
one row per live vector, and `<t>_vector_chunks00(rowid = chunk_id, vectors)` holds each chunk's
vectors end to end. Reading those gives the same vectors with indexed range reads and one blob read
per 1,024 vectors (1.6 s for a million float32 ones), and a vector by rowid as a slice of its chunk's blob
(incremental blob I/O, ~30 us). That layout is private to sqlite-vec, so it is checked first; a table laid
out any other way is read through the virtual table (correct, slower).

Vectors are stored as int8 codes, one byte a dimension (`int8[d]` columns), not float32: they were 65 % of a
fast-stage database (commons-lang: 15.8 of 28.6 MB). Every vector Quarry stores is a unit vector compared by
cosine, so a vector's scale is not kept: each is rounded to the codes of its largest coordinate at ±127 and
read back as those codes over their length. The search's in-memory copy (quantized_rows.py) already scanned
those same codes; what is lost is the rescoring's residual, a cosine error of the order of 1e-3 against the
float32 vector, which moved no figure of the evals by more than 0.002. Tables made before (`float[d]`) are
read and written as float32, as they were.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

import apsw
import numpy as np

from .connection import query_value, query_value_or_none
from .json_rows import json_result, json_rows
from .sign_packs import SignPacks

_ROWID_COLUMNS = ("rowid", "id", "chunk_id", "chunk_offset")
_VECTOR_COLUMNS = ("rowid", "vectors")
INT8_COLUMN = "embedding int8"  # how a table of int8 codes declares its column


def int8_codes(vectors: np.ndarray) -> np.ndarray:
    """The int8 codes stored for float rows: each row scaled so that its largest coordinate is ±127."""
    rows = np.asarray(vectors, dtype=np.float32)
    peak = np.abs(rows).max(axis=1, keepdims=True)
    return np.rint(rows * (127 / np.where(peak > 0, peak, 1))).astype(np.int8)


def unit_rows(codes: np.ndarray) -> np.ndarray:
    """float32 unit rows read back from int8 codes (a row of zeros stays zeros)."""
    rows = codes.astype(np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    rows /= np.where(norms > 0, norms, 1)
    return rows


def id_array(text: str | None) -> np.ndarray:
    """int64 ids from a `group_concat(id, ' ')` (one string instead of a row each: a third of the time)."""
    return np.fromstring(text, dtype=np.int64, sep=" ") if text else np.zeros(0, dtype=np.int64)


class Vec0Table:
    """One vec0 table (of `dims` dimensions, int8 codes or float32) read in bulk, in rowid order."""

    def __init__(self, conn: apsw.Connection, table: str, dims: int):
        self._conn = conn
        self._table = table
        self._dims = dims
        declared = query_value_or_none(conn, str, "SELECT sql FROM sqlite_schema WHERE name = ?", (table,)) or ""
        self.int8 = INT8_COLUMN in declared
        self.shadow_readable = (
            self._columns(f"{table}_rowids") == _ROWID_COLUMNS
            and self._columns(f"{table}_vector_chunks00") == _VECTOR_COLUMNS
        )

    @property
    def name(self) -> str:
        return self._table

    def _columns(self, name: str) -> tuple[str, ...]:
        # In one step (json_rows.py): a table is looked at on every write of vectors.
        return tuple(r[0] for r in json_result(self._conn, "name", "FROM pragma_table_info(?)", (name,)))

    def count(self) -> int:
        source = f"{self._table}_rowids" if self.shadow_readable else self._table
        return query_value(self._conn, int, f"SELECT count(*) FROM {source}")

    def ids(self) -> np.ndarray:
        """Every rowid, ascending."""
        source = f"{self._table}_rowids" if self.shadow_readable else self._table
        text = query_value_or_none(
            self._conn, str, f"SELECT group_concat(rowid, ' ') FROM (SELECT rowid FROM {source} ORDER BY rowid)"
        )
        return id_array(text)

    def ids_missing_from(self, table: str) -> list[int]:
        """The rowids that are no id of `table` (vectors whose chunk is gone). From the rowids' own table this
        takes a quarter of the time of the same scan through the virtual table."""
        source = f"{self._table}_rowids" if self.shadow_readable else self._table
        rows = self._conn.execute(f"SELECT rowid FROM {source} WHERE rowid NOT IN (SELECT id FROM {table})")
        return [cast(int, r[0]) for r in rows.fetchall()]

    def put(self, rows: list[tuple[int, np.ndarray]]) -> None:
        """Store (rowid, unit vector) rows, replacing the vectors these rowids have, and their sign bits as one
        more pack (sign_packs.py). The rows go in as one statement over a JSON array (json_rows.py says why): a
        statement a vector cost 1.8 ms a vector while another thread of the process was busy in Python (36 us
        this way; ~6 us either way on a quiet process), and the fast stage's embedding thread is that thread."""
        if not rows:
            return
        ids = [rowid for rowid, _ in rows]
        self.delete(ids)
        matrix = np.stack([v for _, v in rows])
        stored = int8_codes(matrix) if self.int8 else np.ascontiguousarray(matrix, dtype=np.float32)
        # The vectors as one blob, each row its slice, the JSON holding only the rowids: as hex digits inside the JSON
        # they were written out, parsed and decoded again. 60,000 vectors of 256 int8 codes in batches of 512, alone:
        # 0.35-0.37 -> 0.26-0.27 s; the fast stage's writes of the kernel's fs/ 3.4 / 3.7 -> 2.6 / 2.7 s.
        width = stored.shape[1] * stored.itemsize
        vector = f"substr(?2, key * {width} + 1, {width})"
        self._conn.execute(
            f"INSERT INTO {self._table} (rowid, embedding) "
            f"SELECT value, {f'vec_int8({vector})' if self.int8 else vector} FROM json_each(?1)",
            (json_rows(ids), stored.tobytes()),
        )
        SignPacks(self._conn, self._table).append(np.array(ids, dtype=np.int64), stored)

    def delete(self, rowids: list[int]) -> None:
        """Drop the vectors with these rowids (those that exist), through the virtual table: the rowids' own table
        says which exist, then one statement a rowid, because vec0 answers an `IN` list by scanning every vector
        (30 ms a list at 200,000 vectors, against 0.08 ms a rowid)."""
        if self.shadow_readable:
            present = id_array(
                query_value_or_none(
                    self._conn,
                    str,
                    f"SELECT group_concat(rowid, ' ') FROM {self._table}_rowids "
                    "WHERE rowid IN (SELECT value FROM json_each(?))",
                    (json_rows(rowids),),
                )
            ).tolist()
        else:
            present = rowids
        self._conn.executemany(f"DELETE FROM {self._table} WHERE rowid = ?", [(rowid,) for rowid in present])

    def _matrix(self, blob: bytes, n: int = -1, codes: bool = False) -> np.ndarray:
        """The rows of a blob of vectors end to end: float32 unit rows, or with `codes` the int8 codes as they
        are stored (a float32 table has none: its rows come as float32 either way)."""
        if not self.int8:
            return np.frombuffer(blob, dtype=np.float32).reshape(n, self._dims)
        stored = np.frombuffer(blob, dtype=np.int8).reshape(n, self._dims)
        return stored if codes else unit_rows(stored)

    def batches(self, after_id: int, batch: int, codes: bool = False) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(rowids, matrix: see _matrix; read-only) of the vectors with rowid above `after_id`, ascending, in
        batches of at most `batch`."""
        if self.shadow_readable:
            yield from self._shadow_batches(after_id, batch, codes)
        else:
            yield from self._virtual_batches(after_id, batch, codes)

    def _shadow_batches(self, after_id: int, batch: int, codes: bool) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        # Yields each run of rows stored side by side in one chunk as a view of that chunk's rows (of its blob
        # itself for float32): a run broken by a reused slot is just shorter.
        last = after_id
        chunk_id, chunk = -1, np.zeros((0, self._dims), dtype=np.float32)  # a chunk straddles batches
        while True:
            # One string rather than a tuple a row: a third of the time for a million rows.
            text = query_value_or_none(
                self._conn,
                str,
                "SELECT group_concat(rowid || ' ' || chunk_id || ' ' || chunk_offset, ' ') FROM "
                f"(SELECT rowid, chunk_id, chunk_offset FROM {self._table}_rowids WHERE rowid > ? "
                "ORDER BY rowid LIMIT ?)",
                (last, batch),
            )
            if not text:
                return
            places = np.fromstring(text, dtype=np.int64, sep=" ").reshape(-1, 3)
            starts = np.flatnonzero((np.diff(places[:, 1]) != 0) | (np.diff(places[:, 2]) != 1)) + 1
            for start, end in zip([0, *starts], [*starts, len(places)], strict=True):
                if places[start, 1] != chunk_id:
                    chunk_id = int(places[start, 1])
                    chunk = self._chunk_vectors(chunk_id, codes)
                offset = places[start, 2]
                yield places[start:end, 0], chunk[offset : offset + end - start]
            last = int(places[-1, 0])

    def _chunk_vectors(self, chunk_id: int, codes: bool) -> np.ndarray:
        blob = query_value(
            self._conn, bytes, f"SELECT vectors FROM {self._table}_vector_chunks00 WHERE rowid = ?", (chunk_id,)
        )
        return self._matrix(blob, codes=codes)

    def rows(
        self, rowids: np.ndarray, batch: int = 500, codes: bool = False
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(rowids, matrix: see _matrix) of the vectors with these rowids (those that exist), in batches."""
        for start in range(0, len(rowids), batch):
            part = [int(i) for i in rowids[start : start + batch]]
            found = self._shadow_rows(part, codes) if self.shadow_readable else self._virtual_rows(part, codes)
            if found is not None:
                yield found

    def _virtual_rows(self, rowids: list[int], codes: bool) -> tuple[np.ndarray, np.ndarray] | None:
        rows = cast(  # (rowid, vector blob)
            list[tuple[int, bytes]],
            self._conn.execute(
                f"SELECT rowid, embedding FROM {self._table} WHERE rowid IN ({','.join('?' * len(rowids))})", rowids
            ).fetchall(),
        )
        if not rows:
            return None
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        return ids, self._matrix(b"".join(r[1] for r in rows), len(rows), codes)

    def _shadow_rows(self, rowids: list[int], codes: bool) -> tuple[np.ndarray, np.ndarray] | None:
        # Each vector read where it lies in its chunk's blob, by incremental blob I/O: ~30 us a vector, where the
        # virtual table's lookup by rowid reads the chunk's blob from its start (~0.4 ms). The blob is opened
        # before the places are read, so both come from one snapshot of a file other processes write.
        first = query_value_or_none(self._conn, int, f"SELECT min(rowid) FROM {self._table}_vector_chunks00")
        if first is None:
            return None
        width = self._dims * (1 if self.int8 else 4)
        blob = self._conn.blob_open("main", f"{self._table}_vector_chunks00", "vectors", first, False)
        try:
            places = cast(  # (rowid, chunk id, offset in the chunk), in the order the chunks lie
                list[tuple[int, int, int]],
                self._conn.execute(
                    f"SELECT rowid, chunk_id, chunk_offset FROM {self._table}_rowids "
                    f"WHERE rowid IN ({','.join('?' * len(rowids))}) ORDER BY chunk_id, chunk_offset",
                    rowids,
                ).fetchall(),
            )
            if not places:
                return None
            out = bytearray(width * len(places))
            chunk = first
            for i, (_, chunk_id, offset) in enumerate(places):
                if chunk_id != chunk:
                    blob.reopen(chunk_id)
                    chunk = chunk_id
                blob.seek(offset * width)
                blob.read_into(out, i * width, width)
        finally:
            blob.close()
        ids = np.fromiter((p[0] for p in places), dtype=np.int64, count=len(places))
        return ids, self._matrix(bytes(out), len(places), codes)

    def _virtual_batches(self, after_id: int, batch: int, codes: bool) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        last = after_id
        while True:
            rows = cast(  # (rowid, vector blob)
                list[tuple[int, bytes]],
                self._conn.execute(
                    f"SELECT rowid, embedding FROM {self._table} WHERE rowid > ? ORDER BY rowid LIMIT ?", (last, batch)
                ).fetchall(),
            )
            if not rows:
                return
            ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            yield ids, self._matrix(b"".join(r[1] for r in rows), len(rows), codes)
            last = int(ids[-1])
