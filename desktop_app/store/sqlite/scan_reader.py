"""The vectors a vector scan reads by id while the worker's thread goes on using the store.

A search runs its vector scans on threads of their own while the worker's thread reads the keyword index, and the
search by sign bits reads the vectors of its shortlist from the file. One apsw connection runs one statement at a
time and refuses a second thread meanwhile ("Connection is busy in another thread": a hybrid search of the Linux
kernel failed so), so those reads go through a read-only connection of their own, one scan at a time. It holds no
transaction between reads, so it reads what is committed, as the store's connection does between writes.
"""

from __future__ import annotations

import threading
from pathlib import Path

import apsw
import numpy as np

from .connection import open_connection, translate_errors
from .vec0_storage import Vec0Table


class ScanReader:
    def __init__(self, path: Path):
        self._path = path
        self._lock = threading.Lock()
        self._conn: apsw.Connection | None = None

    def codes(self, table: str, dims: int, rowids: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """(rowids, int8 codes or float32 rows as stored) batches of the vectors of the vec0 table `table` with
        these rowids (those it has)."""
        with self._lock, translate_errors(self._path):
            if self._conn is None:
                self._conn = open_connection(self._path, readonly=True)
            return list(Vec0Table(self._conn, table, dims).rows(rowids, codes=True))

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
