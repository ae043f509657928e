"""The text index (trigram, for literal and regex search) is filled after the first vectors (issue 34): chunks
written wait in chunk_text_pending, text search finds them meanwhile exactly as it does once they are in, a chunk
deleted while it waits leaves the index sound, and an index run ends with nothing waiting. Real SQLite files, the
real static model, the real indexer."""

from __future__ import annotations

from pathlib import Path

import apsw

from desktop_app.embedding.static_model import StaticEmbedder
from desktop_app.indexing.indexer import Indexer, IndexOptions
from desktop_app.search.pipeline import Searcher
from desktop_app.search.request import SearchRequest, TextOptions
from desktop_app.store.sqlite.store import SqliteStore


def _tree(root: Path) -> Path:
    for i in range(30):
        (root / f"m{i}.py").parent.mkdir(parents=True, exist_ok=True)
        (root / f"m{i}.py").write_text(f"def handler_{i}(request):\n    return retry_budget({i}) + {i}\n")
    (root / "notes.md").write_text("# Notes\n\nThe retry_budget is spent per tenant.\n")
    return root


def _found(store: SqliteStore, root: Path, pattern: str, regex: bool = False) -> list[tuple[str, int]]:
    text = TextOptions(regex=regex)
    request = SearchRequest(pattern, roots=(str(root),), mode="text", k=100, text=text, record_history=False)
    response = Searcher(store, None).search(request)
    return sorted((r.path, m["line"]) for r in response.results for m in r.matches or [])


def text_index_sound(db: Path) -> None:
    """FTS5's own check of the trigram index (contentless since migration 10: its structure and entries)."""
    conn = apsw.Connection(str(db))
    try:
        conn.execute("INSERT INTO chunk_text(chunk_text, rank) VALUES ('integrity-check', 1)")
    finally:
        conn.close()


def test_text_search_finds_waiting_chunks_and_a_run_ends_with_none_waiting(tmp_path):
    root = _tree(tmp_path / "repo")
    db = tmp_path / "index.db"
    store = SqliteStore(db)
    try:
        indexer = Indexer(store, StaticEmbedder(), IndexOptions(until="fast"))
        steps: list[str] = []
        # Stopped as the text step begins: the chunks are written and their vectors too, none in the text index.
        stats = indexer.index(root, lambda p: steps.append(p.step), lambda: bool(steps) and steps[-1] == "text")
        assert stats.cancelled and store.text_pending() == store.count_chunks() > 0
        waiting = _found(store, root, "retry_budget")
        assert len(waiting) == 31 and ("notes.md", 3) in waiting

        (root / "m0.py").unlink()  # its chunk is deleted while it waits
        stats = indexer.index(root)
        assert not stats.cancelled and stats.step_seconds["text_index"] >= 0
        assert store.text_pending() == 0
        assert _found(store, root, "retry_budget") == [hit for hit in waiting if hit[0] != "m0.py"]
        assert _found(store, root, r"handler_2\d", regex=True) == [(f"m{i}.py", 1) for i in range(20, 30)]
    finally:
        store.close()
    text_index_sound(db)


def test_a_keyword_only_run_fills_the_text_index_too(tmp_path):
    root = _tree(tmp_path / "repo")
    store = SqliteStore(tmp_path / "index.db")
    try:
        stats = Indexer(store, StaticEmbedder(), IndexOptions(until="keyword")).index(root)
        assert "text_index" in stats.step_seconds and store.text_pending() == 0
    finally:
        store.close()
    text_index_sound(tmp_path / "index.db")
