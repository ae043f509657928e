"""Opening the SQLite database with sqlite-vec and FTS5 available.

Python's own sqlite3 module cannot load extensions on many interpreters (pyenv builds,
macOS system Python), so the store uses apsw, which bundles a current SQLite with FTS5
and extension loading everywhere.
"""

from __future__ import annotations

from pathlib import Path

import apsw
import sqlite_vec

BUSY_TIMEOUT_MS = 10_000


class StoreError(Exception):
    """A store problem the user can act on; the message says what to do."""


def open_connection(path: Path | str, *, readonly: bool = False) -> apsw.Connection:
    flags = apsw.SQLITE_OPEN_READONLY if readonly else apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
    try:
        conn = apsw.Connection(str(path), flags=flags)
    except apsw.CantOpenError as exc:
        raise StoreError(f"cannot open the index database {path}: {exc}; check that its folder exists "
                         "and is writable, or choose another file with --db") from exc
    try:
        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
        conn.enable_load_extension(False)
        # Another Quarry process may be writing; wait for it rather than failing at once.
        conn.set_busy_timeout(BUSY_TIMEOUT_MS)
        conn.execute("PRAGMA foreign_keys = ON")
        if not readonly:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
    except (apsw.NotADBError, apsw.CorruptError) as exc:
        conn.close()
        raise StoreError(f"{path} is not a Quarry index (or it is damaged); move it aside or "
                         "choose another file with --db") from exc
    return conn
