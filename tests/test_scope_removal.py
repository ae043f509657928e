"""A folder removed from the index (`quarry scopes remove`, or the window) while another process indexes or
watches it: the removal wins. The indexer ends in every stage as it did in stage 1 (one line, exit 1) and
leaves no vector behind, a watch stops watching the folder instead of adding it back, and vectors earlier
builds left without their chunks are collected (issue 29, R5b, N37)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from desktop_app.store.errors import ScopeRemoved
from desktop_app.store.postgres.store import PostgresStore
from desktop_app.store.rows import ChunkRef, FileWrite, NewChunk
from desktop_app.store.schema_names import NAME_SUFFIX
from desktop_app.store.sqlite.connection import open_connection
from desktop_app.store.sqlite.store import SqliteStore
from desktop_app.worker import ops
from desktop_app.worker.operations import UPDATE

from .reliability import QUARRY, REPO, check_invariants, one_line_error, quarry, write_tree
from .test_watch import WAIT_S, _OutputLines

# An indexer whose first write of one stage's vectors waits for a line on its stdin, having said "holding" on its
# stdout: the model has made the vectors of a batch whose chunks the test then removes. Stage "fast" holds at the
# static model's chunk vectors (stage 2), "full" at the contextual model's (stage 3; rows with a code vector:
# stage 2 also writes that model's name vectors alone).
_HELD_AT_FIRST_VECTORS = """
import sys
import desktop_app.cli as cli
from desktop_app.embedding.static_model import STATIC_MODEL_ID
from desktop_app.store.postgres.store import PostgresStore
from desktop_app.store.sqlite.store import SqliteStore
stage = sys.argv.pop(1)
held = []
def holding(add_vectors):
    def hold(self, model_id, vectors):
        static = model_id == STATIC_MODEL_ID
        if not held and (static if stage == "fast" else not static and vectors[0][1] is not None):
            held.append(True)
            print("holding", flush=True)
            sys.stdin.readline()
        return add_vectors(self, model_id, vectors)
    return hold
for store in (SqliteStore, PostgresStore):
    store.add_vectors = holding(store.add_vectors)
sys.exit(cli.main(sys.argv[1:]))
"""


def _vector_counts(db: Path) -> dict[str, int]:
    """Every vector table's row count, by table."""
    conn = open_connection(db)
    try:
        models = conn.execute("SELECT vector_table FROM model").fetchall()
        tables = [t for (table,) in models for t in (table, table + NAME_SUFFIX)]
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in tables}
    finally:
        conn.close()


def _index_held_while_removed(root: Path, db: Path | str, stage: str) -> subprocess.CompletedProcess:
    """`quarry index ROOT --db DB --quiet` held at its first vectors of `stage` while `quarry scopes remove ROOT`
    runs; then let go. Its exit status and stderr."""
    indexer = subprocess.Popen(
        [sys.executable, "-c", _HELD_AT_FIRST_VECTORS, stage, "index", str(root), "--db", str(db), "--quiet"],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert indexer.stdout is not None and indexer.stdin is not None  # both piped
        assert indexer.stdout.readline().strip() == "holding"
        removal = quarry("scopes", "remove", root, "--db", db)
        assert removal.returncode == 0 and removal.stdout.startswith(f"removed {root}"), removal.stderr
        indexer.stdin.write("\n")  # the batch's vectors are written now, after their chunks went
        indexer.stdin.close()
        indexer.wait(timeout=300)
        stderr = indexer.stderr.read() if indexer.stderr else ""
    finally:
        indexer.kill()
        indexer.wait(timeout=30)
    return subprocess.CompletedProcess(indexer.args, indexer.returncode, "", stderr)


@pytest.mark.parametrize("stage", ["fast", "full"])
def test_a_folder_removed_while_its_vectors_are_made_ends_the_index_and_leaves_no_vector(tmp_path, stage):
    """R5b: removed in stage 3, the indexer said "indexed … 0 files, 0 chunks (456 embedded)", exit 0, and the
    batch the model was embedding was written after its chunks were collected: vectors kept for good."""
    root = write_tree(tmp_path / "ledger", 40, "ledger")
    db = tmp_path / "index.db"
    finished = _index_held_while_removed(root, db, stage)
    one_line_error(finished, 1, f"the folder {root} was removed from the index meanwhile", "index it again")
    assert check_invariants(db) == 0
    assert _vector_counts(db) and not any(_vector_counts(db).values())
    assert json.loads(quarry("scopes", "--db", db, "--json").stdout) == []


def test_a_folder_removed_from_a_team_index_while_its_vectors_are_made_ends_the_index(team_server, tmp_path):
    """R5b on the team index: the vectors' foreign key keeps none without its chunk; the run ends as on SQLite."""
    root = write_tree(tmp_path / "ledger", 40, "ledger")
    url = team_server.new_database()
    finished = _index_held_while_removed(root, url, "full")
    one_line_error(finished, 1, f"the folder {root} was removed from the index meanwhile", "index it again")
    store = PostgresStore(url)
    try:
        assert store.list_scopes() == [] and store.count_chunks() == 0
    finally:
        store.close()


def test_vectors_left_without_their_chunks_by_earlier_builds_are_collected(tmp_path):
    """Indexes R5b's earlier builds left hold vectors of chunks long gone: the next collection of unused chunks
    (every index run, every removal) drops them; a chunk collected while its vectors were made gets none."""
    db = tmp_path / "index.db"
    store = SqliteStore(db)
    try:
        store.register_model("m", 4, "test")
        scope = store.create_scope(tmp_path)
        place = ChunkRef("h", 0, 1, 1, "module", None, None, None, "", "a.py", "x = 1")
        store.write_batch(
            scope.id, "m", [NewChunk("h", "x = 1", 3)], [FileWrite("a.py", 5, 1, "sha", "python", [place])]
        )
        (chunk_id,) = store.known_chunks(["h"]).values()
        gone = chunk_id + 1000  # an id no chunk has (ids are never reused)
        vector = np.ones(4, dtype=np.float32)
        store.add_vectors("m", [(chunk_id, vector, vector), (gone, vector, vector)])
        assert store.vector_ids("m").tolist() == [chunk_id]  # none for the chunk that is not stored
        conn = open_connection(db)  # what an earlier build wrote: a vector whose chunk was collected since
        try:
            table = conn.execute("SELECT vector_table FROM model WHERE id = 'm'").fetchall()[0][0]
            for name in (table, table + NAME_SUFFIX):
                codes = np.full(4, 127, dtype=np.int8).tobytes()  # the vector as the store keeps it
                conn.execute(f"INSERT INTO {name} (rowid, embedding) VALUES (?, vec_int8(?))", (gone, codes))
        finally:
            conn.close()
        assert store.vector_ids("m").tolist() == [chunk_id, gone]
        assert store.collect_garbage() == 0  # no chunk was unused
        assert store.vector_ids("m").tolist() == [chunk_id]
        assert store.vector_ids("m", names=True).tolist() == [chunk_id]
    finally:
        store.close()


def test_index_watch_stops_watching_a_folder_another_command_removed(tmp_path):
    """N37: after `quarry scopes remove src` said "removed", the watch's next update added src back (a new scope
    that `scopes` listed again) and printed nothing. The removal wins: the watch says so and exits 1."""
    root = tmp_path / "src"
    root.mkdir()
    (root / "billing.py").write_text("def total_heron_fees(items):\n    return sum(items)\n")
    db = tmp_path / "index.db"
    watch = subprocess.Popen(
        [*QUARRY, "index", str(root), "--watch", "--model", "fast", "--db", str(db), "--json", "--quiet"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert watch.stdout is not None  # piped
    output = _OutputLines(watch.stdout)
    try:
        output.until(lambda line: line.startswith(f"watching {root}"))
        removal = quarry("scopes", "remove", root, "--db", db)
        assert removal.returncode == 0, removal.stderr
        (root / "billing.py").write_text("def total_kestrel_fees(items):\n    return sum(items)\n")
        output.until(
            lambda line: (
                line == f"quarry: {root} was removed from the index by another window or command; stopped watching it"
            ),
            timeout=WAIT_S * 2,
        )
        assert watch.wait(timeout=60) == 1
    finally:
        watch.kill()
        watch.wait(timeout=30)
    assert json.loads(quarry("scopes", "--db", db, "--json").stdout) == []
    assert check_invariants(db) == 0


def test_the_engines_watch_of_a_folder_another_process_removed_adds_nothing_back(tmp_path, worker_for):
    """The window watches through the same worker: its update says ScopeRemoved (the window shows it) and the
    folder stays out of the index."""
    root = tmp_path / "src"
    root.mkdir()
    (root / "billing.py").write_text("def total(items):\n    return sum(items)\n")
    updates: list = []
    updated = threading.Event()

    def heard(notice) -> None:
        if notice.operation == UPDATE:
            updates.append(notice.result)
            updated.set()

    worker = worker_for(tmp_path / "index.db", on_change=heard, model="fast")
    worker.run(ops.index(root)).result(timeout=300)
    worker.watch(root)
    other = SqliteStore(tmp_path / "index.db")  # `quarry scopes remove` in another process
    try:
        scope = other.scope_for_root(root.resolve())
        assert scope is not None
        other.remove_scope(scope.id)
    finally:
        other.close()
    (root / "billing.py").write_text("def total(items):\n    return sum(items) + 1\n")
    assert updated.wait(WAIT_S * 2)
    assert len(updates) == 1 and isinstance(updates[0], ScopeRemoved), updates
    assert str(root.resolve()) in str(updates[0])
    assert worker.run(ops.scopes()).result(timeout=60) == []
