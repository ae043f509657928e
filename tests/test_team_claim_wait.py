"""A team indexer that waits for chunks another indexer has claimed says so and until when, and vectors of
chunks collected while the model ran are not written: on a real PostgreSQL server (issue 29, N2, R5b)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys

import numpy as np
import psycopg

from desktop_app.cli import progress_line
from desktop_app.indexing.indexer import Indexer, IndexOptions
from desktop_app.indexing.progress import Progress, ProgressReporter
from desktop_app.indexing.vector_fill import CLAIM_SHARE, VectorFiller
from desktop_app.store.postgres.store import PostgresStore
from desktop_app.store.rows import ChunkRef, FileWrite, NewChunk, OthersClaims
from desktop_app.ui.progress_panel import progress_text

from .reliability import REPO, write_tree
from .test_team_index import MODEL
from .test_watch import _OutputLines

# An indexer that stops for good right after claiming its first batch of stage 3 (the contextual model's chunk
# vectors), having said so: killed there, it leaves live claims on chunks nobody embeds, as a killed run does.
_HELD_AFTER_FIRST_CLAIM = """
import sys, threading
import desktop_app.cli as cli
from desktop_app.embedding.static_model import STATIC_MODEL_ID
from desktop_app.store.postgres.store import PostgresStore
claim_chunks = PostgresStore.claim_chunks
def held(self, model_id, names, chunk_ids):
    claimed = claim_chunks(self, model_id, names, chunk_ids)
    if claimed and not names and model_id != STATIC_MODEL_ID:
        print(f"holding {len(claimed)}", flush=True)
        threading.Event().wait()
    return claimed
PostgresStore.claim_chunks = held
sys.exit(cli.main(sys.argv[1:]))
"""
# Long enough that the dead run's claims are live while the next run reaches them however slow the machine;
# the test then lets them run out itself rather than wait.
LEASE_S = "600"
_WAITING = re.compile(
    r"model vectors: 0/120 chunks .*, waiting for 120 chunks claimed by another indexer "
    r"\(its claims expire in (?:(\d+) m )?(\d+) s\)$"
)


def test_a_restarted_team_indexer_says_it_waits_for_a_killed_runs_claims_and_until_when(team_server, tmp_path):
    """N2: the rerun printed only "started, model vectors: 0/456 chunks (0.0/s)" for the two minutes of the dead
    run's leases."""
    url = team_server.new_database()
    root = write_tree(tmp_path / "ledger", 120, "ledger")
    env = {**os.environ, "QUARRY_CLAIM_LEASE_S": LEASE_S}
    held = subprocess.Popen(
        [sys.executable, "-c", _HELD_AFTER_FIRST_CLAIM, "index", str(root), "--db", url, "--quiet"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    assert held.stdout is not None  # piped
    assert held.stdout.readline().strip() == "holding 120"  # it holds claims on every chunk of stage 3
    os.kill(held.pid, signal.SIGKILL)
    held.wait(timeout=30)
    rerun = subprocess.Popen(
        [sys.executable, "-m", "desktop_app", "index", str(root), "--db", url],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert rerun.stderr is not None  # piped
    progress = _OutputLines(rerun.stderr)
    try:
        waiting = _WAITING.search(progress.until(lambda line: _WAITING.search(line) is not None))
        assert waiting is not None  # the line was chosen for matching
        assert 0 <= int(waiting[1] or 0) * 60 + int(waiting[2]) <= int(LEASE_S)
        with psycopg.connect(url, autocommit=True) as conn:  # the dead run's leases run out now
            conn.execute("UPDATE claim SET expires_at = now() - interval '1 second'")
        # It takes the chunks over: its progress no longer says it waits.
        progress.until(lambda line: "model vectors: " in line and "waiting" not in line)
        assert rerun.wait(timeout=300) == 0, progress.seen
    finally:
        rerun.kill()
        rerun.wait(timeout=30)
    store = PostgresStore(url)
    try:
        assert store.chunks_without_vectors(MODEL) == []
    finally:
        store.close()


def test_the_wait_for_other_indexers_claims_is_phrased_from_the_progress_data():
    """By each front end, the command line and the window, in its own words."""
    waiting = Progress("started", "/src/shop", stage="full", chunks_total=456, awaiting=OthersClaims(456, 1, 112.4))
    assert progress_line(waiting) == (
        "started, model vectors: 0/456 chunks (0.0/s), waiting for 456 chunks claimed by another indexer "
        "(its claims expire in 1 m 52 s)"
    )
    assert progress_text(waiting) == (
        "Starting shop (meaning) · 0/456 chunks · waiting for 456 chunks claimed by another indexer "
        "(its claims expire in 1 min 52 s)"
    )
    several = Progress("started", "/src/shop", stage="fast", chunks_total=9, awaiting=OthersClaims(9, 2, 7.0))
    assert progress_line(several).endswith(
        "waiting for 9 chunks claimed by 2 other indexers (their claims expire in 7 s)"
    )


def test_a_team_index_writes_no_vector_for_a_chunk_collected_while_the_model_ran(team_server, tmp_path):
    """Another indexer collected the chunk (its folder removed, its file changed) between this one's claim and its
    write: the chunk's vector went against its foreign key and failed the whole batch."""
    store = PostgresStore(team_server.new_database())
    try:
        store.register_model("m", 4, "test")
        scope = store.create_scope(tmp_path)
        places = [ChunkRef(h, i, i + 1, i + 1, "module", None, None, None, "", "a.py", h) for i, h in enumerate("ab")]
        new = [NewChunk(h, h, 1) for h in "ab"]
        store.write_batch(scope.id, "m", new, [FileWrite("a.py", 2, 1, "sha", "python", places)])
        ids = store.known_chunks(["a", "b"])
        store.write_batch(scope.id, "m", [], [FileWrite("a.py", 1, 2, "sha2", "python", places[:1])])
        assert store.collect_garbage() == 1  # "b" is gone
        vector = np.ones(4, dtype=np.float32)
        store.add_vectors("m", [(ids["a"], vector, vector), (ids["b"], vector, vector)])
        assert store.vector_ids("m").tolist() == [ids["a"]]
        assert store.vector_ids("m", names=True).tolist() == [ids["a"]]
    finally:
        store.close()


def test_an_indexers_claims_leave_most_of_the_work_to_one_joining_later(team_server, tmp_path, embedder):
    """Issue 33 item 4: two indexers started a few seconds apart on 1,109 chunks split them 1,024 / 85, because
    the first one's first claims took two full batches. Claims are now a share of what is left."""
    url = team_server.new_database()
    root = write_tree(tmp_path / "ledger", 1109, "ledger")
    first = PostgresStore(url)
    second = PostgresStore(url)
    try:
        Indexer(first, embedder, IndexOptions(until="keyword")).index(root)
        filler = VectorFiller(first, embedder)
        steps = filler.fill(ProgressReporter(None, str(root)), lambda: False)
        try:
            next(steps)  # up to the first wait for the model: this indexer's claims are in
            held = second.claimed_elsewhere(embedder.model_id, False)
            assert held is not None and held.indexers == 1
            assert held.chunks <= 2 * (1109 // CLAIM_SHARE), held  # a batch embedding, the next one claimed
            joined = second.claim_chunks(embedder.model_id, False, second.chunks_without_vectors(embedder.model_id))
            assert len(joined) == 1109 - held.chunks
        finally:
            steps.close()
            filler.close()
    finally:
        first.close()
        second.close()
