"""Only an index run switches an index's model; a search records nothing of another model, and a model folder
that cannot run is an error (issue 29, R7b). Real `quarry` processes on a real index file, read with apsw."""

from __future__ import annotations

import json
from pathlib import Path

import apsw
import numpy as np
import pytest

from desktop_app.embedding.model_spec import DEFAULT_MODEL_ID
from desktop_app.embedding.static_model import STATIC_MODEL_ID
from desktop_app.store.postgres.store import PostgresStore
from desktop_app.store.protocols import Store
from desktop_app.store.rows import ChunkRef, FileWrite, NewChunk
from desktop_app.store.sqlite.store import SqliteStore
from desktop_app.worker import ops

from .model_dirs import other_model_dir
from .reliability import one_line_error, quarry

CUSTOM = "minilm-passages"  # other_model_dir's id


def _recorded(db: Path) -> tuple[dict[str, tuple[int, str, int]], str, list[str]]:
    """What the index file holds of its models: {id: (dims, source, chunk vectors)}, the active model, and every
    vector table (a vec0 table's shadow tables included)."""
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        models = {
            model_id: (dims, source, next(conn.execute(f"SELECT count(*) FROM {table}_rowids"))[0])
            for model_id, dims, table, source in conn.execute("SELECT id, dims, vector_table, source FROM model")
        }
        active = next(conn.execute("SELECT value FROM meta WHERE key = 'active_model'"))[0]
        tables = sorted(
            r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE name LIKE 'vec\\_%' ESCAPE '\\'")
        )
        return models, active, tables
    finally:
        conn.close()


def _broken(model: Path) -> Path:
    """The folder's quarry-model.json declares 768 dimensions; its model.onnx gives 384."""
    config = model / "quarry-model.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "dims": 768}))
    return model


@pytest.mark.parametrize(
    "command",
    [("search", "parse command line arguments", "--root", "{root}"), ("scopes",), ("history",)],
    ids=["search", "scopes", "history"],
)
def test_a_command_other_than_index_never_starts_a_model_switch(tmp_path, mixed_root, index_copy, command):
    """`search --model-dir M` on an index of another model exited 0 and recorded M with no vector and its tables;
    no later run went on with the switch."""
    other_model_dir(tmp_path)
    before = _recorded(index_copy)
    args = [part.format(root=mixed_root) for part in command]
    proc = quarry(*args, "--db", index_copy, "--model-dir", "other-model", cwd=tmp_path)
    message = one_line_error(proc, 2, CUSTOM, DEFAULT_MODEL_ID, "quarry index FOLDER --model-dir other-model")
    assert proc.stdout == "", message
    assert _recorded(index_copy) == before


def test_a_search_does_not_switch_to_the_fast_model_either(mixed_root, index_copy):
    """`--model` names a switch as `--model-dir` does, and it was ignored as silently."""
    before = _recorded(index_copy)
    proc = quarry("search", "parse command line arguments", "--root", mixed_root, "--db", index_copy, "--model", "fast")
    one_line_error(proc, 2, "quarry index FOLDER --model fast")
    assert _recorded(index_copy) == before


def test_a_model_folder_that_cannot_run_is_an_error_of_search(tmp_path, mixed_root, index_copy):
    """It was ignored: the search answered with the index's model and exited 0; the error was only in the log."""
    before = _recorded(index_copy)
    model = _broken(other_model_dir(tmp_path))
    proc = quarry(
        "search", "parse command line arguments", "--root", mixed_root, "--db", index_copy, "--model-dir", model
    )
    one_line_error(proc, 1, "384", "768")
    assert proc.stdout == ""
    assert _recorded(index_copy) == before


def test_a_search_with_the_index_model_folder_uses_it_and_fails_once_the_folder_breaks(tmp_path):
    """Naming the model the index already has switches nothing; the same folder, broken, was a silent fallback
    to exact matching."""
    model = other_model_dir(tmp_path)
    root = tmp_path / "code"
    root.mkdir()
    (root / "retry.go").write_text("package net\n\nfunc RetryWithBackoff(attempts int) error {\n\treturn nil\n}\n")
    db = tmp_path / "index.db"
    indexed = quarry("index", root, "--db", db, "--model-dir", model, "--quiet")
    assert indexed.returncode == 0, indexed.stderr
    recorded = _recorded(db)
    assert recorded[1] == CUSTOM

    found = quarry("search", "retry with growing delays", "--root", root, "--db", db, "--model-dir", model, "--json")
    assert found.returncode == 0, found.stderr
    response = json.loads(found.stdout)
    assert not response.get("notice") and response["results"][0]["semantic_score"] is not None
    assert _recorded(db) == recorded

    proc = quarry("search", "retry with growing delays", "--root", root, "--db", db, "--model-dir", _broken(model))
    one_line_error(proc, 1, "384", "768")
    assert _recorded(db) == recorded


def _one_vector(store: Store, model_id: str) -> None:
    """A vector of `model_id` for one chunk of the store: a switch stopped after its first batch."""
    chunk = int(store.chunks_without_vectors(model_id)[0])
    store.add_vectors(model_id, [(chunk, np.ones(384, dtype=np.float32) / np.sqrt(384), None)])


def test_the_next_index_run_drops_a_model_recorded_by_an_abandoned_switch(tmp_path, mixed_root, index_copy):
    """What earlier builds' searches left: a model with no vector, never active, and its tables, for good."""
    model = other_model_dir(tmp_path)
    before = _recorded(index_copy)
    store = SqliteStore(index_copy)
    try:
        store.register_model(CUSTOM, 384, str(model))  # as `search --model-dir` recorded it
        store.register_model("half-switched", 384, "/models/half")
        _one_vector(store, "half-switched")  # a switch cancelled part-way: resumed when that model is named again
    finally:
        store.close()
    assert set(_recorded(index_copy)[0]) == {*before[0], CUSTOM, "half-switched"}

    proc = quarry("index", mixed_root, "--db", index_copy, "--quiet")
    assert proc.returncode == 0, proc.stderr
    models, active, tables = _recorded(index_copy)
    assert active == before[1] and set(models) == {*before[0], "half-switched"}
    assert models[DEFAULT_MODEL_ID] == before[0][DEFAULT_MODEL_ID]  # the index's own vectors untouched
    assert not [t for t in tables if t.startswith("vec_minilm_passages")], tables


@pytest.mark.parametrize("kind", ["sqlite", "team"])
def test_only_models_without_vectors_or_claims_are_dropped(request, tmp_path, kind):
    """The active model, those named to keep, those with a vector, and in a team index those another indexer
    is filling in (it claims chunks before its first batch is written) stay."""
    if kind == "team":
        url = request.getfixturevalue("team_server").new_database()
        store: Store = PostgresStore(url)
    else:
        store = SqliteStore(tmp_path / "index.db")
    try:
        scope = store.create_scope(tmp_path)
        refs = [ChunkRef(f"h{i}", 0, i, i, "function", None, None, None, "", f"{i}.py", "pass") for i in (1, 2)]
        store.write_batch(
            scope.id,
            "",
            [NewChunk(f"h{i}", "pass", 1, None) for i in (1, 2)],
            [FileWrite(f"{i}.py", 4, 1, f"s{i}", "python", [refs[i - 1]]) for i in (1, 2)],
        )
        for model_id in ("active", "kept", "with-vector", "abandoned", "claimed"):
            store.register_model(model_id, 384, f"/models/{model_id}")
        _one_vector(store, "with-vector")
        if kind == "team":
            other = PostgresStore(url)  # another indexer, filling in "claimed"
            try:
                assert other.claim_chunks("claimed", False, store.chunks_without_vectors("claimed"))
            finally:
                other.close()
        dropped = store.drop_models_without_vectors(keep=["kept"])
        assert sorted(dropped) == (["abandoned"] if kind == "team" else ["abandoned", "claimed"])
        assert store.active_model() == "active" and store.model_source("abandoned") is None
        assert store.model_source("kept") and store.model_source("with-vector")
        store.register_model("abandoned", 384, "/models/abandoned")  # its tables went too: it can start again
    finally:
        store.close()


def test_a_switch_whose_model_another_process_dropped_before_its_first_batch_goes_on(
    tmp_path, index_copy, worker_for, embedding_gate
):
    """Until its first batch is written, a switch under way looks abandoned to another process's index run."""
    gate = embedding_gate()
    worker = worker_for(index_copy, model_dir=other_model_dir(tmp_path))
    handle = worker.run(ops.reembed())
    assert gate.waiting.wait(60)  # the model is recorded and its first batch is with the model
    other = SqliteStore(index_copy)
    try:
        assert other.drop_models_without_vectors() == [CUSTOM]
    finally:
        other.close()
    gate.release()
    assert handle.result(timeout=300) is True
    models, active, _ = _recorded(index_copy)
    assert active == CUSTOM and set(models) == {CUSTOM, STATIC_MODEL_ID}
