"""A big tree's stage 1 runs in parse processes (indexing/parse_pool.py): the same index as the prep thread makes,
from the real `quarry` command too (its parse processes are spawned from it), and a wrong QUARRY_PARSE_PROCESSES
is one clear line; the parse processes end with the process that started them, however it ends. Real processes, real
files, real SQLite."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import apsw

from desktop_app.embedding.static_model import StaticEmbedder
from desktop_app.indexing.child_processes import PROCESSES_ENV
from desktop_app.indexing.file_prep import FilePrep, PrepSettings
from desktop_app.indexing.file_selection import SelectionOptions, select_files
from desktop_app.indexing.indexer import Indexer, IndexOptions
from desktop_app.indexing.parse_pool import ParsePool
from desktop_app.indexing.step_times import StepTimes
from desktop_app.store.sqlite.store import SqliteStore
from desktop_app.store.sqlite.text_codec import ChunkTextCodec

from .orphans import assert_children_end_with_their_parent
from .reliability import one_line_error, quarry


def _content(db: Path) -> list[tuple]:
    """Every file's chunks, in order, with their places and text: what an index of the tree holds."""
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    ChunkTextCodec(conn)  # the text as written: its compressed form depends on how the writes were batched
    try:
        return list(
            conn.execute(
                "SELECT f.path, f.sha256, fc.ordinal, fc.start_line, fc.end_line, fc.chunk_type, fc.symbol_name, "
                "c.hash, c.token_count, chunk_text_of(c.text) FROM file_chunk fc JOIN file f ON f.id = fc.file_id "
                "JOIN chunk c ON c.id = fc.chunk_id ORDER BY f.path, fc.ordinal"
            )
        )
    finally:
        conn.close()


def _index(root: Path, db: Path) -> dict:
    store = SqliteStore(db)
    try:
        stats = Indexer(store, StaticEmbedder(), IndexOptions(until="keyword")).index(root)
    finally:
        store.close()
    return stats.step_seconds


def test_parse_processes_make_the_index_the_prep_thread_makes(tmp_path, mixed_root, monkeypatch):
    monkeypatch.setenv(PROCESSES_ENV, "0")
    _index(mixed_root, tmp_path / "thread.db")
    monkeypatch.setenv(PROCESSES_ENV, "2")
    steps = _index(mixed_root, tmp_path / "processes.db")
    assert steps["chunk"] > 0  # the processes' own step times come back
    assert _content(tmp_path / "processes.db") == _content(tmp_path / "thread.db") != []


def test_the_quarry_command_indexes_in_parse_processes(tmp_path, mixed_root):
    done = quarry(
        "index", mixed_root, "--db", tmp_path / "index.db", "--until", "keyword", "--json", "--quiet",
        env={PROCESSES_ENV: "2"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["files_indexed"] > 0


def test_a_wrong_number_of_parse_processes_is_one_line(tmp_path, mixed_root):
    done = quarry("index", mixed_root, "--db", tmp_path / "index.db", "--quiet", env={PROCESSES_ENV: "many"})
    one_line_error(done, 2, PROCESSES_ENV, "whole number")


def test_files_prepared_while_the_processes_start_keep_their_order(mixed_root):
    """The prep thread prepares the first files itself until a process is ready (~0.4 s to start); the answers
    come in the files' order all the same, whichever side prepared each."""
    settings = PrepSettings(SelectionOptions(), 256, 32, False, {})
    embedder = StaticEmbedder()
    todo = [(c, None) for c in select_files(mixed_root).candidates] * 3
    pool = ParsePool(2, settings, embedder.counting_tokenizer())
    try:
        here = FilePrep(settings, embedder.count_tokens, StepTimes())
        prepared = list(pool.prepare_all(todo, StepTimes(), threading.Event(), here=here))
    finally:
        pool.close()
    assert [p.cand.rel_path for p in prepared] == [c.rel_path for c, _ in todo]
    assert [len(p.documents) for p in prepared] == [len(here.prepare(c, None).documents) for c, _ in todo]


def test_a_parse_process_starts_without_numpy_onnx_runtime_or_charset_normalizer():
    """What a parse process imports to start (its pool's module, as a spawned process unpickles its work) leaves out
    numpy, ONNX Runtime and charset-normalizer: ~0.1 s of each process's start, while the prep thread waits for it."""
    script = "import sys, desktop_app.indexing.parse_pool; print(sorted(set(sys.argv[1:]) & set(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", script, "numpy", "onnxruntime", "charset_normalizer"],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "[]", done.stdout


# A process that starts a parse pool, prepares a file in it, prints the pool's processes and waits to be killed.
POOL_HOLDER = """
import multiprocessing, sys, threading
from pathlib import Path
from desktop_app.embedding.static_model import StaticEmbedder
from desktop_app.indexing.file_prep import PrepSettings
from desktop_app.indexing.file_selection import Candidate, SelectionOptions
from desktop_app.indexing.parse_pool import ParsePool
from desktop_app.indexing.step_times import StepTimes

if __name__ == "__main__":
    path = Path(sys.argv[1])
    settings = PrepSettings(SelectionOptions(), 256, 32, False, {})
    pool = ParsePool(2, settings, StaticEmbedder().counting_tokenizer())
    todo = [(Candidate(path.name, path, path.stat().st_size, 0, "python", "code"), None)] * 4
    assert all(p.write for p in pool.prepare_all(todo, StepTimes(), threading.Event()))
    print(" ".join(str(p.pid) for p in multiprocessing.active_children()), flush=True)
    sys.stdin.read()
"""


def test_parse_processes_end_with_an_indexing_process_killed_outright(tmp_path, mixed_root):
    """A crash or SIGKILL of the process indexing leaves no parse process behind (each held ~190 MB, asleep)."""
    script = tmp_path / "pool_holder.py"
    script.write_text(POOL_HOLDER, encoding="utf-8")
    assert_children_end_with_their_parent(script, str(mixed_root / "src" / "http_client.py"))
