"""The storage seam: the engine reaches the SQLite store only through store.protocols, keyword search speaks
in terms and 0..1 strengths (FTS5 syntax and BM25's sign stay inside the store), and store and search errors
carry no front end's wording: the command line and the window each phrase the remedy."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from desktop_app.cli_messages import explain
from desktop_app.search.query import any_terms, parse
from desktop_app.search.request import SearchError, SearchRemedy, SearchRequest
from desktop_app.store.errors import Remedy, StoreError, StoreUnusable
from desktop_app.store.location import StoreLocation, open_store
from desktop_app.store.rows import HitFilter
from desktop_app.store.sqlite.store import SqliteStore
from desktop_app.worker import ops

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def store(index_copy):
    s = open_store(StoreLocation.of(index_copy))
    yield s
    s.close()


def test_open_store_gives_the_sqlite_store_for_a_file(store):
    assert isinstance(store, SqliteStore) and store.list_scopes()


def test_keyword_matches_are_strengths_best_first(store):
    scope = store.list_scopes()[0].scope.id
    terms = any_terms(parse("retry failed http requests"))
    matches = store.keyword_matches([scope], terms, False, 20)
    strengths = [s for _, s in matches]
    assert matches and strengths[0] == 1.0 and all(0 < s <= 1 for s in strengths)
    assert strengths == sorted(strengths, reverse=True)
    every = store.keyword_matches([scope], terms, True, 20)
    assert {p for p, _ in every} <= {p for p, _ in store.keyword_matches([scope], terms, False, 500)}
    hits = store.hits_for_places([p for p, _ in matches[:3]])
    assert [h.place_id for h in hits] and {h.place_id for h in hits} == {p for p, _ in matches[:3]}


def test_keyword_terms_are_text_never_operators(store):
    scope = store.list_scopes()[0].scope.id
    for hostile in (['"'], ["NEAR(a", "b)"], ["col:value"], ["-x", "*"]):
        assert store.keyword_matches([scope], hostile, True, 5) == []


def test_filters_reach_the_keyword_index(store):
    scope = store.list_scopes()[0].scope.id
    rust = HitFilter(languages=("rust",))
    places = [p for p, _ in store.keyword_matches([scope], ["matrix"], False, 20, rust)]
    assert places and {h.language for h in store.hits_for_places(places)} == {"rust"}


def test_keyword_row_counts_are_kept_until_the_index_changes(mixed_copy, worker_for):
    """Each key press asks how common the query's words are; the answers are kept, and a write by another
    process (a new file holding the word) is seen by the next count."""
    root, db = mixed_copy
    store = open_store(StoreLocation.of(db))
    try:
        assert store.keyword_row_counts(["zanzibar", "matrix"])["zanzibar"] == 0
        (root / "zanzibar.py").write_text('def zanzibar_route():\n    return "zanzibar"\n', encoding="utf-8")
        worker = worker_for(db)
        worker.run(ops.index(root)).result()
        worker.close()
        counts = store.keyword_row_counts(["zanzibar", "matrix"])
        assert counts["zanzibar"] == 1 and counts["matrix"] > 0
    finally:
        store.close()


def test_a_folder_given_as_the_index_is_explained_by_each_front_end(tmp_path):
    with pytest.raises(StoreError) as caught:
        SqliteStore(tmp_path)
    error = caught.value
    assert error.remedies == (Remedy.OTHER_STORE,) and "--" not in str(error)
    assert explain(error).endswith("choose another index (a file or a team URL) with --db")
    from desktop_app.ui.error_text import describe_error

    assert "QUARRY_DB" in describe_error(error) and "--db" not in describe_error(error)


def test_an_unusable_index_offers_rebuild_on_the_command_line_and_a_button_in_the_window(tmp_path):
    error = StoreUnusable(tmp_path / "index.db", "is damaged (page 3)")
    assert "quarry" not in str(error) and "--" not in str(error)
    assert "`quarry index FOLDER --rebuild`" in explain(error) and "--db" in explain(error)
    from desktop_app.ui.error_text import describe_error

    text = describe_error(error)  # the dialog showing it asks "Move it aside…?" itself
    assert text.startswith("The index database") and "rebuild" not in text and "--" not in text


def test_search_errors_name_the_remedy_and_each_front_end_words_it(tmp_path, index_copy, embedder):
    from desktop_app.search.pipeline import Searcher

    store = SqliteStore(index_copy)
    try:
        with pytest.raises(SearchError) as caught:
            Searcher(store, embedder).search(SearchRequest("retry", roots=(str(tmp_path),)))
    finally:
        store.close()
    error = caught.value
    assert error.remedy is SearchRemedy.INDEX_FIRST and "quarry" not in str(error)
    assert explain(error) == f"{tmp_path.resolve()} is not indexed; run `quarry index {tmp_path.resolve()}` first"
    from desktop_app.ui.error_text import describe_error

    assert describe_error(error).endswith("Open the folder to index it.")


def test_engine_packages_hold_no_command_line_wording():
    """Messages below the front ends never mention options or commands; the CLI adds them (cli_messages)."""
    engine = [REPO / "desktop_app" / p for p in ("search", "store", "worker", "indexing", "embedding")]
    found = subprocess.run(
        [
            "grep",
            "-rnE",
            r"(\"|f\")[^\"]*(--(db|root|rebuild|glob|all-scopes|changed)\b|`quarry |\bpass the )",
            *map(str, engine),
        ],
        capture_output=True,
        text=True,
    )
    assert found.returncode == 1, found.stdout  # 1: nothing matched


def test_removing_a_scope_forgets_which_chunker_cut_it(store):
    scope = store.list_scopes()[0].scope.id
    assert store.chunking_of(scope) is not None
    store.remove_scope(scope)
    assert store.chunking_of(scope) is None


def test_a_filters_allowed_chunks_are_what_a_plain_join_finds(store):
    """scope_chunk_ids reads a filter on files through the files it passes and makes the ids distinct itself
    (store.py): the same sets as every place joined to its file, made distinct and sorted by SQLite."""
    from desktop_app.store.sqlite.filters import filter_sql

    scope = store.list_scopes()[0].scope.id
    languages = [r[0] for r in store._rows("SELECT DISTINCT language FROM file")]
    kinds = store._rows("SELECT DISTINCT chunk_type, symbol_type FROM file_chunk WHERE symbol_type IS NOT NULL")
    names = [r[0] for r in store._rows("SELECT symbol_name FROM file_chunk WHERE symbol_name IS NOT NULL LIMIT 3")]
    assert len(languages) >= 3 and kinds and names
    filters = [HitFilter(), HitFilter(changed_only=True), HitFilter(globs=("src/**",)), HitFilter(globs=("*.md",))]
    filters += [HitFilter(languages=(language,)) for language in languages]
    filters += [HitFilter(chunk_types=(c,), symbol_types=(s,)) for c, s in kinds]
    filters += [
        HitFilter(symbol_names=tuple(names)),
        HitFilter(languages=tuple(languages[:2]), symbol_names=(names[0].upper(),)),
        HitFilter(languages=(languages[0],), chunk_types=(kinds[0][0],), globs=("src/**",)),
    ]
    for where in filters:
        cond, args = filter_sql(where)
        reference = [
            r[0]
            for r in store._rows(
                "SELECT DISTINCT fc.chunk_id FROM file_chunk fc JOIN file f ON f.id = fc.file_id "
                f"WHERE fc.scope_id = ? AND {cond} ORDER BY fc.chunk_id",
                (scope, *args),
            )
        ]
        found = store.scope_chunk_ids([scope], where)
        assert found.tolist() == reference, where
    assert len(store.scope_chunk_ids([scope], HitFilter(globs=("*.md",)))) < len(store.scope_chunk_ids([scope]))
