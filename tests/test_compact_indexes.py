"""Two of the SQLite store's indexes made smaller: a chunk is kept under the first 32 hex digits of its sha256
(schema 8), as their 16 bytes (schema 11), and the symbol-name index holds only the places with a name (schema 9).
A store made before keeps every chunk, vector and place when it moves to them."""

from __future__ import annotations

import dataclasses
import json
import shutil

import apsw

from desktop_app.indexing.documents import chunk_of
from desktop_app.indexing.file_prep import chunk_ref
from desktop_app.store.rows import FileWrite
from desktop_app.store.sqlite.store import SqliteStore

from .old_schemas import BEFORE_COMPRESSED_TEXT, BEFORE_HASH_BYTES
from .reliability import quarry
from .test_vector_index import Corpus


def _sql(path, statement: str, args: tuple = ()) -> list[tuple]:
    conn = apsw.Connection(str(path))
    try:
        return list(conn.execute(statement, args))
    finally:
        conn.close()


def test_a_chunk_is_kept_under_the_first_half_of_its_hash_and_found_by_either(tmp_path):
    path = tmp_path / "index.db"
    store = SqliteStore(path)
    try:
        corpus = Corpus(store, seed=31)
        corpus.write(3, 4)
        full = [h for hashes in corpus.files.values() for h in hashes]
        ids = store.known_chunks(full)
        assert len(ids) == 12 and store.known_chunks([h[:32] for h in full]) == {h[:32]: ids[h] for h in full}
        # A file copied place by place (a worktree's file identical to its main scope's) gives the hashes read
        # back from the store: they find the same rows, and no chunk is stored twice.
        rows = store.file_chunk_rows(corpus.scope.id, ["src/module_0.py"])["src/module_0.py"]
        assert [r.chunk_hash for r in rows] == [h[:32] for h in corpus.files["src/module_0.py"]]
        worktree = store.create_scope(tmp_path / "wt", "worktree", corpus.scope.id)
        refs = [chunk_ref(chunk_of(r), r.chunk_hash, r.ordinal, "src/module_0.py") for r in rows]  # as the indexer does
        # ...beside a chunk given by its whole hash in the same batch.
        whole = dataclasses.replace(refs[0], ordinal=4, chunk_hash=corpus.files["src/module_0.py"][0])
        copied = FileWrite("src/module_0.py", 100, 1, "s", "python", [*refs, whole])
        store.write_batch(worktree.id, corpus.model, [], [copied])
        assert store.count_chunks() == 12
        placed = store.file_chunk_rows(worktree.id, ["src/module_0.py"])["src/module_0.py"]
        assert [r.chunk_id for r in placed] == [ids[h] for h in corpus.files["src/module_0.py"]] + [
            ids[corpus.files["src/module_0.py"][0]]
        ]
    finally:
        store.close()
    assert sorted(r[0] for r in _sql(path, "SELECT hash FROM chunk")) == sorted(bytes.fromhex(h[:32]) for h in full)


def test_a_store_made_before_keeps_its_chunks_and_vectors_under_the_shorter_hashes(tmp_path):
    path = tmp_path / "index.db"
    store = SqliteStore(path)
    corpus = Corpus(store, seed=37)
    corpus.write(2, 5)
    full = [h for hashes in corpus.files.values() for h in hashes]
    before = store.known_chunks(full)
    store.close()
    conn = apsw.Connection(str(path))  # as schema 7 left it: the whole sha256
    with conn:
        for h in full:
            conn.execute("UPDATE chunk SET hash = ? WHERE hash = ?", (h, h[:32]))
        conn.execute(BEFORE_COMPRESSED_TEXT)
        conn.execute("PRAGMA user_version = 7")
    conn.close()
    store = corpus.store = SqliteStore(path)
    try:
        assert store.known_chunks(full) == before
        assert sorted(r[0] for r in _sql(path, "SELECT hash FROM chunk")) == sorted(bytes.fromhex(h[:32]) for h in full)
        ids, _ = corpus.by_id()
        assert sorted(ids.tolist()) == sorted(before.values())
        corpus.write(1, 2)  # written on after it: no chunk lost or doubled
        assert store.count_chunks() == 12
    finally:
        store.close()


def _symbol_index_sql(path) -> str:
    return _sql(path, "SELECT sql FROM sqlite_schema WHERE name = 'file_chunk_symbol'")[0][0]


def test_the_symbol_index_holds_only_named_places_and_names_are_found_through_it(tmp_path):
    path = tmp_path / "index.db"
    store = SqliteStore(path)
    corpus = Corpus(store, seed=41)
    corpus.write(4, 5, named_share=0.5)
    store.close()
    assert _symbol_index_sql(path).endswith("WHERE symbol_name IS NOT NULL")
    conn = apsw.Connection(str(path))  # as schema 8 left it: every place in the index
    with conn:
        conn.execute("DROP INDEX file_chunk_symbol")
        conn.execute("CREATE INDEX file_chunk_symbol ON file_chunk(scope_id, symbol_name COLLATE NOCASE)")
        conn.execute(BEFORE_COMPRESSED_TEXT)
        conn.execute("PRAGMA user_version = 8")
    conn.close()
    store = corpus.store = SqliteStore(path)
    try:
        assert _symbol_index_sql(path).endswith("WHERE symbol_name IS NOT NULL")
        named = _sql(path, "SELECT id, symbol_name FROM file_chunk WHERE symbol_name IS NOT NULL")
        unnamed = _sql(path, "SELECT count(*) FROM file_chunk WHERE symbol_name IS NULL")[0][0]
        assert named and unnamed
        place, name = named[0]
        assert store.symbol_matches([corpus.scope.id], [name.upper()], 10) == [place]
        plan = _sql(
            path,
            "EXPLAIN QUERY PLAN SELECT id FROM file_chunk fc WHERE fc.scope_id IN (?) AND fc.symbol_name "
            "COLLATE NOCASE IN (?)",
            (corpus.scope.id, name),
        )
        assert "file_chunk_symbol" in plan[0][-1]  # a lookup by name implies the index's condition
    finally:
        store.close()


def test_a_store_with_hash_keys_as_hex_digits_finds_every_chunk_after_moving_to_their_bytes(tmp_path, mixed_root):
    """Schema 10 kept the 32 hex digits; migration 11 stores their 16 bytes. The next index run finds every file
    unchanged, a copy of the tree in another folder finds every chunk stored (none stored twice), and a search
    still reads them."""
    db = tmp_path / "index.db"
    made = quarry("index", mixed_root, "--db", db, "--until", "fast", "--json")
    assert made.returncode == 0, made.stderr
    chunks = json.loads(made.stdout)["chunks_total"]
    conn = apsw.Connection(str(db))
    try:
        conn.execute(f"{BEFORE_HASH_BYTES}; PRAGMA user_version = 10")
        assert _sql(db, "SELECT DISTINCT typeof(hash) FROM chunk") == [("text",)]
    finally:
        conn.close()
    again = quarry("index", mixed_root, "--db", db, "--until", "fast", "--json")
    assert again.returncode == 0, again.stderr
    stats = json.loads(again.stdout)
    assert (stats["files_changed"], stats["chunks_total"]) == (0, chunks)
    assert _sql(db, "SELECT typeof(hash), length(hash), count(*) FROM chunk GROUP BY 1, 2") == [("blob", 16, chunks)]
    copy = shutil.copytree(mixed_root, tmp_path / "copy")
    copied = quarry("index", copy, "--db", db, "--until", "fast", "--json")
    assert copied.returncode == 0, copied.stderr
    assert json.loads(copied.stdout)["chunks_total"] == chunks  # the same documents: the same chunks
    assert _sql(db, "SELECT count(*) FROM chunk") == [(chunks,)]
    found = quarry("search", "parse", "--db", db, "--root", copy, "--mode", "exact", "--json")
    assert found.returncode == 0 and json.loads(found.stdout)["results"], found.stderr
