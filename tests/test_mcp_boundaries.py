"""`quarry mcp` at its edges: which folders an agent may index and read, inputs far too long or not paths at
all, and spans asked past a file's end. A real server process, the SDK's own client, a real index."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from desktop_app.worker import ops
from desktop_app.worker.worker import EngineConfig, Worker

from .mcp_client import McpSession

TOKEN = "gho_FAKEFAKEFAKE1234567890"


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """The user's home folder, holding a secret no one indexed (as ~/.config/gh/hosts.yml does)."""
    home = tmp_path_factory.mktemp("home").resolve()
    gh = home / ".config" / "gh"
    gh.mkdir(parents=True)
    (gh / "hosts.yml").write_text(f"github.com:\n    oauth_token: {TOKEN}\n    user: tester\n")
    return home


@pytest.fixture(scope="module")
def project(tmp_path_factory, mixed_index, mixed_root) -> tuple[Path, Path]:
    """A private copy of the mixed repository with files of 1, 356 and 500 lines, indexed in a private copy of
    its index."""
    base = tmp_path_factory.mktemp("mcp-edges")
    root = base / "repo"
    shutil.copytree(mixed_root, root)
    (root / "sub").mkdir()
    (root / "sub" / "mod.py").write_text("ANSWER = 42\n")
    (root / "web" / "secrets").mkdir()
    (root / "web" / "secrets" / "deploy.py").write_text(f"DEPLOY_TOKEN = {TOKEN!r}\n")
    with open(root / ".gitignore", "a") as ignore:
        ignore.write("\nsecrets/\n")
    for name, count in (("decoder.py", 356), ("tables.py", 500)):
        (root / "src" / name).write_text("".join(f"ROW_{i} = {i}\n" for i in range(1, count + 1)))
    db = base / "index.db"
    shutil.copy(mixed_index[0], db)
    worker = Worker(EngineConfig(db)).start()
    try:
        worker.run(ops.index(root)).result()
    finally:
        worker.close()
    return root.resolve(), db


def start(args: list[str], cwd: Path, home: Path, errlog: Path) -> McpSession:
    """A server whose user's home folder is `home`, so `~` in an agent's paths leads there."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("HOME", str(home))  # read by the SDK when it starts the process
        return McpSession(args, cwd, errlog)


@pytest.fixture(scope="module")
def server(project, home, tmp_path_factory):
    root, db = project
    session = start(["mcp", "--db", str(db)], root / "src", home, tmp_path_factory.mktemp("mcp-log") / "err")
    yield session
    session.close()


def scope_roots(db: Path) -> list[str]:
    worker = Worker(EngineConfig(db)).start()
    try:
        return [summary.scope.root for summary in worker.run(ops.scopes()).result()]
    finally:
        worker.close()


def test_an_agent_cannot_index_or_read_a_folder_the_user_never_chose(server, project, home):
    root, db = project
    gh = home / ".config" / "gh"
    link = root / "src" / "gh_link"
    os.symlink(gh, link)
    try:
        # However the folder is spelt: ~, absolute, .. from the working folder, through the indexed one, a symlink.
        for spelling in (
            "~/.config/gh",
            str(gh),
            os.path.relpath(gh, root / "src"),
            f"{root}/../{os.path.relpath(gh, root.parent)}",
            "gh_link",
        ):
            refused = server.error("reindex", root=spelling, wait_seconds=60)
            assert "not a folder the user chose" in refused and "quarry index" in refused, spelling
    finally:
        link.unlink()
    assert "outside every indexed folder" in server.error(
        "read_span", path="~/.config/gh/hosts.yml", start_line=1, end_line=3
    )
    for tool, arguments in (
        ("search", {"query": "oauth_token", "mode": "text"}),
        ("find_symbol", {"name": "oauth_token"}),
        ("index_status", {}),
    ):
        refused = server.error(tool, root="~/.config/gh", **arguments)
        assert "no indexed folder" in refused and "only folders the user chose" in refused
        assert TOKEN not in refused
    assert not [r for r in scope_roots(db) if Path(r).is_relative_to(home)]  # nothing was written


def test_a_folder_inside_an_indexed_one_is_indexed_as_part_of_it(server, project):
    """Indexed on its own, a folder inside an indexed one was walked without the ignore files above it, so
    reindex(root=".../secrets") made a folder the user's .gitignore passes over readable."""
    root, _ = project
    for inside in (root / "web", root / "web" / "secrets"):
        done = server.ok("reindex", root=str(inside), wait_seconds=300, fresh=True)  # a run for each
        assert (done["root"], done["state"]) == (str(root), "finished")
    assert server.ok("index_status", root=str(root / "web"))["root"] == str(root)
    refused = server.error("read_span", path=str(root / "web" / "secrets" / "deploy.py"), start_line=1, end_line=1)
    assert "not an indexed file" in refused and TOKEN not in refused
    found = server.ok("search", query="DEPLOY_TOKEN", mode="text", root=str(root))
    assert TOKEN not in str(found)


def test_a_server_started_in_the_home_folder_has_chosen_no_folder(project, home, tmp_path):
    root, db = project
    session = start(["mcp", "--db", str(db)], home, home, tmp_path / "err")
    try:
        for spelling in ("~/.config/gh", ".config/gh", str(home)):
            assert "not a folder the user chose" in session.error("reindex", root=spelling, wait_seconds=60)
        assert "only folders the user chose" in session.error("index_status")
        assert session.ok("index_status", root=str(root))["root"] == str(root)  # indexed folders stay served
    finally:
        session.close()
    assert not [r for r in scope_roots(db) if Path(r).is_relative_to(home)]


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("find_symbol", {"name": "a" * 100_000}, "name is 100000 characters long"),
        ("find_symbol", {"name": "a" * 1001}, "name is 1001 characters long"),
        ("find_symbol", {"name": "parse", "kind": "k" * 100_000}, "kind is 100000 characters long"),
        ("search", {"query": "cache", "path_glob": "*" * 1_000_000}, "path_glob is 1000000 characters long"),
        ("search", {"query": "cache", "lang": "x" * 100_000}, "lang is 100000 characters long"),
        ("search", {"query": "cache", "symbol_type": "x" * 100_000}, "symbol_type is 100000 characters long"),
        ("search", {"query": "cache", "root": "r" * 100_000}, "root is 100000 characters long"),
        ("find_symbol", {"name": "parse", "root": "/tmp/" + "r" * 300}, "does not exist"),
        ("index_status", {"root": "r" * 100_000}, "root is 100000 characters long"),
        ("reindex", {"root": "r" * 100_000}, "root is 100000 characters long"),
        ("read_span", {"path": "p" * 100_000, "start_line": 1, "end_line": 2}, "path is 100000 characters long"),
        ("read_span", {"path": "src/cache.py\0.txt", "start_line": 1, "end_line": 2}, "NUL character"),
        ("search", {"query": "cache", "root": "src\0"}, "NUL character"),
        ("reindex", {"root": "\0"}, "NUL character"),
        ("read_span", {"path": "~no_such_user_anywhere/x.py", "start_line": 1, "end_line": 2}, "cannot be followed"),
    ],
)
def test_inputs_too_long_or_not_paths_get_a_short_clear_error(server, tool, arguments, expected):
    refused = server.error(tool, **arguments)
    assert expected in refused and not refused.startswith("Quarry failed")
    assert len(refused) < 1000  # the input is never sent back


def test_a_name_at_the_limit_gets_a_bounded_answer(server):
    result = server.call("find_symbol", name="a" * 1000)
    assert not result.is_error and len(result.content[0].text) < 3000


@pytest.mark.parametrize(
    ("path", "lines", "end_line", "total", "truncated"),
    [
        ("sub/mod.py", (1, 5), 1, 1, False),  # the whole file, asked past its end
        ("src/decoder.py", (300, 400), 356, 356, False),  # the whole rest of the file
        ("src/decoder.py", (300, 356), 356, 356, False),
        ("src/tables.py", (1, 500), 400, 500, True),  # at most 400 lines a call: 100 left out
        ("src/tables.py", (450, 10_000), 500, 500, False),
    ],
)
def test_read_span_is_truncated_only_when_lines_were_left_out(server, path, lines, end_line, total, truncated):
    span = server.ok("read_span", path=path, start_line=lines[0], end_line=lines[1])
    assert (span["end_line"], span["total_lines"], span["truncated"]) == (end_line, total, truncated)
    assert span["text"].count("\n") == end_line - lines[0]
