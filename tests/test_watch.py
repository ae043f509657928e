"""Live updates: the watcher turns file changes into incremental index runs."""

from __future__ import annotations

import json
import queue
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import pytest

from desktop_app.indexing.watcher import MAX_DELAY_S, QUIET_S, ChangeWatcher
from desktop_app.search.request import SearchRequest
from desktop_app.worker.worker import UPDATE

from .gitrepo import commit_all, git, init_repo
from .reliability import QUARRY, REPO, quarry

WAIT_S = 30  # generous: CI machines are slow; the measured figure is printed, not asserted


def wait_for(predicate, timeout=WAIT_S):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_an_edited_file_becomes_searchable(tmp_path, worker_for):
    root = tmp_path / "proj"
    root.mkdir()
    (root / "billing.py").write_text("def total(items):\n    return sum(items)\n")
    notices = []
    worker = worker_for(tmp_path / "index.db", on_change=notices.append)
    worker.index(root).result()
    worker.watch(root)
    saved = time.monotonic()
    (root / "billing.py").write_text(
        "def total(items):\n    return sum(items)\n\n\n"
        "def apply_walrus_discount(price):\n    # walrus members get a tenth off\n"
        "    return price * 0.9\n"
    )

    def found():
        results = worker.search(SearchRequest("walrus discount", roots=(str(root),), mode="exact")).result().results
        return bool(results) and results[0].symbol_name == "apply_walrus_discount"

    assert wait_for(found)
    print(f"edit searchable after {time.monotonic() - saved:.2f}s")
    (root / "billing.py").unlink()
    assert wait_for(
        lambda: not worker.search(SearchRequest("walrus discount", roots=(str(root),), mode="exact")).result().results
    )
    updates = [n for n in notices if n.operation == UPDATE]
    assert updates and all(n.roots == (str(root.resolve()),) for n in updates)
    assert all(not isinstance(n.result, BaseException) for n in updates)


class _FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_of_changes_is_reported_once_when_the_folder_goes_quiet(tmp_path):
    """The debounce, on an injected clock: 1,000 events 1 ms apart are one report, made only once the
    folder has been quiet for QUIET_S; continuous churn is reported every MAX_DELAY_S."""
    clock = _FakeClock()
    reports: list[tuple[str, set[str]]] = []
    arrived = threading.Event()
    watcher = ChangeWatcher(lambda root, paths: (reports.append((root, paths)), arrived.set()), clock=clock)
    root = str(tmp_path.resolve())
    try:
        for i in range(1000):
            watcher._record(root, f"{root}/pkg{i // 100}/m{i}.py")
            clock.now += 0.001
        with watcher._lock:
            assert watcher._take_due(clock.now + QUIET_S - 0.01) == []  # not quiet long enough yet
        clock.now += QUIET_S
        assert arrived.wait(WAIT_S)
        assert len(reports) == 1 and reports[0][0] == root and len(reports[0][1]) == 1000

        arrived.clear()
        started = clock.now
        while clock.now - started < MAX_DELAY_S:  # an event every 0.1 s: never quiet
            with watcher._lock:
                assert watcher._take_due(clock.now) == []
            watcher._record(root, f"{root}/busy.py")
            clock.now += 0.1
        assert arrived.wait(WAIT_S)
        assert len(reports) == 2 and reports[1][1] == {f"{root}/busy.py"}
    finally:
        watcher.close()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_branch_switch_of_1000_files_is_coalesced_and_fully_indexed(tmp_path, worker_for):
    """End to end with real git and real file events: how the burst splits into reports depends on how fast
    git writes (a loaded machine may pause longer than QUIET_S), so this asserts the outcome: every file is
    re-indexed, by a handful of runs rather than one per file."""
    root = tmp_path / "repo"
    for i in range(1000):
        d = root / f"pkg{i // 100}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"m{i}.py").write_text(f"RATE_{i} = {i}\n")
    init_repo(root)
    git(root, "checkout", "-q", "-b", "other")
    for i in range(1000):
        (root / f"pkg{i // 100}" / f"m{i}.py").write_text(f"RATE_{i} = {i + 1}  # revised\n")
    commit_all(root, "revise every rate")
    git(root, "checkout", "-q", "main")
    runs = []
    all_seen = threading.Event()

    def indexed(notice) -> None:
        if notice.operation != UPDATE:
            return
        runs.append(notice.result)
        if sum(getattr(r, "files_changed", 0) for r in runs) >= 1000:
            all_seen.set()

    worker = worker_for(tmp_path / "index.db", on_change=indexed)
    worker.index(root).result()
    worker.watch(root)  # the watches are in place when it returns
    git(root, "checkout", "-q", "other")
    assert all_seen.wait(WAIT_S * 4), runs
    assert all(not isinstance(r, BaseException) for r in runs), runs
    assert sum(r.files_changed for r in runs) == 1000  # each file re-indexed once
    assert len(runs) <= 10, f"{len(runs)} runs for one checkout: the burst was not coalesced"
    hit = worker.search(SearchRequest("revised", roots=(str(root),), mode="exact", k=1)).result().results
    assert hit and "revised" in hit[0].snippet


class _OutputLines:
    """A process's output lines as they come, read on a thread so that waiting for one can give up."""

    def __init__(self, stream: IO[str]):
        self.seen: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)  # the process closed its output

    def until(self, wanted: Callable[[str], bool], timeout: float = 120) -> str:
        """The next line `wanted` accepts; the timeout only guards against a process that never writes it."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no such line within {timeout}s; the output so far: {self.seen}") from None
            if line is None:
                raise AssertionError(f"the process ended first; its output: {self.seen}")
            self.seen.append(line)
            if wanted(line):
                return line


def _found(word: str, root: Path, db: Path) -> list[str]:
    """The files of `root` a search for `word` finds."""
    proc = quarry("search", word, "--root", root, "--db", db, "--mode", "exact", "--json")
    assert proc.returncode == 0, proc.stderr
    return [hit["path"] for hit in json.loads(proc.stdout)["results"]]


@pytest.mark.parametrize("how", ["moved away, made again at once", "deleted, made again later"])
def test_index_watch_follows_its_folder_moved_away_and_made_again(tmp_path, how):
    """`quarry index ROOT --watch` kept following the moved directory (inotify watches an inode, and
    watchdog ignores its IN_MOVE_SELF), so a folder made again at ROOT was never indexed. Now it says the
    folder went, keeps its index meanwhile, and indexes the folder at ROOT when there is one again."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "billing.py").write_text("def total_heron_fees(items):\n    return sum(items)\n")
    (root / "shipping.py").write_text("def ship(parcel):\n    return parcel\n")
    db = tmp_path / "index.db"
    watch = subprocess.Popen(
        [*QUARRY, "index", str(root), "--watch", "--model", "fast", "--db", str(db), "--json", "--quiet"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # the stats (stdout) and the watch's news (stderr) in the order written
        text=True,
    )
    output = _OutputLines(watch.stdout)
    try:
        output.until(lambda line: line.startswith(f"watching {root}"))
        if how.startswith("moved"):
            root.rename(tmp_path / "proj.old")
        else:
            shutil.rmtree(root)
        if how.endswith("later"):
            output.until(lambda line: f"{root} was moved or deleted" in line)
            assert _found("heron", root, db) == ["billing.py"]  # the index keeps the folder's files meanwhile
        root.mkdir()
        (root / "aviary.py").write_text("def count_kestrel_cages(cages):\n    return len(cages)\n")
        # The update of the folder now at ROOT, with the new file (one run, or two if the file came after
        # the folder's new watch was in place).
        output.until(lambda line: line.startswith("{") and json.loads(line)["files_indexed"] == 1)
        assert _found("kestrel", root, db) == ["aviary.py"]
    finally:
        watch.terminate()
        watch.wait(timeout=30)
    assert any(f"quarry: {root} was moved or deleted" in line for line in output.seen), output.seen
    assert any(f"quarry: {root} is back; indexing it" in line for line in output.seen), output.seen
