"""Whether an index file is undamaged: PRAGMA quick_check on a connection of its own, and a memory of the
files found sound, so that a big index is read whole once after each change rather than by every command.

Why a connection of its own: FTS5 keeps the structure of its tables per connection, and its part of
quick_check reads that copy without looking for newer commits. On a long-lived connection that had read the
keyword index, every check after another process's commit said "fts5: corruption found reading blob …"
(813 of 1,195 checks while another process indexed; 0 of 683 on a new connection each time), so a window or
`quarry mcp` open beside a CLI index called a healthy index damaged.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from desktop_app.cache_folder import user_cache_folder

from ..errors import StoreUnusable
from ..rows import PageCheck
from .connection import open_connection, query_value, translate_errors

VERDICTS_FOLDER = "index-verdicts"
# Damage (a failing disk, a stray write) can be on any page, and only reading every page finds it. PRAGMA
# quick_check measured 1.1-1.3 ms per MB with the file in the page cache and 3-4 ms per MB read from the disk:
# 92 ms / 346 ms for an 83 MB index (28,000 chunks), 0.85 s / 2.0 s for a 684 MB one (230,000 chunks), where a
# whole `quarry scopes` takes 0.4 s. quick_check(N) stops after N errors, so on a sound file it reads as much,
# and SQLite itself already refuses a file shorter than its header's page count. So an open checks every page
# of an index up to this size (about 40 ms, or 130 ms from the disk); a bigger index is checked when it is not
# exactly as it was last found sound (known_sound), so every command, a search's history write
# included, learns of damage before it writes, and a big index is read whole once per change, not by every
# command. Every index run, re-embed or removal checks again first (SqliteStore.check_intact), on the same
# terms: a whole read unless the file is as it was last found sound.
OPEN_CHECK_MAX_BYTES = 32 << 20
# A verdict is kept only for an index over that size (a smaller one is checked at every open anyway), after a
# check, after each write operation of the worker (remember_intact: an index run, a watched folder's update)
# and when a process that wrote closes the index: not after each write transaction, which would add a file
# write to every batch of an index run and to every search's history row.
# How often a check of a bigger index says it is still reading: the Linux kernel's 4.1 GB index took 16 s with
# the file in the page cache, 25-37 s from the disk, said nowhere before the first progress line.
CHECK_TICK_S = 1.0


def check_pages(path: Path, on_progress: Callable[[PageCheck], None] | None = None) -> None:
    """Raise StoreUnusable when PRAGMA quick_check, on a new read-only connection, finds any page of the
    database at `path` damaged; remember the file as sound otherwise. A file over OPEN_CHECK_MAX_BYTES is
    reported to `on_progress` (from another thread while it is read): at the start, each CHECK_TICK_S, and at
    the end. SQLite's progress handler cannot tell: it is not called inside the one step that reads the pages."""
    signature = file_signature(path)
    conn = open_connection(path, readonly=True)
    try:
        with translate_errors(path), _reported(path, on_progress):
            verdict = query_value(conn, str, "PRAGMA quick_check(1)")
    finally:
        conn.close()
    if verdict != "ok":
        forget(path)
        # The first problem, on one line: SQLite prefixes it with a "*** in database main ***" line.
        raise StoreUnusable(path, f"is damaged ({verdict.splitlines()[-1].strip()})")
    # The signature from before the check: a change made while it read is not taken for checked.
    if signature is not None and signature == file_signature(path):
        _write_verdict(path, signature)


@contextlib.contextmanager
def _reported(path: Path, on_progress: Callable[[PageCheck], None] | None) -> Iterator[None]:
    size = _size_with_log(path)
    if on_progress is None or size <= OPEN_CHECK_MAX_BYTES:
        yield
        return
    started = time.monotonic()
    finished = threading.Event()

    def tick() -> None:
        while not finished.wait(CHECK_TICK_S):
            on_progress(PageCheck(size, time.monotonic() - started))

    on_progress(PageCheck(size, 0.0))
    ticker = threading.Thread(target=tick, name="quarry-check-ticks", daemon=True)
    ticker.start()
    try:
        yield
    finally:
        finished.set()
        ticker.join()
        on_progress(PageCheck(size, time.monotonic() - started, done=True))


def _size_with_log(path: Path) -> int:
    size = 0
    for name in (str(path), f"{path}-wal"):
        with contextlib.suppress(OSError):
            size += os.stat(name).st_size
    return size


def file_signature(path: Path) -> str | None:
    """Identity, size and change times of the index file and its write-ahead log: any write, by SQLite or
    by anything else, changes it. Of the log, not its status change time (ctime): SQLite running as root
    gives the log its database's owner at every connection's open (quick_check's own included), which moves
    it, so no verdict was ever kept for an index in WAL mode; and an empty log counts as none. None when the
    file cannot be looked at."""
    parts = []
    for name in (str(path), f"{path}-wal"):
        try:
            st = os.stat(name)
        except FileNotFoundError:
            parts.append("-")
            continue
        except OSError:
            return None
        if name == str(path):
            parts.append(f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}")
        else:
            parts.append(f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}" if st.st_size else "-")
    return " ".join(parts)


def needs_check(path: Path, size: int) -> bool:
    """Whether an open of the index (`size` bytes, its WAL's pages included) must read every page first."""
    return size <= OPEN_CHECK_MAX_BYTES or not known_sound(path)


def known_sound(path: Path) -> bool:
    """Whether the file is exactly as it was when last found sound (checked, or written by a Quarry process
    that had checked it before writing)."""
    signature = file_signature(path)
    if signature is None:
        return False
    try:
        return _verdict_file(path).read_text(encoding="utf-8") == signature
    except (OSError, UnicodeDecodeError):
        return False


def remember_sound(path: Path) -> None:
    """Record the file as it is now as sound: called after this process's own writes to a file it checked
    before writing. A Quarry process writing beside it checked the file before writing too."""
    signature = file_signature(path)
    if signature is not None:
        _write_verdict(path, signature)


def forget(path: Path) -> None:
    with contextlib.suppress(OSError):
        _verdict_file(path).unlink()


def _verdict_file(path: Path) -> Path:
    key = hashlib.sha256(os.fsencode(path.resolve())).hexdigest()[:32]
    return user_cache_folder() / VERDICTS_FOLDER / key


def _write_verdict(path: Path, signature: str) -> None:
    """Best effort: a verdict that cannot be kept (a read-only home) only costs checking again next time."""
    try:
        if path.stat().st_size <= OPEN_CHECK_MAX_BYTES:
            return  # read whole at every open: a verdict would never be asked for
    except OSError:
        return
    target = _verdict_file(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=target.parent, delete=False, encoding="utf-8") as handle:
            written = Path(handle.name)
            handle.write(signature)
    except OSError:
        return
    try:
        written.replace(target)  # whole or absent, also with two processes writing
    except OSError:
        written.unlink(missing_ok=True)
