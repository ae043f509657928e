"""Part 4 of the reliability issue: several real processes on one store.

Two `quarry index` runs write different folders into one store while a third process searches it in a
loop. Writers queue for SQLite's write lock (BEGIN IMMEDIATE and a busy timeout), readers never wait in
WAL mode, and the searching process's in-memory vectors catch up through PRAGMA data_version.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_app.store.errors import StoreError
from desktop_app.store.rows import FileWrite
from desktop_app.store.sqlite.store import SqliteStore

from .reliability import QUARRY, REPO, check_invariants, one_line_error, quarry, write_tree

FILES = 300  # per folder: two write batches each

# A long-lived searching process, as a second app instance would be: searches once before the indexers start,
# then until told to stop, and reports what it saw. Each round runs a hybrid search of the already indexed
# repository and semantic searches for the two folders being indexed, which only the refreshed in-memory
# vectors can answer.
_SEARCHER = """
import json, sys
from pathlib import Path
from desktop_app.search.request import SearchRequest
from desktop_app.worker.worker import EngineConfig, Worker
from desktop_app.worker import ops

db, mixed, stop = sys.argv[1], sys.argv[2], Path(sys.argv[3])
worker = Worker(EngineConfig(Path(db))).start()

def top_roots(query):
    response = worker.run(ops.search(SearchRequest(query, all_scopes=True, mode="semantic", k=3))).result()
    return [r.scope_root for r in response.results]

report = {"rounds": 0, "errors": [], "first": None, "last": None}

def search_round():
    try:
        top = worker.run(ops.search(SearchRequest("retry failed http requests", roots=(mixed,)))).result().results[0]
        assert top.path == "src/http_client.py", top.path
        seen = {"heron": top_roots("heron record"), "walrus": top_roots("walrus record")}
        report["first"] = report["first"] or seen
        report["last"] = seen
    except Exception as exc:
        report["errors"].append(f"{type(exc).__name__}: {exc}")
    report["rounds"] += 1

search_round()  # before the indexers start: the folders are not in the store yet
print("ready", flush=True)
while True:
    last_round = stop.exists()
    search_round()
    if last_round:
        break
worker.close()
print(json.dumps(report), flush=True)
"""


def test_two_indexers_and_a_searcher_share_one_store(tmp_path, mixed_root, index_copy):
    db = index_copy
    herons = write_tree(tmp_path / "herons", FILES, "heron").resolve()
    walruses = write_tree(tmp_path / "walruses", FILES, "walrus").resolve()
    stop = tmp_path / "stop"

    searcher = subprocess.Popen(
        [sys.executable, "-c", _SEARCHER, str(db), str(mixed_root), str(stop)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert searcher.stdout.readline().strip() == "ready", searcher.stderr.read()
    indexers = [
        subprocess.Popen(
            [*QUARRY, "index", str(root), "--db", str(db), "--json"],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for root in (herons, walruses)
    ]
    outputs = [p.communicate(timeout=300) for p in indexers]
    stop.touch()
    report_line, searcher_err = searcher.communicate(timeout=120)

    for proc, (out, err) in zip(indexers, outputs, strict=True):
        assert proc.returncode == 0 and "locked" not in err, err
        assert json.loads(out.strip().splitlines()[-1])["files_indexed"] == FILES
    assert searcher.returncode == 0, searcher_err
    report = json.loads(report_line)
    assert report["errors"] == [] and report["rounds"] >= 2, report
    assert str(herons) not in report["first"]["heron"] and str(walruses) not in report["first"]["walrus"]
    assert set(report["last"]["heron"]) == {str(herons)} and set(report["last"]["walrus"]) == {str(walruses)}
    assert check_invariants(db) == 9 + 2 * FILES


# Another instance writing all the time: it holds the write lock 200 ms of every 250 ms until stdin closes.
_BUSY_WRITER = """
import sys, threading, time
import apsw
conn = apsw.Connection(sys.argv[1])
conn.setbusytimeout(60_000)  # it queues for the lock like any writer; the index run holds it between its waits
done = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
print("writing", flush=True)
while not done.is_set():
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("INSERT INTO meta (key, value) VALUES ('busy', 'x') ON CONFLICT DO UPDATE SET value = 'y'")
    time.sleep(0.2)
    conn.execute("COMMIT")
    time.sleep(0.05)
"""


def test_an_index_waits_for_a_busy_writer_instead_of_failing(tmp_path, index_copy):
    """A transaction that reads before it writes cannot wait for another writer (SQLite answers "database is
    locked" at once), so every store write must take the lock up front."""
    db = index_copy
    folder = write_tree(tmp_path / "notes", 40, "note")
    writer = subprocess.Popen(
        [sys.executable, "-c", _BUSY_WRITER, str(db)],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert writer.stdout.readline().strip() == "writing"
        index = subprocess.run(
            [*QUARRY, "index", str(folder), "--db", str(db), "--json", "--quiet"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        writer.stdin.close()
        assert writer.wait(timeout=30) == 0
    assert index.returncode == 0, index.stderr
    assert json.loads(index.stdout)["files_indexed"] == 40


def test_a_scope_another_process_created_meanwhile_is_shared_not_a_unique_key_failure(tmp_path, mixed_root):
    """Two first indexes of one folder on a new store: both looked, found no scope, and create it. The second
    takes the first's scope (it failed with `UNIQUE constraint failed: scope.root` and --rebuild advice 3 times
    in 10)."""
    db = tmp_path / "index.db"
    first, second = SqliteStore(db), SqliteStore(db)
    try:
        assert first.scope_for_root(mixed_root) is None and second.scope_for_root(mixed_root) is None
        made = first.create_scope(mixed_root)
        assert second.create_scope(mixed_root) == made
    finally:
        first.close()
        second.close()


def test_a_folder_removed_while_it_is_written_says_so_and_offers_no_rebuild(tmp_path, mixed_root):
    db = tmp_path / "index.db"
    indexer, remover = SqliteStore(db), SqliteStore(db)
    try:
        scope = indexer.create_scope(mixed_root)
        remover.remove_scope(scope.id)  # `quarry scopes remove` from another process, mid-index
        with pytest.raises(StoreError) as caught:
            indexer.write_batch(scope.id, "m", [], [FileWrite("a.py", 1, 1, "sha", "python")])
        assert "was removed from it meanwhile" in str(caught.value) and not caught.value.remedies
        assert remover.list_scopes() == []  # the index is sound and holds nothing of the removed folder
    finally:
        indexer.close()
        remover.close()


def test_a_write_ahead_log_deleted_under_a_running_quarry_is_said_and_not_blamed_on_the_disk(tmp_path):
    """`quarry index --watch` keeps the index open with its latest changes in the -wal file. With that file
    deleted (a clean-up script, a user tidying up), every other command said "disk I/O error" and to check the
    disk. It says what happened instead; the watching process still holds the changes and, stopped normally,
    writes them into the index."""
    tree = write_tree(tmp_path / "tree", 20, "osprey").resolve()
    db = tmp_path / "index.db"
    wal = Path(f"{db}-wal")
    watching = subprocess.Popen(
        [*QUARRY, "index", str(tree), "--db", str(db), "--watch", "--quiet", "--until", "keyword"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert watching.stderr.readline().startswith(f"watching {tree} "), watching.stderr.read()
        assert wal.stat().st_size > 0  # the run's changes are in the log, not yet in the index file
        wal.unlink()
        said = one_line_error(quarry("scopes", "--db", db), 1, f"the write-ahead log {wal} of the index database")
        assert "was deleted" in said and "let it finish, or stop it normally" in said
        assert "disk" not in said and "--rebuild" not in said
    finally:
        watching.send_signal(signal.SIGINT)  # Ctrl+C: the process closes the index
        watching.communicate(timeout=60)
    assert watching.returncode == 0
    listed = quarry("scopes", "--db", db, "--json")
    assert [(s["root"], s["files"]) for s in json.loads(listed.stdout)] == [(str(tree), 20)], listed.stderr
