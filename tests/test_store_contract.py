"""The store protocols (store/protocols.py) hold for both stores: one test body runs against a real SQLite file with
sqlite-vec and against a real PostgreSQL server with pgvector, and asserts the same answers of each. Ids differ
between stores, so answers are compared as places (path, chunk hash, start line) and chunk hashes. The last test
checks that every method and property of the protocols was called on each store."""

from __future__ import annotations

import inspect
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from desktop_app.store import protocols
from desktop_app.store.errors import StoreError
from desktop_app.store.postgres.store import PostgresStore
from desktop_app.store.rows import (
    ChunkRef,
    FileState,
    FileWrite,
    HistoryEntry,
    HitFilter,
    NewChunk,
    OutlineSource,
    SkippedFile,
)
from desktop_app.store.sqlite.store import SqliteStore

KINDS = ["sqlite", "team"]
MODEL, DIMS = "m", 4
CALLED: dict[str, set[str]] = defaultdict(set)  # store kind -> protocol members called on it
PROTOCOLS = (
    protocols.Catalog,
    protocols.KeywordIndex,
    protocols.TextIndex,
    protocols.VectorStore,
    protocols.SearchHistory,
    protocols.VectorSearch,
)


def _members(protocol: type) -> set[str]:
    return {
        name
        for name, value in vars(protocol).items()
        if not name.startswith("_") and (inspect.isfunction(value) or isinstance(value, property))
    }


class _Recorded:
    """The store (or a VectorSearch of it) itself, noting which protocol members a test calls on it."""

    def __init__(self, target: Any, kind: str):
        self._target, self._kind = target, kind

    def __getattr__(self, name: str) -> Any:
        CALLED[self._kind].add(name)
        value = getattr(self._target, name)
        if name == "vector_search":
            return lambda *args, **kwargs: _Recorded(value(*args, **kwargs), self._kind)
        return value


def _unit(*values: float) -> np.ndarray:
    v = np.array(values, dtype=np.float32)
    return v / np.linalg.norm(v)


CODE = {"a": _unit(1, 0, 0, 0), "b": _unit(0.8, 0.6, 0, 0), "c": _unit(0, 0, 1, 0)}
NAME_A = _unit(0, 1, 0, 0)
TEXTS = {
    "a": "def retry_request(url):\n    return fetch(url)",
    "b": "def parse_matrix(rows):\n    return rows",
    "c": "struct Matrix { rows: usize }",
    "d": "struct Matrix { rows: usize, cols: usize }",
    "e": "Notes on the retry policy",
}


def _ref(key: str, ordinal: int, path: str, symbol: str | None, kind: str, words: str) -> ChunkRef:
    symbol_type = None if symbol is None else kind
    return ChunkRef(
        key,
        ordinal,
        ordinal * 3 + 1,
        ordinal * 3 + 2,
        kind,
        symbol,
        symbol_type,
        None,
        words,
        path.replace(".", " "),
        TEXTS.get(key, ""),
    )


def _fill(store: Any, roots: tuple[Path, Path]) -> tuple[str, str]:
    """A main scope (a.py of two Python functions, b.rs of a Rust struct, notes.md, a skipped file) and a worktree
    of it where b.rs changed: (main scope id, worktree scope id)."""
    store.register_model(MODEL, DIMS, "source-of-m")
    main = store.create_scope(roots[0])
    chunks = [
        NewChunk("a", TEXTS["a"], 11, CODE["a"], NAME_A),
        NewChunk("b", TEXTS["b"], 9, CODE["b"]),
        NewChunk("c", TEXTS["c"], 7, CODE["c"]),
        NewChunk("e", TEXTS["e"], 5),
    ]
    a_py = FileWrite(
        "a.py",
        100,
        3_000,
        "sha-a",
        "python",
        [
            _ref("a", 0, "a.py", "retry_request", "function", "retry request"),
            _ref("b", 1, "a.py", "parse_matrix", "function", "parse matrix"),
        ],
    )
    b_rs = FileWrite("b.rs", 50, 2_000, "sha-b", "rust", [_ref("c", 0, "b.rs", "Matrix", "struct", "matrix")])
    notes = FileWrite("notes.md", 20, 1_000, "sha-n", "markdown", [_ref("e", 0, "notes.md", None, "text", "")])
    skipped = [SkippedFile("big.bin", 10**9, 500, "too big")]
    store.write_batch(main.id, MODEL, chunks, [a_py, b_rs, notes], skipped)
    worktree = store.create_scope(roots[1], "worktree", main.id)
    b_changed = FileWrite("b.rs", 60, 4_000, "sha-b2", "rust", [_ref("d", 0, "b.rs", "Matrix", "struct", "matrix")])
    store.write_batch(worktree.id, MODEL, [NewChunk("d", TEXTS["d"], 8)], [a_py, b_changed])
    return main.id, worktree.id


def _open(kind: str, request: pytest.FixtureRequest, tmp: Path) -> Any:
    if kind == "team":
        return PostgresStore(request.getfixturevalue("team_server").new_database())
    return SqliteStore(tmp / "index.db")


def _filled_store(request, folder: Path):
    """A filled store of the kind `request` asks for, in `folder`: (store, main id, worktree id, roots)."""
    roots = (folder / "main", folder / "worktree")
    store = _open(request.param, request, folder)
    main, worktree = _fill(store, roots)
    recorded = _Recorded(store, request.param)
    yield recorded, main, worktree, roots
    recorded.close()


@pytest.fixture(scope="module", params=KINDS)
def filled(request, tmp_path_factory):
    """One store of each kind filled once for the tests that only read."""
    yield from _filled_store(request, tmp_path_factory.mktemp(request.param))


@pytest.fixture(params=KINDS)
def fresh(request, tmp_path):
    """A store of each kind of its own, filled, for a test that writes."""
    yield from _filled_store(request, tmp_path)


def _places(store: Any, place_ids) -> list[tuple[str, str, int]]:
    """(path, chunk hash, start line) of each place, in the order given."""
    hits = {h.place_id: h for h in store.hits_for_places(list(place_ids))}
    return [(hits[p].path, _hash_of(store, hits[p].chunk_id), hits[p].start_line) for p in place_ids]


def _hash_of(store: Any, chunk_id: int) -> str:
    return {s.chunk_id: s.chunk_hash for s in store.stored_chunks([chunk_id])}[chunk_id]


def _hashes(store: Any, chunk_ids) -> list[str]:
    by_id = {s.chunk_id: s.chunk_hash for s in store.stored_chunks([int(c) for c in chunk_ids])}
    return sorted(by_id[int(c)] for c in chunk_ids)


def _ids(store: Any) -> dict[str, int]:
    return dict(store.known_chunks(["a", "b", "c", "d", "e"]))


# --- catalog ------------------------------------------------------------------------------------


def test_scopes_are_found_by_root_and_id_and_listed_with_their_counts(filled):
    store, main, worktree, roots = filled
    assert store.scope_for_root(roots[0]).id == main and store.scope_for_root(roots[0] / "nope") is None
    scope = store.scope_by_id(worktree)
    assert (scope.type, scope.root, scope.parent_id, scope.last_indexed_at) == ("worktree", str(roots[1]), main, None)
    assert store.scope_by_id("no such scope") is None
    summaries = {s.scope.id: (s.scope.root, s.files, s.chunks) for s in store.list_scopes()}
    assert summaries == {main: (str(roots[0]), 3, 4), worktree: (str(roots[1]), 2, 3)}
    assert [s.scope.root for s in store.list_scopes()] == sorted(str(r) for r in roots)
    assert store.scopes() == [s.scope for s in store.list_scopes()]  # a search of every scope counts nothing
    assert store.scope_counts(main) == (3, 4, 170) and store.scope_counts(worktree) == (2, 3, 160)


def test_files_are_read_with_their_state(filled):
    store, main, worktree, _ = filled
    states = store.file_states(main)
    assert {p: (s.size, s.mtime_ns, s.sha256, s.status) for p, s in states.items()} == {
        "a.py": (100, 3_000, "sha-a", "indexed"),
        "b.rs": (50, 2_000, "sha-b", "indexed"),
        "notes.md": (20, 1_000, "sha-n", "indexed"),
        "big.bin": (10**9, 500, None, "skipped"),
    }
    assert store.file_row(worktree, "b.rs") == FileState("b.rs", 60, 4_000, "sha-b2", "indexed")
    assert store.file_row(worktree, "notes.md") is None


def test_chunks_are_stored_once_and_read_back_by_id_file_and_scope(filled):
    store, main, worktree, _ = filled
    ids = _ids(store)
    assert sorted(ids) == ["a", "b", "c", "d", "e"] and store.count_chunks() == 5
    assert store.known_chunks(["a", "zzz", "a"]) == {"a": ids["a"]}
    stored = {s.chunk_hash: s for s in store.stored_chunks([ids["a"], ids["c"]])}
    assert {h: (s.path, s.ordinal, s.text, s.token_count, s.symbol_name) for h, s in stored.items()} == {
        "a": ("a.py", 0, TEXTS["a"], 11, "retry_request"),
        "c": ("b.rs", 0, TEXTS["c"], 7, "Matrix"),
    }
    rows = store.file_chunk_rows(worktree, ["a.py", "b.rs", "gone.py"])
    assert {p: [(s.chunk_hash, s.ordinal, s.start_line) for s in r] for p, r in rows.items()} == {
        "a.py": [("a", 0, 1), ("b", 1, 4)],
        "b.rs": [("d", 0, 1)],
        "gone.py": [],
    }
    assert sorted(store.chunk_ids_of_files(main, ["a.py", "notes.md"])) == sorted([ids["a"], ids["b"], ids["e"]])
    assert store.scope_chunk_ids([main]).tolist() == sorted(ids[h] for h in "abce")
    assert store.scope_chunk_ids([main, worktree], HitFilter(languages=("rust",))).tolist() == sorted(
        [ids["c"], ids["d"]]
    )
    # changed_only: the worktree's b.rs differs from main's, its a.py does not
    assert store.scope_chunk_ids([worktree], HitFilter(changed_only=True)).tolist() == [ids["d"]]
    assert store.scope_chunk_ids([main], HitFilter(globs=("*.md",))).tolist() == [ids["e"]]


def test_a_batch_whose_new_chunks_another_indexer_stored_meanwhile_maps_every_place(fresh):
    """An indexer sends as new the chunks it did not find stored; another may have stored one since. Each place
    still points at its own chunk, and a batch of new chunks alone gets them as sent."""
    store, main, _, _ = fresh
    before = _ids(store)
    refs = [_ref("a", 0, "c.py", "retry_request", "function", "retry request"), _ref("f", 1, "c.py", None, "text", "")]
    refs.append(_ref("b", 2, "c.py", "parse_matrix", "function", "parse matrix"))
    store.write_batch(
        main,
        MODEL,
        [NewChunk("a", TEXTS["a"], 11), NewChunk("f", "the f text", 3)],
        [FileWrite("c.py", 9, 5, "s", "python", refs)],
    )
    store.write_batch(
        main,
        MODEL,
        [NewChunk("g", "the g text", 4)],
        [FileWrite("d.py", 9, 5, "t", "python", [_ref("g", 0, "d.py", None, "text", "")])],
    )
    rows = store.file_chunk_rows(main, ["c.py", "d.py"])
    assert [r.chunk_hash for r in rows["c.py"]] == ["a", "f", "b"] and [r.chunk_hash for r in rows["d.py"]] == ["g"]
    ids = dict(store.known_chunks(["a", "b", "f", "g"]))
    assert (ids["a"], ids["b"]) == (before["a"], before["b"]) and store.count_chunks() == 7
    assert store.chunk_texts([ids["f"], ids["g"]]) == {ids["f"]: "the f text", ids["g"]: "the g text"}


def test_hits_are_the_places_using_chunks_in_the_scopes_asked(filled):
    store, main, worktree, _ = filled
    ids = _ids(store)
    hits = store.hits_for_chunks([main, worktree], [ids["a"], ids["c"]])
    assert sorted((h.scope_id == main, h.path, h.language, h.chunk_type, h.text) for h in hits) == [
        (False, "a.py", "python", "function", TEXTS["a"]),
        (True, "a.py", "python", "function", TEXTS["a"]),
        (True, "b.rs", "rust", "struct", TEXTS["c"]),
    ]
    assert store.hits_for_chunks([worktree], [ids["a"]], HitFilter(chunk_types=("struct",))) == []
    assert store.hits_for_chunks([], [ids["a"]]) == [] and store.hits_for_chunks([main], []) == []
    one = hits[0]
    assert store.hits_for_places([one.place_id]) == [one]
    assert (one.file_sha256, one.indexed_at > 0) == ({"a.py": "sha-a", "b.rs": "sha-b"}[one.path], True)


def test_symbols_are_found_by_name_ignoring_case_exact_spelling_first(filled):
    store, main, worktree, _ = filled
    places = store.symbol_places([main])
    assert sorted((name, parent, path) for _, name, parent, path in places) == [
        ("Matrix", None, "b.rs"),
        ("parse_matrix", None, "a.py"),
        ("retry_request", None, "a.py"),
    ]
    assert _places(store, store.symbol_matches([main], ["matrix"], 10)) == [("b.rs", "c", 1)]
    assert _places(store, store.symbol_matches([main, worktree], ["MATRIX"], 1)) == [("b.rs", "c", 1)]
    # a name spelt as asked comes before other spellings of another name, whatever their order in the file
    assert _places(store, store.symbol_matches([main], ["MATRIX", "parse_matrix"], 1)) == [("a.py", "b", 4)]
    assert store.symbol_matches([main], ["matrix"], 10, HitFilter(languages=("python",))) == []
    assert store.symbol_matches([], ["Matrix"], 10) == [] and store.symbol_matches([main], [], 10) == []
    by_name = HitFilter(symbol_names=("RETRY_REQUEST",))
    assert _places(store, store.symbol_matches([main], ["retry_request"], 10, by_name)) == [("a.py", "a", 1)]


def test_a_definitions_extent_spans_its_places_and_its_members(fresh):
    """Which of several definitions of a name is meant goes by how much each has to it (fusion.EXTENT_WEIGHT)."""
    store, main, _, _ = fresh

    def place(key: str, ordinal: int, lines: tuple[int, int], name: str, kind: str, parent: str | None) -> ChunkRef:
        return ChunkRef(key, ordinal, *lines, kind, name, kind, parent, name, "box py", key)

    refs = [
        place("box", 0, (3, 9), "Box", "class", "shapes"),  # the class's own chunk: header and fields
        place("box2", 1, (9, 12), "Box", "class", "shapes"),  # its second window
        place("open", 2, (14, 30), "open", "method", "shapes.Box"),
        place("inner", 3, (32, 33), "Inner", "class", "shapes.Box"),
        place("deep", 4, (34, 51), "deep", "method", "shapes.Box.Inner"),
        place("boxes", 5, (53, 60), "Boxes", "class", "shapes"),  # a name that begins with the class's
        place("boxm", 6, (61, 90), "size", "method", "shapes.Boxes"),
    ]
    store.write_batch(
        main,
        MODEL,
        [NewChunk(r.chunk_hash, r.chunk_hash, 1) for r in refs],
        [FileWrite("box.py", 9, 1, "s", "python", refs)],
    )
    by_line = {
        h.start_line: h.place_id
        for h in store.hits_for_chunks([main], list(store.known_chunks([r.chunk_hash for r in refs]).values()))
    }
    extents = store.definition_extents([by_line[3], by_line[9], by_line[32], by_line[53], by_line[14], -1])
    assert extents == {by_line[3]: 49, by_line[9]: 49, by_line[32]: 20, by_line[53]: 38, by_line[14]: 17}
    assert store.definition_extents([]) == {}


# --- keywords and text --------------------------------------------------------------------------


def test_keyword_matches_rank_symbol_names_first_as_strengths(filled):
    store, main, worktree, _ = filled
    matches = store.keyword_matches([main], ["retry"], False, 10)
    assert _places(store, [p for p, _ in matches]) == [("a.py", "a", 1), ("notes.md", "e", 1)]
    assert matches[0][1] == 1.0 and 0 < matches[1][1] < 1.0
    both = store.keyword_matches([main], ["retry", "request"], True, 10)
    assert _places(store, [p for p, _ in both]) == [("a.py", "a", 1)]
    rust = store.keyword_matches([main, worktree], ["matrix"], False, 10, HitFilter(languages=("rust",)))
    assert sorted(_places(store, [p for p, _ in rust])) == [("b.rs", "c", 1), ("b.rs", "d", 1)]
    for hostile in (['"'], ["NEAR(a", "b)"], ["col:value"], ["-x", "*"], ["a & b | !c"]):
        assert store.keyword_matches([main], hostile, True, 5) == []
    assert store.keyword_matches([], ["retry"], False, 10) == []


def test_text_candidates_hold_every_needle_ignoring_case(filled):
    store, main, worktree, _ = filled
    ids = _ids(store)
    while store.text_pending():  # the SQLite store fills its text index after the first vectors
        store.index_pending_text(100)
    assert store.index_pending_text(100) == 0
    assert store.chunks_containing(["MATRIX"]).tolist() == sorted([ids["b"], ids["c"], ids["d"]])
    assert store.chunks_containing(["matrix", "cols"]).tolist() == [ids["d"]]
    assert store.chunks_containing(["100%_sure"]).tolist() == []
    table, files = store.place_rows([worktree]), store.scope_files([worktree])
    names = {file_id: path for file_id, scope_id, path in files}
    assert sorted(names.values()) == ["a.py", "b.rs"]
    assert sorted((names[int(f)], _hash_of(store, int(c))) for _, f, c in table) == [
        ("a.py", "a"),
        ("a.py", "b"),
        ("b.rs", "d"),
    ]
    of_d = store.place_rows([worktree], chunk_ids=np.array([ids["d"], ids["c"]]))  # c is not in the worktree
    assert [(names[int(f)], _hash_of(store, int(c))) for _, f, c in of_d] == [("b.rs", "d")]
    b_rs = [f for f, path in names.items() if path == "b.rs"]
    assert [_hash_of(store, int(c)) for _, _, c in store.place_rows([worktree], file_ids=np.array(b_rs))] == ["d"]
    rust = store.place_rows([main], HitFilter(languages=("rust",)))
    assert [_hash_of(store, int(c)) for _, _, c in rust] == ["c"]
    assert len(store.place_rows([main], HitFilter(languages=("rust",)), np.array([ids["a"], ids["b"]]))) == 0
    # The text the pattern runs over, before any place is read whole; an id no chunk has is left out.
    assert store.chunk_texts([ids["c"], ids["a"], 10**9]) == {ids["a"]: TEXTS["a"], ids["c"]: TEXTS["c"]}
    assert store.chunk_texts([]) == {}


# --- models and vectors -------------------------------------------------------------------------


def test_models_are_registered_once_and_the_first_is_active(filled):
    store, *_ = filled
    assert store.active_model() == MODEL and store.model_source(MODEL) == "source-of-m"
    assert store.model_source("unknown") is None
    store.register_model(MODEL, DIMS, "source-of-m")  # again: nothing changes
    with pytest.raises(StoreError, match="recorded with 4 dimensions but produces 8"):
        store.register_model(MODEL, 8, "source-of-m")


def test_vector_search_finds_the_nearest_allowed_chunks_by_cosine(filled):
    store, main, worktree, _ = filled
    ids = _ids(store)
    assert _hashes(store, store.vector_ids(MODEL)) == ["a", "b", "c"]
    assert _hashes(store, store.vector_ids(MODEL, names=True)) == ["a"]
    assert store.vector_ids(MODEL).tolist() == sorted(store.vector_ids(MODEL).tolist())
    assert sorted(store.chunks_without_vectors(MODEL)) == sorted([ids["d"], ids["e"]])
    # newest file first: the worktree's b.rs (mtime 4000) holds d
    assert store.chunks_without_vectors(MODEL) == [ids["d"], ids["e"]]
    assert store.chunks_without_vectors(MODEL, names=True) == [ids["d"], ids["b"], ids["c"]]
    search = store.vector_search(MODEL, DIMS)
    assert search.refresh() is True and search.refresh(0) is True
    assert (search.loading, search.loaded_share) == (False, 1.0)
    assert _hashes(store, search.ids()) == ["a", "b", "c"]
    assert search.allowed([main, worktree]) is None
    rust = search.allowed([main, worktree], HitFilter(languages=("rust",)))
    assert rust is not None and rust.tolist() == sorted([ids["c"], ids["d"]])
    nearest = search.nearest(CODE["a"], None, 2)
    assert [c for c, _ in nearest] == [ids["a"], ids["b"]]
    assert [round(s, 1) for _, s in nearest] == [1.0, 0.8]
    assert [c for c, _ in search.nearest(CODE["a"], rust, 2)] == [ids["c"]]
    assert search.nearest(CODE["a"], np.zeros(0, dtype=np.int64), 2) == []
    assert [c for c, _ in search.nearest(NAME_A, None, 3, names=True)] == [ids["a"]]
    sims = search.similarities(CODE["a"], [ids["a"], ids["b"], ids["c"], ids["d"]])
    assert {c: round(s, 1) for c, s in sims.items()} == {ids["a"]: 1.0, ids["b"]: 0.8, ids["c"]: 0.0}
    assert list(search.similarities(NAME_A, [ids["a"], ids["b"]], names=True)) == [ids["a"]]
    assert search.similarities(CODE["a"], []) == {}


def test_a_model_without_vectors_says_it_holds_none(fresh):
    """A search by meaning asks before embedding its query with a model (search/pipeline.py)."""
    store, *_ = fresh
    store.register_model("other-model", DIMS, "source-of-other")
    empty, full = store.vector_search("other-model", DIMS), store.vector_search(MODEL, DIMS)
    assert empty.refresh() and full.refresh()
    assert not empty.holds_any() and full.holds_any()


def test_outlines_are_listed_until_written_and_read_by_file(fresh):
    store, main, worktree, _ = fresh
    assert store.count_files_without_outline(MODEL) == 5
    todo = store.files_without_outline(MODEL, 2)
    # newest first: the worktree's b.rs (4000), then a.py (3000) of either scope
    assert [(s.scope_id, s.path, s.sha256, list(s.names)) for s in todo][0] == (worktree, "b.rs", "sha-b2", ["Matrix"])
    assert [(s.path, list(s.names)) for s in todo][1] == ("a.py", ["retry_request", "parse_matrix"])
    stale = OutlineSource(main, "b.rs", "an older sha", ["Matrix"])
    store.add_outlines(MODEL, [(todo[0], CODE["c"]), (todo[1], CODE["a"]), (stale, CODE["b"])])
    assert store.count_files_without_outline(MODEL) == 3  # the stale one was not written
    got = store.outline_vectors(MODEL, [(worktree, "b.rs"), (main, "b.rs"), (todo[1].scope_id, "a.py")])
    assert set(got) == {(worktree, "b.rs"), (todo[1].scope_id, "a.py")}
    assert np.allclose(got[(worktree, "b.rs")], CODE["c"]) and got[(worktree, "b.rs")].dtype == np.float32
    assert store.outline_vectors(MODEL, []) == {}


def test_vectors_are_added_only_for_stored_chunks_and_claims_are_shared(fresh):
    store, main, worktree, _ = fresh
    ids = _ids(store)
    missing = store.chunks_without_vectors(MODEL)
    assert store.claim_chunks(MODEL, False, missing) == missing  # no other indexer: all of them
    assert store.claimed_elsewhere(MODEL, False) is None
    gone = max(ids.values()) + 1000
    store.add_vectors(
        MODEL, [(ids["d"], CODE["b"], _unit(0, 0, 0, 1)), (ids["e"], CODE["c"], None), (gone, CODE["a"], None)]
    )
    assert store.chunks_without_vectors(MODEL) == []
    assert _hashes(store, store.vector_ids(MODEL, names=True)) == ["a", "d"]
    assert gone not in store.vector_ids(MODEL).tolist()
    search = store.vector_search(MODEL, DIMS)
    search.refresh()
    assert [c for c, _ in search.nearest(_unit(0, 0, 0, 1), None, 1, names=True)] == [ids["d"]]
    store.add_vectors(MODEL, [(ids["a"], CODE["c"], None)])  # replaces a's code vector, keeps its name's
    # Read by a new search: the SQLite store's in-memory copy catches up with vectors added or removed, not with
    # one replaced in place (the same model gives a chunk the same vector, so no index holds such a change).
    replaced = store.vector_search(MODEL, DIMS)
    replaced.refresh()
    assert round(replaced.similarities(CODE["c"], [ids["a"]])[ids["a"]], 1) == 1.0
    assert _hashes(store, store.vector_ids(MODEL, names=True)) == ["a", "d"]


def test_a_second_model_is_activated_dropping_the_others_or_dropped_without_vectors(fresh):
    store, main, *_ = fresh
    ids = _ids(store)
    store.register_model("n", 2, "source-of-n")
    assert store.active_model() == MODEL and store.drop_models_without_vectors(keep=["n"]) == []
    assert store.drop_models_without_vectors() == ["n"] and store.model_source("n") is None
    store.register_model("n", 2, "source-of-n")
    store.add_vectors("n", [(ids["a"], _unit(1, 1), None)])
    assert store.drop_models_without_vectors() == []
    store.register_model("o", 3, "source-of-o")
    store.activate_model("n", keep=["o"])
    assert store.active_model() == "n" and store.model_source(MODEL) is None
    assert store.vector_ids(MODEL).size == 0 and store.model_source("o") == "source-of-o"
    assert sorted(store.chunks_without_vectors("n")) == sorted(ids[h] for h in "bcde")


# --- writes -------------------------------------------------------------------------------------


def test_a_batch_touches_deletes_and_skips_files_and_garbage_is_collected(fresh):
    store, main, worktree, roots = fresh
    ids = _ids(store)
    before = store.generation
    store.write_batch(
        main,
        MODEL,
        [],
        touched=[("a.py", 101, 3_001)],
        deleted=["notes.md"],
        skipped=[SkippedFile("b.rs", 99, 9, "binary")],
    )
    assert store.generation != before
    states = store.file_states(main)
    assert (states["a.py"].size, states["a.py"].mtime_ns, states["a.py"].sha256) == (101, 3_001, "sha-a")
    assert "notes.md" not in states and states["b.rs"].status == "skipped"
    assert store.count_chunks() == 5 and store.collect_garbage() == 2  # c and e: no place uses them now
    assert sorted(store.known_chunks("abcde")) == ["a", "b", "d"]
    assert _hashes(store, store.vector_ids(MODEL)) == ["a", "b"]
    assert store.collect_garbage() == 0
    store.mark_indexed(main)
    assert store.scope_by_id(main).last_indexed_at is not None
    store.check_intact()
    store.remember_intact()
    store.check_intact()
    assert ids["c"] not in store.scope_chunk_ids([main]).tolist()


def test_any_text_is_stored_exactly_and_a_rewritten_file_keeps_only_its_new_places(fresh):
    """Quotes, backslashes, control characters, escapes and characters beyond the BMP (the SQLite store sends a
    batch's rows as one JSON array) come back as written; a file written again in a later batch has only its
    new places and keyword rows."""
    store, main, _, _ = fresh
    odd = 'say("\\"") \\n \\u00e9\tτ 漢字 😀 \u2028 \x01 end\n'
    store.write_batch(
        main,
        MODEL,
        [NewChunk("odd", odd, 3)],
        [
            FileWrite(
                "ü/odd.py",
                7,
                9,
                "sha-o",
                "python",
                [ChunkRef("odd", 0, 1, 2, "function", "grüße_😀", "function", None, "grüße 😀", "ü odd py", odd)],
            )
        ],
    )
    ids = store.known_chunks(["odd"])
    [stored] = store.stored_chunks([ids["odd"]])
    assert (stored.text, stored.path, stored.symbol_name) == (odd, "ü/odd.py", "grüße_😀")
    assert len(store.keyword_matches([main], ["grüße"], False, 5)) == 1
    a_places = store.keyword_matches([main], ["retry"], False, 10)
    store.write_batch(
        main,
        MODEL,
        [],
        [
            FileWrite(
                "ü/odd.py",
                8,
                10,
                "sha-o2",
                "python",
                [_ref("b", 0, "ü/odd.py", "parse_matrix", "function", "parse matrix")],
            )
        ],
    )
    assert store.keyword_matches([main], ["grüße"], False, 5) == []
    [(moved, _)] = [
        m for m in store.keyword_matches([main], ["parse"], False, 10) if _places(store, [m[0]])[0][0] == "ü/odd.py"
    ]
    assert _places(store, [moved]) == [("ü/odd.py", "b", 1)]
    assert store.keyword_matches([main], ["retry"], False, 10) == a_places
    assert store.file_states(main)["ü/odd.py"].sha256 == "sha-o2"


def test_a_search_of_every_scope_is_told_its_chunk_count_where_the_store_keeps_one(fresh, request):
    store, main, worktree, _ = fresh
    keeps = request.node.callspec.params["fresh"] == "sqlite"  # the team index keeps no count
    assert store.chunks_of_whole_store([main, worktree]) is None  # no collection has found every chunk used yet
    assert store.collect_garbage() == 0
    assert store.chunks_of_whole_store([main, worktree]) == (5 if keeps else None)
    assert store.chunks_of_whole_store([main]) is None  # one scope of two
    f_ref = ChunkRef("f", 0, 1, 1, "function", "f", "function", None, "f", "f py", "def f(): pass")
    store.write_batch(
        main, MODEL, [NewChunk("f", "def f(): pass", 3)], [FileWrite("f.py", 1, 1, "sha-f", "python", [f_ref])]
    )
    assert store.chunks_of_whole_store([main, worktree]) == (6 if keeps else None)
    store.write_batch(main, MODEL, [], deleted=["notes.md"])
    assert store.chunks_of_whole_store([main, worktree]) is None  # a place went: its chunk may be unused now
    assert store.collect_garbage() == 1
    assert (
        store.chunks_of_whole_store([main, worktree])
        == (5 if keeps else None)
        == (store.count_chunks() if keeps else None)
    )


def test_chunking_is_recorded_per_scope_and_a_removed_scope_takes_its_worktrees(fresh):
    store, main, worktree, roots = fresh
    assert store.chunking_of(main) is None
    store.record_chunking(main, 3)
    store.record_chunking(main, 4)
    store.record_chunking(worktree, 4)
    assert (store.chunking_of(main), store.chunking_of(worktree)) == (4, 4)
    again = store.create_scope(roots[0])  # the same folder: the same scope
    assert again.id == main
    assert store.remove_scope(main) == 5  # every chunk was the two scopes' only
    assert store.list_scopes() == [] and store.scope_by_id(worktree) is None and store.count_chunks() == 0
    assert (store.chunking_of(main), store.chunking_of(worktree)) == (None, None)
    assert store.vector_ids(MODEL).size == 0


def test_one_search_sees_the_index_as_it_began_and_the_next_sees_another_writers_change(fresh):
    """Store.one_generation: inside it the counter is read once (a team search checked it ~7 times, a round trip
    each); a write by another process or machine meanwhile moves it for the next search."""
    store, main, _, _ = fresh
    other = PostgresStore(store.url) if store.bases is not None else SqliteStore(store.path)
    try:
        before = store.generation
        with store.one_generation():
            other.write_batch(main, MODEL, [], touched=[("a.py", 102, 3_002)])
            assert store.generation == before
            with store.one_generation():  # a search inside it keeps the outer one's view
                assert store.generation == before
            assert store.file_states(main)["a.py"].size == 102  # rows are read as they are; only the counter is kept
        assert store.generation != before
    finally:
        other.close()


def test_history_is_recorded_newest_first_without_changing_the_generation(fresh):
    store, *_ = fresh
    before = store.generation
    for n in range(3):
        store.add_history(HistoryEntry(1000.0 + n, f"query {n}", "/r", "hybrid", n, None if n else 0.5, 12.5))
    assert store.generation == before
    assert [(h.query, h.result_count, h.top_score) for h in store.history(2)] == [
        ("query 2", 2, None),
        ("query 1", 1, None),
    ]
    assert store.history()[-1] == HistoryEntry(1000.0, "query 0", "/r", "hybrid", 0, 0.5, 12.5)


def test_a_team_index_alone_has_a_base_per_repository_and_overlays_that_differ_from_it(fresh, tmp_path):
    store, main, _, roots = fresh
    bases = store.bases
    if store._kind == "sqlite":
        assert bases is None  # one person's checkouts: a linked worktree is a worktree scope over its main one
        return
    base = bases.create_base("git:c0ffee")
    assert (base.type, base.root, base.parent_id, base.published) == ("base", "git:c0ffee", None, None)
    assert bases.base_scope("git:c0ffee") == base and bases.create_base("git:c0ffee").id == base.id
    assert bases.base_scope("git:other") is None
    a_py = FileWrite("a.py", 100, 3_000, "sha-a", "python", [_ref("a", 0, "a.py", "retry_request", "function", "")])
    b_rs = FileWrite("b.rs", 50, 2_000, "sha-b", "rust", [_ref("c", 0, "b.rs", "Matrix", "struct", "matrix")])
    store.write_batch(base.id, MODEL, [], [a_py, b_rs])
    overlay = store.create_scope(tmp_path / "checkout", "overlay", base.id)
    b_changed = FileWrite("b.rs", 60, 4_000, "sha-b2", "rust", [_ref("d", 0, "b.rs", "Matrix", "struct", "matrix")])
    new = FileWrite("c.py", 10, 1, "sha-c", "python", [_ref("b", 0, "c.py", "parse_matrix", "function", "")])
    store.write_batch(overlay.id, MODEL, [], [a_py, b_changed, new])
    assert bases.overlay_differences(overlay.id) == 2  # b.rs changed, c.py added
    store.write_batch(overlay.id, MODEL, [], deleted=["a.py"])
    assert bases.overlay_differences(overlay.id) == 3  # and a.py deleted
    bases.publish(base.id, "c0ffee" * 6, "main")
    published = store.scope_by_id(base.id).published
    assert (published.commit, published.branch, published.host) == ("c0ffee" * 6, "main", store.host)
    listed = {s.scope.id: s for s in store.list_scopes()}
    assert listed[overlay.id].differing == 3 and listed[base.id].differing is None
    assert listed[base.id].scope.published == published


def test_a_file_identical_to_its_parent_scopes_copy_maps_the_same_places(fresh):
    """A worktree's or overlay's unchanged file (FileWrite.copy_of): a team index copies the parent's places in the
    server, keywords included; the local index writes the places it is given."""
    store, main, worktree, _ = fresh
    team = store.bases is not None
    refs = [] if team else [_ref("c", 0, "b.rs", "Matrix", "struct", "matrix")]
    store.write_batch(worktree, MODEL, [], [FileWrite("b.rs", 50, 7, "sha-b", "rust", refs, copy_of=main)])
    rows = store.file_chunk_rows(worktree, ["b.rs"])["b.rs"]
    assert [(r.chunk_hash, r.symbol_name) for r in rows] == [("c", "Matrix")]
    assert store.file_row(worktree, "b.rs") == FileState("b.rs", 50, 7, "sha-b", "indexed")
    places = [p for p, _ in store.keyword_matches([worktree], ["matrix"], True, 5)]
    assert "b.rs" in [h.path for h in store.hits_for_places(places)]  # its keywords came with it
    if team:  # the parent's file is not that content any more: left for the next run to read again
        store.write_batch(worktree, MODEL, [], [FileWrite("a.py", 1, 9, "sha-other", "python", [], copy_of=main)])
        assert store.file_row(worktree, "a.py") == FileState("a.py", 100, 3_000, "sha-a", "indexed")


def test_every_protocol_member_is_run_against_both_stores(request):
    """Last in this file: each method and property of the store protocols was called on each store above."""
    module = request.node.module
    ran = {item.originalname for item in request.session.items if item.module is module}
    every = {name for name in vars(module) if name.startswith("test_")}
    if ran != every:
        pytest.skip("only checked when the whole file runs")
    members = set().union(*(_members(p) for p in PROTOCOLS))
    assert len(members) > 50
    for kind in KINDS:
        if not CALLED[kind]:
            pytest.skip(f"the {kind} store's tests did not run (skipped)")
        assert sorted(members - CALLED[kind]) == [], kind
