"""Changing the embedding model: background re-embed, old vectors answer until the new set is complete."""

from __future__ import annotations

import apsw

from desktop_app.indexing.steps import run_to_end
from desktop_app.search.request import SearchRequest
from desktop_app.worker import ops
from desktop_app.worker.operations import REEMBED, Change
from desktop_app.worker.worker import Engine, EngineConfig

from .model_dirs import other_model_dir


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
    engine = Engine(EngineConfig(db, model_dir=other_model_dir(tmp_path)))
    try:
        assert engine.needs_reembed
        request = SearchRequest("parse command line arguments", roots=(str(mixed_root),), mode="semantic")
        before = engine.searcher.search(request)
        assert engine.searcher.embedder.model_id == "all-MiniLM-L6-v2-int8"
        assert before.results[0].path == "cli/src/main.rs"

        calls = iter(range(10**6))
        assert not run_to_end(engine.reembed(None, lambda: next(calls) >= 1))  # stopped part-way
        assert engine.store.active_model() == "all-MiniLM-L6-v2-int8"
        during = engine.searcher.search(request)
        assert [r.path for r in during.results] == [r.path for r in before.results]  # old vectors only

        seen = []
        assert run_to_end(engine.reembed(seen.append, lambda: False))
        assert seen[-1].phase == "completed"
        assert engine.store.active_model() == "minilm-passages"
        assert engine.searcher.embedder.model_id == "minilm-passages"
        after = engine.searcher.search(request)
        assert after.results[0].path == "cli/src/main.rs"
        assert after.results[0].semantic_score != before.results[0].semantic_score  # really the new vectors
        assert not engine.needs_reembed
    finally:
        engine.close()
    assert all("all_minilm" not in t for t in vector_tables(db))


def test_a_worker_reembeds_in_the_background_with_progress_and_one_change_notice(
    tmp_path, mixed_root, index_copy, worker_for
):
    """The re-embed is a write like an index run: it reports progress, and its end is one change notice."""
    progress, notices = [], []
    worker = worker_for(index_copy, model_dir=other_model_dir(tmp_path), on_change=notices.append)
    assert worker.needs_reembed
    handle = worker.run(ops.reembed(progress.append))
    response = worker.run(ops.search(SearchRequest("evict least recently used", roots=(str(mixed_root),)))).result()
    assert response.results[0].path == "src/cache.py"  # the old model's vectors meanwhile
    assert handle.result(timeout=120) is True
    assert worker.run(ops.status()).result()["reembedding"] is False
    assert {p.task for p in progress} == {"reembed"} and progress[-1].phase == "completed"
    assert progress[-1].root == "minilm-passages" and progress[-1].chunks_embedded == progress[-1].chunks_total > 0
    assert [(n.operation, n.changes, n.result) for n in notices] == [(REEMBED, Change.CONTENT | Change.MODEL, True)]


def test_a_reembed_can_be_cancelled_and_resumes_at_the_next_start(tmp_path, index_copy, worker_for, embedding_gate):
    gate = embedding_gate()
    model_dir = other_model_dir(tmp_path)
    worker = worker_for(index_copy, model_dir=model_dir)
    reembed = ops.reembed()
    handle = worker.run(reembed)
    assert gate.waiting.wait(60)  # held inside its first batch: certainly running
    reembed.cancel()
    gate.release()
    assert handle.result(timeout=120) is False
    worker.close()
    again = worker_for(index_copy, model_dir=model_dir)
    assert again.needs_reembed and again.run(ops.reembed()).result(timeout=120) is True
    assert not again.run(ops.status()).result()["reembedding"]
