"""`quarry mcp` telling an agent the true state: a reindex polled without waiting reports its run until it
has finished, a fresh server's first search is answered from every vector (or says how many it searched),
and read_span numbers lines as search results do. A real server process, the SDK's own client, real
indexes; the search that stops waiting calls the server's tools in this process, its warm-up held by an event."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from desktop_app.agent.tools import AgentTools
from desktop_app.search import pipeline
from desktop_app.worker import ops
from desktop_app.worker.worker import EngineConfig, Worker

from .mcp_client import McpSession

FILES = 1000  # of 10 functions each: 10,000 chunks, whose vectors take a fresh server a while to load
WORDS = ["alpha", "beta", "gamma", "delta", "kappa", "sigma", "omega", "ledger", "invoice", "parcel", "route"]


@pytest.fixture(scope="module")
def large(tmp_path_factory) -> tuple[Path, Path]:
    """A folder of many small Python files and its index, made with the fast model (a big index in seconds)."""
    base = tmp_path_factory.mktemp("mcp-large")
    root = base / "repo"
    for i in range(FILES):
        folder = root / f"pkg{i % 50}"
        folder.mkdir(parents=True, exist_ok=True)
        functions = []
        for j in range(10):
            a, b = WORDS[(i + j) % len(WORDS)], WORDS[(i * 7 + j * 3) % len(WORDS)]
            functions.append(
                f'def {a}_{b}_{i}_{j}(x, y):\n    """Combine {a} with {b} for record {i}."""\n'
                f"    total = x + y * {j}\n    return total\n\n\n"
            )
        (folder / f"mod{i}.py").write_text("".join(functions))
    db = base / "index.db"
    worker = Worker(EngineConfig(db, model="fast")).start()
    try:
        worker.run(ops.index(root)).result()
    finally:
        worker.close()
    return root.resolve(), db


def test_reindex_polled_without_waiting_reports_its_run_until_it_has_finished(index_copy, tmp_path):
    """Each poll once started a new run when the last had ended, so an agent polling reindex(root) for
    "finished" polled for ever."""
    folder = tmp_path / "tiny"
    folder.mkdir()
    (folder / "ledger.py").write_text("def reconcile_ledger(entries):\n    return [e for e in entries if e.open]\n")
    session = McpSession(["mcp", "--db", str(index_copy), "--root", str(folder)], tmp_path, tmp_path / "err")
    try:
        first = session.ok("reindex", root=str(folder))
        assert first["state"] in ("started", "finished")
        answer = first
        for _ in range(100_000):  # polls until the run is over: waits on the outcome, not the clock
            if answer["state"] == "finished":
                break
            assert "progress" in answer and "reindex again" in answer["hint"]
            answer = session.ok("reindex", root=str(folder))
            assert answer["state"] in ("running", "finished")
        assert (answer["state"], answer["files"], answer["files_changed"]) == ("finished", 1, 1)
        assert "fresh=true" in answer["hint"]
        # Asked again, it reports the same run: nothing more is started.
        for _ in range(3):
            assert session.ok("reindex", root=str(folder)) == answer
        assert session.ok("index_status")["indexing"] is False
        (folder / "ledger.py").write_text("def reconcile_ledger(entries):\n    return list(entries)\n")
        again = session.ok("reindex", root=str(folder), fresh=True, wait_seconds=300)
        assert again["state"] == "finished" and again["finished_at"] >= answer["finished_at"]
        assert session.ok("reindex", root=str(folder)) == again
    finally:
        session.close()


def test_a_fresh_servers_first_search_is_answered_from_every_vector(large, tmp_path):
    """The first search of a fresh server was answered from the vectors loaded so far (4% of these, 61% of
    a real project's) and the right answer could fall out of the top 3."""
    root, db = large
    query = "combine omega with ledger for record 700"
    session = McpSession(["mcp", "--db", str(db)], root, tmp_path / "err")
    try:
        first = session.ok("search", query=query, k=3)
        assert "vectors_searched" not in first and "notice" not in first, first.get("notice")
        later = session.ok("search", query=query, k=3)
        assert [(r["path"], r["symbol"]) for r in first["results"]] == [
            (r["path"], r["symbol"]) for r in later["results"]
        ]
    finally:
        session.close()


def test_a_search_that_stops_waiting_for_the_vectors_says_how_much_it_searched(large, monkeypatch):
    # The server's tools in this process, so that its warm-up can be held half way by an event: a fresh server's
    # load of these vectors was once slow enough to race, and is now done before a client's handshake.
    root, db = large
    monkeypatch.setattr(pipeline, "WARM_UP_SLICE_S", 1e-9)  # a slice a batch: the code vectors, then the names
    half_way, release = threading.Event(), threading.Event()
    real_warm_up = pipeline.Searcher.warm_up

    def held_warm_up(searcher: pipeline.Searcher):
        for step, value in enumerate(real_warm_up(searcher)):
            yield value
            if step == 0:  # the code vectors are in, not the names: the worker answers searches meanwhile
                half_way.set()
                while not release.wait(0.01):
                    yield None

    monkeypatch.setattr(pipeline.Searcher, "warm_up", held_warm_up)
    worker = Worker(EngineConfig(db)).start()
    try:
        tools = AgentTools(worker, root, worker.run(ops.warm_up()), load_wait_s=0)
        assert half_way.wait(60)
        first = asyncio.run(tools.search("combine omega with ledger for record 700", k=3))
        assert 0 < first["vectors_searched"] < 1 and first["results"]
        assert f"searched in {first['vectors_searched']:.0%} of them" in first["notice"]
        assert asyncio.run(tools.search("record 700", mode="exact", k=3))["results"]  # no vectors: no wait
        release.set()
        tools.loading.result(timeout=60)  # type: ignore[union-attr]
        assert "vectors_searched" not in asyncio.run(tools.search("combine omega with ledger for record 700", k=3))
    finally:
        release.set()
        worker.close()


def test_read_span_numbers_lines_as_search_results_do(index_copy, tmp_path):
    """read_span split lines with str.splitlines(), which also ends a line at a form feed and at U+2028, so
    past one its line numbers and the search results' disagreed."""
    folder = tmp_path / "odd"
    folder.mkdir()
    (folder / "pages.py").write_text(
        "def first_page():\n    return 1\n\f\n"
        "# a paragraph separator\u2028and a line separator\u2029inside a comment, a vertical tab \v too\n"
        "def second_page():\n    return 'marker_after_separators'\n",
        encoding="utf-8",
    )
    (folder / "wide.py").write_bytes(
        "\ufeffdef wide_first():\n    return '\u2028'\n\f\ndef wide_second():\n    return 'wide_marker'\n".encode(
            "utf-16-le"
        )
    )
    session = McpSession(["mcp", "--db", str(index_copy), "--root", str(folder)], tmp_path, tmp_path / "err")
    try:
        assert session.ok("reindex", root=str(folder), wait_seconds=300)["files"] == 2
        for path, name, marker in (
            ("pages.py", "second_page", "marker_after_separators"),
            ("wide.py", "wide_second", "wide_marker"),
        ):
            (found,) = session.ok("find_symbol", name=name)["definitions"]
            assert found["path"] == path
            span = session.ok("read_span", path=path, start_line=found["start_line"], end_line=found["end_line"])
            assert span["text"] == found["snippet"] and f"def {name}():" in span["text"]
            (hit,) = session.ok("search", query=marker, mode="text")["results"]
            line = hit["matches"][0]["line"]
            assert marker in session.ok("read_span", path=path, start_line=line, end_line=line)["text"]
    finally:
        session.close()
