"""`quarry mcp` as an agent meets it: a real server process, the SDK's own client over stdio, a real index."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from desktop_app.cli import main
from desktop_app.worker import ops
from desktop_app.worker.worker import EngineConfig, Worker

from .gitrepo import commit_all, git, init_repo
from .mcp_client import McpSession

TOOLS = {"search", "find_symbol", "read_span", "index_status", "reindex"}


@pytest.fixture(scope="module")
def project(tmp_path_factory, mixed_index, mixed_root):
    """A private copy of the mixed repository, indexed in a private copy of its index (no chunk is embedded
    again: they are known by content)."""
    base = tmp_path_factory.mktemp("mcp")
    root = base / "repo"
    shutil.copytree(mixed_root, root)
    db = base / "index.db"
    shutil.copy(mixed_index[0], db)
    worker = Worker(EngineConfig(db)).start()
    try:
        stats = worker.run(ops.index(root)).result()
    finally:
        worker.close()
    return root.resolve(), db, stats


@pytest.fixture(scope="module")
def server(project, tmp_path_factory):
    root, db, _ = project
    session = McpSession(["mcp", "--db", str(db)], root / "src", tmp_path_factory.mktemp("mcp-log") / "err")
    yield session
    session.close()


def test_every_tool_is_listed_with_a_schema_and_a_description(server):
    tools = {t.name: t for t in server.list_tools()}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert len(tool.description) > 60
        assert tool.input_schema["type"] == "object"
    assert tools["search"].input_schema["required"] == ["query"]
    # How to ask for a function: what it does, opening with its verb (query.py's describes_an_action).
    assert "opening with its verb" in tools["search"].input_schema["properties"]["query"]["description"]
    instructions = server.instructions()
    assert "as its doc comment would" in instructions and "find_symbol" in instructions
    assert tools["search"].input_schema["properties"]["mode"]["enum"] == ["hybrid", "semantic", "exact", "text"]
    assert set(tools["read_span"].input_schema["required"]) == {"path", "start_line", "end_line"}
    assert tools["search"].annotations.read_only_hint is True
    assert tools["reindex"].annotations.read_only_hint is False


def test_search_finds_code_by_meaning_in_the_working_folders_repository(server, project):
    root = project[0]
    answer = server.ok("search", query="retry a request with exponential backoff", k=5)
    assert answer["root"] == str(root)  # the server runs in root/src: the indexed folder above it
    top = answer["results"][0]
    assert top["path"] == "src/http_client.py"
    assert "meaning" in top["why"]
    assert 0 < top["score"] <= 1
    assert all(r["snippet"].count("\n") < 30 for r in answer["results"])
    named = server.ok("search", query="RetryPolicy", k=3)["results"][0]
    assert (named["symbol"], named["why"][0]) == ("RetryPolicy", "name")


def test_search_in_text_mode_lists_every_matching_line_like_grep(server):
    answer = server.ok("search", query=r"policy\.\w+", mode="text", regex=True)
    assert (answer["mode"], answer["files_matched"], answer["matches_total"], answer["complete"]) == (
        "text",
        1,
        3,
        True,
    )
    (found,) = answer["results"]
    assert found["path"] == "src/http_client.py" and found["why"] == ["text"]
    assert [m["line"] for m in found["matches"]] == [24, 32, 33] and "policy.attempts" in found["snippet"]


def test_search_filters_by_language_path_and_a_folder_given_as_root(server, project):
    root = project[0]
    rust = server.ok("search", query="matrix multiplication", lang="rust")["results"]
    assert rust and all(r["language"] == "rust" for r in rust)
    web = server.ok("search", query="wait before calling", root=str(root / "web"))["results"]
    assert web and all(r["path"].startswith("web/") for r in web)
    globbed = server.ok("search", query="session token", path_glob="*.ts")["results"]
    assert globbed and all(r["path"].endswith(".ts") for r in globbed)
    classes = server.ok("search", query="cache", symbol_type="class")["results"]
    assert classes and all(r["symbol_type"] == "class" for r in classes)


def test_find_symbol_lists_definitions_in_any_case(server):
    found = server.ok("find_symbol", name="retrypolicy")["definitions"]
    assert [(d["path"], d["symbol"], d["symbol_type"]) for d in found] == [
        ("src/http_client.py", "RetryPolicy", "class")
    ]
    assert found[0]["snippet"].startswith("class RetryPolicy")
    assert server.ok("find_symbol", name="RetryPolicy", kind="function")["definitions"] == []
    missing = server.ok("find_symbol", name="no_such_symbol_anywhere")
    assert missing["definitions"] == [] and "search" in missing["notice"]


def test_read_span_gives_the_current_lines_of_an_indexed_file(server, project):
    root = project[0]
    lines = (root / "src" / "http_client.py").read_text().splitlines()
    span = server.ok("read_span", path="src/http_client.py", start_line=9, end_line=12)
    assert span["text"] == "\n".join(lines[8:12])
    assert (span["start_line"], span["end_line"], span["total_lines"]) == (9, 12, len(lines))
    assert span["truncated"] is False and span["changed_since_indexed"] is False
    absolute = server.ok("read_span", path=str(root / "web" / "auth.ts"), start_line=1, end_line=10_000)
    assert absolute["path"] == "web/auth.ts" and absolute["end_line"] == absolute["total_lines"]


def test_read_span_refuses_everything_but_indexed_files(server, project, tmp_path):
    root = project[0]
    secret = tmp_path / "secret.txt"
    secret.write_text("password\n")
    link = root / "src" / "link_out.py"
    os.symlink(secret, link)
    try:
        assert "outside every indexed folder" in server.error("read_span", path=str(secret), start_line=1, end_line=1)
        assert "outside" in server.error("read_span", path="src/link_out.py", start_line=1, end_line=1)
        assert "outside" in server.error("read_span", path="../../../etc/passwd", start_line=1, end_line=1)
    finally:
        link.unlink()
    for ignored in ("build/generated.py", "debug.log", "node_modules/left-pad/index.js", "src/nowhere.py"):
        assert "not an indexed file" in server.error("read_span", path=ignored, start_line=1, end_line=1)
    assert "past its end" in server.error("read_span", path="README.md", start_line=10_000, end_line=10_001)
    assert "not a span" in server.error("read_span", path="README.md", start_line=5, end_line=2)


def test_bad_input_is_a_tool_error_and_the_server_goes_on(server, tmp_path):
    assert "does not exist" in server.error("search", query="cache", root="/no/such/folder")
    assert "no indexed folder" in server.error("search", query="cache", root=str(tmp_path))
    assert "k must be between 1 and 50" in server.error("search", query="cache", k=100_000)
    assert "query is empty" in server.error("search", query="   ")
    assert "mode must be one of" in server.error("search", query="cache", mode="fuzzy")
    assert "unknown language" in server.error("search", query="cache", lang="klingon")
    assert "name is empty" in server.error("find_symbol", name="")
    assert server.ok("search", query="least recently used cache")["results"]  # still serving


def test_index_status_reports_coverage_and_freshness(server, project):
    root, _, stats = project
    status = server.ok("index_status")
    assert status["root"] == str(root)
    assert (status["files"], status["chunks"]) == (stats.files_indexed, stats.chunks_total)
    assert status["coverage"]["full"] == 1.0
    assert status["stale_files"] == 0 and status["deleted_files"] == 0
    assert status["indexing"] is False and status["live_updates"] is True
    assert status["last_indexed_at"].endswith("+00:00")


def test_reindex_indexes_the_folder_the_server_was_started_for_and_no_other(index_copy, tmp_path):
    folder = tmp_path / "tiny"
    folder.mkdir()
    (folder / "ledger.py").write_text("def reconcile_ledger(entries):\n    return [e for e in entries if e.open]\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "notes.py").write_text("API_KEY = 'not for agents'\n")
    session = McpSession(["mcp", "--db", str(index_copy), "--root", str(folder)], tmp_path, tmp_path / "err")
    try:
        assert "call reindex(root=" in session.error("index_status")
        assert "not a folder the user chose" in session.error("reindex", root=str(elsewhere), wait_seconds=300)
        assert "no indexed folder" in session.error("index_status", root=str(elsewhere))
        assert "not a folder" in session.error("reindex", root=str(folder / "ledger.py"))
        done = session.ok("reindex", root=str(folder), wait_seconds=300)
        assert done["state"] == "finished" and done["files"] == 1
        found = session.ok("search", query="reconcile_ledger")["results"]
        assert found[0]["path"] == "ledger.py"
        assert session.ok("index_status")["files"] == 1
    finally:
        session.close()


def test_a_file_saved_during_the_session_is_found_by_the_next_search(mixed_copy, worker_for, tmp_path):
    root, db = mixed_copy
    worker = worker_for(db)
    worker.run(ops.index(root)).result()
    worker.close()
    session = McpSession(["mcp", "--db", str(db), "--root", str(root)], tmp_path, tmp_path / "err")
    try:
        assert session.ok("index_status")["live_updates"] is True
        cache = root / "src" / "cache.py"
        cache.write_text(cache.read_text() + "\n\ndef zanzibar_quota_window(limit):\n    return limit * 2\n")
        # Waits on the outcome, not the clock: the file stays stale until the server's watcher re-indexed it.
        for _ in range(100_000):
            if session.ok("index_status")["stale_files"] == 0:
                break
        found = session.ok("find_symbol", name="zanzibar_quota_window")["definitions"]
        assert [d["path"] for d in found] == ["src/cache.py"]
        top = session.ok("search", query="zanzibar_quota_window")["results"][0]
        assert (top["path"], top["symbol"]) == ("src/cache.py", "zanzibar_quota_window")
    finally:
        session.close()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_in_a_worktree_the_server_serves_its_worktree_scope(mixed_copy, worker_for, tmp_path):
    main_root, db = mixed_copy
    init_repo(main_root)
    feature = tmp_path / "feature"
    git(main_root, "worktree", "add", "-q", "-b", "feature", str(feature))
    (feature / "src" / "ledger.py").write_text("def reconcile_ledger_entries(ledger):\n    return ledger\n")
    commit_all(feature, "feature work")
    worker = worker_for(db)
    worker.run(ops.index(main_root)).result()
    worker.run(ops.index(feature)).result()
    worker.close()
    session = McpSession(["mcp", "--db", str(db)], feature / "src", tmp_path / "err")
    try:
        status = session.ok("index_status")
        assert (status["root"], status["scope_type"]) == (str(feature.resolve()), "worktree")
        changed = session.ok("search", query="reconcile ledger entries", changed_only=True)["results"]
        assert [r["path"] for r in changed] == ["src/ledger.py"]
        assert session.ok("find_symbol", name="reconcile_ledger_entries", root=str(main_root))["definitions"] == []
    finally:
        session.close()


@pytest.mark.parametrize(
    ("client", "key"),
    [("claude", "mcpServers"), ("cursor", "mcpServers"), ("vscode", "servers"), ("zed", "context_servers")],
)
def test_print_config_gives_each_client_its_snippet(client, key, capsys, tmp_path):
    db = tmp_path / "team.db"
    assert main(["mcp", "--db", str(db), "--print-config", client]) == 0
    out, err = capsys.readouterr()
    entry = json.loads(out)[key]["quarry"]
    assert entry["args"][-3:] == ["mcp", "--db", str(db.resolve())]
    assert os.path.isabs(entry["command"])
    assert err.startswith("quarry: ")


def test_print_config_never_shows_a_password(capsys):
    assert main(["mcp", "--db", "postgresql://ann:s3cret@db.example:5432/code", "--print-config", "vscode"]) == 0
    out, _ = capsys.readouterr()
    assert "s3cret" not in out and "postgresql://ann@db.example:5432/code" in out
