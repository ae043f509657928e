"""The index keeps the model it was made with: runs that name no model use it, a wrong model folder records
nothing, and a switch reports its work (issue 15, items 1, 2 and 7). Real `quarry` processes on a real index
file."""

from __future__ import annotations

import json
import re
import signal
import subprocess
from pathlib import Path

import apsw
import numpy as np
import pytest

from desktop_app.embedding.embedder import Embedder
from desktop_app.embedding.model_spec import DEFAULT_MODEL_ID, DEFAULT_SOURCE
from desktop_app.embedding.static_model import STATIC_MODEL_ID, StaticEmbedder
from desktop_app.indexing.indexer import Indexer, IndexOptions
from desktop_app.store.errors import StoreError
from desktop_app.store.postgres.store import PostgresStore
from desktop_app.store.protocols import Store
from desktop_app.store.rows import ChunkRef, FileWrite, NewChunk
from desktop_app.store.sqlite.store import SqliteStore

from .model_dirs import other_model_dir
from .reliability import QUARRY, quarry

CUSTOM = "minilm-passages"  # other_model_dir's id


def _models(db: Path) -> dict[str, tuple[int, str, int]]:
    """{model id: (dims, source, vectors)} as the index file records them, and the active model under "*"."""
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        out = {}
        for model_id, dims, table, source in conn.execute("SELECT id, dims, vector_table, source FROM model"):
            vectors = next(conn.execute(f"SELECT count(*) FROM {table}_rowids"))[0]
            out[model_id] = (dims, source, vectors)
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE name LIKE 'vec\\_%' ESCAPE '\\'")}
        recorded = {t for _, t in conn.execute("SELECT id, vector_table FROM model")}
        assert {t for t in tables if not any(t.startswith(r) for r in recorded)} == set(), "tables of no model"
        out["*"] = next(conn.execute("SELECT value FROM meta WHERE key = 'active_model'"))[0]
        return out
    finally:
        conn.close()


def _chunks(db: Path) -> int:
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return next(conn.execute("SELECT count(*) FROM chunk"))[0]
    finally:
        conn.close()


def _folder(path: Path, name: str, text: str) -> Path:
    path.mkdir()
    (path / name).write_text(text)
    return path


def test_runs_that_name_no_model_keep_the_index_model_given_by_a_relative_folder(tmp_path):
    """A run without --model-dir used to re-embed the whole index with the bundled model and drop the custom
    model's vectors; the folder was recorded as typed (relative), so a search elsewhere lost the model."""
    other_model_dir(tmp_path)
    db = tmp_path / "index.db"
    a = _folder(tmp_path / "a", "cache.py", "def evict_least_recently_used(cache):\n    cache.popitem(last=False)\n")
    go = "package net\n\nfunc RetryWithBackoff(attempts int) error {\n\treturn nil\n}\n"
    b = _folder(tmp_path / "b", "retry.go", go)

    first = quarry("index", "a", "--db", db, "--model-dir", "other-model", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert _models(db)[CUSTOM][1] == str((tmp_path / "other-model").resolve())

    second = quarry("index", b, "--db", db)  # another folder, from another working directory, no model named
    assert second.returncode == 0, second.stderr
    models = _models(db)
    assert models["*"] == CUSTOM
    assert set(models) == {"*", CUSTOM, STATIC_MODEL_ID}  # the bundled model was never brought in
    assert models[CUSTOM][2] == _chunks(db)  # both folders' chunks have the custom model's vectors

    found = quarry("search", "retry a failed call with growing delays", "--db", db, "--root", b, "--json")
    assert found.returncode == 0, found.stderr
    response = json.loads(found.stdout)
    assert not response.get("notice"), response["notice"]  # not the exact-only fallback
    assert response["results"][0]["path"] == "retry.go" and response["results"][0]["semantic_score"] is not None
    assert _models(db) == models  # a search switches nothing either

    # Switching is explicit: naming the bundled model re-embeds the index with it.
    switched = quarry("index", a, "--db", db, "--model", "default")
    assert switched.returncode == 0, switched.stderr
    assert _models(db)["*"] == "all-MiniLM-L6-v2-int8" and CUSTOM not in _models(db)


def test_a_model_folder_that_declares_the_wrong_size_records_nothing_and_can_be_fixed(tmp_path, index_copy):
    """A model whose quarry-model.json declared 768 dimensions (it makes 384) was recorded before it ran: its
    tables stayed in the index, and every later run with the corrected folder failed on the recorded 768."""
    model = other_model_dir(tmp_path)
    config = model / "quarry-model.json"
    right = json.loads(config.read_text())
    config.write_text(json.dumps({**right, "dims": 768}))
    root = _folder(tmp_path / "code", "cache.py", "def evict_least_recently_used(cache):\n    pass\n")
    before = _models(index_copy)

    failed = quarry("index", root, "--db", index_copy, "--model-dir", model)
    assert failed.returncode != 0
    assert "768" in failed.stderr and "384" in failed.stderr and len(failed.stderr.strip().splitlines()) == 1
    assert _models(index_copy) == before  # nothing of the failed model is left behind

    config.write_text(json.dumps(right))
    fixed = quarry("index", root, "--db", index_copy, "--model-dir", model)
    assert fixed.returncode == 0, fixed.stderr
    assert _models(index_copy)["*"] == CUSTOM


def test_a_first_index_records_the_bundled_model_without_loading_it(tmp_path):
    """The bundled model's size is known (its file is checked by its sha256 when it loads): loading it only to record
    it was 0.4 s of silence before a first index's first progress line, for a model a run up to the fast stage never
    uses. Its tables are there, empty, for the run that makes its vectors."""
    root = _folder(tmp_path / "code", "cache.py", "def evict_least_recently_used(cache):\n    pass\n")
    store = SqliteStore(tmp_path / "index.db")
    try:
        embedder = Embedder()
        stats = Indexer(store, embedder, IndexOptions(until="fast"), fast=StaticEmbedder()).index(root)
        assert stats.chunks_fast == stats.chunks_total > 0
        assert not embedder.loaded
    finally:
        store.close()
    assert _models(tmp_path / "index.db") == {
        DEFAULT_MODEL_ID: (384, DEFAULT_SOURCE, 0),
        STATIC_MODEL_ID: (256, "fast", stats.chunks_total),
        "*": DEFAULT_MODEL_ID,
    }


@pytest.mark.parametrize("kind", ["sqlite", "team"])
def test_a_model_recorded_with_the_wrong_size_and_no_vectors_is_recorded_again(request, tmp_path, kind):
    """Indexes written by earlier builds may hold such a record (no vectors were ever written under it); one
    with vectors keeps refusing another size."""
    if kind == "team":
        store: Store = PostgresStore(request.getfixturevalue("team_server").new_database())
    else:
        store = SqliteStore(tmp_path / "index.db")
    try:
        store.register_model("m", 768, "/models/m")
        store.register_model("m", 384, "/models/m")
        scope = store.create_scope(tmp_path)
        vector = np.ones(384, dtype=np.float32) / np.sqrt(384)
        ref = ChunkRef("h", 0, 1, 1, "function", None, None, None, "", "a.py", "pass")
        store.write_batch(
            scope.id, "m", [NewChunk("h", "pass", 1, vector)], [FileWrite("a.py", 4, 1, "s", "python", [ref])]
        )
        assert store.vector_ids("m").size == 1  # the table took a 384-dim vector
        with pytest.raises(StoreError, match="recorded with 384 dimensions but produces 768"):
            store.register_model("m", 768, "/models/m")
    finally:
        store.close()


def test_a_model_switch_reports_its_progress_in_chunks_and_its_work_in_the_stats_also_when_resumed(
    tmp_path, mixed_root, index_copy
):
    """A re-embed printed "0/0 files, 0.0/0.0 MB", moved only between batches of 512 chunks, and the stats
    counted none of it: a resumed run reported `chunks_embedded: 1` after re-embedding 753 chunks."""
    model = other_model_dir(tmp_path)
    total = _chunks(index_copy)
    command = [*QUARRY, "index", mixed_root, "--db", index_copy, "--model-dir", model, "--json"]
    first = subprocess.Popen(list(map(str, command)), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    assert first.stderr is not None
    for line in first.stderr:
        lines.append(line)
        moved = re.search(r"re-embedding with minilm-passages: (\d+)/", line)
        if moved and int(moved.group(1)) > 0:
            first.send_signal(signal.SIGINT)  # like Ctrl+C, part-way (or after the end, if it was that quick)
            break
    out, err = first.communicate(timeout=300)
    lines += err.splitlines(keepends=True)
    reembedding = [line for line in lines if "re-embedding" in line]
    assert reembedding and all(re.search(r": \d+/\d+ chunks", line) for line in reembedding), reembedding
    done_first = json.loads(out)["reembedded"]
    assert done_first["model"] == CUSTOM and done_first["chunks_total"] == total

    second = quarry("index", mixed_root, "--db", index_copy, "--model-dir", model, "--json")
    assert second.returncode == 0, second.stderr
    done_second = json.loads(second.stdout).get("reembedded", {"chunks_embedded": 0, "finished": True})
    assert done_second["finished"] and _models(index_copy)["*"] == CUSTOM
    assert done_first["chunks_embedded"] + done_second["chunks_embedded"] == total  # all the work, counted once
