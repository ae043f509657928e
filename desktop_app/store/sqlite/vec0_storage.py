"""Reading a vec0 table's vectors in bulk, from sqlite-vec's own storage tables where it can.

Through the virtual table, `WHERE rowid > ? ORDER BY rowid` is a full scan plus a sort on every call
(so reading a million vectors in batches is quadratic: loading 1.7 million took 85-90 s), `count(*)`
is a full scan, and a lookup by rowid walks a 1.5 MB blob's overflow pages (~0.4 ms a vector).
sqlite-vec 0.1 keeps its data in plain tables: `<t>_rowids(rowid, id, chunk_id, chunk_offset)` has
one row per live vector, and `<t>_vector_chunks00(rowid = chunk_id, vectors)` holds each chunk's
float32 vectors end to end. Reading those gives the same vectors with indexed range reads and one
blob read per 1,024 vectors (1.6 s for a million). That layout is private to sqlite-vec, so it is
checked first; a table laid out any other way is read through the virtual table (correct, slower).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

import apsw
import numpy as np

from .connection import query_value, query_value_or_none

_ROWID_COLUMNS = ("rowid", "id", "chunk_id", "chunk_offset")
_VECTOR_COLUMNS = ("rowid", "vectors")


def id_array(text: str | None) -> np.ndarray:
    """int64 ids from a `group_concat(id, ' ')` (one string instead of a row each: a third of the time)."""
    return np.fromstring(text, dtype=np.int64, sep=" ") if text else np.zeros(0, dtype=np.int64)


class Vec0Table:
    """One float32 vec0 table (of `dims` dimensions) read in bulk, in rowid order."""

    def __init__(self, conn: apsw.Connection, table: str, dims: int):
        self._conn = conn
        self._table = table
        self._dims = dims
        self.shadow_readable = (
            self._columns(f"{table}_rowids") == _ROWID_COLUMNS
            and self._columns(f"{table}_vector_chunks00") == _VECTOR_COLUMNS
        )

    def _columns(self, name: str) -> tuple[str, ...]:
        # table_info's second column is the column's name, always text.
        return tuple(cast(str, r[1]) for r in self._conn.execute(f"PRAGMA table_info({name})").fetchall())

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

    def delete(self, rowids: list[int]) -> None:
        """Drop the vectors with these rowids (those that exist), through the virtual table."""
        for start in range(0, len(rowids), 500):
            part = rowids[start : start + 500]
            self._conn.execute(f"DELETE FROM {self._table} WHERE rowid IN ({','.join('?' * len(part))})", part)

    def batches(self, after_id: int, batch: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(rowids, read-only float32 matrix) of the vectors with rowid above `after_id`, ascending, in
        batches of at most `batch`."""
        if self.shadow_readable:
            yield from self._shadow_batches(after_id, batch)
        else:
            yield from self._virtual_batches(after_id, batch)

    def _shadow_batches(self, after_id: int, batch: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        # Yields each run of rows stored side by side in one chunk as a view of that chunk's blob: the
        # usual case is a whole chunk, so nothing is copied; a run broken by a reused slot is just shorter.
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
                    chunk = self._chunk_vectors(chunk_id)
                offset = places[start, 2]
                yield places[start:end, 0], chunk[offset : offset + end - start]
            last = int(places[-1, 0])

    def _chunk_vectors(self, chunk_id: int) -> np.ndarray:
        blob = query_value(
            self._conn, bytes, f"SELECT vectors FROM {self._table}_vector_chunks00 WHERE rowid = ?", (chunk_id,)
        )
        return np.frombuffer(blob, dtype=np.float32).reshape(-1, self._dims)

    def rows(self, rowids: np.ndarray, batch: int = 500) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(rowids, float32 matrix) of the vectors with these rowids (those that exist), in batches."""
        for start in range(0, len(rowids), batch):
            part = [int(i) for i in rowids[start : start + batch]]
            rows = cast(
                list[tuple[int, bytes]],
                self._conn.execute(
                    f"SELECT rowid, embedding FROM {self._table} WHERE rowid IN ({','.join('?' * len(part))})", part
                ).fetchall(),
            )
            if rows:
                ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
                yield ids, np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)

    def _virtual_batches(self, after_id: int, batch: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        last = after_id
        while True:
            rows = cast(  # (rowid, float32 vector blob)
                list[tuple[int, bytes]],
                self._conn.execute(
                    f"SELECT rowid, embedding FROM {self._table} WHERE rowid > ? ORDER BY rowid LIMIT ?", (last, batch)
                ).fetchall(),
            )
            if not rows:
                return
            ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            yield ids, np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
            last = int(ids[-1])
