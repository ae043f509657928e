"""Shared by the reliability tests: real `quarry` processes, the store's invariants, an unprivileged user."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import apsw
import pytest

from desktop_app.store.sqlite.connection import open_connection
from desktop_app.store.sqlite.soundness import OPEN_CHECK_MAX_BYTES

REPO = Path(__file__).resolve().parent.parent
QUARRY = [sys.executable, "-m", "desktop_app"]
NOBODY = 65534
# Root without its override of file modes (setpriv, util-linux): the modes of the user's own files bind, as
# they do for everyone but root.
_NO_OVERRIDE = "-dac_override,-dac_read_search"
WITHOUT_OVERRIDE = ["setpriv", f"--inh-caps={_NO_OVERRIDE}", f"--bounding-set={_NO_OVERRIDE}"]
needs_setpriv = pytest.mark.skipif(
    shutil.which("setpriv") is None or os.geteuid() != 0, reason="needs root and setpriv (util-linux)"
)
# The interpreter may live where 'nobody' cannot read it (here under /root), so the child starts as root,
# imports everything the command needs (codecs load lazily), and only then drops to 'nobody' to run it.
_AS_NOBODY = f"""
import codecs, os, sys
import desktop_app.cli as cli
for encoding in ("utf-8-sig", "cp1252", "utf-16", "utf-32"):
    codecs.lookup(encoding)
os.setgroups([])
os.setgid({NOBODY})
os.setuid({NOBODY})
sys.exit(cli.main(sys.argv[1:]))
"""


def quarry(
    *args,
    env: dict | None = None,
    preexec_fn: Callable[[], None] | None = None,
    timeout: float = 300,
    replace_env: bool = False,
    cwd: Path = REPO,
) -> subprocess.CompletedProcess:
    """Run the CLI; `env` adds to this process's environment, or with `replace_env` is the whole of it."""
    return subprocess.run(
        [*QUARRY, *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        env=dict(env or {}) if replace_env else {**os.environ, **(env or {})},
        preexec_fn=preexec_fn,
    )


def quarry_as_nobody(*args, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", _AS_NOBODY, *map(str, args)], capture_output=True, text=True, cwd=REPO, timeout=timeout
    )


def one_line_error(proc: subprocess.CompletedProcess, code: int, *fragments: str) -> str:
    """Assert the CLI contract for a failure: exit `code`, one line on stderr, no traceback."""
    message = proc.stderr.strip()
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr and len(message.splitlines()) == 1, proc.stderr
    for fragment in fragments:
        assert fragment in message, message
    return message


def damage_middle(db: Path) -> None:
    """8 KB of random bytes halfway into the file, as a failing disk or a stray write would leave them."""
    with open(db, "r+b") as f:
        f.seek(db.stat().st_size // 2)
        f.write(random.Random(8).randbytes(8192))


def grow_past_the_open_check(db: Path) -> None:
    """Make the index bigger than OPEN_CHECK_MAX_BYTES with real rows of its own (a long search history)."""
    conn = apsw.Connection(str(db))
    with conn:
        conn.executemany(
            "INSERT INTO history (at, query, scope_root, mode, result_count, top_score, duration_ms) "
            "VALUES (?, ?, '', 'hybrid', 0, 0, 0)",
            ((float(i), f"query {i} " + "x" * 4000) for i in range((OPEN_CHECK_MAX_BYTES >> 12) + 1000)),
        )
    conn.close()
    assert db.stat().st_size > OPEN_CHECK_MAX_BYTES


def write_tree(root: Path, count: int, word: str) -> Path:
    """`count` one-chunk Python files, each mentioning `word`, spread over a few packages."""
    for i in range(count):
        path = root / f"pkg{i % 12}" / f"{word}_{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {word} record {i}\nV = {i}\n")
    return root


def check_invariants(db: Path, *, blank_files: bool = False) -> int:
    """Assert that the store is whole; return how many files it holds as indexed.

    Whole means: SQLite's own check passes, every indexed file has its chunks (unless the tree has
    `blank_files`, which have none), every mapping points at a stored chunk, every vector at a stored chunk,
    and the keyword index has exactly one row per mapping.
    """
    conn = open_connection(db)
    try:

        def scalar(sql: str) -> int:
            return conn.execute(sql).fetchall()[0][0]

        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        if not blank_files:
            assert (
                scalar(
                    "SELECT count(*) FROM file f WHERE f.status = 'indexed' AND NOT EXISTS "
                    "(SELECT 1 FROM file_chunk fc WHERE fc.file_id = f.id)"
                )
                == 0
            )
        assert (
            scalar(
                "SELECT count(*) FROM file_chunk fc WHERE NOT EXISTS (SELECT 1 FROM chunk c WHERE c.id = fc.chunk_id)"
            )
            == 0
        )
        # A chunk may lack vectors (a run stopped before stages 2 and 3 reached it); a vector never lacks its chunk.
        for (table,) in conn.execute("SELECT vector_table FROM model").fetchall():
            assert (
                scalar(f"SELECT count(*) FROM {table} v WHERE NOT EXISTS (SELECT 1 FROM chunk c WHERE c.id = v.rowid)")
                == 0
            )
        assert scalar("SELECT count(*) FROM (SELECT id FROM fts_docsize EXCEPT SELECT id FROM file_chunk)") == 0
        assert scalar("SELECT count(*) FROM fts_docsize") == scalar("SELECT count(*) FROM file_chunk")
        return scalar("SELECT count(*) FROM file WHERE status = 'indexed'")
    finally:
        conn.close()


def chunks_without_vectors(db: Path, model_id: str) -> int:
    conn = open_connection(db)
    try:
        rows = conn.execute("SELECT vector_table FROM model WHERE id = ?", (model_id,)).fetchall()
        vectors = f"(SELECT 1 FROM {rows[0][0]} v WHERE v.rowid = c.id)" if rows else "(SELECT 1 WHERE 0)"
        return conn.execute(f"SELECT count(*) FROM chunk c WHERE NOT EXISTS {vectors}").fetchall()[0][0]
    finally:
        conn.close()


def file_rows(db: Path, columns: Sequence[str] = ("path", "status", "skip_reason")) -> dict[str, tuple]:
    conn = open_connection(db)
    try:
        return {r[0]: r[1:] for r in conn.execute(f"SELECT {', '.join(columns)} FROM file").fetchall()}
    finally:
        conn.close()
