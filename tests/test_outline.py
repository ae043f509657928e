"""File outlines: one vector per file of its path and the names it defines, filled after the chunks' vectors,
kept only while the file has the content it was made from, and read by ranking as what a file is about."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from desktop_app.embedding.static_model import STATIC_MODEL_ID
from desktop_app.indexing import outline_fill
from desktop_app.indexing.documents import outline_text
from desktop_app.indexing.model_runner import ModelRunner
from desktop_app.indexing.steps import run_to_end
from desktop_app.search import fusion
from desktop_app.search.pipeline import Searcher
from desktop_app.search.request import SearchRequest
from desktop_app.store.location import StoreLocation, open_store
from desktop_app.store.rows import OutlineSource
from desktop_app.store.sqlite.store import SqliteStore
from desktop_app.worker import ops
from desktop_app.worker.worker import EngineConfig, Worker

from .old_schemas import old_copy

MODEL = "all-MiniLM-L6-v2-int8"

HEADERS = '''class Address:
    """An email address: display name, user name and domain."""


class Group:
    """A named group of addresses."""


class HeaderRegistry:
    """Maps header names to the classes that parse them."""
'''
DATES = '''def parsedate(text):
    """Parse an RFC 2822 date."""


def formatdate(seconds):
    """Format a time as an RFC 2822 date."""
'''


def test_an_outline_is_the_path_then_each_name_once_in_order():
    text = outline_text("email/headerRegistry.py", ["HeaderRegistry", "Address", "parse_header", "Address"])
    assert text == "email header registry\nheader registry, address, parse header"
    assert outline_text("Makefile", []) == "makefile\n"


def _index(location: str | Path, root: Path) -> None:
    worker = Worker(EngineConfig(location)).start()
    try:
        worker.run(ops.index(root)).result()
    finally:
        worker.close()


def _outlines(store, root: Path) -> dict[str, np.ndarray]:
    scope = store.scope_for_root(root)
    assert scope is not None
    paths = list(store.file_states(scope.id))
    return {path: v for (_, path), v in store.outline_vectors(MODEL, [(scope.id, p) for p in paths]).items()}


@pytest.fixture(params=["sqlite", "postgres"])
def location(request, tmp_path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "index.db")
    return request.getfixturevalue("team_server").new_database()


def test_each_file_has_an_outline_that_follows_its_content_and_its_model(location, tmp_path, embedder):
    root = tmp_path / "mail"
    root.mkdir()
    (root / "headers.py").write_text(HEADERS)
    (root / "dates.py").write_text(DATES)
    _index(location, root)
    store = open_store(StoreLocation.of(location))
    try:
        first = _outlines(store, root)
        assert set(first) == {"headers.py", "dates.py"} and store.files_without_outline(MODEL, 10) == []
        # The model's own reading of the outline text, as filled in by the index run.
        expected = embedder.embed_documents([outline_text("headers.py", ["Address", "Group", "HeaderRegistry"])])[0]
        assert np.dot(first["headers.py"], expected) == pytest.approx(1.0, abs=1e-3)

        # A vector made from content the file no longer has is not written.
        scope = store.scope_for_root(root)
        assert scope is not None
        stale = OutlineSource(scope.id, "dates.py", "0" * 64, ["parsedate"])
        store.add_outlines(MODEL, [(stale, -first["dates.py"])])
        assert np.array_equal(_outlines(store, root)["dates.py"], first["dates.py"])
    finally:
        store.close()

    (root / "dates.py").write_text(DATES.replace("formatdate", "format_http_date"))
    (root / "headers.py").unlink()
    _index(location, root)
    store = open_store(StoreLocation.of(location))
    try:
        second = _outlines(store, root)
        assert set(second) == {"dates.py"}  # the deleted file's outline went with it
        assert float(np.dot(second["dates.py"], first["dates.py"])) < 0.999  # made again from the new names

        # Another model's outlines go with that model when it is dropped.
        store.register_model("other-model", 4, "test")
        src = store.files_without_outline("other-model", 10)
        assert [s.path for s in src] == ["dates.py"] and list(src[0].names) == ["parsedate", "format_http_date"]
        store.add_outlines("other-model", [(src[0], np.ones(4, dtype=np.float32))])
        assert store.files_without_outline("other-model", 10) == []
        store.activate_model(MODEL, keep=[STATIC_MODEL_ID])
        assert store.files_without_outline(MODEL, 10) == [] and set(_outlines(store, root)) == {"dates.py"}
    finally:
        store.close()


def test_a_stopped_outline_fill_keeps_its_batches_and_the_next_does_the_rest(index_copy, embedder, monkeypatch):
    store = SqliteStore(index_copy)
    runner = ModelRunner(embedder)
    try:
        files = len(store.files_without_outline("no-such-model", 100))
        store._conn.execute("DELETE FROM file_outline")  # as if the run had been stopped before its outlines
        monkeypatch.setattr(outline_fill, "BATCH", 1)
        monkeypatch.setattr(outline_fill, "FETCH", 2)
        written: list[int] = []
        add = store.add_outlines
        monkeypatch.setattr(store, "add_outlines", lambda model, rows: (add(model, rows), written.append(len(rows))))
        assert run_to_end(outline_fill.fill_outlines(store, embedder, runner, stop=lambda: len(written) >= 1)) is False
        assert len(store.files_without_outline(MODEL, 100)) == files - 1  # the first batch was kept
        reported: list[tuple[int, int]] = []
        told = lambda done, total: reported.append((done, total))  # noqa: E731
        assert run_to_end(outline_fill.fill_outlines(store, embedder, runner, lambda: False, progress=told))
        assert store.files_without_outline(MODEL, 100) == [] and written == [1] * files
        assert reported == [(n, files - 1) for n in range(files)]  # told before the first batch and after each
    finally:
        runner.close()
        store.close()


def test_a_search_reads_the_outlines_of_its_candidates_files(index_copy, mixed_root, embedder, monkeypatch):
    """With the outline given all the weight, the first result is in the file whose outline is the closest to the
    question among the files the search found; with none, the chunks' own evidence puts another first."""
    question = "keep the most recently used entries and evict the rest"
    store = SqliteStore(index_copy)
    try:
        firsts = []
        for weight in (0.0, 50.0):
            monkeypatch.setattr(fusion, "FILE_OUTLINE", weight)
            response = Searcher(store, embedder).search(
                SearchRequest(question, roots=(str(mixed_root),), mode="hybrid", k=10, record_history=False)
            )
            firsts.append(response.results[0].path)
        found = list(dict.fromkeys(r.path for r in response.results))
        vectors = _outlines(store, mixed_root.resolve())
        q = embedder.embed_query(question)
        assert firsts[1] == max(found, key=lambda p: float(vectors[p] @ q)) != firsts[0] == "src/cache.py"
    finally:
        store.close()


def test_an_index_made_before_outlines_gets_them_on_its_next_run_embedding_no_chunk(tmp_path, mixed_index, mixed_root):
    db = tmp_path / "index.db"
    old_copy(
        mixed_index[0],
        db,
        2,  # as schema 2 left it
        "DROP TABLE file_outline; DROP TABLE chunk_text_pending; DROP TABLE vector_sign; "
        "DROP TABLE vector_sign_complete; DROP TRIGGER file_chunk_delete; "
        "DROP TRIGGER chunk_count_insert; DROP TRIGGER chunk_count_delete",
    )
    worker = Worker(EngineConfig(db)).start()
    try:
        stats = worker.run(ops.index(mixed_root)).result()
    finally:
        worker.close()
    assert stats.chunks_embedded == 0 and stats.files_unchanged == stats.files_indexed
    store = SqliteStore(db)
    try:
        assert store.files_without_outline(MODEL, 100) == []
        assert len(_outlines(store, mixed_root.resolve())) == stats.files_indexed
    finally:
        store.close()


def test_the_outline_step_shows_in_the_progress_of_both_front_ends(qtbot):
    from desktop_app.cli import progress_line
    from desktop_app.indexing.progress import Progress
    from desktop_app.ui.progress_panel import ProgressPanel, progress_text

    p = Progress("in_progress", "/src/repo", stage="full", chunks_embedded=40, chunks_total=40)
    p = replace(p, step="outlines", outlines_done=3, outlines_total=8, stage_elapsed_s=6.0)
    # The step's own ETA: 5 outlines left at 3 in 6 s (the chunks' count said 0 left, and no ETA showed).
    assert progress_text(p) == "Indexing repo (meaning) · 3/8 file outlines · about 10 s left"
    assert progress_line(p) == "in_progress, model vectors: 40/40 chunks, 3/8 file outlines, about 10s left"
    panel = ProgressPanel()
    qtbot.addWidget(panel)
    panel.show_progress(p)
    assert (panel.bar.value(), panel.bar.maximum()) == (375, 1000)  # the bar follows the outlines, not the chunks
