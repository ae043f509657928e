"""Chunk text stored compressed (store/sqlite/text_codec.py): what is read back is what was written, through every
read a search makes, in this process and another; text search and its trigram index work over it; a dictionary
goes when its chunks do; a failed write leaves nothing unreadable; an index from before migrates."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import apsw
import pytest

from desktop_app.store.errors import StoreError
from desktop_app.store.rows import ChunkId, ChunkRef, FileWrite, NewChunk
from desktop_app.store.sqlite import text_codec
from desktop_app.store.sqlite.store import SqliteStore

from .old_schemas import old_copy
from .reliability import quarry
from .ripgrep import needs_rg, rg_matches
from .test_text_index_fill import text_index_sound

LIBRARY = Path(os.__file__).parent  # real code of every shape: this interpreter's standard library
MODEL = "m"


def _library_files(skip: int, count: int) -> list[tuple[str, list[str]]]:
    """(path, chunk texts of 6 lines) of `count` modules of the standard library, after the first `skip`."""
    files = sorted(p for p in LIBRARY.glob("*.py") if p.stat().st_size > 4000)[skip : skip + count]
    out = []
    for path in files:
        lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
        out.append((f"lib/{path.name}", ["\n".join(lines[i : i + 6]) for i in range(0, len(lines), 6)]))
    return out


class Library:
    """Writes modules of the standard library to a store, remembering each chunk's text by id."""

    def __init__(self, store: SqliteStore):
        self.store = store
        store.register_model(MODEL, 4, "test")
        self.scope = store.create_scope("/repo")
        self.texts: dict[ChunkId, str] = {}
        self.paths: dict[str, list[str]] = {}  # chunk hashes by path

    def write(self, files: list[tuple[str, list[str]]], scope_id: str | None = None) -> list[ChunkId]:
        writes, new = [], []
        for path, texts in files:
            refs = []
            for i, text in enumerate(texts):
                h = hashlib.sha256(f"{path}\n{i}\n{text}".encode()).hexdigest()
                refs.append(ChunkRef(h, i, 6 * i + 1, 6 * i + 6, "block", None, None, None, "", path, text))
                new.append(NewChunk(h, text, 10))
            writes.append(FileWrite(path, 100, 1, hashlib.sha256(path.encode()).hexdigest(), "python", refs))
            self.paths[path] = [r.chunk_hash for r in refs]
        self.store.write_batch(scope_id or self.scope.id, MODEL, new, writes)
        ids = self.store.known_chunks([ch.hash for ch in new])
        for ch in new:
            self.texts[ids[ch.hash]] = ch.text
        return [ids[ch.hash] for ch in new]


def _text_rows(db: Path) -> dict[str, int]:
    conn = apsw.Connection(str(db))
    try:
        return {kind: n for kind, n in conn.execute("SELECT typeof(text), count(*) FROM chunk GROUP BY 1")}
    finally:
        conn.close()


def _dictionaries(store: SqliteStore) -> list[tuple[int, int]]:
    return [(r[0], r[1]) for r in store._rows("SELECT id, chunks FROM text_dictionary ORDER BY id")]


def _fts_sound(store: SqliteStore) -> None:
    text_index_sound(store.path)
    assert store._rows("PRAGMA quick_check") == [("ok",)]


def test_big_writes_are_stored_compressed_and_every_read_gives_the_text_back(tmp_path):
    db = tmp_path / "index.db"
    store = SqliteStore(db)
    library = Library(store)
    big = _library_files(0, 40)
    assert sum(len(texts) for _, texts in big) >= text_codec.TRAIN_FROM
    first = library.write(big)
    small = library.write(_library_files(40, 1))  # a small write: the latest dictionary, none trained
    assert len(small) < text_codec.TRAIN_FROM
    rows = _text_rows(db)
    assert rows["blob"] > 0.9 * (len(first) + len(small))
    assert _dictionaries(store) == [(1, rows["blob"])]
    stored = store._rows("SELECT sum(length(text)) FROM chunk")[0][0]
    plain = sum(len(t.encode()) for t in library.texts.values())
    assert stored < 0.6 * plain  # standard library modules at 6 lines a chunk: ~0.35-0.45

    assert store.chunk_texts(list(library.texts)) == library.texts
    places = store._rows("SELECT id, chunk_id FROM file_chunk")
    hits = store.hits_for_places([p for p, _ in places])
    assert {h.chunk_id: h.text for h in hits} == library.texts
    assert {c.chunk_id: c.text for c in store.stored_chunks(first)} == {i: library.texts[i] for i in first}
    rows_of = store.file_chunk_rows(library.scope.id, list(library.paths))
    assert {c.chunk_id: c.text for cs in rows_of.values() for c in cs} == library.texts

    # Text search: a chunk found while it waits for the trigram index, then through it.
    needle_id = first[len(first) // 2]
    needle = max(library.texts[needle_id].split(), key=len)
    assert needle_id in store.chunks_containing([needle]).tolist()
    while store.index_pending_text(1000):
        pass
    assert needle_id in store.chunks_containing([needle]).tolist()
    _fts_sound(store)
    store.close()

    # Another process reads it all back, loading the dictionary when it first meets a compressed chunk.
    script = (
        "import json, sys; from desktop_app.store.sqlite.store import SqliteStore; "
        "s = SqliteStore(sys.argv[1]); print(json.dumps(s.chunk_texts(json.loads(sys.argv[2]))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(db), str(sorted(library.texts))], capture_output=True, text=True, check=True
    )
    assert {ChunkId(int(k)): v for k, v in json.loads(out.stdout).items()} == library.texts


def test_a_dictionary_goes_with_the_last_of_its_chunks_but_the_latest_stays(tmp_path):
    store = SqliteStore(tmp_path / "index.db")
    library = Library(store)
    first, second = _library_files(0, 40), _library_files(40, 40)
    library.write(first)
    kept = library.write(second)
    (one, _), (two, _) = _dictionaries(store)
    gone_needle = max(library.texts[library.write(_library_files(80, 1))[0]].split(), key=len)  # latest: dict two
    while store.index_pending_text(1000):
        pass

    store.write_batch(library.scope.id, MODEL, [], deleted=[p for p, _ in first])
    store.collect_garbage()
    assert [d for d, _ in _dictionaries(store)] == [two]
    assert _dictionaries(store)[0][1] == _text_rows(store.path)["blob"]
    assert store.chunk_texts(kept) == {i: library.texts[i] for i in kept}
    # And the latest, though every chunk it served goes: small writes to come use it.
    store.write_batch(library.scope.id, MODEL, [], deleted=list(library.paths))
    store.collect_garbage()
    assert _dictionaries(store) == [(two, 0)]
    assert store.chunks_containing([gone_needle]).tolist() == []
    _fts_sound(store)
    store.close()


def test_a_write_that_trained_a_dictionary_and_failed_leaves_every_text_readable(tmp_path):
    db = tmp_path / "index.db"
    store = SqliteStore(db)
    library = Library(store)
    library.write(_library_files(0, 40))
    other = store.create_scope("/elsewhere")
    store.remove_scope(other.id)
    with pytest.raises(StoreError):  # its scope went (another window removed the folder): all rolled back
        library.write(_library_files(40, 40), scope_id=other.id)
    assert [d for d, _ in _dictionaries(store)] == [1]
    library.write(_library_files(80, 1))  # with the latest dictionary that was kept, not the one rolled back
    library.write(_library_files(100, 40))  # trains dictionary 2 again, from other text: another dictionary
    assert [d for d, _ in _dictionaries(store)] == [1, 2]
    assert store.chunk_texts(list(library.texts)) == library.texts
    store.close()
    again = SqliteStore(db)
    assert again.chunk_texts(list(library.texts)) == library.texts
    again.close()


def test_text_too_empty_to_train_on_stays_plain(tmp_path):
    store = SqliteStore(tmp_path / "index.db")
    library = Library(store)
    library.write([("empty.py", [""] * (text_codec.TRAIN_FROM + 10))])
    assert _dictionaries(store) == [] and _text_rows(store.path) == {"text": text_codec.TRAIN_FROM + 10}
    assert set(store.chunk_texts(list(library.texts)).values()) == {""}
    store.close()


def test_an_index_from_before_compression_migrates_and_text_search_goes_on(tmp_path, mixed_index, mixed_root):
    db = tmp_path / "index.db"
    old_copy(mixed_index[0], db, 9)
    store = SqliteStore(db)
    try:
        count = store.count_chunks()
        assert store.text_pending() == count  # the trigram index is made again by the next run's text step
        waiting = store.chunks_containing(["fetch_with_retry"])
        assert len(waiting) == count  # every waiting chunk is a candidate the pattern then runs over
        while store.index_pending_text(1000):
            pass
        found = store.chunks_containing(["fetch_with_retry"])
        assert 1 <= len(found) < count
        assert all("fetch_with_retry" in t for t in store.chunk_texts(found.tolist()).values())
        _fts_sound(store)
    finally:
        store.close()


@needs_rg
def test_a_real_index_stores_compressed_text_that_searches_and_previews_read_whole(tmp_path):
    root = tmp_path / "repo"
    # ~7,000 chunks: the first batches (16, 32, ... chunks) stay plain, the later ones train dictionaries.
    for name in ("email", "json", "http", "logging", "urllib", "asyncio", "xml", "multiprocessing", "importlib"):
        shutil.copytree(LIBRARY / name, root / name, ignore=shutil.ignore_patterns("__pycache__", "test*"))
    db = tmp_path / "index.db"
    done = quarry("index", root, "--db", db, "--until", "keyword")
    assert done.returncode == 0, done.stderr
    rows = _text_rows(db)
    assert rows["blob"] > rows["text"]  # all but the first batches
    store = SqliteStore(db)
    try:
        # Every place's text is the file's lines it covers, read back through the store's decompression.
        for path, start, end, text in store._rows(
            "SELECT f.path, fc.start_line, fc.end_line, chunk_text_of(c.text) FROM file_chunk fc "
            "JOIN file f ON f.id = fc.file_id JOIN chunk c ON c.id = fc.chunk_id"
        ):
            lines = (root / path).read_text(encoding="utf-8", errors="replace").split("\n")
            assert text == "\n".join(lines[start - 1 : end]), (path, start)
    finally:
        store.close()
    # Text mode finds what ripgrep finds, over compressed text waiting for the trigram index and then through it.
    expected = rg_matches(root, "header_decode", "-i", "-F")
    assert len(expected) >= 3
    for until in ("keyword", "fast"):  # the fast stage's run fills the trigram index as well
        if until == "fast":
            assert quarry("index", root, "--db", db, "--until", "fast").returncode == 0
        found = quarry("search", "header_decode", "--db", db, "--root", root, "--mode", "text", "--json", "-k", "100")
        assert found.returncode == 0, found.stderr
        results = json.loads(found.stdout)["results"]
        assert {(r["path"], m["line"], m["start_col"], m["end_col"]) for r in results for m in r["matches"]} == expected
    store = SqliteStore(db)
    assert store.text_pending() == 0
    store.close()
