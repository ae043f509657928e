"""The search of a large index by its vectors' sign bits, against a real store (SQLite file, sqlite-vec, vectors
written through Store.write_batch): it nominates what exact search finds, reports exact scores, never returns a
deleted vector, scores a replaced one as it is now, keeps up with writes and with packs rewritten under it, and a
store made before the packs gets them at its next garbage collection. A real index of real files, searched with
the line moved below its size, ranks as the in-memory search does."""

from __future__ import annotations

import threading

import apsw
import numpy as np
import pytest

from desktop_app.search.pipeline import Searcher
from desktop_app.search.request import SearchRequest
from desktop_app.store.rows import HitFilter
from desktop_app.store.sqlite import sign_index, vec0_storage, vector_search_choice
from desktop_app.store.sqlite.sign_packs import SignPacks
from desktop_app.store.sqlite.store import SqliteStore
from desktop_app.store.sqlite.vector_index import VectorIndex
from desktop_app.store.sqlite.vector_search_choice import SizedVectorSearch

from .old_schemas import BEFORE_COMPRESSED_TEXT
from .test_vector_index import DIMS, MODEL, Corpus, exact_top, unit


@pytest.fixture
def store(tmp_path):
    s = SqliteStore(tmp_path / "index.db")
    yield s
    s.close()


def signs_of_model(store: SqliteStore) -> sign_index.SignIndex:
    index = store.sign_index(MODEL, DIMS, at_least=1)
    assert index is not None
    index.refresh()
    return index


def test_sign_search_finds_what_exact_search_finds_with_exact_scores(store, monkeypatch):
    # 3,000 random vectors, the hard case (real embeddings have far larger gaps at the top: the Linux kernel's index
    # kept 0.99-1.0), with a shortlist of a third of them so that the Hamming step chooses: 0.89 of the exact top 10
    # for code vectors here.
    monkeypatch.setattr(sign_index, "HAMMING_SHORTLIST", 1_000)
    corpus = Corpus(store, seed=11)
    corpus.write(150, 20)
    index = signs_of_model(store)
    for names in (False, True):
        ids, vectors = corpus.by_id(names)
        recalls = []
        for q in unit(corpus.rng, 30):
            found = index.nearest(q, None, 10, names=names)
            recalls.append(len({cid for cid, _ in found} & set(exact_top(ids, vectors, q, 10))) / 10)
            exact = dict(zip(ids.tolist(), (vectors @ q).tolist(), strict=True))
            assert [sim for _, sim in found] == sorted((sim for _, sim in found), reverse=True)
            for cid, sim in found:
                assert sim == pytest.approx(exact[cid], abs=1e-5)
        assert np.mean(recalls) >= 0.85, (names, np.mean(recalls))


def test_only_allowed_chunks_are_returned_and_similarities_are_exact(store):
    corpus = Corpus(store, seed=12)
    corpus.write(20, 10, language="python")
    corpus.write(80, 10, language="rust", prefix="lib")
    index = signs_of_model(store)
    python = index.allowed([corpus.scope.id], HitFilter(languages=("python",)))
    assert python is not None and len(python) == 200
    ids, vectors = corpus.by_id()
    for q in unit(corpus.rng, 5):
        found = [cid for cid, _ in index.nearest(q, python, 10)]
        assert found == exact_top(ids, vectors, q, 10, python)
    assert index.nearest(unit(corpus.rng, 1)[0], np.zeros(0, dtype=np.int64), 10) == []
    q = unit(corpus.rng, 1)[0]
    index.nearest(q, None, 10)
    sims = index.similarities(q, [int(i) for i in ids[::7]] + [10**9])
    assert set(sims) == set(ids[::7].tolist())
    for cid, vector in zip(ids[::7], vectors[::7], strict=True):
        assert sims[int(cid)] == pytest.approx(float(vector @ q), abs=1e-5)


def test_a_scan_thread_reads_its_vectors_while_another_thread_is_inside_the_stores_connection(store):
    # A search's vector scans run on threads of their own while the worker's thread reads the keyword index. apsw
    # refuses a connection to a second thread while a statement runs ("busy in another thread"): a hybrid search
    # of the Linux kernel failed so when its exact reads went through the store's connection.
    corpus = Corpus(store, seed=13)
    corpus.write(20, 10)
    index = signs_of_model(store)
    inside, release = threading.Event(), threading.Event()

    def hold() -> int:
        inside.set()
        release.wait()
        return 1

    store._conn.create_scalar_function("hold_connection", hold, 0)
    holder = threading.Thread(target=lambda: store._conn.execute("SELECT hold_connection()").fetchall())
    holder.start()
    inside.wait()
    try:
        q = unit(corpus.rng, 1)[0]
        found = index.nearest(q, None, 5)
        sims = index.similarities(q, [cid for cid, _ in found])
    finally:
        release.set()
        holder.join()
    ids, vectors = corpus.by_id()
    assert [cid for cid, _ in found] == exact_top(ids, vectors, q, 5)
    assert sims == dict(found)


def test_deleted_vectors_are_never_returned_and_a_replaced_one_scores_as_it_is_now(store):
    corpus = Corpus(store, seed=13)
    corpus.write(30, 10)
    index = signs_of_model(store)
    gone_paths = [f"src/module_{i}.py" for i in range(0, 30, 10)]
    gone = {store.known_chunks(corpus.files[p])[h] for p in gone_paths for h in corpus.files[p]}
    corpus.delete(gone_paths)  # their 30 entries stay in the packs: under a quarter of the 270 live...
    assert SignPacks(store._conn, store._vec0_table(MODEL, False).name).entries() == 300  # ...so not rewritten
    index.refresh()
    ids, vectors = corpus.by_id()
    for q in unit(corpus.rng, 10):
        assert [cid for cid, _ in index.nearest(q, None, 10)] == exact_top(ids, vectors, q, 10)
        everything = [cid for cid, _ in index.nearest(q, None, 300)]  # every entry read and scored
        assert sorted(everything) == sorted(ids.tolist()) and not set(everything) & gone
    target = int(ids[0])
    fresh = unit(corpus.rng, 1)[0]
    store.add_vectors(MODEL, [(target, fresh, None)])
    index.refresh()
    best, sim = index.nearest(fresh, None, 1)[0]
    assert best == target and sim == pytest.approx(1.0, abs=1e-3)
    assert index.nearest(fresh, None, 300).count((best, sim)) == 1  # its old entry adds no second result


def test_mostly_stale_packs_are_rewritten_and_a_reader_loads_them_again(store):
    corpus = Corpus(store, seed=14)
    corpus.write(40, 10)
    index = signs_of_model(store)
    held = len(index.ids())
    corpus.delete([f"src/module_{i}.py" for i in range(20)])  # half the entries stale: rewritten
    packs = SignPacks(store._conn, store._vec0_table(MODEL, False).name)
    assert packs.entries() == 200 < held
    index.refresh()
    np.testing.assert_array_equal(index.ids(), corpus.by_id()[0])
    corpus.write(5, 10)
    index.refresh()
    np.testing.assert_array_equal(index.ids(), corpus.by_id()[0])


def test_many_small_packs_are_merged_and_a_reader_loads_them_again(store):
    corpus = Corpus(store, seed=18)
    for _ in range(70):  # a pack a write, as a watched folder's edits make them
        corpus.write(1, 3)
    index = signs_of_model(store)
    table = store._vec0_table(MODEL, False).name

    def packs() -> int:
        return store._conn.execute("SELECT count(*) FROM vector_sign WHERE vector_table = ?", (table,)).fetchall()[0][0]

    assert packs() == 70
    store.collect_garbage()
    assert packs() == 1
    index.refresh()
    ids, vectors = corpus.by_id()
    np.testing.assert_array_equal(index.ids(), ids)
    q = unit(corpus.rng, 1)[0]
    assert [c for c, _ in index.nearest(q, None, 10)] == exact_top(ids, vectors, q, 10)


def test_a_store_made_before_sign_packs_gets_them_at_its_next_garbage_collection(tmp_path):
    path = tmp_path / "index.db"
    store = SqliteStore(path)
    corpus = Corpus(store, seed=15)
    corpus.write(20, 10)
    store.close()
    conn = apsw.Connection(str(path))  # as schema 4 left it: no packs, no tables for them
    conn.execute(BEFORE_COMPRESSED_TEXT)
    conn.execute(
        "DROP TABLE vector_sign; DROP TABLE vector_sign_complete; DROP TRIGGER file_chunk_delete; "
        "DROP TRIGGER chunk_count_insert; DROP TRIGGER chunk_count_delete; "
        "PRAGMA user_version = 4"
    )
    conn.close()
    store = corpus.store = SqliteStore(path)
    try:
        assert store.sign_index(MODEL, DIMS, at_least=1) is None  # migrated, but its packs are not complete
        searched = SizedVectorSearch(store, MODEL, DIMS)
        searched.refresh()
        ids, vectors = corpus.by_id()
        q = unit(corpus.rng, 1)[0]
        assert [c for c, _ in searched.nearest(q, None, 10)] == exact_top(ids, vectors, q, 10)
        store.collect_garbage()
        index = signs_of_model(store)
        np.testing.assert_array_equal(index.ids(), ids)
        assert [c for c, _ in index.nearest(q, None, 10)] == exact_top(ids, vectors, q, 10)
    finally:
        store.close()


def test_the_search_lets_go_of_its_in_memory_copy_once_the_store_grows_past_the_line(store, monkeypatch):
    monkeypatch.setattr(vector_search_choice, "SIGN_SEARCH_MIN", 250)  # code and name vectors
    corpus = Corpus(store, seed=16)
    corpus.write(10, 10)
    searched = SizedVectorSearch(store, MODEL, DIMS)
    searched.refresh()
    assert isinstance(searched._inner, VectorIndex)
    corpus.write(10, 10)
    searched.refresh()
    assert isinstance(searched._inner, sign_index.SignIndex)
    ids, vectors = corpus.by_id()
    q = unit(corpus.rng, 1)[0]
    assert [c for c, _ in searched.nearest(q, None, 10)] == exact_top(ids, vectors, q, 10)
    np.testing.assert_array_equal(searched.ids(), ids)


def test_vectors_read_by_id_from_the_chunks_blobs_match_the_virtual_table(store, monkeypatch):
    corpus = Corpus(store, seed=17)
    corpus.write(40, 10)
    corpus.delete(["src/module_3.py"])
    corpus.write(2, 10)  # may fill the holes the deletion left
    ids = corpus.by_id()[0]
    wanted = np.concatenate([ids[::5], [10**9]])
    fast = list(store.vectors_by_id(MODEL, False, wanted, codes=True))
    monkeypatch.setattr(vec0_storage, "_ROWID_COLUMNS", ("not", "sqlite-vec 0.1"))
    slow = list(store.vectors_by_id(MODEL, False, wanted, codes=True))
    by_id = {int(i): row for got_ids, rows in fast for i, row in zip(got_ids, rows, strict=True)}
    assert set(by_id) == set(ids[::5].tolist())
    for got_ids, rows in slow:
        for i, row in zip(got_ids, rows, strict=True):
            np.testing.assert_array_equal(by_id[int(i)], row)


def test_a_real_index_searched_by_signs_ranks_as_the_in_memory_search(index_copy, embedder, monkeypatch):
    store = SqliteStore(index_copy)
    try:
        requests = [
            SearchRequest(q, roots=(), all_scopes=True, k=10, record_history=False)
            for q in ("parse a configuration file", "retry a failed request", "format a date", "tokenize input")
        ]
        in_memory = Searcher(store, embedder)
        before = [[(r.path, r.start_line) for r in in_memory.search(req).results] for req in requests]
        monkeypatch.setattr(vector_search_choice, "SIGN_SEARCH_MIN", 1)
        by_signs = Searcher(store, embedder)
        after = [[(r.path, r.start_line) for r in by_signs.search(req).results] for req in requests]
        assert isinstance(by_signs.full.index._inner, sign_index.SignIndex)  # type: ignore[union-attr]
        assert after == before and all(before)
    finally:
        store.close()
