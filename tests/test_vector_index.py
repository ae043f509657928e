"""The worker's in-memory vector index against a real store (SQLite file, sqlite-vec, vectors written
through Store.write_batch): it keeps up with writes and deletions, its quantised fast path agrees with
exact float32 search, and it honours the allowed set."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from desktop_app.search import pipeline
from desktop_app.search.pipeline import Searcher
from desktop_app.search.request import SearchRequest
from desktop_app.store.rows import ChunkRef, FileWrite, HitFilter, NewChunk
from desktop_app.store.sqlite import quantized_rows, vec0_storage
from desktop_app.store.sqlite.store import SqliteStore
from desktop_app.store.sqlite.vector_index import VectorIndex

MODEL = "test-random"
DIMS = 384


def unit(rng: np.random.Generator, n: int, dims: int = DIMS) -> np.ndarray:
    x = rng.standard_normal((n, dims), dtype=np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def as_stored(vector: np.ndarray) -> np.ndarray:
    """A unit vector as the store keeps it: its int8 codes, read back as a unit vector."""
    return vec0_storage.unit_rows(vec0_storage.int8_codes(vector[None, :]))[0]


class Corpus:
    """Writes files of chunks with random vectors and remembers every vector as stored, by chunk hash."""

    def __init__(self, store: SqliteStore, seed: int = 0, model: str = MODEL):
        self.store = store
        self.model = model
        self.rng = np.random.default_rng(seed)
        store.register_model(model, DIMS, "test")
        self.scope = store.create_scope("/repo")
        self.code: dict[str, np.ndarray] = {}  # by chunk hash
        self.names: dict[str, np.ndarray] = {}
        self.files: dict[str, list[str]] = {}  # chunk hashes by path
        self.files_written = 0

    def write(
        self,
        n_files: int,
        chunks_per_file: int,
        language: str = "python",
        named_share: float = 0.7,
        prefix: str = "src",
    ) -> None:
        files, new = [], []
        for f in range(self.files_written, self.files_written + n_files):
            path = f"{prefix}/module_{f}.{'py' if language == 'python' else 'rs'}"
            vectors = unit(self.rng, chunks_per_file * 2)
            refs = []
            for i in range(chunks_per_file):
                text = f"def function_{f}_{i}():\n    return {i}"
                h = hashlib.sha256(f"{path}\n{text}".encode()).hexdigest()
                named = self.rng.random() < named_share
                refs.append(
                    ChunkRef(
                        h,
                        i,
                        2 * i + 1,
                        2 * i + 2,
                        "function",
                        f"function_{f}_{i}" if named else None,
                        "function" if named else None,
                        None,
                        "",
                        path,
                        text,
                    )
                )
                new.append(NewChunk(h, text, 8, vectors[2 * i], vectors[2 * i + 1] if named else None))
                self.code[h] = as_stored(vectors[2 * i])
                if named:
                    self.names[h] = as_stored(vectors[2 * i + 1])
            files.append(FileWrite(path, 100, 1, h, language, refs))
            self.files[path] = [r.chunk_hash for r in refs]
        self.files_written += n_files
        self.store.write_batch(self.scope.id, self.model, new, files)

    def delete(self, paths: list[str]) -> None:
        self.store.write_batch(self.scope.id, self.model, [], deleted=paths)
        self.store.collect_garbage()
        for path in paths:
            for h in self.files.pop(path):
                self.code.pop(h, None)
                self.names.pop(h, None)

    def by_id(self, names: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """(chunk ids, vectors) of every live vector of this kind, as exact search sees them."""
        vectors = self.names if names else self.code
        ids = self.store.known_chunks(list(vectors))
        order = sorted(vectors, key=lambda h: ids[h])
        return np.array([ids[h] for h in order], dtype=np.int64), np.stack([vectors[h] for h in order])


def exact_top(
    ids: np.ndarray, vectors: np.ndarray, query: np.ndarray, k: int, allowed: np.ndarray | None = None
) -> list[int]:
    sims = vectors @ query
    if allowed is not None:
        sims = np.where(np.isin(ids, allowed), sims, -np.inf)
    top = np.argsort(-sims, kind="stable")[:k]
    return [int(ids[i]) for i in top if sims[i] > -np.inf]


@pytest.fixture
def store(tmp_path):
    s = SqliteStore(tmp_path / "index.db")
    yield s
    s.close()


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 256 vectors, so a few thousand vectors span many blocks and several growth steps."""
    monkeypatch.setattr(quantized_rows, "BLOCK", 256)
    monkeypatch.setattr(quantized_rows, "_FIRST_CAPACITY", 16)


def test_appends_what_each_write_adds(store, small_blocks):
    corpus = Corpus(store)
    index = VectorIndex(store, MODEL, DIMS)
    corpus.write(10, 20)
    index.refresh()
    assert index._code.live_count == 200
    corpus.write(15, 20)
    index.refresh()
    ids, vectors = corpus.by_id()
    assert index._code.live_count == len(ids) == 500
    np.testing.assert_array_equal(index._code.ids, ids)
    for q in unit(corpus.rng, 5):
        allowed = index.allowed([corpus.scope.id])
        found = [cid for cid, _ in index.nearest(q, allowed, 10)]
        assert found == exact_top(ids, vectors, q, 10)


def test_deleted_vectors_are_forgotten_without_reloading(store, small_blocks):
    corpus = Corpus(store)
    index = VectorIndex(store, MODEL, DIMS)
    corpus.write(30, 20)
    index.refresh()
    before = index._code
    gone = [
        cid
        for path in ("src/module_3.py", "src/module_17.py")
        for cid in store.known_chunks(corpus.files[path]).values()
    ]
    corpus.delete(["src/module_3.py", "src/module_17.py"])
    index.refresh()
    assert index._code is before  # rows marked dead in place, not a reload
    ids, vectors = corpus.by_id()
    assert index._code.live_count == len(ids) == 560
    np.testing.assert_array_equal(index._code.live_ids(), ids)
    allowed = index.allowed([corpus.scope.id])
    for q in unit(corpus.rng, 5):
        found = [cid for cid, _ in index.nearest(q, allowed, 600)]
        assert not set(found) & set(gone) and len(found) == 560
    assert not index.similarities(vectors[0], gone)


def test_vectors_arriving_below_held_ids_are_added_without_a_reload(store):
    """A first index fills vectors in by priority, so they arrive out of id order: the rows held stay put."""
    corpus = Corpus(store)
    corpus.write(4, 10, named_share=0.0)
    ids, _ = corpus.by_id()
    store.register_model("other", DIMS, "test")
    late = unit(corpus.rng, len(ids))
    store.add_vectors("other", [(int(cid), vec, None) for cid, vec in zip(ids[20:], late[20:], strict=True)])
    index = VectorIndex(store, "other", DIMS)
    index.refresh()
    store.add_vectors("other", [(int(cid), vec, None) for cid, vec in zip(ids[:20], late[:20], strict=True)])
    first = index._code
    index.refresh()
    assert index._code is first  # appended to, not rebuilt
    np.testing.assert_array_equal(index._code.ids[: len(ids) - 20], ids[20:])
    np.testing.assert_array_equal(np.sort(index._code.ids), ids)
    sims = index.similarities(late[3], ids.tolist())
    assert sims[int(ids[3])] == pytest.approx(1.0, abs=1e-4) and len(sims) == len(ids)
    assert [cid for cid, _ in index.nearest(late[3], None, 1)] == [int(ids[3])]
    allowed = np.sort(ids[:10])  # a filter keeping only chunks that arrived late
    assert {cid for cid, _ in index.nearest(late[25], allowed, 5)} <= set(allowed.tolist())


def test_a_budgeted_refresh_loads_in_slices_and_goes_on_where_it_stopped(store):
    corpus = Corpus(store, seed=4)
    corpus.write(150, 20)  # 3,000 code vectors: three sqlite-vec chunks of 1,024, read one at a time
    index = VectorIndex(store, MODEL, DIMS)
    assert index.refresh(budget_s=0) is False and index.loaded_share == 0
    slices = 0
    while not index.refresh(budget_s=1e-9):  # one batch a call
        slices += 1
        assert 0 < index.loaded_share <= 1
        if slices == 2:  # the store changes half-way through the load
            corpus.write(5, 20, prefix="late")
            corpus.delete(["src/module_7.py"])
    assert slices >= 3 and index.loaded_share == 1
    allowed = index.allowed([corpus.scope.id])
    for names in (False, True):
        ids, vectors = corpus.by_id(names)
        rows = index._names if names else index._code
        np.testing.assert_array_equal(rows.live_ids(), ids)
        q = vectors[17]
        assert index.nearest(q, allowed, 1, names=names)[0][0] == ids[17]


def test_searches_during_warm_up_use_the_vectors_loaded_so_far(store, embedder, monkeypatch):
    corpus = Corpus(store, seed=5, model=embedder.model_id)
    corpus.write(150, 20)
    monkeypatch.setattr(pipeline, "WARM_UP_SLICE_S", 1e-9)  # a slice a batch, so there is a "meanwhile"
    searcher = Searcher(store, embedder)
    request = SearchRequest("function that returns a number", roots=("/repo",), record_history=False)
    meanwhile = []
    for _ in searcher.warm_up():  # between its steps, as the worker runs waiting searches there
        meanwhile.append(searcher.search(request))
    assert len(meanwhile) >= 3
    shares = [r.vectors_loaded for r in meanwhile]
    assert shares == sorted(shares) and 0 < shares[0] < 1
    assert all("still loading" in r.notice and r.results for r in meanwhile)
    done = searcher.search(request)
    assert done.vectors_loaded == 1 and done.notice is None and done.results


def test_searching_every_scope_unfiltered_needs_no_allowed_set(store):
    corpus = Corpus(store)
    corpus.write(5, 10)
    index = VectorIndex(store, MODEL, DIMS)
    index.refresh()
    assert index.allowed([corpus.scope.id]) is None  # the only scope: every chunk, no SQL
    assert len(index.nearest(corpus.by_id()[1][0], None, 100)) == 50
    other = store.create_scope("/other")
    index.refresh()
    np.testing.assert_array_equal(index.allowed([corpus.scope.id]), corpus.by_id()[0])
    assert index.allowed([corpus.scope.id, other.id]) is None
    assert index.allowed([corpus.scope.id, other.id], HitFilter(languages=("rust",))).size == 0


def test_fast_path_agrees_with_exact_search(store):
    corpus = Corpus(store, seed=1)
    corpus.write(150, 20)  # 3,000 chunks, ~2,100 with a name vector
    index = VectorIndex(store, MODEL, DIMS)
    index.refresh()
    allowed = index.allowed([corpus.scope.id])
    for names in (False, True):
        ids, vectors = corpus.by_id(names)
        recalls = []
        for q in unit(corpus.rng, 40):
            truth = exact_top(ids, vectors, q, 10)
            found = index.nearest(q, allowed, 10, names=names)
            recalls.append(len({cid for cid, _ in found} & set(truth)) / 10)
            exact = dict(zip(ids.tolist(), (vectors @ q).tolist(), strict=True))
            for cid, sim in found:
                assert sim == pytest.approx(exact[cid], abs=2e-4)
        assert np.mean(recalls) >= 0.99, (names, np.mean(recalls))


@pytest.mark.parametrize("python_files", [1, 20, 120], ids=["below-shortlist", "sparse", "most"])
def test_only_allowed_chunks_are_returned(store, python_files):
    corpus = Corpus(store, seed=2)
    corpus.write(python_files, 10, language="python")
    corpus.write(150 - python_files, 10, language="rust", prefix="lib")
    index = VectorIndex(store, MODEL, DIMS)
    index.refresh()
    python = index.allowed([corpus.scope.id], HitFilter(languages=("python",)))
    assert len(python) == python_files * 10
    ids, vectors = corpus.by_id()
    for q in unit(corpus.rng, 5):
        found = [cid for cid, _ in index.nearest(q, python, 10)]
        assert set(found) <= set(python.tolist())
        assert found == exact_top(ids, vectors, q, 10, python)
    assert index.nearest(unit(corpus.rng, 1)[0], np.zeros(0, dtype=np.int64), 10) == []


def test_similarities_cover_chunks_with_and_without_name_vectors(store):
    corpus = Corpus(store, seed=3)
    corpus.write(10, 10, named_share=0.5)
    index = VectorIndex(store, MODEL, DIMS)
    index.refresh()
    hashes = list(corpus.code)
    ids = store.known_chunks(hashes)
    q = unit(corpus.rng, 1)[0]
    code = index.similarities(q, [ids[h] for h in hashes])
    names = index.similarities(q, [ids[h] for h in hashes], names=True)
    assert set(code) == set(ids.values())
    assert set(names) == {ids[h] for h in corpus.names} and 0 < len(names) < len(code)
    for h in hashes:
        assert code[ids[h]] == pytest.approx(float(corpus.code[h] @ q), abs=2e-4)
        if h in corpus.names:
            assert names[ids[h]] == pytest.approx(float(corpus.names[h] @ q), abs=2e-4)
    assert index.similarities(q, [10**9]) == {}


def test_shadow_table_reads_match_the_virtual_table(store, monkeypatch):
    corpus = Corpus(store, seed=4)
    corpus.write(40, 10)
    corpus.delete(["src/module_5.py", "src/module_30.py"])  # leaves holes in vec0's chunks
    corpus.write(5, 10)  # which new vectors may fill
    fast = list(store.iter_vectors(MODEL, after_id=7, batch=64))
    ids_fast = store.vector_ids(MODEL)
    count_fast = store.vector_count(MODEL, names=True)
    monkeypatch.setattr(vec0_storage, "_ROWID_COLUMNS", ("not", "sqlite-vec 0.1"))
    assert not store._vec0_table(MODEL, False).shadow_readable
    slow = list(store.iter_vectors(MODEL, after_id=7, batch=64))
    np.testing.assert_array_equal(np.concatenate([i for i, _ in fast]), np.concatenate([i for i, _ in slow]))
    np.testing.assert_array_equal(np.concatenate([m for _, m in fast]), np.concatenate([m for _, m in slow]))
    np.testing.assert_array_equal(ids_fast, store.vector_ids(MODEL))
    assert count_fast == store.vector_count(MODEL, names=True) == len(corpus.names)
    ids, vectors = corpus.by_id()
    np.testing.assert_array_equal(ids_fast, ids)
    np.testing.assert_array_equal(np.concatenate([m for _, m in fast]), vectors[ids > 7])


def test_vectors_are_stored_as_int8_codes_a_rounding_away_from_those_written(store):
    rng = np.random.default_rng(5)
    corpus = Corpus(store, seed=5)
    written = unit(rng, 3)
    written[2] = 0  # an empty text's vector
    corpus.write(1, 3)
    ids = store.known_chunks(list(corpus.code))
    store.add_vectors(MODEL, [(cid, written[i], None) for i, cid in enumerate(sorted(ids.values()))])
    table = store._vec0_table(MODEL, False)
    assert table.int8 and table.shadow_readable
    blob = store._conn.execute(f"SELECT vectors FROM {table._table}_vector_chunks00").fetchall()[0][0]
    assert len(blob) == 1024 * DIMS  # one byte a dimension, for vec0's chunk of 1,024 slots
    (got_ids, got), *_ = store.iter_vectors(MODEL)
    np.testing.assert_array_equal(got_ids, sorted(ids.values()))
    assert np.abs((got[:2] * written[:2]).sum(axis=1) - 1).max() < 1e-4  # cosine with what was written
    np.testing.assert_array_equal(got[2], 0)


def test_a_store_made_with_float32_vectors_reads_and_writes_them_as_before(store):
    store.register_model(MODEL, DIMS, "test")
    table = store._vec0_table(MODEL, False)._table
    for name in (table, table + "_name"):  # as stores made before int8 codes declared them
        store._conn.execute(f"DROP TABLE {name}")
        store._conn.execute(f"CREATE VIRTUAL TABLE {name} USING vec0(embedding float[{DIMS}] distance_metric=cosine)")
    corpus = Corpus(store, seed=6)
    assert not store._vec0_table(MODEL, False).int8
    rng = np.random.default_rng(6)
    corpus.write(2, 5)
    ids = sorted(store.known_chunks(list(corpus.code)).values())
    exact = unit(rng, len(ids))
    store.add_vectors(MODEL, [(cid, exact[i], exact[i]) for i, cid in enumerate(ids)])
    for names in (False, True):
        got_ids, got = (
            np.concatenate([i for i, _ in store.iter_vectors(MODEL, names)]),
            np.concatenate([m for _, m in store.iter_vectors(MODEL, names)]),
        )
        np.testing.assert_array_equal(got_ids, ids)
        np.testing.assert_array_equal(got, exact)
    index = VectorIndex(store, MODEL, DIMS)  # codes with a residual beside them, rescored within 2e-4
    index.refresh()
    q = unit(rng, 1)[0]
    found = index.nearest(q, None, 3)
    assert [cid for cid, _ in found] == [ids[i] for i in np.argsort(-(exact @ q))[:3]]
    for cid, sim in found:
        assert sim == pytest.approx(float(exact[ids.index(cid)] @ q), abs=2e-4)
