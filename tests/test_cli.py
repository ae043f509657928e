"""The command-line contract from DESIGN.md, driven as a user would: real processes, real exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

INDEX_FIELDS = {
    "files_total",
    "files_indexed",
    "files_skipped",
    "chunks_total",
    "chunks_embedded",
    "bytes",
    "seconds",
    "provider",
    "model",
    "tokens_embedded",
}
RESULT_FIELDS = {
    "path",
    "start_line",
    "end_line",
    "score",
    "relevance",
    "language",
    "chunk_type",
    "symbol_name",
    "snippet",
}


def quarry(*args, env=None, check=None, cwd=None):
    proc = subprocess.run(
        [sys.executable, "-m", "desktop_app", *map(str, args)],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=300,
        cwd=cwd,
    )
    if check is not None:
        assert proc.returncode == check, proc.stderr
    return proc


def test_search_without_root_searches_the_indexed_folder_holding_the_working_directory(
    mixed_root, index_copy, tmp_path
):
    inside = json.loads(
        quarry("search", "retry http", "--db", index_copy, "--json", cwd=mixed_root / "src", check=0).stdout
    )
    given = json.loads(
        quarry("search", "retry http", "--db", index_copy, "--json", "--root", mixed_root, check=0).stdout
    )
    assert inside["results"] and inside["results"] == given["results"]
    outside = quarry("search", "retry http", "--db", index_copy, cwd=tmp_path)
    assert outside.returncode == 2 and len(outside.stderr.strip().splitlines()) == 1
    assert "not inside an indexed folder" in outside.stderr and "--root PATH" in outside.stderr


def test_results_of_several_folders_name_their_folder(mixed_root, index_copy, tmp_path):
    """Issue 14, item 6: with --all-scopes (or several --root) a path alone does not say which folder it is in."""
    other = tmp_path / "other"
    other.mkdir()
    (other / "retry.py").write_text('def retry_request(url):\n    """Retry a failed http request."""\n')
    quarry("index", other, "--db", index_copy, check=0)
    for mode in ("hybrid", "text"):
        out = quarry("search", "retry", "--db", index_copy, "--all-scopes", "--mode", mode, "-k", "30", check=0).stdout
        listed = [line for line in out.splitlines() if not line.startswith(("(", "note:"))]
        paths = [line.split()[2] if mode == "hybrid" else line for line in listed]
        assert any(p.startswith(f"{other.resolve()}/retry.py:") for p in paths), out
        assert any(p.startswith(f"{mixed_root.resolve()}/") for p in paths), out
        assert all(p.startswith((f"{other.resolve()}/", f"{mixed_root.resolve()}/")) for p in paths), out
    one = quarry("search", "retry", "--db", index_copy, "--root", other, "--mode", "text", check=0).stdout
    assert one.startswith("retry.py:1:"), one  # one folder: paths in it, as before
    assert one.splitlines()[-1].startswith("(2 matches in 1 file; "), one  # a count's noun agrees with it
    single = quarry("search", "Retry a", "--db", index_copy, "--root", other, "--mode", "text", check=0).stdout
    assert single.splitlines()[-1].startswith("(1 match in 1 file; "), single


def test_a_query_of_several_words_needs_no_quotes(mixed_root, index_copy):
    quoted = quarry("search", "retry failed http", "--db", index_copy, "--root", mixed_root, "--json", check=0)
    unquoted = quarry("search", "retry", "failed", "http", "--db", index_copy, "--root", mixed_root, "--json", check=0)
    assert json.loads(unquoted.stdout)["query"] == "retry failed http"
    assert json.loads(unquoted.stdout)["results"] == json.loads(quoted.stdout)["results"]
    empty = quarry("search", "--db", index_copy, "--root", mixed_root)
    assert empty.returncode == 2 and "give a QUERY" in empty.stderr


def test_index_json_stats_and_search_json(mixed_root, index_copy):
    db = index_copy
    proc = quarry("index", mixed_root, "--db", db, "--json", check=0)
    stats = json.loads(proc.stdout.strip().splitlines()[-1])
    assert stats.keys() >= INDEX_FIELDS
    assert stats["chunks_embedded"] == 0 and stats["files_indexed"] == 9
    out = quarry(
        "search", "where do we retry failed http requests", "--root", mixed_root, "--db", db, "--json", check=0
    ).stdout
    payload = json.loads(out)
    assert {"query", "mode", "results", "elapsed_ms", "notice"} <= payload.keys()
    assert payload["mode"] == "hybrid" and payload["notice"] is None
    top = payload["results"][0]
    assert top.keys() >= RESULT_FIELDS and top["path"] == "src/http_client.py"
    assert top["relevance"] in {"exact", "semantic", "both"} and "context" not in top


def test_progress_goes_to_stderr(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    (root / "a.py").write_text("def alpha():\n    return 1\n")
    proc = quarry("index", root, "--db", tmp_path / "i.db", check=0)
    assert "analyzing" in proc.stderr and "completed" in proc.stderr
    assert "completed, model vectors: 1/1 chunks" in proc.stderr and ", 1/1 file outlines" in proc.stderr
    # The summary names the device in words, not ONNX Runtime's provider; what ran when the model had nothing to do.
    assert proc.stdout.startswith("indexed") and " on the CPU; skipped: none" in proc.stdout, proc.stdout
    (root / "b.py").write_text("def beta():\n    return 2\n")
    fast = quarry("index", root, "--db", tmp_path / "i.db", "--until", "fast", check=0).stdout
    assert "(0 embedded, 1 fast) in " in fast and " by the fast model alone; skipped: none" in fast, fast
    again = quarry("index", root, "--db", tmp_path / "i.db", "--until", "fast", check=0).stdout
    assert " with nothing to embed; skipped: none" in again, again


def test_db_before_subcommand_and_quarry_db_env(index_copy, mixed_root):
    before = quarry("--db", index_copy, "search", "LRUCache", "--root", mixed_root, "--json", check=0)
    via_env = quarry("search", "LRUCache", "--root", mixed_root, "--json", env={"QUARRY_DB": str(index_copy)}, check=0)
    assert json.loads(before.stdout)["results"][0]["path"] == "src/cache.py"
    assert json.loads(via_env.stdout)["results"][0]["path"] == "src/cache.py"


def test_queries_file_gives_one_object_per_line(tmp_path, index_copy, mixed_root):
    qfile = tmp_path / "q.txt"
    qfile.write_text("multiply two matrices\n\nparse command line arguments\ndebounce\n")
    proc = quarry(
        "search", "--queries-file", qfile, "--root", mixed_root, "--db", index_copy, "--json", "-k", "3", check=0
    )
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [x["query"] for x in lines] == ["multiply two matrices", "parse command line arguments", "debounce"]
    assert all(len(x["results"]) == 3 for x in lines)


def test_context_flag_adds_context_fields(index_copy, mixed_root):
    proc = quarry("search", "transpose", "--root", mixed_root, "--db", index_copy, "--json", "--context", "2", check=0)
    top = json.loads(proc.stdout)["results"][0]
    assert {"context_start_line", "context_end_line", "context"} <= top.keys()
    assert top["context_start_line"] == top["start_line"] - 2


@pytest.mark.parametrize(
    "args",
    [
        ["search", "   "],
        ["search", "x y z", "-k", "0"],
        ["search", "x y z", "-k", "101"],
        ["search", "x y z", "--mode", "fuzzy"],
        ["search", "x y z", "--context", "-1"],
        ["search", "x y z", "--lang", "klingon"],
        ["search", "x y z", "--min-score", "2"],
        ["search", "x y z", "--queries-file", "/nonexistent/q.txt"],
        ["search"],
        ["bogus-command"],
        ["index", "/nonexistent/folder"],
        ["search", "x y z", "-k", "ten"],
    ],
)
def test_bad_input_exits_2_with_one_line(index_copy, mixed_root, args):
    if args[0] == "search":
        args = [*args, "--root", str(mixed_root)]
    proc = quarry(*args, "--db", index_copy)
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("quarry: ")


def test_search_of_unindexed_root_says_to_index_it(index_copy, tmp_path):
    proc = quarry("search", "anything", "--root", tmp_path, "--db", index_copy)
    assert proc.returncode == 2 and "quarry index" in proc.stderr


def test_a_file_that_is_not_a_database_fails_with_exit_1(tmp_path, mixed_root):
    bogus = tmp_path / "notes.txt"
    bogus.write_text("my precious notes, not a database\n" * 100)
    proc = quarry("search", "anything", "--root", mixed_root, "--db", bogus)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert bogus.read_text().startswith("my precious notes")


def test_scopes_list_and_remove(index_copy, mixed_root):
    scopes = json.loads(quarry("scopes", "--db", index_copy, "--json", check=0).stdout)
    assert len(scopes) == 1
    s = scopes[0]
    assert set(s) == {
        "id",
        "type",
        "root",
        "parent",
        "files",
        "chunks",
        "last_indexed_at",
        "stale",
        "base",
        "differing",
    }
    assert s["type"] == "main" and s["root"] == str(mixed_root.resolve()) and s["files"] == 9 and s["parent"] is None
    assert s["base"] is None and s["differing"] is None  # a team index's (test_team_checkouts.py)
    quarry("scopes", "remove", mixed_root, "--db", index_copy, check=0)
    assert json.loads(quarry("scopes", "--db", index_copy, "--json", check=0).stdout) == []
    assert quarry("scopes", "remove", mixed_root, "--db", index_copy).returncode == 1


def test_history_lists_searches(index_copy, mixed_root):
    quarry("search", "evict least recently used", "--root", mixed_root, "--db", index_copy, check=0)
    entries = json.loads(quarry("history", "--db", index_copy, "--json", check=0).stdout)
    assert entries[0]["query"] == "evict least recently used" and entries[0]["result_count"] > 0


def test_rerank_weights_are_configurable(index_copy, mixed_root):
    args = ("search", "cache entry", "--root", mixed_root, "--db", index_copy, "--json", "--mode", "semantic")
    plain = json.loads(quarry(*args, "--rerank", "none", check=0).stdout)["results"]
    boosted = json.loads(quarry(*args, "--rerank", "none", "--weights", "symbol=0.5", check=0).stdout)["results"]
    named = [r for r in boosted if r["symbol_name"]]
    assert named and all(
        b["score"] > p["score"]
        for b in named
        for p in plain
        if (p["path"], p["start_line"]) == (b["path"], b["start_line"])
    )
    bad = quarry(*args, "--weights", "gravity=2")
    assert bad.returncode == 2 and "unknown weight" in bad.stderr


def test_a_reader_that_stops_early_ends_the_output_quietly(index_copy, mixed_root):
    qfile_args = (
        "search",
        "function",
        "--root",
        str(mixed_root),
        "--db",
        str(index_copy),
        "-k",
        "100",
        "--context",
        "50",
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "desktop_app", *qfile_args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    proc.stdout.readline()  # like `| head -1`
    proc.stdout.close()
    assert proc.wait(timeout=120) == 0
    assert proc.stderr.read() == ""


def test_a_command_on_a_local_index_does_not_import_the_team_index_driver(index_copy, mixed_root):
    """psycopg was a third of a cold `quarry index`'s start-up (0.33 of 1.23 s, loaded) on every local index; it is
    imported for a postgresql:// location only."""
    probe = (
        "import sys, runpy\n"
        f"sys.argv = ['quarry', '--db', {str(index_copy)!r}, 'scopes']\n"
        "try:\n"
        "    runpy.run_module('desktop_app', run_name='__main__')\n"
        "except SystemExit as exc:\n"
        "    assert not exc.code, exc.code\n"
        "print('psycopg' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "False"


def test_the_closing_line_counts_one_result_in_the_singular(index_copy, mixed_root):
    one = quarry("search", "retry failed http requests", "--root", mixed_root, "--db", index_copy, "-k", "1").stdout
    assert "(1 result in " in one.strip().splitlines()[-1]
    two = quarry("search", "retry failed http requests", "--root", mixed_root, "--db", index_copy, "-k", "2").stdout
    assert "(2 results in " in two.strip().splitlines()[-1]
