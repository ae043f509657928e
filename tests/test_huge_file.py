"""One huge file (issue 15, item 3): a 314 KB file of 8,109 functions showed "0 chunks embedded" for nine
minutes and a stop lost all of its work. Its vectors must be reported as they come and survive a stop, while
the file itself is always whole in the index. Real file, real store, real model."""

from __future__ import annotations

from pathlib import Path

from desktop_app.indexing.indexer import IndexOptions
from desktop_app.indexing.progress import Progress, ProgressReporter
from desktop_app.indexing.steps import run_to_end
from desktop_app.indexing.vector_fill import BATCH, VectorFiller
from desktop_app.search.request import SearchRequest
from desktop_app.worker.worker import Engine, EngineConfig

MODEL = "all-MiniLM-L6-v2-int8"
FUNCTIONS = 800  # more than one batch of vectors (vector_fill.BATCH, 512), few enough to embed in seconds


def _huge_file(root: Path) -> Path:
    root.mkdir()
    (root / "generated.py").write_text(
        "".join(
            f"def handler_{i}(request, retries={i % 7}):\n"
            f'    """Handle request kind {i}: validate it, then dispatch to backend {i % 13}."""\n'
            f"    return dispatch(request, backend={i % 13}, attempt={i})\n\n\n"
            for i in range(FUNCTIONS)
        )
    )
    return root


def test_a_huge_files_vectors_are_reported_as_they_come_and_survive_a_stop(tmp_path):
    root = _huge_file(tmp_path / "repo")
    engine = Engine(EngineConfig(tmp_path / "index.db"))
    try:
        progress: list[Progress] = []

        def stop() -> bool:  # the event: the model's first vectors are written
            return engine.store.vector_ids(MODEL).size > 0

        first = run_to_end(engine.index(root, progress.append, stop))
        assert first.cancelled
        written = engine.store.vector_ids(MODEL).size
        total = engine.store.count_chunks()
        assert 0 < written < total >= FUNCTIONS  # the finished vectors survived; the file is all there
        assert first.chunks_embedded == written  # and the stats say so
        full = [p.chunks_embedded for p in progress if p.stage == "full"]
        assert full and full[-1] == written  # reported, not "0 chunks embedded"

        # Meanwhile every function of the file is found, the last one too: never half a file.
        response = engine.searcher.search(
            SearchRequest(f"handler_{FUNCTIONS - 1}", roots=(str(root),), mode="exact", k=1)
        )
        assert response.results[0].symbol_name == f"handler_{FUNCTIONS - 1}"

        second = run_to_end(engine.index(root, None, lambda: False))
        assert not second.cancelled and second.chunks_embedded == total - written  # resumed, nothing done twice
        assert engine.store.vector_ids(MODEL).size == total
    finally:
        engine.close()


def test_progress_moves_within_a_batch_of_vectors(tmp_path):
    """A batch of 512 chunks takes seconds of a slow machine's model: its progress is reported slice by slice,
    not once it is written (the report of a stopped batch falls back to what was written)."""
    root = _huge_file(tmp_path / "repo")
    config = EngineConfig(tmp_path / "index.db", index_options=IndexOptions(until="fast"))
    engine = Engine(config)
    try:
        run_to_end(engine.index(root, None, lambda: False))
        assert engine.embedder is not None
        seen: list[Progress] = []
        filler = VectorFiller(engine.store, engine.embedder)
        try:
            stop = lambda: engine.store.vector_ids(MODEL).size > 0  # noqa: E731
            result = run_to_end(filler.fill(ProgressReporter(seen.append, MODEL, interval_s=0), stop))
        finally:
            filler.close()
        assert any(0 < p.chunks_embedded < BATCH for p in seen), [p.chunks_embedded for p in seen]
        assert seen[-1].chunks_embedded == result.embedded == engine.store.vector_ids(MODEL).size
    finally:
        engine.close()
