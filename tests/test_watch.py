"""Live updates: the watcher turns file changes into incremental index runs."""

from __future__ import annotations

import shutil
import threading
import time

import pytest

from desktop_app.search.request import SearchRequest

from .gitrepo import commit_all, git, init_repo

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
    worker = worker_for(tmp_path / "index.db")
    worker.index(root).result()
    runs = []
    worker.watch(root, runs.append)
    saved = time.monotonic()
    (root / "billing.py").write_text("def total(items):\n    return sum(items)\n\n\n"
                                     "def apply_walrus_discount(price):\n    # walrus members get a tenth off\n"
                                     "    return price * 0.9\n")

    def found():
        results = worker.search(SearchRequest("walrus discount", roots=(str(root),), mode="exact")).result().results
        return bool(results) and results[0].symbol_name == "apply_walrus_discount"

    assert wait_for(found)
    print(f"edit searchable after {time.monotonic() - saved:.2f}s")
    (root / "billing.py").unlink()
    assert wait_for(lambda: not worker.search(SearchRequest("walrus discount", roots=(str(root),),
                                                            mode="exact")).result().results)
    assert all(not isinstance(r, BaseException) for r in runs)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_branch_switch_of_1000_files_is_one_batch(tmp_path, worker_for):
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
    worker = worker_for(tmp_path / "index.db")
    worker.index(root).result()
    runs = []
    done = threading.Event()
    worker.watch(root, lambda r: (runs.append(r), done.set()))
    time.sleep(0.3)  # let the observer settle before the burst
    git(root, "checkout", "-q", "other")
    assert done.wait(WAIT_S)
    assert wait_for(lambda: sum(getattr(r, "files_changed", 0) for r in runs) >= 1000, timeout=WAIT_S)
    first = runs[0]
    assert not isinstance(first, BaseException)
    assert first.files_changed == 1000, "the whole checkout should land in the first re-index"
    assert len(runs) <= 2  # at most one follow-up run for events that arrived while it ran
    hit = worker.search(SearchRequest("revised", roots=(str(root),), mode="exact", k=1)).result().results
    assert hit and "revised" in hit[0].snippet
