"""Part 3 of the reliability issue: bad databases explain themselves and are never overwritten unasked.

Every case runs the real `quarry` command on a real bad file: one line on stderr saying what to do, exit 1,
and the user's file byte for byte as it was until they ask for `--rebuild`, which moves it aside.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import apsw
import pytest

from desktop_app.search.request import SearchRequest
from desktop_app.store.errors import StoreUnusable
from desktop_app.store.rows import PageCheck
from desktop_app.store.sqlite import soundness
from desktop_app.store.sqlite.connection import move_aside
from desktop_app.wording import file_size
from desktop_app.worker import ops
from desktop_app.worker.worker import EngineConfig, Worker

from .reliability import (
    QUARRY,
    WITHOUT_OVERRIDE,
    check_invariants,
    chunks_without_vectors,
    damage_middle,
    grow_past_the_open_check,
    needs_setpriv,
    one_line_error,
    quarry,
    quarry_as_nobody,
    write_tree,
)

PAGE = 4096
FILES = 300  # one chunk each: two write batches
MODEL = "all-MiniLM-L6-v2-int8"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _corrupt(db: Path) -> None:
    """Overwrite pages 2-4 (the first tables' roots) with garbage, as a failing disk or a stray write would."""
    with open(db, "r+b") as f:
        f.seek(PAGE)
        f.write(random.Random(7).randbytes(3 * PAGE))


def _set_user_version(db: Path, version: int) -> None:
    conn = apsw.Connection(str(db))
    conn.execute(f"PRAGMA user_version = {version}")
    conn.close()


def _broken_copies(db: Path) -> list[Path]:
    return sorted(db.parent.glob(db.name + ".broken-*"))


@pytest.fixture
def small_folder(tmp_path) -> Path:
    """One file to index: enough for a write, quick to embed."""
    folder = tmp_path / "small"
    folder.mkdir()
    (folder / "late.py").write_text("def arrived_late():\n    return 'after the lock'\n")
    return folder


@pytest.mark.parametrize(
    "damage, says",
    [
        (_corrupt, "is damaged"),
        (lambda db: db.write_text("my notes, not a database\n" * 200), "not a Quarry index"),
        (lambda db: _set_user_version(db, 99), "newer Quarry (schema 99"),
    ],
    ids=["garbage-pages", "not-a-database", "newer-schema"],
)
def test_unusable_store_is_explained_kept_and_moved_aside_only_on_rebuild(
    index_copy, mixed_root, small_folder, damage, says
):
    damage(index_copy)
    before = _digest(index_copy)
    for args in (("search", "retry", "--root", mixed_root), ("index", small_folder)):
        one_line_error(quarry(*args, "--db", index_copy), 1, "--rebuild")
    assert _digest(index_copy) == before and not _broken_copies(index_copy)

    rebuilt = quarry("index", small_folder, "--db", index_copy, "--rebuild", "--json", "--quiet")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert says in rebuilt.stderr and "moved it aside" in rebuilt.stderr
    [moved] = _broken_copies(index_copy)
    assert _digest(moved) == before
    assert json.loads(rebuilt.stdout)["files_indexed"] == 1
    check_invariants(index_copy)


def test_damage_inside_the_index_stops_every_command_before_it_writes(index_copy, mixed_root):
    """With 8 KB of garbage in the middle of the file (here the vectors, which only a search reads), `index`
    exited 0 and wrote into the damaged file and `scopes` listed it as healthy."""
    damage_middle(index_copy)
    before = (_digest(index_copy), index_copy.stat().st_mtime_ns)
    for args in (("index", mixed_root, "--quiet"), ("scopes",)):
        one_line_error(quarry(*args, "--db", index_copy), 1, "is damaged (", "--rebuild")
    assert (_digest(index_copy), index_copy.stat().st_mtime_ns) == before and not _broken_copies(index_copy)


def test_rebuild_keeps_a_healthy_store_and_refuses_another_programs_database(tmp_path, index_copy, mixed_root):
    kept = quarry("index", mixed_root, "--db", index_copy, "--rebuild", "--quiet")  # nothing to embed
    assert kept.returncode == 0 and "healthy" in kept.stderr and not _broken_copies(index_copy)

    foreign = tmp_path / "places.sqlite"
    conn = apsw.Connection(str(foreign))
    conn.execute("CREATE TABLE bookmarks (url TEXT); INSERT INTO bookmarks VALUES ('https://example.org')")
    conn.close()
    before = _digest(foreign)
    for args in (("index", mixed_root), ("index", mixed_root, "--rebuild")):
        one_line_error(quarry(*args, "--db", foreign), 1, "another program's SQLite database")
    assert _digest(foreign) == before and not _broken_copies(foreign)


def test_move_aside_takes_the_wal_along_and_never_overwrites(tmp_path):
    db = tmp_path / "index.db"
    for suffix, content in (("", b"db"), ("-wal", b"wal"), ("-shm", b"shm")):
        Path(f"{db}{suffix}").write_bytes(content)
    first = move_aside(db)
    db.write_bytes(b"second")
    second = move_aside(db)
    assert first != second and not db.exists()
    assert [Path(f"{first}{s}").read_bytes() for s in ("", "-wal", "-shm")] == [b"db", b"wal", b"shm"]
    assert second.read_bytes() == b"second" and not Path(f"{second}-wal").exists()


@pytest.fixture
def world_tmp() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="quarry-rel-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="drops to 'nobody' from root")
def test_read_only_locations_are_explained(world_tmp, mixed_index, mixed_root):
    # 'nobody' may read but not write this root-owned folder and the index in it.
    shutil.copy(mixed_index[0], world_tmp / "index.db")
    (world_tmp / "index.db").chmod(0o644)
    before = _digest(world_tmp / "index.db")
    one_line_error(
        quarry_as_nobody("index", mixed_root, "--db", world_tmp / "index.db"), 1, "cannot be written", "--db"
    )
    one_line_error(quarry_as_nobody("scopes", "--db", world_tmp / "new.db"), 1, "not writable", "--db")
    one_line_error(quarry_as_nobody("scopes", "--db", world_tmp / "sub" / "new.db"), 1, "cannot create the folder")
    assert _digest(world_tmp / "index.db") == before


@dataclass
class SmallDisk:
    """A folder where writes run out of space for real, and how to give them room again."""

    kind: str
    folder: Path
    preexec: Callable[[], None] | None
    make_room: Callable[[], None]


def _file_size_limit(limit: int) -> Callable[[], None]:
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # so a write past the limit fails with EFBIG instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


@pytest.fixture(params=["tmpfs", "file-size-limit"])
def small_disk(request, tmp_path) -> Iterator[SmallDisk]:
    folder = tmp_path / "disk"
    folder.mkdir()
    if request.param == "file-size-limit":
        disk = SmallDisk("file-size-limit", folder, _file_size_limit(1_500_000), lambda: None)
        yield disk
        return
    # A 1 MB tmpfs fills before the test tree is indexed (its vectors take a byte a dimension, so 2 MB no longer
    # filled): a real ENOSPC from the kernel.
    if (
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder)], capture_output=True).returncode
        != 0
    ):
        pytest.skip("cannot mount a tmpfs here (needs root on Linux)")
    disk = SmallDisk(
        "tmpfs", folder, None, lambda: subprocess.run(["mount", "-o", "remount,size=64m", str(folder)], check=True)
    )
    try:
        yield disk
    finally:
        subprocess.run(["umount", str(folder)], check=True)


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    return write_tree(tmp_path_factory.mktemp("full") / "tree", FILES, "quota")


@pytest.mark.skipif(sys.platform != "linux", reason="tmpfs and RLIMIT_FSIZE behave this way on Linux")
def test_full_disk_is_explained_and_the_next_run_resumes(small_disk, tree):
    db = small_disk.folder / "index.db"
    full = quarry("index", tree, "--db", db, "--quiet", preexec_fn=small_disk.preexec)
    one_line_error(full, 1, "is full", "free some space")
    kept = check_invariants(db)
    # The disk filled before the end: while files were written, or while their vectors were.
    unembedded = chunks_without_vectors(db, MODEL) + FILES - kept  # one chunk a file
    assert unembedded > 0
    small_disk.make_room()
    resumed = quarry("index", tree, "--db", db, "--quiet", "--json")
    assert resumed.returncode == 0, resumed.stderr
    stats = json.loads(resumed.stdout)
    assert (stats["files_changed"], stats["files_indexed"], stats["chunks_embedded"]) == (
        FILES - kept,
        FILES,
        unembedded,
    )
    assert check_invariants(db) == FILES
    assert chunks_without_vectors(db, MODEL) == 0


class _LockHolder:
    """Another process holding the store's write lock (BEGIN EXCLUSIVE) until told to let go."""

    def __init__(self, db: Path):
        script = (
            "import apsw, sys; c = apsw.Connection(sys.argv[1]); c.execute('BEGIN EXCLUSIVE'); "
            "c.execute('DELETE FROM history'); print('locked', flush=True); sys.stdin.read()"
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-c", script, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout.readline().strip() == "locked"

    def release(self) -> None:
        self.proc.stdin.close()
        assert self.proc.wait(timeout=30) == 0


def test_a_store_locked_by_another_process_is_explained_and_reads_still_work(index_copy, mixed_root, small_folder):
    holder = _LockHolder(index_copy)
    try:
        env = {"QUARRY_BUSY_TIMEOUT_MS": "300"}
        one_line_error(
            quarry("index", small_folder, "--db", index_copy, "--quiet", env=env),
            1,
            "locked by another program",
            "QUARRY_BUSY_TIMEOUT_MS",
        )
        found = quarry("search", "LRUCache", "--root", mixed_root, "--db", index_copy, "--json", env=env)
        assert found.returncode == 0 and json.loads(found.stdout)["results"][0]["path"] == "src/cache.py"
    finally:
        holder.release()
    resumed = quarry("index", small_folder, "--db", index_copy, "--quiet", "--json")
    assert json.loads(resumed.stdout)["files_changed"] == 1


@pytest.mark.parametrize("value", ["soon", "-5", "2147483648"])
def test_a_bad_busy_timeout_setting_is_bad_input(index_copy, value):
    one_line_error(
        quarry("scopes", "--db", index_copy, env={"QUARRY_BUSY_TIMEOUT_MS": value}), 2, "QUARRY_BUSY_TIMEOUT_MS"
    )


@needs_setpriv
def test_side_files_a_read_only_search_left_do_not_block_writes_once_the_index_is_writable(mixed_root, index_copy):
    """SQLite makes -wal and -shm with the index file's mode: a search of a 0444 index left a 0444 -shm that
    refused every later write, even after the user made the index writable again."""
    root, db = mixed_root, index_copy
    as_owner = [*WITHOUT_OVERRIDE, *QUARRY]
    db.chmod(0o444)
    searched = subprocess.run(
        [*as_owner, "search", "retry", "--root", root, "--db", db], capture_output=True, text=True
    )
    assert searched.returncode == 0, searched.stderr
    db.chmod(0o644)  # the user fixes the permissions
    indexed = subprocess.run([*as_owner, "index", root, "--db", db, "--quiet"], capture_output=True, text=True)
    assert indexed.returncode == 0, indexed.stderr
    for side in (Path(f"{db}-wal"), Path(f"{db}-shm")):
        assert not side.exists() or side.stat().st_mode & 0o200, side


def test_damage_in_an_index_too_big_for_the_open_check_is_still_found_before_anything_writes(index_copy, mixed_root):
    """Over 32 MB an open did not check the pages: `scopes` listed a damaged index without a word, and
    `search` answered and wrote its history into the damaged file. Now a big index is checked whenever it
    is not exactly as it was last found sound, so a damage made after a good verdict is found too."""
    grow_past_the_open_check(index_copy)
    healthy = quarry("search", "retry", "--root", mixed_root, "--db", index_copy)
    assert healthy.returncode == 0, healthy.stderr
    assert soundness.known_sound(index_copy)  # this search's own write is remembered as sound

    damage_middle(index_copy)
    before = (_digest(index_copy), index_copy.stat().st_mtime_ns)
    for args in (("scopes",), ("search", "retry", "--root", mixed_root), ("history",)):
        proc = quarry(*args, "--db", index_copy)
        *checking, proc.stderr = proc.stderr.splitlines()  # the whole read's start and end said, then the error
        assert {line.split(" (")[0] for line in checking[:-1]} == {"quarry: checking the whole index"}
        assert checking[-1].startswith("quarry: checked the whole index (")
        one_line_error(proc, 1, "is damaged (", "--rebuild")
    assert (_digest(index_copy), index_copy.stat().st_mtime_ns) == before and not _broken_copies(index_copy)


def test_a_big_index_read_whole_before_use_says_so_each_second_and_when_done(index_copy, mixed_root):
    """The Linux kernel's 4.1 GB index, copied, was read whole for 16 s (25-37 s from the disk) before a search or
    an index run said anything. Now the read is said at its start, each second and at its end; an index found
    sound is not read again, and says nothing."""
    grow_past_the_open_check(index_copy)
    wal = Path(f"{index_copy}-wal")
    size = file_size(index_copy.stat().st_size + (wal.stat().st_size if wal.exists() else 0))
    first = quarry("search", "retry", "--root", mixed_root, "--db", index_copy)
    assert first.returncode == 0, first.stderr
    first_line, *each_second, last_line = first.stderr.splitlines()
    assert first_line == (
        f"quarry: checking the whole index ({size}) for damage, as it is not as Quarry last left it (copied, changed "
        "by another program, or a run cut off): 0 s"
    )
    assert re.fullmatch(rf"quarry: checked the whole index \({size}\) for damage in \d+ s", last_line), last_line
    for line in each_second:
        assert re.fullmatch(rf"quarry: checking the whole index \({size}\) for damage: \d+ s", line), line
    again = quarry("search", "retry", "--root", mixed_root, "--db", index_copy)
    assert again.returncode == 0 and "the whole index" not in again.stderr, again.stderr
    quiet = quarry("index", mixed_root, "--db", index_copy, "--quiet")  # --quiet says nothing of it either
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr


def test_a_long_lived_process_does_not_call_the_index_damaged_after_another_process_wrote_it(
    index_copy, mixed_root, tmp_path
):
    """A window or `quarry mcp` kept one connection open; after a CLI index in another process wrote the
    keyword index, its check before the next write said "damaged (fts5: corruption found reading blob …)"
    of a healthy file: FTS5's part of quick_check read the connection's stale copy of the table's structure."""
    other = write_tree(tmp_path / "other", FILES, "zebra")
    worker = Worker(EngineConfig(index_copy)).start()
    try:
        assert worker.run(ops.search(SearchRequest("retry with backoff", roots=(str(mixed_root),)))).result().results
        indexed = quarry("index", other, "--db", index_copy, "--until", "keyword", "--quiet")
        assert indexed.returncode == 0, indexed.stderr
        assert worker.run(ops.index(mixed_root)).result().files_indexed > 0
        found = worker.run(ops.search(SearchRequest("zebra record 299", roots=(str(other),), mode="text"))).result()
        assert [r.path for r in found.results] == ["pkg11/zebra_299.py"]
    finally:
        worker.close()


def test_a_big_index_found_sound_is_read_whole_again_only_after_something_else_changed_it(
    index_copy, mixed_root, monkeypatch
):
    """A no-op index run of the Linux kernel's 9 GB index read every page before writing (46 of its 60 s), though
    the file was exactly as the previous run had left it. Now a write reads a big index whole only when it is not
    as a Quarry process last found it sound: its own writes are remembered as sound, damage from outside is not.
    A session that had written and then found damage recorded the file as sound when it closed; no longer."""
    grow_past_the_open_check(index_copy)
    reads: list[Path] = []
    read_whole = soundness.check_pages

    def counted(path: Path, on_progress: Callable[[PageCheck], None] | None = None) -> None:
        reads.append(path)
        read_whole(path, on_progress)

    monkeypatch.setattr(soundness, "check_pages", counted)
    other = apsw.Connection(str(index_copy))  # another process's writes, still in the log, as a killed writer's
    other.execute("PRAGMA wal_autocheckpoint = 0")
    other.execute(
        "INSERT INTO history (at, query, scope_root, mode, result_count, top_score, duration_ms) "
        "VALUES (1, 'q', '', 'hybrid', 0, 0, 0)"
    )
    assert Path(f"{index_copy}-wal").stat().st_size > 0
    worker = Worker(EngineConfig(index_copy)).start()
    try:
        assert len(reads) == 1  # the open: grown by hand, so not known to be sound
        for _ in range(2):
            assert worker.run(ops.index(mixed_root)).result().files_unchanged > 0
        assert len(reads) == 1
        damage_middle(index_copy)  # while the window is open, say
        with pytest.raises(StoreUnusable, match="is damaged"):
            worker.run(ops.index(mixed_root)).result()
        assert len(reads) == 2
    finally:
        worker.close()
        other.close()
    assert not soundness.known_sound(index_copy)
