"""Indexing a real repository into a real store and searching it: issue 2's acceptance checks."""

from __future__ import annotations

import apsw

from desktop_app.indexing.progress import ProgressReporter
from desktop_app.search.request import SearchRequest
from desktop_app.store.sqlite.store import SqliteStore
from desktop_app.worker import ops

from . import mixed_repo


def _search(worker, root, query, **kw):
    return worker.run(ops.search(SearchRequest(query=query, roots=(str(root),), **kw))).result()


def test_mixed_repo_indexes_exactly_source_docs_and_non_utf8(mixed_root, mixed_index):
    db, stats = mixed_index
    store = SqliteStore(db)
    try:
        scope = store.scope_for_root(mixed_root.resolve())
        states = store.file_states(scope.id)
    finally:
        store.close()
    indexed = {p for p, s in states.items() if s.status == "indexed"}
    assert indexed == mixed_repo.INDEXED
    assert stats.files_indexed == len(mixed_repo.INDEXED)
    assert stats.skipped["lock_file"] == 2
    assert stats.skipped["too_large"] == 1
    assert stats.skipped["not_source"] >= 1  # the PNG
    assert stats.folders_skipped["excluded_dir"] == 1  # node_modules/
    assert stats.folders_skipped["ignored"] >= 1 and stats.skipped["ignored"] >= 1  # build/ and debug.log
    assert sum(stats.skipped.values()) == stats.files_skipped
    assert ("node_modules/", "excluded_dir") in stats.skipped_paths and ("package-lock.json", "lock_file") in [
        (path.rsplit("/", 1)[-1], reason) for path, reason in stats.skipped_paths
    ]
    assert stats.chunks_embedded > 0 and stats.chunks_total >= stats.files_indexed
    assert stats.provider == "CPUExecutionProvider"
    assert stats.model == "all-MiniLM-L6-v2-int8"


def test_natural_language_queries_find_the_right_file_first(mixed_root, mixed_index, worker_for):
    worker = worker_for(mixed_index[0])
    expectations = {
        "where do we retry failed http requests": "src/http_client.py",
        "parse command line arguments": "cli/src/main.rs",
        "delay calling a function until typing stops": "web/debounce.ts",
        "evict least recently used entry": "src/cache.py",
        "multiply two matrices": "cli/src/matrix.rs",
        "refresh the access token when it expires": "web/auth.ts",
        "how to deploy to production": "README.md",
    }
    for query, path in expectations.items():
        response = _search(worker, mixed_root, query, mode="semantic")
        assert response.results, query
        assert response.results[0].path == path, (query, [r.path for r in response.results[:3]])
        top = response.results[0]
        assert 0 < top.score <= 1 and 1 <= top.start_line <= top.end_line


def test_results_carry_lines_symbols_and_snippets(mixed_root, mixed_index, worker_for):
    worker = worker_for(mixed_index[0])
    top = _search(worker, mixed_root, "exponential backoff delay with jitter", mode="semantic").results[0]
    assert (top.path, top.symbol_name, top.parent_symbol) == ("src/http_client.py", "delay_for", "RetryPolicy")
    lines = (mixed_root / top.path).read_text().split("\n")
    assert top.snippet == "\n".join(lines[top.start_line - 1 : top.end_line])
    assert lines[top.start_line - 1].strip().startswith("def delay_for")


def test_reindex_of_unchanged_tree_embeds_nothing(mixed_copy, worker_for):
    root, db = mixed_copy
    worker = worker_for(db)
    first = worker.run(ops.index(root)).result()  # a new scope, but every chunk is already known by its hash
    assert first.chunks_embedded == 0 and first.files_changed == len(mixed_repo.INDEXED)
    again = worker.run(ops.index(root)).result()
    assert again.chunks_embedded == 0 and again.files_changed == 0
    assert again.files_unchanged == len(mixed_repo.INDEXED)


def test_an_index_cut_by_an_older_chunker_is_cut_again_once_and_embeds_nothing(mixed_copy, worker_for, monkeypatch):
    """After an upgrade that cuts files differently, unchanged files are cut again on the next index (their
    unchanged chunks keep their vectors), and only then are they skipped as unchanged."""
    from desktop_app.indexing import file_prep
    from desktop_app.indexing.chunking import CHUNKING_VERSION
    from desktop_app.store.sqlite.store import SqliteStore

    root, db = mixed_copy
    worker = worker_for(db)
    scope_id = worker.run(ops.index(root)).result().scope_id
    store = SqliteStore(db)
    try:
        assert store.chunking_of(scope_id) == CHUNKING_VERSION
        store.record_chunking(scope_id, CHUNKING_VERSION - 1)  # as the previous release left it
    finally:
        store.close()
    cut: list[str] = []
    chunk_file = file_prep.chunk_file
    monkeypatch.setattr(
        file_prep,
        "chunk_file",
        lambda text, lang, rel, *a, **k: cut.append(rel) or chunk_file(text, lang, rel, *a, **k),
    )
    recut = worker.run(ops.index(root)).result()
    assert sorted(cut) == sorted(mixed_repo.INDEXED) and recut.chunks_embedded == 0
    cut.clear()
    again = worker.run(ops.index(root)).result()
    assert cut == [] and again.files_unchanged == len(mixed_repo.INDEXED)


def test_editing_one_file_embeds_only_its_changed_chunks(mixed_copy, worker_for):
    root, db = mixed_copy
    worker = worker_for(db)
    worker.run(ops.index(root)).result()
    path = root / "src" / "cache.py"
    path.write_text(
        path.read_text().replace(
            "        self._data.move_to_end(key)\n        return self._data[key]",
            "        self._data.move_to_end(key)\n        return self._data.get(key)  # refreshed",
        )
    )
    stats = worker.run(ops.index(root)).result()
    assert stats.files_changed == 1
    assert 1 <= stats.chunks_embedded <= 2  # the edited method (and at most a neighbouring window)
    response = _search(worker, root, "refreshed", mode="exact")
    assert [r.path for r in response.results] == ["src/cache.py"]


def test_deleted_file_disappears_from_results(mixed_copy, worker_for):
    root, db = mixed_copy
    worker = worker_for(db)
    worker.run(ops.index(root)).result()
    (root / "cli" / "src" / "matrix.rs").unlink()
    stats = worker.run(ops.index(root)).result()
    assert stats.files_deleted == 1
    paths = {r.path for r in _search(worker, root, "multiply two matrices", k=20).results}
    assert "cli/src/matrix.rs" not in paths


def test_touched_but_identical_file_is_not_rechunked(mixed_copy, worker_for):
    root, db = mixed_copy
    worker = worker_for(db)
    worker.run(ops.index(root)).result()
    path = root / "README.md"
    path.write_text(path.read_text())  # new mtime, same bytes
    stats = worker.run(ops.index(root)).result()
    assert stats.files_changed == 0 and stats.chunks_embedded == 0


def test_progress_phases(mixed_copy, worker_for):
    root, db = mixed_copy
    (root / "src" / "cache.py").write_text("def changed():\n    return 42\n")
    seen = []
    worker = worker_for(db)
    worker.run(ops.index(root, progress=seen.append)).result()
    phases = [p.phase for p in seen]
    assert phases[0] == "analyzing" and phases[-1] == "completed"
    assert phases.index("started") < len(phases) - 1
    order = ["analyzing", "started", "in_progress", "completed"]
    assert [o for o in order if o in phases] == sorted(set(phases), key=order.index)
    final = seen[-1]
    assert final.files_done == final.files_total


def test_cancel_keeps_a_consistent_database_that_resumes(tmp_path, worker_for):
    root = tmp_path / "many"
    for i in range(60):
        (root / f"pkg{i % 6}").mkdir(parents=True, exist_ok=True)
        (root / f"pkg{i % 6}" / f"mod{i}.py").write_text(
            "\n\n".join(
                f"def function_{i}_{j}(x):\n    return x * {i} + {j}  # step {j} of module {i}" for j in range(12)
            )
        )
    db = tmp_path / "index.db"
    worker = worker_for(db)
    progress = []
    index = ops.index(root, progress=lambda p: (progress.append(p), p.phase == "in_progress" and index.cancel()))
    stats = worker.run(index).result()
    assert stats.cancelled
    conn = apsw.Connection(str(db))
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    # every file row that exists is complete: it has chunks, and each chunk has its text
    orphans = conn.execute(
        "SELECT count(*) FROM file f WHERE f.status = 'indexed' AND NOT EXISTS "
        "(SELECT 1 FROM file_chunk fc WHERE fc.file_id = f.id)"
    ).fetchall()[0][0]
    assert orphans == 0
    done_before = conn.execute("SELECT count(*) FROM file").fetchall()[0][0]
    conn.close()
    assert 0 < done_before < 60
    resumed = worker.run(ops.index(root)).result()
    assert not resumed.cancelled and resumed.files_indexed == 60
    assert resumed.files_changed == 60 - done_before


def test_search_is_served_while_an_index_runs(tmp_path, mixed_root, index_copy, worker_for, embedding_gate):
    db = index_copy
    big = tmp_path / "big"
    for i in range(4):
        (big / f"m{i}").mkdir(parents=True)
        (big / f"m{i}" / "code.py").write_text(
            "\n\n".join(
                f"def handler_{i}_{j}(request):\n    # handle request number {j} for tenant {i}\n    return {j}"
                for j in range(30)
            )
        )
    worker = worker_for(db)
    gate = embedding_gate()  # the run's first embedding waits here: it cannot finish before the search
    index = ops.index(big)
    running = worker.run(index)
    assert gate.waiting.wait(60)
    response = _search(worker, mixed_root, "retry failed http requests")
    assert not running.done()
    assert response.results and response.results[0].path == "src/http_client.py"
    index.cancel()
    gate.release()
    assert running.result().cancelled


def test_progress_is_paced_to_one_report_per_half_second_and_every_phase_change():
    now = [100.0]
    reports = []
    reporter = ProgressReporter(reports.append, "/repo", clock=lambda: now[0])
    reporter.update(phase="started", files_total=10)  # a phase change is reported at once
    for step in range(1, 17):  # 2 s of work in 1/8 s steps (exact in binary floating point)
        now[0] += 0.125
        reporter.update(files_done=step * 10 // 16)
    reporter.update(phase="completed", files_done=10)
    times = [round(r.elapsed_s, 6) for r in reports]
    assert [r.phase for r in reports] == ["started"] + ["started"] * 4 + ["completed"]
    assert times == [0.0, 0.5, 1.0, 1.5, 2.0, 2.0]
    assert reports[-1].files_done == 10 and reports[2].files_done == 5
    reporter.tick()  # nothing new to pace: no report until the interval has passed again
    assert len(reports) == 6
