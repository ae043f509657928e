"""A SQLite store looks for unused chunks only when a place was deleted since it last looked, and then only among
the chunks of the deleted places (a look at every chunk took 7 of a no-op run's 15 s on the Linux kernel, and 5.7
of a 10-file change's 17.5 s). Real store, real writes: a deleted file, a file whose chunks changed, a removed
scope (deletes by cascade) each bring the look back, a store made before the mark gets a look at every chunk at
its first collection, and one made before schema 12 keeps its mark. Also the keyword index's merge setting,
which schema 7 gives old stores too."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from desktop_app.store.rows import ChunkRef, FileWrite
from desktop_app.store.sqlite.store import SqliteStore

from .old_schemas import BEFORE_COMPRESSED_TEXT, BEFORE_UNPLACED
from .test_vector_index import Corpus


@pytest.fixture
def store(tmp_path):
    s = SqliteStore(tmp_path / "index.db")
    yield s
    s.close()


def test_only_a_deleted_place_makes_the_next_collection_look_for_unused_chunks(store):
    corpus = Corpus(store, seed=21)
    corpus.write(10, 5)
    assert store._garbage_possible()  # not looked yet
    assert store.collect_garbage() == 0 and not store._garbage_possible()
    corpus.write(2, 5)  # new files only: nothing can have lost its last place
    assert not store._garbage_possible()
    corpus.delete(["src/module_3.py"])  # collects at once: its 5 chunks
    assert not store._garbage_possible()
    store.write_batch(corpus.scope.id, corpus.model, [], deleted=["src/module_4.py"])
    assert store._garbage_possible()
    assert store.collect_garbage() == 5 and not store._garbage_possible()
    other = store.create_scope("/elsewhere")
    store.write_batch(other.id, corpus.model, [], corpus_files(corpus, "src/module_5.py"))
    assert store.collect_garbage() == 0
    store.remove_scope(corpus.scope.id)  # file and place rows go by cascade; module_5's chunks stay used
    assert store.count_chunks() == 5 and not store._garbage_possible()


def test_a_collection_looks_only_among_the_chunks_of_the_deleted_places(store):
    corpus = Corpus(store, seed=24)
    corpus.write(6, 5)
    store.collect_garbage()
    # An unused chunk that no deleted place used: a look at every chunk would take it, this one does not.
    store._conn.execute("INSERT INTO chunk (hash, text, token_count, created_at) VALUES ('left', 'x', 1, 0)")
    store.write_batch(corpus.scope.id, corpus.model, [], deleted=["src/module_2.py"])
    assert store._garbage_possible()
    assert store.collect_garbage() == 5 and not store._garbage_possible()
    assert store.count_chunks() == 26 and len(store.vector_ids(corpus.model)) == 25  # module_2's vectors went too
    store.write_batch(corpus.scope.id, corpus.model, [], corpus_files(corpus, "src/module_3.py"))  # same chunks
    assert store.collect_garbage() == 0 and store.count_chunks() == 26  # its old places went, its chunks stayed


def test_a_store_made_before_schema_12_keeps_its_mark_and_then_collects_among_deleted_places(tmp_path):
    path = tmp_path / "index.db"
    corpus = written_and_closed(path, seed=25, files=4)
    conn = apsw.Connection(str(path))
    conn.execute(f"{BEFORE_UNPLACED}; PRAGMA user_version = 11")
    conn.close()
    store = SqliteStore(path)
    try:
        assert not store._garbage_possible()  # the mark it had holds
        corpus.store = store
        store.write_batch(corpus.scope.id, corpus.model, [], deleted=["src/module_1.py"])
        assert store._garbage_possible()
        assert store.collect_garbage() == 5 and not store._garbage_possible()
        assert store.count_chunks() == 15
    finally:
        store.close()


def written_and_closed(path: Path, seed: int, files: int) -> Corpus:
    """A store at `path` of `files` files of 5 chunks, collected once and closed: to be set back to an older
    schema."""
    store = SqliteStore(path)
    corpus = Corpus(store, seed=seed)
    corpus.write(files, 5)
    store.collect_garbage()
    store.close()
    return corpus


def corpus_files(corpus: Corpus, path: str) -> list[FileWrite]:
    """A FileWrite of `path` as the corpus wrote it, for another scope (its chunks reused by hash)."""
    hashes = corpus.files[path]
    refs = [
        ChunkRef(h, i, 2 * i + 1, 2 * i + 2, "function", None, None, None, "", path, "x") for i, h in enumerate(hashes)
    ]
    return [FileWrite(path, 100, 1, hashes[0], "python", refs)]


def test_a_store_made_before_the_mark_looks_at_its_first_collection(tmp_path):
    path = tmp_path / "index.db"
    written_and_closed(path, seed=22, files=3)
    conn = apsw.Connection(str(path))
    conn.execute("DELETE FROM meta WHERE key = 'no_garbage'")  # as schema 4 left it
    # An unused chunk an earlier build left, as if a run had died between its deletions and its collection.
    conn.execute("INSERT INTO chunk (hash, text, token_count, created_at) VALUES ('left', 'x', 1, 0)")
    conn.close()
    store = SqliteStore(path)
    try:
        assert store._garbage_possible()
        assert store.collect_garbage() == 1
        assert not store._garbage_possible()
    finally:
        store.close()


def test_a_store_made_before_the_chunk_count_counts_its_chunks_at_its_next_collection_then_keeps_the_count(tmp_path):
    path = tmp_path / "index.db"
    corpus = written_and_closed(path, seed=23, files=3)
    conn = apsw.Connection(str(path))  # as schema 5 left it
    conn.execute(BEFORE_COMPRESSED_TEXT)
    conn.execute(
        "DROP TRIGGER chunk_count_insert; DROP TRIGGER chunk_count_delete; DELETE FROM meta WHERE key = 'chunk_count'; "
        "PRAGMA user_version = 5"
    )
    conn.close()
    store = SqliteStore(path)
    try:
        scope = [corpus.scope.id]
        assert store.chunks_of_whole_store(scope) is None  # not counted by the migration: by the next collection
        assert store.collect_garbage() == 0
        assert store.chunks_of_whole_store(scope) == store.count_chunks() == 15
        corpus.store = store
        corpus.write(2, 5, prefix="more")
        assert store.chunks_of_whole_store(scope) == store.count_chunks() == 25
    finally:
        store.close()


def test_the_keyword_index_merges_sixteen_segments_at_a_time_in_a_new_and_a_migrated_store(tmp_path):
    """Schema 7: FTS5 keeps the setting in the file, so a store made before it gets it by migrating."""
    path = tmp_path / "index.db"
    store = SqliteStore(path)
    Corpus(store, seed=29).write(2, 3)
    store.close()

    def automerge() -> int:
        conn = apsw.Connection(str(path))
        try:
            return int(conn.execute("SELECT v FROM fts_config WHERE k = 'automerge'").fetchall()[0][0])
        finally:
            conn.close()

    assert automerge() == 16
    conn = apsw.Connection(str(path))  # as schema 6 left it: FTS5's default
    conn.execute(BEFORE_COMPRESSED_TEXT)
    conn.execute("DELETE FROM fts_config WHERE k = 'automerge'; PRAGMA user_version = 6")
    conn.close()
    SqliteStore(path).close()
    assert automerge() == 16
