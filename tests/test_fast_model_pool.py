"""A big tree's fast stage runs in the fast model's processes (indexing/fast_model_pool.py): the same vectors as on
the model's thread, from the real `quarry` command too, and the processes end with the process that started them,
however it ends. Real processes, real files, real SQLite with sqlite-vec."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import numpy as np

from desktop_app.embedding.embedder import Embedder
from desktop_app.embedding.static_model import STATIC_MODEL_ID, StaticEmbedder
from desktop_app.indexing import model_runner
from desktop_app.indexing.child_processes import PROCESSES_ENV
from desktop_app.indexing.indexer import Indexer, IndexOptions
from desktop_app.indexing.progress import Progress
from desktop_app.store.sqlite.store import SqliteStore

from .orphans import assert_children_end_with_their_parent
from .reliability import quarry


def _vectors(db: Path) -> dict[tuple[bytes, bool], bytes]:
    """The fast model's code and name vectors (their int8 codes), by chunk hash."""
    store = SqliteStore(db)
    try:
        hashes = dict(store._conn.execute("SELECT id, hash FROM chunk").fetchall())
        out = {}
        for names in (False, True):
            ids = np.array(sorted(hashes), dtype=np.int64)
            for chunk_ids, codes in store.vectors_by_id(STATIC_MODEL_ID, names, ids, codes=True):
                out.update({(hashes[int(c)], names): row.tobytes() for c, row in zip(chunk_ids, codes, strict=True)})
        return out
    finally:
        store.close()


def _index(root: Path, db: Path, until: str = "fast") -> dict:
    store = SqliteStore(db)
    try:
        stats = Indexer(store, Embedder(), IndexOptions(until=until), fast=StaticEmbedder()).index(root)
    finally:
        store.close()
    return stats.step_seconds


def _no_pool_of_its_own(processes: int) -> None:
    raise AssertionError("the fast stage started processes of its own beside stage 1's")


def test_the_fast_stage_in_stage_ones_processes_gives_the_vectors_of_the_models_thread(
    tmp_path, mixed_root, monkeypatch
):
    """Stage 1's parse processes, started already, embed stage 2's texts: no pool of its own is started."""
    monkeypatch.setenv(PROCESSES_ENV, "0")
    _index(mixed_root, tmp_path / "thread.db")
    monkeypatch.setenv(PROCESSES_ENV, "2")
    monkeypatch.setattr(model_runner, "FastModelPool", _no_pool_of_its_own)
    steps = _index(mixed_root, tmp_path / "processes.db")
    assert steps["chunk"] > 0 and steps["fast_embed"] > 0  # both steps' seconds come back from the processes
    on_thread = _vectors(tmp_path / "thread.db")
    assert len({names for _, names in on_thread}) == 2  # code and name vectors both
    assert _vectors(tmp_path / "processes.db") == on_thread


def test_stage_ones_processes_end_before_stage_three(tmp_path, mixed_root, monkeypatch):
    """The parse processes (~150-190 MB each) are let go once the fast stage is done, not kept through the
    contextual model's stage."""
    monkeypatch.setenv(PROCESSES_ENV, "2")
    alive_in_stage_3: list[int] = []

    def progress(p: Progress) -> None:
        if p.stage == "full" and p.phase == "in_progress" and not alive_in_stage_3:
            alive_in_stage_3.append(len(multiprocessing.active_children()))

    store = SqliteStore(tmp_path / "index.db")
    try:
        stats = Indexer(store, Embedder(), IndexOptions(until="full"), fast=StaticEmbedder()).index(
            mixed_root, progress
        )
    finally:
        store.close()
    assert stats.step_seconds["fast_embed"] > 0 and stats.chunks_embedded > 0
    assert alive_in_stage_3 == [0]


def test_a_fast_stage_without_stage_one_in_processes_gives_the_same_vectors(tmp_path, mixed_root, monkeypatch):
    """A fast stage that follows no stage-1 work (a keyword-stage index continued) starts the fast model's own
    processes."""
    monkeypatch.setenv(PROCESSES_ENV, "0")
    _index(mixed_root, tmp_path / "thread.db")
    _index(mixed_root, tmp_path / "processes.db", until="keyword")
    monkeypatch.setenv(PROCESSES_ENV, "2")
    steps = _index(mixed_root, tmp_path / "processes.db")
    assert "chunk" not in steps and steps["fast_embed"] > 0
    assert _vectors(tmp_path / "processes.db") == _vectors(tmp_path / "thread.db")


def test_the_quarry_command_runs_its_fast_stage_in_processes(tmp_path, mixed_root):
    db = tmp_path / "index.db"
    done = quarry("index", mixed_root, "--db", db, "--until", "fast", "--json", "--quiet", env={PROCESSES_ENV: "2"})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["chunks_fast"] > 0
    assert _vectors(db)


# A process that starts a fast model pool, embeds in it, prints the pool's processes and waits to be killed.
POOL_HOLDER = """
import multiprocessing, sys
from desktop_app.indexing.fast_model_pool import FastModelPool

if __name__ == "__main__":
    pool = FastModelPool(2)
    assert [pool.submit(["def parse_header(raw): pass"]) for _ in range(4)][-1].result()[0].shape == (1, 256)
    print(" ".join(str(p.pid) for p in multiprocessing.active_children()), flush=True)
    sys.stdin.read()
"""


def test_the_fast_models_processes_end_with_an_indexing_process_killed_outright(tmp_path):
    script = tmp_path / "pool_holder.py"
    script.write_text(POOL_HOLDER, encoding="utf-8")
    assert_children_end_with_their_parent(script)
