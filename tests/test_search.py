"""The search pipeline on a real index: modes, fusion, filters, validation, context, history."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pathspec
import pytest

from desktop_app.search.evidence import TEST_GLOBS, is_test_path
from desktop_app.search.pipeline import Searcher
from desktop_app.search.request import SearchError, SearchFilters, SearchRequest
from desktop_app.store.postgres.store import PostgresStore
from desktop_app.store.sqlite.store import SqliteStore
from desktop_app.worker import ops


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def searcher(request, mixed_index, embedder, tmp_path_factory):
    """A searcher on the mixed repository's index, in the SQLite store and in a team index on PostgreSQL."""
    if request.param == "sqlite":
        db = tmp_path_factory.mktemp("search-db") / "index.db"
        shutil.copy(mixed_index[0], db)
        store = SqliteStore(db)
    else:
        store = PostgresStore(request.getfixturevalue("mixed_team_index"))
    yield Searcher(store, embedder)
    store.close()


def run(searcher, root, query, **kw):
    return searcher.search(SearchRequest(query=query, roots=(str(root),), **kw))


def test_exact_symbol_name_comes_first_in_hybrid(searcher, mixed_root):
    response = run(searcher, mixed_root, "fetch_with_retry")
    top = response.results[0]
    assert (top.path, top.symbol_name) == ("src/http_client.py", "fetch_with_retry")
    assert top.relevance == "both" and top.score >= 0.9
    assert all(r.score < top.score for r in response.results[1:])


def test_scores_are_ordered_and_in_range_and_labelled(searcher, mixed_root):
    for mode in ("hybrid", "semantic", "exact"):
        results = run(searcher, mixed_root, "cache capacity evict", mode=mode).results
        assert results, mode
        scores = [r.score for r in results]
        assert scores == sorted(scores, reverse=True)
        assert all(0 <= s <= 1 for s in scores)
        allowed = {"hybrid": {"exact", "semantic", "both"}, "semantic": {"semantic"}, "exact": {"exact"}}[mode]
        assert {r.relevance for r in results} <= allowed


def test_a_relative_cutoff_leaves_out_the_weak_tail_and_keeps_the_ranking(searcher, mixed_root):
    """Issue 14, item 2: the window's list was padded to 30 with noise; with a cut-off relative to the best
    score it holds the strong results only, in the same order, and says how many it left out."""
    whole = run(searcher, mixed_root, "evict least recently used entry", k=30, record_history=False)
    cut = run(searcher, mixed_root, "evict least recently used entry", k=30, relative_cutoff=0.4, record_history=False)
    floor = 0.4 * whole.results[0].score
    assert [(r.path, r.start_line) for r in cut.results] == [
        (r.path, r.start_line) for r in whole.results if r.score >= floor
    ]
    assert 0 < len(cut.results) < len(whole.results) and cut.below_cutoff == len(whole.results) - len(cut.results)
    with pytest.raises(SearchError, match="relative cut-off"):
        run(searcher, mixed_root, "cache", relative_cutoff=1.0)


def test_filters_typed_into_the_query_narrow_it_in_every_ranked_mode(searcher, mixed_root):
    """Issue 14, item 5: `lang:go path:src/ -path:vendor/` in the query, for the window and the CLI alike."""
    for mode in ("hybrid", "exact"):
        typed = run(searcher, mixed_root, "parse lang:rust -path:cli/src/matrix.rs", mode=mode, record_history=False)
        assert typed.query == "parse" and typed.results, mode
        assert all(r.language == "rust" and r.path != "cli/src/matrix.rs" for r in typed.results), mode
    web = run(searcher, mixed_root, 'wait before calling path:"web/"', record_history=False).results
    assert web and all(r.path.startswith("web/") for r in web)
    classes = run(searcher, mixed_root, "cache type:class", record_history=False).results
    assert classes and all(r.symbol_type == "class" for r in classes)
    with pytest.raises(SearchError, match="only paths can"):
        run(searcher, mixed_root, "parse -lang:go")
    with pytest.raises(SearchError, match="unknown language 'klingon'"):
        run(searcher, mixed_root, "parse lang:klingon")
    literal = run(searcher, mixed_root, "lang:rust", mode="text", record_history=False)
    assert literal.query == "lang:rust"  # text mode reads its query as typed


def test_tests_and_docs_can_be_hidden(mixed_copy, worker_for):
    """Issue 14, item 5: a hide-tests / hide-docs switch (tests outranked the implementation they test)."""
    root, db = mixed_copy
    (root / "tests").mkdir()
    (root / "tests" / "test_cache.py").write_text(
        "def test_put_evicts_the_least_recently_used_entry():\n    cache = LRUCache(1)\n    cache.put(1, 1)\n"
    )
    (root / "src" / "cache_spec.ts").write_text("it('evicts the least recently used entry', () => {});\n")
    worker = worker_for(db)
    worker.run(ops.index(root)).result(timeout=300)

    def paths(**hide) -> set[str]:
        request = SearchRequest(
            "evict the least recently used entry",
            roots=(str(root),),
            k=100,  # every chunk of the folder, so that hiding some frees no place for others
            filters=SearchFilters(**hide),
            record_history=False,
        )
        return {r.path for r in worker.run(ops.search(request)).result(timeout=60).results}

    everything = paths()
    assert {"tests/test_cache.py", "src/cache_spec.ts", "README.md"} <= everything
    assert paths(hide_tests=True) == everything - {"tests/test_cache.py", "src/cache_spec.ts"}
    assert not {p for p in paths(hide_docs=True) if p.endswith(".md")} and "src/cache.py" in paths(hide_docs=True)


def test_the_hide_tests_patterns_take_what_ranking_calls_tests():
    spec = pathspec.GitIgnoreSpec.from_lines(TEST_GLOBS)
    for path in (
        "tests/test_x.py",
        "src/foo_test.go",
        "web/a.spec.ts",
        "src/FooTest.java",
        "Tests/RouteTests.swift",
        "lib/__tests__/x.js",
        "pkg/testdata/a.txt",
        "fixtures/a.json",
        "spec/x_spec.rb",
        "src/contest.py",
        "src/latest.py",
        "src/attestation.py",
        "src/spec_helper.rb",
        "src/test.py",
    ):
        assert spec.match_file(path) == is_test_path(path), path


def test_exact_mode_matches_identifier_parts_and_whole_names(searcher, mixed_root):
    parts = run(searcher, mixed_root, "parse invoice total", mode="exact").results
    assert parts[0].symbol_name == "parse_invoice_total" and parts[0].semantic_score is None
    camel = run(searcher, mixed_root, "access token", mode="exact").results
    assert camel[0].symbol_name == "refreshAccessToken"
    whole = run(searcher, mixed_root, "LRUCache", mode="exact").results
    assert whole[0].path == "src/cache.py" and whole[0].symbol_name == "LRUCache"


def test_semantic_results_keep_their_similarity(searcher, mixed_root):
    for r in run(searcher, mixed_root, "matrix multiplication").results:
        assert r.semantic_score is not None and 0 <= r.semantic_score <= 1


def test_short_queries_skip_semantic_search(searcher, mixed_root):
    response = run(searcher, mixed_root, "lr")
    assert response.effective_mode == "exact" and "3 characters" in response.notice


@pytest.mark.parametrize(
    "query",
    [
        '"unbalanced',
        "NEAR(a b)",
        "foo* OR",
        "a:b",
        "-x",
        "(((",
        "^start",
        "AND",
        "col:value AND NOT",
        "[a-z]+\\d{3}",
        "*.py",
        "'; DROP TABLE chunk; --",
    ],
)
def test_operator_characters_never_break_keyword_search(searcher, mixed_root, query):
    for mode in ("exact", "hybrid"):
        run(searcher, mixed_root, query, mode=mode)  # must not raise


def test_filters_apply_and_never_starve_k(searcher, mixed_root):
    rust = run(searcher, mixed_root, "parse arguments", filters=SearchFilters(languages=("rust",)), k=5).results
    assert rust and all(r.language == "rust" for r in rust)
    ts = run(searcher, mixed_root, "retry http request", filters=SearchFilters(languages=("typescript",)), k=4)
    assert len(ts.results) == 4 and all(r.path.startswith("web/") for r in ts.results)
    web = run(searcher, mixed_root, "function", filters=SearchFilters(globs=("web/",)), k=3).results
    assert len(web) == 3 and all(r.path.startswith("web/") for r in web)
    no_web = run(searcher, mixed_root, "function", filters=SearchFilters(globs=("*.py", "*.rs")), k=20).results
    assert no_web and all(r.path.endswith((".py", ".rs")) for r in no_web)
    # Globs are filtered in SQL with gitignore precedence: a later "!pattern" takes files back out.
    rust_only = SearchFilters(globs=("cli/", "!cli/src/main.rs"))
    for mode in ("exact", "hybrid", "semantic"):
        matrix = run(searcher, mixed_root, "matrix", filters=rust_only, mode=mode, k=20).results
        assert matrix and {r.path for r in matrix} == {"cli/src/matrix.rs"}, mode
    # Exclusions alone keep everything else, as ripgrep's --glob '!*_test.go' does.
    for mode in ("exact", "hybrid", "semantic"):
        everything = {r.path for r in run(searcher, mixed_root, "response status", mode=mode, k=20).results}
        not_python = run(
            searcher, mixed_root, "response status", filters=SearchFilters(globs=("!*.py",)), mode=mode, k=20
        )
        kept = {r.path for r in not_python.results}
        assert kept and kept == {p for p in everything if not p.endswith(".py")} | kept, mode
        assert not any(p.endswith(".py") for p in kept) and any(p.endswith(".py") for p in everything), mode
    funcs = run(searcher, mixed_root, "matrix", filters=SearchFilters(chunk_types=("function",))).results
    assert funcs and all(r.chunk_type == "function" for r in funcs)
    named = run(searcher, mixed_root, "anything", filters=SearchFilters(symbol_names=("transpose",))).results
    assert [r.symbol_name for r in named] == ["transpose"]
    strong = run(searcher, mixed_root, "retry http", filters=SearchFilters(min_score=0.3)).results
    assert all(r.score >= 0.3 for r in strong)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"query": "   "}, "empty"),
        ({"k": 0}, "k must be"),
        ({"k": 101}, "k must be"),
        ({"mode": "fuzzy"}, "unknown mode"),
        ({"context": -1}, "context"),
        ({"filters": SearchFilters(languages=("klingon",))}, "unknown language"),
        ({"filters": SearchFilters(min_score=1.5)}, "min score"),
        ({"filters": SearchFilters(chunk_types=("x",))}, "chunk"),
        ({"roots": ("/nonexistent/project",)}, "not indexed"),
    ],
)
def test_invalid_requests_are_explained(searcher, mixed_root, kwargs, message):
    request = {"query": "retry", "roots": (str(mixed_root),), **kwargs}
    with pytest.raises(SearchError, match=message):
        searcher.search(SearchRequest(**request))


def test_same_file_overlapping_results_are_merged(searcher, mixed_root):
    results = run(searcher, mixed_root, "matrix rows columns data", k=20).results
    by_file: dict[str, list] = {}
    for r in results:
        for other in by_file.get(r.path, []):
            shared = min(r.end_line, other.end_line) - max(r.start_line, other.start_line) + 1
            smaller = min(r.end_line - r.start_line, other.end_line - other.start_line) + 1
            assert shared <= 0.5 * smaller
        by_file.setdefault(r.path, []).append(r)


def test_context_lines_come_from_disk_and_stale_files_say_so(tmp_path, mixed_root, index_copy, embedder):
    root = tmp_path / "repo"
    shutil.copytree(mixed_root, root)
    db = index_copy
    from desktop_app.indexing.indexer import Indexer

    store = SqliteStore(db)
    try:
        Indexer(store, embedder).index(root)
        searcher = Searcher(store, embedder)
        top = run(searcher, root, "transpose", context=3).results[0]
        lines = (root / top.path).read_text().split("\n")
        assert top.context_start_line == top.start_line - 3
        assert top.context.split("\n") == lines[top.context_start_line - 1 : top.context_end_line]
        assert not top.stale
        (root / top.path).write_text("// rewritten\n" + (root / top.path).read_text())
        again = run(searcher, root, "transpose", context=3).results[0]
        assert again.stale and again.context is None
    finally:
        store.close()


def test_query_embeddings_are_cached(searcher, mixed_root):
    before = searcher.full.cache.misses
    run(searcher, mixed_root, "a query typed twice")
    run(searcher, mixed_root, "a query typed twice")
    assert searcher.full.cache.misses == before + 1 and searcher.full.cache.hits >= 1


def test_the_search_operation_records_each_search_that_asks(worker_for, index_copy, mixed_root):
    worker = worker_for(index_copy)
    roots = (str(mixed_root),)
    worker.run(ops.search(SearchRequest("history check query", roots=roots, mode="exact"))).result()
    worker.run(ops.search(SearchRequest("an agent's query", roots=roots, record_history=False))).result()
    entry = worker.run(ops.history(5)).result()[0]
    assert entry.query == "history check query" and entry.mode == "exact"
    assert entry.scope_root == str(mixed_root.resolve()) and entry.duration_ms > 0


def test_all_scopes_merges_and_labels_scopes(tmp_path, mixed_root, index_copy, embedder):
    other = tmp_path / "other"
    other.mkdir()
    (other / "geometry.py").write_text(
        "def rotate_point(x, y, angle):\n    # rotate around the origin\n"
        "    return x * cos(angle) - y * sin(angle), x * sin(angle) + y * cos(angle)\n"
    )
    db = index_copy
    from desktop_app.indexing.indexer import Indexer

    store = SqliteStore(db)
    try:
        Indexer(store, embedder).index(other)
        searcher = Searcher(store, embedder)
        results = searcher.search(
            SearchRequest(query="rotate a point or multiply matrices", all_scopes=True, k=10)
        ).results
        roots = {r.scope_root for r in results}
        assert roots == {str(mixed_root.resolve()), str(other.resolve())}
        assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)
    finally:
        store.close()


def test_model_failure_falls_back_to_exact_with_a_notice(tmp_path, mixed_root, worker_for):
    from desktop_app.assets import resource_path
    from desktop_app.embedding.model_spec import default_model_spec

    model_dir = tmp_path / "my-model"
    model_dir.mkdir()
    shutil.copy(default_model_spec().model_path, model_dir / "model.onnx")
    shutil.copy(resource_path("models", "all-MiniLM-L6-v2-int8", "tokenizer.json"), model_dir / "tokenizer.json")
    (model_dir / "quarry-model.json").write_text(
        json.dumps({"id": "my-model", "dims": 384, "pooling": "mean", "max_tokens": 256})
    )
    db = tmp_path / "index.db"
    worker = worker_for(db, model_dir=model_dir)
    worker.run(ops.index(mixed_root)).result()
    worker.close()
    (model_dir / "model.onnx").write_bytes(b"this is not an onnx model any more")  # the user's model file broke
    worker = worker_for(db, model_dir=model_dir)
    response = worker.run(
        ops.search(SearchRequest(query="retry failed http requests", roots=(str(mixed_root),)))
    ).result()
    assert response.effective_mode == "exact" and "unavailable" in response.notice
    assert response.results and response.results[0].relevance == "exact"


def test_numpys_masked_arrays_are_loaded_before_any_scan_thread_runs():
    """numpy loads numpy.ma lazily at the first np.unique; two scan threads doing that at once in a fresh process
    can recurse without end inside numpy (a RecursionError seen in a loaded CI run). The search pipeline loads it
    when it is imported, so a fresh `quarry search` starts its scans with it in place."""
    probe = "import sys, desktop_app.search.pipeline; print('numpy.ma' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"
