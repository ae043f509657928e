"""The sign bits of a vec0 table's vectors, kept beside it so a search need not read the vectors themselves.

A search by meaning over the Linux kernel's index loaded 2.97M code and 1.86M name vectors (1.2 GB of int8
codes) before its first answer: 5 s and 1.7 GB of memory in a fresh process. One bit a dimension (the sign of
each coordinate, 32 bytes a 256-dim vector) is an eighth of that, and it nominates candidates well: on that
index, the 5,000 nearest by Hamming distance, rescored by the query against their signs (200 kept) and then
exactly, held 0.99-1.0 of the exact top 10 for 20 names and 20 sentences (code vectors; name vectors alike,
counting ties at the 10th score).

The bits are written as packs: each write of vectors appends one row of (their rowids, their signs), in the
same transaction as the vectors, so a crash leaves both or neither. A deleted or replaced vector leaves its old
entry behind: the exact rescoring reads each candidate from the vec0 table, which drops the deleted and scores
the replaced as they are now, so a stale entry costs only a candidate slot. `maintain` rewrites a table's
packs when stale entries pass a quarter of them, or when the table's vectors were written by a build that kept
no packs (schema 4 and before): a table whose packs are complete is listed in vector_sign_complete.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, cast

import apsw
import numpy as np

from .connection import query_value

if TYPE_CHECKING:
    from .vec0_storage import Vec0Table

# Packs rewritten by `maintain` hold this many vectors each (2 MB of signs at 256 dimensions).
REWRITE_PACK = 65_536
SMALL_PACK = REWRITE_PACK // 8
SMALL_PACKS = 64  # small packs left as they are (a Linux kernel's first index writes ~9,400)
STALE_SHARE = 0.25  # stale entries, as a share of the live vectors, that make `maintain` rewrite the packs


def sign_words(dims: int) -> int:
    """uint64 words a vector's signs take."""
    return (dims + 63) // 64


def signs_of(rows: np.ndarray) -> np.ndarray:
    """Packed sign bits (n x 8·sign_words bytes, as uint8) of float rows or int8 codes: bit set where > 0."""
    bits = np.packbits(np.asarray(rows) > 0, axis=1)
    width = sign_words(rows.shape[1]) * 8
    if bits.shape[1] < width:
        bits = np.pad(bits, ((0, 0), (0, width - bits.shape[1])))
    return bits


class SignPacks:
    """The packs of one vec0 table."""

    def __init__(self, conn: apsw.Connection, table: str):
        self._conn = conn
        self.table = table

    def append(self, rowids: np.ndarray, rows: np.ndarray) -> None:
        """Record the signs of vectors just written (rowids with their float rows or int8 codes)."""
        if len(rowids):
            self._append_signs(rowids, signs_of(rows))

    def _append_signs(self, rowids: np.ndarray, signs: np.ndarray) -> None:
        """Add a pack: rowids with their packed signs (n x bytes, as signs_of gives them)."""
        self._insert(rowids, signs.view(np.uint64).T)

    def _insert(self, rowids: np.ndarray, words: np.ndarray) -> None:
        # Word-major (words x n), as the reader holds them: a row-major copy took a third of loading the kernel's.
        ids = np.ascontiguousarray(rowids, dtype=np.int64).tobytes()
        self._conn.execute(
            "INSERT INTO vector_sign (vector_table, size, ids, signs) VALUES (?, ?, ?, ?)",
            (self.table, len(rowids), ids, np.ascontiguousarray(words).tobytes()),
        )

    @property
    def complete(self) -> bool:
        """Whether every vector of the table has an entry (the table was made, or its packs rewritten, by a build
        that writes them)."""
        sql = "SELECT count(*) FROM vector_sign_complete WHERE vector_table = ?"
        return bool(query_value(self._conn, int, sql, (self.table,)))

    def mark_complete(self) -> None:
        self._conn.execute("INSERT OR IGNORE INTO vector_sign_complete (vector_table) VALUES (?)", (self.table,))

    def entries(self) -> int:
        return query_value(
            self._conn, int, "SELECT coalesce(sum(size), 0) FROM vector_sign WHERE vector_table = ?", (self.table,)
        )

    def drop(self) -> None:
        self._conn.execute("DELETE FROM vector_sign WHERE vector_table = ?", (self.table,))
        self._conn.execute("DELETE FROM vector_sign_complete WHERE vector_table = ?", (self.table,))

    def maintain(self, vectors: Vec0Table) -> bool:
        """Inside a write: rewrite the packs from the vectors when they are incomplete or mostly stale, else merge
        small packs when there are many. True when it rewrote them from the vectors."""
        live = vectors.count()
        if self.complete and self.entries() - live <= STALE_SHARE * max(live, 1):
            self._merge_small()
            return False
        self._conn.execute("DELETE FROM vector_sign WHERE vector_table = ?", (self.table,))
        held: list[tuple[np.ndarray, np.ndarray]] = []  # the batches come a vec0 chunk (1,024 vectors) at a time
        for rowids, rows in vectors.batches(0, REWRITE_PACK, codes=True):
            held.append((rowids, signs_of(rows)))
            if sum(len(ids) for ids, _ in held) >= REWRITE_PACK:
                self._append_signs(*_joined(held))
                held = []
        if held:
            self._append_signs(*_joined(held))
        self.mark_complete()
        return True

    def _merge_small(self) -> None:
        """Merge the packs under SMALL_PACK entries into packs of REWRITE_PACK when there are more than SMALL_PACKS
        of them: each write of vectors adds one (an index run's fast stage, of 512 chunks; a watched folder's edit,
        of a few), and a reader pays per pack. Their signs are merged as they are, the vectors left unread."""
        small = self._packs("size < ? ORDER BY id", (SMALL_PACK,))
        if len(small) <= SMALL_PACKS:
            return
        rowids = np.concatenate([ids for _, ids, _ in small])
        words = np.concatenate([signs for _, _, signs in small], axis=1)
        for start in range(0, len(rowids), REWRITE_PACK):
            self._insert(rowids[start : start + REWRITE_PACK], words[:, start : start + REWRITE_PACK])
        for start in range(0, len(small), 500):
            part = [pack_id for pack_id, _, _ in small[start : start + 500]]
            self._conn.execute(f"DELETE FROM vector_sign WHERE id IN ({','.join('?' * len(part))})", part)

    def read(self, after: int) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        """(pack id, rowids, signs as words x n uint64) of the packs with id above `after`, in order."""
        last = after
        while packs := self._packs("id > ? ORDER BY id LIMIT 64", (last,)):
            yield from packs
            last = packs[-1][0]

    def _packs(self, condition: str, args: tuple) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """(pack id, rowids, signs as words x n uint64) of the table's packs meeting `condition`."""
        rows = cast(
            list[tuple[int, bytes, bytes]],
            self._conn.execute(
                f"SELECT id, ids, signs FROM vector_sign WHERE vector_table = ? AND {condition}", (self.table, *args)
            ).fetchall(),
        )
        out = []
        for pack_id, ids, signs in rows:
            rowids = np.frombuffer(ids, dtype=np.int64)
            out.append((pack_id, rowids, np.frombuffer(signs, dtype=np.uint64).reshape(-1, len(rowids))))
        return out

    def held_since(self, first: int, last: int) -> int:
        """How many of the table's packs have ids from `first` to `last`: fewer than a reader loaded means they
        were rewritten since."""
        return query_value(
            self._conn,
            int,
            "SELECT count(*) FROM vector_sign WHERE vector_table = ? AND id BETWEEN ? AND ?",
            (self.table, first, last),
        )


def _joined(held: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    return np.concatenate([ids for ids, _ in held]), np.concatenate([signs for _, signs in held])
