"""Opening the SQLite database with sqlite-vec and FTS5 available, and saying what went wrong when it fails.

Python's own sqlite3 module cannot load extensions on many interpreters (pyenv builds,
macOS system Python), so the store uses apsw, which bundles a current SQLite with FTS5
and extension loading everywhere.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import struct
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import TypeVar, cast

import apsw
import sqlite_vec

from ..errors import Remedy, ScopeRemoved, StoreError, StoreUnusable

resource: ModuleType | None
try:
    import resource
except ImportError:  # Windows: no per-process file size limit to check
    resource = None

_T = TypeVar("_T")

BUSY_TIMEOUT_MS = 10_000
BUSY_TIMEOUT_ENV = "QUARRY_BUSY_TIMEOUT_MS"
MAX_BUSY_TIMEOUT_MS = 2**31 - 1  # SQLite takes a 32-bit int (about 24 days)
# Below this much free space a write failure is taken for a full disk: sqlite-vec reports a failed write of
# its 1.5 MB vector blocks as its own error, hiding SQLite's "database or disk is full".
LOW_SPACE_BYTES = 16 << 20
CACHE_MB = 64  # SQLite's page cache per connection, at most (see open_connection)
CHECKPOINT_PAGES = 262_144  # WAL pages written before a checkpoint (1 GB; SQLite's default 1,000)
WAL_KEPT_BYTES = 64 << 20  # what a checkpointed WAL file is cut back to (SQLite keeps it whole by default)
# The start of the -shm file: the WAL index header (https://sqlite.org/walformat.html), twice, in this machine's
# byte order. Its fields: version, unused, change counter, initialised, checksum byte order, page size (65536
# stored as 1), and how many frames (a page each, after a 24-byte frame header) are committed to the -wal file,
# which starts with a 32-byte header.
_WAL_INDEX_HEADER = struct.Struct("=IIIBBHI")
_WAL_INDEX_HEADER_BYTES = 48
_WAL_HEADER_BYTES = 32
_FRAME_HEADER_BYTES = 24


def busy_timeout_ms() -> int:
    """How long to wait for another process's write lock: QUARRY_BUSY_TIMEOUT_MS, or 10 s."""
    raw = os.environ.get(BUSY_TIMEOUT_ENV, "").strip()
    if not raw:
        return BUSY_TIMEOUT_MS
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if not 0 <= value <= MAX_BUSY_TIMEOUT_MS:
        raise StoreError(
            f"{BUSY_TIMEOUT_ENV} must be a whole number of milliseconds from 0 to {MAX_BUSY_TIMEOUT_MS} "
            f"(got {raw!r}); fix or unset it"
        )
    return value


def open_connection(path: Path | str, *, readonly: bool = False) -> apsw.Connection:
    flags = apsw.SQLITE_OPEN_READONLY if readonly else apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
    if not readonly:
        _repair_side_files(Path(path))
    timeout = busy_timeout_ms()
    with translate_errors(path):
        conn = apsw.Connection(str(path), flags=flags)
        try:
            conn.enable_load_extension(True)
            conn.load_extension(sqlite_vec.loadable_path())
            conn.enable_load_extension(False)
            # Another Quarry process may be writing; wait for it rather than failing at once.
            conn.set_busy_timeout(timeout)
            conn.execute("PRAGMA foreign_keys = ON")
            # SQLite's default page cache (2 MB) spilled a batch's dirty pages into the WAL before its commit and
            # read the B-trees' pages back through the file system at every insert; the statement journal of a
            # multi-row insert went to a temporary file; a checkpoint every 1,000 pages wrote the same hot pages
            # (FTS5's, the indexes' upper levels) back to the file again and again, each with an fsync. py-spy on
            # stage 1's writer (240 MB of the Linux kernel, 663K chunks): 13 % of its samples in the cache's
            # spills, 10 % in the statement journal, 13 % in pread; on the whole kernel 16 % in checkpoints.
            # On the part, alternating on a quiet machine: the writer's time 71 / 62 s with SQLite's defaults, 62 /
            # 55 s with the cache and the journal in memory; in a second round 61 / 64 s before, 56 / 59 s with
            # those and the writer's own chunk ids (store.py), 52 / 49 s with the checkpoints too; the process's
            # system time 24 -> 13 s. The whole kernel's writes, one run each: 337 s with the cache and the journal,
            # 295 s with all. The cache grows only as pages are read, to at most CACHE_MB per connection.
            # A checkpoint writes each page the WAL holds once, however many transactions rewrote it since the
            # last: stage 1's new chunks land on random pages of the chunk-hash and symbol indexes, rewritten by
            # many batches, so fewer checkpoints write far less. The whole kernel's keyword stage (no text
            # index; one run each, alternating, quiet): a checkpoint every 16,384 pages (64 MB) 296 s, its
            # writes 219 s, 35.0 GB written; every 65,536 pages 295 s, 211 s, 30.3 GB; every 262,144 (1 GB)
            # 272 and 284 s, 184 and 194 s, 25.6 GB (a third run an hour later, the machine a fifth slower in
            # every step: 334 s). The WAL grows only to what is written between checkpoints
            # (up to 1 GB of disk beside a big index while it is written; a small repository's index never
            # reaches it) and is cut back to WAL_KEPT_BYTES after one.
            conn.execute(f"PRAGMA cache_size = {-CACHE_MB * 1024}")
            conn.execute("PRAGMA temp_store = MEMORY")
            conn.execute(f"PRAGMA wal_autocheckpoint = {CHECKPOINT_PAGES}")
            conn.execute(f"PRAGMA journal_size_limit = {WAL_KEPT_BYTES}")
        except BaseException:
            conn.close()
            raise
    return conn


def _repair_side_files(path: Path) -> None:
    """SQLite creates an index's -wal and -shm files with the index file's mode, so a search of a read-only
    (0444) index leaves read-only side files, which go on refusing every write after the user has made the
    index writable again. Side files of ours get the index file's mode back once it is writable."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return  # no index yet, or not ours to look at: opening it says what is wrong
    if not os.access(path, os.W_OK):
        return
    for suffix in ("-wal", "-shm"):
        side = Path(f"{path}{suffix}")
        with contextlib.suppress(OSError):  # gone meanwhile, or another user's: the open reports it
            if side.stat().st_uid == os.geteuid() and not os.access(side, os.W_OK):
                side.chmod(mode)


def query_value(conn: apsw.Connection, kind: type[_T], sql: str, args: apsw.Bindings = ()) -> _T:
    """The first column of the first row of `sql`, of the type `kind` its SQL guarantees (a count, a PRAGMA's
    number, a NOT NULL column): apsw types every value as any of SQLite's, so the query says which."""
    return cast(_T, conn.execute(sql, args).fetchall()[0][0])


def query_value_or_none(conn: apsw.Connection, kind: type[_T], sql: str, args: apsw.Bindings = ()) -> _T | None:
    """As query_value, for SQL that gives `kind` or NULL (an aggregate such as group_concat over no rows)."""
    return cast("_T | None", conn.execute(sql, args).fetchall()[0][0])


def use_wal(conn: apsw.Connection) -> None:
    """Switch to write-ahead logging (readers never wait for the writer). This rewrites the file header, so
    call it only once the file is known to be a Quarry index or new."""
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")


@contextlib.contextmanager
def write_transaction(conn: apsw.Connection) -> Iterator[None]:
    """One write transaction that takes the write lock up front.

    A deferred transaction that reads and then writes cannot wait for another process's writer: SQLite
    answers "database is locked" at once instead of calling the busy handler. BEGIN IMMEDIATE waits.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        # SQLite has already rolled back after some errors (a full disk, for one).
        if not conn.getautocommit():
            with contextlib.suppress(apsw.Error):
                conn.execute("ROLLBACK")
        raise


@contextlib.contextmanager
def translate_errors(path: Path | str) -> Iterator[None]:
    """Turn SQLite's errors into StoreErrors that say what is wrong with `path` and what to do."""
    try:
        yield
    except apsw.Error as exc:
        raise store_error(exc, Path(path)) from exc


def store_error(exc: apsw.Error, path: Path) -> StoreError:
    if isinstance(exc, apsw.IOError) and _log_cut_short(path):
        return StoreError(
            f"the write-ahead log {path}-wal of the index database {path} was deleted (or cut short) while "
            "another process had the index open; that process still holds the changes the log held: let it "
            "finish, or stop it normally rather than killing it, so that it writes them into the index, then "
            "try again"
        )
    if isinstance(exc, (apsw.NotADBError, apsw.CorruptError)):
        return StoreUnusable(path, f"is not a Quarry index or is damaged ({exc})")
    if isinstance(exc, (apsw.BusyError, apsw.LockedError)):
        return StoreError(
            f"the index database {path} is locked by another program (another Quarry indexing it?); "
            f"try again when it has finished, or wait longer by setting {BUSY_TIMEOUT_ENV}"
        )
    if isinstance(exc, apsw.FullError):
        return _full(path)
    if isinstance(exc, apsw.ConstraintError) and "FOREIGN KEY" in str(exc):
        # Rows this write refers to went in another process's transaction meanwhile: a folder removed from
        # the index while it was being indexed. The index is sound; nothing needs rebuilding.
        return ScopeRemoved(
            f"the folder being written to the index database {path} was removed from it meanwhile (by another "
            "window or command); index the folder again to add it back"
        )
    if isinstance(exc, apsw.ReadOnlyError):
        return StoreError(
            f"the index database {path} cannot be written ({exc}); make it and its folder writable",
            (Remedy.OTHER_STORE,),
        )
    if isinstance(exc, apsw.CantOpenError):
        return StoreError(f"cannot open the index database {path} ({exc}); {_open_advice(path)}", (Remedy.OTHER_STORE,))
    if _out_of_space(path):
        return _full(path)
    if isinstance(exc, apsw.IOError):
        return StoreError(
            f"reading or writing the index database {path} failed ({exc}); check that the disk "
            "has space and works, then run the command again"
        )
    return StoreError(f"the index database {path} gave an error ({exc})", (Remedy.REBUILD,))


def _log_cut_short(path: Path) -> bool:
    """Whether the -wal file holds fewer frames than the -shm file says were committed to it: it was deleted
    (or truncated) while another process had the index open, which goes on using the file it opened. SQLite
    trusts the -shm while another connection has it open, so reading a page from the missing frames fails as
    a short read: "disk I/O error", though the disk is not at fault."""
    wal = Path(f"{path}-wal")
    try:
        with open(f"{path}-shm", "rb") as shm:
            header = shm.read(2 * _WAL_INDEX_HEADER_BYTES)
        wal_bytes = wal.stat().st_size if wal.exists() else 0
    except OSError:
        return False
    first, second = header[:_WAL_INDEX_HEADER_BYTES], header[_WAL_INDEX_HEADER_BYTES:]
    if len(second) < _WAL_INDEX_HEADER_BYTES or first != second:  # none, or being rewritten: no verdict
        return False
    _, _, _, initialised, _, page_field, frames = _WAL_INDEX_HEADER.unpack_from(first)
    page_bytes = (page_field & 0xFE00) + ((page_field & 1) << 16)
    committed = _WAL_HEADER_BYTES + frames * (_FRAME_HEADER_BYTES + page_bytes)
    return initialised == 1 and frames > 0 and wal_bytes < committed  # no frames: an empty -wal is whole


def _full(path: Path) -> StoreError:
    return StoreError(
        f"the disk holding {path} is full (or the file reached its size limit); free some space "
        "and run the command again (files indexed so far are kept)"
    )


def _out_of_space(path: Path) -> bool:
    """Whether the store's disk is (nearly) full, or its files are at this process's file size limit."""
    try:
        if shutil.disk_usage(path.parent).free < LOW_SPACE_BYTES:
            return True
        if resource is None:
            return False
        limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
        files = [Path(f"{path}{suffix}") for suffix in ("", "-wal")]
        used = max((f.stat().st_size for f in files if f.exists()), default=0)
    except OSError:
        return False
    return limit != resource.RLIM_INFINITY and used + LOW_SPACE_BYTES >= limit


def _open_advice(path: Path) -> str:
    folder = path.parent
    if not folder.is_dir():
        return f"the folder {folder} does not exist; create it"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"the folder {folder} is not writable for you"
    return "check its permissions"


def move_aside(path: Path | str) -> Path:
    """Rename the database at `path` (with its -wal and -shm files, so they stay a pair) to
    `<name>.broken-YYYYmmdd-HHMMSS` beside it, and return the new path. Nothing is deleted."""
    path = Path(path)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.broken-{stamp}")
    n = 2
    while any(Path(f"{target}{suffix}").exists() for suffix in ("", "-wal", "-shm")):
        target = path.with_name(f"{path.name}.broken-{stamp}-{n}")
        n += 1
    for suffix in ("-wal", "-shm", ""):  # the database itself last: a crash midway leaves it where it was
        source = Path(f"{path}{suffix}")
        if source.exists():
            os.replace(source, f"{target}{suffix}")
    return target
