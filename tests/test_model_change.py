"""Changing the embedding model: background re-embed, old vectors answer until the new set is complete."""

from __future__ import annotations

import json
import shutil

import apsw

from desktop_app.assets import resource_path
from desktop_app.embedding import default_model_spec
from desktop_app.search.request import SearchRequest
from desktop_app.worker.worker import Engine, EngineConfig


def other_model_dir(tmp_path):
    """The bundled model under another id, embedding documents with a prefix (so its vectors differ)."""
    d = tmp_path / "other-model"
    d.mkdir()
    (d / "model.onnx").symlink_to(default_model_spec().model_path)
    shutil.copy(resource_path("models", "all-MiniLM-L6-v2-int8", "tokenizer.json"), d / "tokenizer.json")
    (d / "quarry-model.json").write_text(
        json.dumps(
            {"id": "minilm-passages", "dims": 384, "pooling": "mean", "max_tokens": 256, "document_prefix": "passage: "}
        )
    )
    return d


def vector_tables(db):
    conn = apsw.Connection(str(db))
    try:
        return sorted(
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE name LIKE 'vec_%' "
                "AND type = 'table' AND name NOT LIKE '%\\_%\\_%' ESCAPE '\\'"
            )
        )
    finally:
        conn.close()


def test_reembed_switches_models_without_mixing(tmp_path, mixed_root, index_copy):
    db = index_copy
    engine = Engine(EngineConfig(db, model_dir=other_model_dir(tmp_path)), idle=lambda: None)
    try:
        assert engine.needs_reembed
        request = SearchRequest("parse command line arguments", roots=(str(mixed_root),), mode="semantic")
        before = engine.search(request)
        assert engine.searcher.embedder.model_id == "all-MiniLM-L6-v2-int8"
        assert before.results[0].path == "cli/src/main.rs"

        calls = iter(range(10**6))
        assert not engine.reembed(None, lambda: next(calls) >= 1)  # stopped part-way
        assert engine.store.active_model() == "all-MiniLM-L6-v2-int8"
        during = engine.search(request)
        assert [r.path for r in during.results] == [r.path for r in before.results]  # old vectors only

        seen = []
        assert engine.reembed(seen.append, lambda: False)
        assert seen[-1].phase == "completed"
        assert engine.store.active_model() == "minilm-passages"
        assert engine.searcher.embedder.model_id == "minilm-passages"
        after = engine.search(request)
        assert after.results[0].path == "cli/src/main.rs"
        assert after.results[0].semantic_score != before.results[0].semantic_score  # really the new vectors
        assert not engine.needs_reembed
    finally:
        engine.close()
    assert all("all_minilm" not in t for t in vector_tables(db))


def test_worker_starts_reembedding_in_the_background(tmp_path, mixed_root, index_copy, worker_for):
    db = index_copy
    worker = worker_for(db, model_dir=other_model_dir(tmp_path))
    assert worker.reembed_handle is not None
    response = worker.search(SearchRequest("evict least recently used", roots=(str(mixed_root),))).result()
    assert response.results[0].path == "src/cache.py"
    assert worker.reembed_handle.result(timeout=120) is True
    assert worker.status().result()["reembedding"] is False
