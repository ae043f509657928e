"""The progressive first index: keyword search before any vector, the fast layer, then the model's vectors
replacing it chunk by chunk, in the order a user needs them. Real files, real store, real models."""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import threading
from pathlib import Path

import numpy as np
import pytest

from desktop_app.cli import _ProgressPrinter, progress_line
from desktop_app.embedding.embedder import Embedder
from desktop_app.embedding.static_model import RETIRED_STATIC_MODEL_IDS, STATIC_MODEL_ID, StaticEmbedder
from desktop_app.indexing.indexer import Indexer, IndexOptions
from desktop_app.indexing.progress import Progress, ProgressReporter
from desktop_app.indexing.steps import run_to_end
from desktop_app.indexing.vector_fill import BATCH, VectorFiller, WantedChunks
from desktop_app.search.pipeline import Searcher
from desktop_app.search.request import SearchRequest
from desktop_app.store.sqlite.store import SqliteStore
from desktop_app.worker import ops
from desktop_app.worker.operations import Read
from desktop_app.worker.worker import EngineConfig, Worker

MODEL = "all-MiniLM-L6-v2-int8"


def _search(worker, root: Path, query: str, mode: str = "hybrid"):
    return worker.run(ops.search(SearchRequest(query=query, roots=[str(root)], mode=mode, k=5))).result(timeout=60)


def test_each_stage_is_searchable_as_it_lands(tmp_path, mixed_root, worker_for):
    root = tmp_path / "repo"
    shutil.copytree(mixed_root, root)

    def run(until: str):
        indexing = worker_for(tmp_path / "index.db", index_options=IndexOptions(until=until))
        try:
            return indexing.run(ops.index(root)).result(timeout=300)
        finally:
            indexing.close()

    stats = run("keyword")
    assert stats.stages.keys() == {"keyword"} and stats.chunks_fast == 0 and stats.chunks_embedded == 0
    store = SqliteStore(tmp_path / "index.db")
    assert store.vector_count(MODEL) == 0 and store.vector_count(STATIC_MODEL_ID) == 0
    store.close()

    worker = worker_for(tmp_path / "index.db")
    exact = _search(worker, root, "fetch_with_retry")
    assert exact.results[0].symbol_name == "fetch_with_retry" and exact.results[0].stage == "keyword"
    assert exact.coverage.to_dict() == {"chunks": exact.coverage.chunks, "keyword": 1.0, "fast": 0.0, "full": 0.0}
    worker.close()

    stats = run("fast")
    assert stats.chunks_fast == stats.chunks_total and stats.chunks_embedded == 0
    store = SqliteStore(tmp_path / "index.db")
    # Stage 2 is the static model alone: not one vector of the configured (contextual) model, names included.
    assert stats.names_embedded == 0 and store.vector_count(MODEL, names=True) == store.vector_count(MODEL) == 0
    assert store.vector_count(STATIC_MODEL_ID, names=True) > 0  # the names' static vectors
    store.close()
    worker = worker_for(tmp_path / "index.db")
    fast = _search(worker, root, "retry failed http requests")
    assert fast.coverage.fast == fast.coverage.chunks and fast.coverage.full == 0
    assert fast.results[0].path == "src/http_client.py" and fast.results[0].stage == "fast"
    worker.close()
    # With no vector of the configured model yet, a search by meaning never loads it: the fast model answers.
    store, contextual = SqliteStore(tmp_path / "index.db"), Embedder()
    try:
        searcher = Searcher(store, contextual, fast=StaticEmbedder())
        request = SearchRequest(query="retry failed http requests", roots=[str(root)], mode="hybrid", k=5)
        alone = searcher.search(request)
        assert not contextual.loaded and alone.effective_mode == "hybrid"
        assert [(r.path, r.start_line, r.stage) for r in alone.results] == [
            (r.path, r.start_line, r.stage) for r in fast.results
        ]
    finally:
        store.close()

    stats = run("full")
    assert stats.chunks_fast == 0 and stats.chunks_embedded == stats.chunks_total  # goes on where it stopped
    store = SqliteStore(tmp_path / "index.db")
    assert stats.names_embedded == store.vector_count(MODEL, names=True) > 0  # stage 3's first step
    store.close()
    assert set(stats.stages) == {"keyword", "fast", "full"}
    worker = worker_for(tmp_path / "index.db")
    full = _search(worker, root, "retry failed http requests")
    assert full.coverage.full == full.coverage.chunks
    assert full.results[0].path == "src/http_client.py" and full.results[0].stage == "full"


def test_stage_two_is_the_static_model_alone_and_stage_three_names_its_first_step(tmp_path, mixed_root, worker_for):
    root = tmp_path / "repo"
    shutil.copytree(mixed_root, root)
    seen: list[Progress] = []
    worker = worker_for(tmp_path / "index.db")
    worker.run(ops.index(root, progress=seen.append)).result(timeout=300)
    steps = list(dict.fromkeys((p.stage, p.step) for p in seen if p.stage != "keyword"))
    assert steps == [("fast", "chunks"), ("fast", "text"), ("full", "names"), ("full", "chunks"), ("full", "outlines")]
    names = next(p for p in seen if p.step == "names" and p.chunks_total)
    assert "symbol names" in progress_line(names) and "chunks" not in progress_line(names)
    text = next(p for p in seen if p.step == "text" and p.chunks_total)
    assert progress_line(text).startswith(f"{text.phase}, text index: ") and "vectors" not in progress_line(text)


def test_a_steps_rate_and_eta_count_from_the_steps_own_start():
    now = [0.0]
    reporter = ProgressReporter(None, "/r", clock=lambda: now[0])
    reporter.update(phase="in_progress", stage="fast", step="chunks", chunks_total=1000)
    now[0] = 10.0
    reporter.update(chunks_embedded=1000)
    reporter.update(stage="full", step="names", chunks_total=600, chunks_embedded=0)
    now[0] = 12.0
    reporter.update(chunks_embedded=200)
    reporter.tick()
    assert reporter.current.chunks_per_s == 100 and reporter.current.eta_s == 4
    reporter.update(step="chunks", chunks_total=90, chunks_embedded=0)
    now[0] = 15.0
    reporter.update(chunks_embedded=30)
    reporter.tick()
    assert reporter.current.chunks_per_s == 10 and reporter.current.eta_s == 6


def test_a_query_rerun_while_the_model_fills_in_moves_to_its_vectors(tmp_path, mixed_root, worker_for, embedding_gate):
    root = tmp_path / "repo"
    shutil.copytree(mixed_root, root)
    worker = worker_for(tmp_path / "index.db")
    gate = embedding_gate()  # the model's first run (stage 3's names) waits here; the fast vectors are in
    handle = worker.run(ops.index(root))
    assert gate.waiting.wait(120)
    before = _search(worker, root, "retry failed http requests")
    assert before.partial and before.coverage.full == 0 and before.coverage.fast == before.coverage.chunks
    assert before.results[0].path == "src/http_client.py" and before.results[0].stage == "fast"
    gate.release()
    assert not handle.result(timeout=300).cancelled
    after = _search(worker, root, "retry failed http requests")
    assert not after.partial and after.coverage.full == after.coverage.chunks
    assert after.results[0].path == "src/http_client.py" and after.results[0].stage == "full"
    assert after.results[0].semantic_score != before.results[0].semantic_score


class _Recording(StaticEmbedder):
    """The real fast model, counting its runs."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0
        self.lock = threading.Lock()

    def embed_documents(self, texts):
        with self.lock:
            self.calls += 1
        return super().embed_documents(texts)


def _keyword_only_store(tmp_path: Path, files: dict[str, str], mtimes: dict[str, int] | None = None) -> SqliteStore:
    root = tmp_path / "src"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
        if mtimes and name in mtimes:
            os.utime(root / name, ns=(mtimes[name], mtimes[name]))
    store = SqliteStore(tmp_path / "index.db")
    indexer = Indexer(store, StaticEmbedder(), IndexOptions(until="keyword"))
    indexer.index(root)
    return store


def test_recently_modified_files_are_embedded_first(tmp_path):
    files = {f"old_{i}.py": f"def old_function_{i}():\n    return {i}\n" for i in range(5)}
    files["recent.py"] = "def recently_edited():\n    return 'fresh'\n"
    mtimes = {name: 1_000_000_000 * (i + 1) for i, name in enumerate(files)}
    mtimes["recent.py"] = 2_000_000_000 * 10**9
    store = _keyword_only_store(tmp_path, files, mtimes)
    order = store.chunks_without_vectors(STATIC_MODEL_ID)
    first = store.stored_chunks(order[:1])[0]
    assert first.path == "recent.py"


def test_after_a_few_files_change_only_their_new_chunks_lack_vectors_the_most_recent_first(tmp_path):
    """What the fast stage takes after a small change to a filled index: the changed files' new chunks alone
    (found among all the places' chunks, then ordered), those of the file modified last first."""
    root = tmp_path / "src"
    root.mkdir()
    for i in range(12):
        (root / f"m{i}.py").write_text(f"def function_number_{i}(x):\n    return x + {i}\n")
    store = SqliteStore(tmp_path / "index.db")
    Indexer(store, StaticEmbedder(), IndexOptions()).index(root)  # the static model's vectors for all of them
    assert store.chunks_without_vectors(STATIC_MODEL_ID) == []
    for name, when in (("m3.py", 3_000_000_000 * 10**9), ("m7.py", 4_000_000_000 * 10**9)):
        (root / name).write_text(f"def changed_{name[:-3]}(x):\n    return -x\n")
        os.utime(root / name, ns=(when, when))
    Indexer(store, StaticEmbedder(), IndexOptions(until="keyword")).index(root)
    order = store.chunks_without_vectors(STATIC_MODEL_ID)
    assert [store.stored_chunks([c])[0].path for c in order] == ["m7.py", "m3.py"]
    named = store.chunks_without_vectors(STATIC_MODEL_ID, names=True)
    assert sorted(named) == sorted(order)
    store.close()


def test_chunks_whose_claims_ran_out_between_a_pass_and_its_count_are_taken_at_once(tmp_path):
    """The team index's claims: the first pass found every chunk claimed by a killed indexer, whose leases ran
    out before the count of claims held elsewhere. The fill ended unfinished and the run "cancelled" (seen on a
    loaded CI machine); it must take the chunks now free instead."""
    files = {f"m{i}.py": f"def function_number_{i}(x):\n    return x + {i}\n" for i in range(20)}
    store = _keyword_only_store(tmp_path, files)
    claim = store.claim_chunks
    refused: list[int] = []

    def claim_after_the_first_pass(model_id, names, chunk_ids):
        if not refused:  # the first pass: held by the killed indexer (as claim_chunks on the team index says)
            refused.append(len(chunk_ids))
            return []
        return claim(model_id, names, chunk_ids)

    store.claim_chunks = claim_after_the_first_pass  # type: ignore[method-assign]
    filler = VectorFiller(store, _Recording())
    try:
        result = run_to_end(filler.fill(ProgressReporter(None, "x"), stop=lambda: False))
    finally:
        filler.close()
    assert refused and result.finished and result.embedded == len(files)


def test_chunks_a_search_asked_for_go_first_and_finished_batches_survive_a_stop(tmp_path):
    files = {f"m{i}.py": f"def function_number_{i}(x):\n    return x + {i}\n" for i in range(BATCH * 2 + 10)}
    store = _keyword_only_store(tmp_path, files, mtimes={"m7.py": 10**18})  # the oldest file: embedded last
    wanted = WantedChunks()
    target = store.chunk_ids_of_files(store.list_scopes()[0].scope.id, ["m7.py"])
    wanted.add(target)
    model = _Recording()
    filler = VectorFiller(store, model, wanted=wanted)
    try:  # stopped once the first batch is written
        result = run_to_end(
            filler.fill(ProgressReporter(None, "x"), stop=lambda: store.vector_count(STATIC_MODEL_ID) > 0)
        )
    finally:
        filler.close()
    assert not result.finished and result.embedded == BATCH
    assert np.isin(target, store.vector_ids(STATIC_MODEL_ID)).all()
    # Every finished batch was written: the next fill does only the rest.
    assert store.vector_count(STATIC_MODEL_ID) == result.embedded
    rest = run_to_end(VectorFiller(store, model).fill(ProgressReporter(None, "x"), stop=lambda: False))
    assert rest.finished and result.embedded + rest.embedded == len(files)


def test_wanted_chunks_are_taken_newest_request_first_and_only_if_still_pending():
    wanted = WantedChunks()
    wanted.add([1, 2, 3])
    wanted.add([9, 2])
    assert wanted.take({1, 2, 3, 9}, limit=3) == [2, 9, 3]
    assert wanted.take({1, 2, 3, 9}, limit=3) == [1]
    wanted.add([5])
    assert wanted.take({1}, limit=3) == []


def test_the_fast_model_embeds_like_words_closer_and_handles_empty_text():
    model = StaticEmbedder()
    vectors = model.embed_documents(["def parse_http_header(line):", "def write_csv_rows(rows):", ""])
    query = model.embed_query("parse an HTTP header")
    assert vectors[0] @ query > vectors[1] @ query
    assert np.allclose(np.linalg.norm(vectors[:2], axis=1), 1.0, atol=1e-5) and not vectors[2].any()


def test_the_fast_model_can_be_the_only_model(tmp_path, mixed_root, worker_for):
    root = tmp_path / "repo"
    shutil.copytree(mixed_root, root)
    worker = worker_for(tmp_path / "index.db", model="fast")
    stats = worker.run(ops.index(root)).result(timeout=300)
    assert stats.model == STATIC_MODEL_ID and stats.chunks_embedded == stats.chunks_total
    response = _search(worker, root, "retry failed http requests")
    assert response.results[0].path == "src/http_client.py" and response.results[0].stage == "fast"
    assert response.coverage.full == response.coverage.chunks


@pytest.mark.parametrize("tty", [False])
def test_cli_progress_off_a_terminal_writes_at_most_a_line_a_second_and_every_stage_change(monkeypatch, tty):
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    now = [0.0]
    printer = _ProgressPrinter(clock=lambda: now[0])
    for step in range(30):  # 15 s of reports every 500 ms
        now[0] = step * 0.5
        stage = "keyword" if step < 10 else "fast" if step < 12 else "full"
        printer(Progress("in_progress", "/r", stage=stage, chunks_embedded=step, chunks_total=30))
    lines = err.getvalue().splitlines()
    assert len(lines) <= 17 and {"keyword", "fast", "model"} <= {w for line in lines for w in line.split()}


def test_a_file_shown_in_the_preview_is_embedded_first(tmp_path, mixed_root, worker_for):
    root = tmp_path / "repo"
    shutil.copytree(mixed_root, root)
    worker = worker_for(tmp_path / "index.db", index_options=IndexOptions(until="keyword"))
    worker.run(ops.index(root)).result(timeout=120)
    source = root / "src" / "http_client.py"
    assert worker.run(ops.read_lines(source, hashlib.sha256(source.read_bytes()).hexdigest(), 1, 3, 0)).result(
        timeout=60
    )
    take = Read("wanted chunks", lambda engine: engine.wanted.take(set(range(1 << 20)), 1000))
    wanted = worker.run(take).result(timeout=60)
    store = SqliteStore(tmp_path / "index.db")
    try:
        assert {c.path for c in store.stored_chunks(wanted)} == {"src/http_client.py"} and wanted
    finally:
        store.close()


def test_a_wanted_chunk_that_is_also_due_in_order_is_embedded_once(tmp_path):
    """A search's wanted chunk that the order reaches within the same batch must not be in it twice: when the
    two copies fell in different lookups of 500 ids, its vector was written twice (a duplicate key)."""
    count = BATCH + 10
    files = {f"m{i}.py": f"def function_number_{i}(x):\n    return x + {i}\n" for i in range(count)}
    mtimes = {f"m{i}.py": (count - i) * 10**9 for i in range(count)}  # in order of i, newest first
    store = _keyword_only_store(tmp_path, files, mtimes)
    wanted = WantedChunks()
    wanted.add(store.chunk_ids_of_files(store.list_scopes()[0].scope.id, ["m505.py"]))
    filler = VectorFiller(store, _Recording(), wanted=wanted)
    try:
        result = run_to_end(filler.fill(ProgressReporter(None, "x"), stop=lambda: False))
    finally:
        filler.close()
    assert result.finished and result.embedded == len(files) == store.vector_count(STATIC_MODEL_ID)


@pytest.mark.parametrize("old", RETIRED_STATIC_MODEL_IDS)
def test_an_index_made_with_an_earlier_fast_model_moves_to_the_shipped_one_embedding_nothing_else(mixed_copy, old):
    """Issue 30: each fast model has an id of its own (the distilled table, then the first trained one). An index
    holding an earlier model's vectors (and none of the shipped one's) gets the new vectors on its next run and
    drops the old ones; no chunk goes through the contextual model again."""
    root, db = mixed_copy
    store = SqliteStore(db)
    try:
        store.register_model(old, 256, "fast")
        store.add_vectors(old, [(i, np.full(256, 1 / 16, np.float32), None) for i in store.chunks_without_vectors(old)])
        store.activate_model(MODEL, keep=[old])  # as an earlier build left it: no vector of the shipped model
        assert len(store.vector_ids(STATIC_MODEL_ID)) == 0
    finally:
        store.close()
    worker = Worker(EngineConfig(db)).start()
    try:
        stats = worker.run(ops.index(root)).result()
    finally:
        worker.close()
    assert stats.chunks_embedded == 0 and stats.chunks_fast == stats.chunks_total
    store = SqliteStore(db)
    try:
        assert store.model_source(old) is None and store.active_model() == MODEL
        assert store.chunks_without_vectors(STATIC_MODEL_ID) == [] and store.chunks_without_vectors(MODEL) == []
    finally:
        store.close()


def test_a_run_that_finds_only_vectors_to_make_says_it_is_under_way(tmp_path, mixed_root, worker_for):
    # Its files were all written by an earlier run (stopped after stage 1 here, killed in the kernel's case), so no
    # stage 1 batch moves the phase on: it read "started, fast vectors: 1060000/2973495 chunks" for minutes.
    root = tmp_path / "repo"
    shutil.copytree(mixed_root, root)
    first = worker_for(tmp_path / "index.db", index_options=IndexOptions(until="keyword"))
    first.run(ops.index(root)).result(timeout=120)
    first.close()
    seen: list[Progress] = []
    again = worker_for(tmp_path / "index.db", index_options=IndexOptions(until="fast"))
    stats = again.run(ops.index(root, progress=seen.append)).result(timeout=300)
    assert stats.files_changed == 0 and stats.chunks_fast > 0
    working = [p for p in seen if p.stage == "fast" and p.chunks_total and p.phase != "completed"]
    assert {p.step for p in working} == {"chunks"}  # the text index was filled after stage 1 of the first run
    assert {p.phase for p in working} == {"in_progress"}
