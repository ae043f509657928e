"""Worktree scopes on real git repositories: inheritance, isolation, --changed, removal."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import apsw
import pytest

from desktop_app.search.request import SearchError, SearchFilters, SearchRequest
from desktop_app.store.sqlite.text_codec import ChunkTextCodec
from desktop_app.worker import ops

from .gitrepo import commit_all, git, init_repo

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

NEW_FILE = (
    "def reconcile_ledger_entries(ledger):\n    # match every debit with its credit before month end\n"
    "    return [entry for entry in ledger if entry.unmatched]\n"
)


@pytest.fixture
def repo(tmp_path, mixed_root, index_copy, worker_for):
    """A git repository of the mixed fixture, indexed, plus a linked worktree with a branch's changes."""
    main = tmp_path / "main"
    shutil.copytree(mixed_root, main)
    init_repo(main)
    feature = tmp_path / "feature"
    git(main, "worktree", "add", "-q", "-b", "feature", str(feature))
    cache = feature / "src" / "cache.py"
    cache.write_text(
        cache.read_text().replace("evict the least recently used entry", "drop the stalest entry (quokka policy)")
    )
    (feature / "src" / "ledger.py").write_text(NEW_FILE)
    (feature / "web" / "auth.ts").unlink()
    commit_all(feature, "feature work")
    db = index_copy
    worker = worker_for(db)
    main_stats = worker.run(ops.index(main)).result()
    return main, feature, db, worker, main_stats


def search(worker, root, query, **kw):
    return worker.run(ops.search(SearchRequest(query=query, roots=(str(root),), **kw))).result().results


def test_main_index_lists_its_worktrees(repo):
    main, feature, _, _, main_stats = repo
    assert main_stats.scope_type == "main"
    assert main_stats.worktrees == [{"path": str(feature.resolve()), "indexed": False}]


def test_worktree_scope_embeds_only_what_changed(repo):
    main, feature, _, worker, main_stats = repo
    stats = worker.run(ops.index(feature)).result()
    assert stats.scope_type == "worktree" and stats.parent_scope_id == main_stats.scope_id
    assert stats.files_copied == main_stats.files_indexed - 2  # all but the edited and the deleted file
    assert stats.files_changed == 2  # cache.py edited, ledger.py added
    assert 1 <= stats.chunks_embedded <= 3  # the edited method and the new function (and its name texts)
    assert stats.files_indexed == main_stats.files_indexed  # one added, one deleted


@pytest.mark.parametrize("mode", ["hybrid", "semantic", "exact"])
def test_worktree_and_main_are_isolated(repo, mode):
    main, feature, _, worker, _ = repo
    worker.run(ops.index(feature)).result()
    in_feature = search(worker, feature, "reconcile ledger entries debit credit", mode=mode, k=20)
    in_main = search(worker, main, "reconcile ledger entries debit credit", mode=mode, k=20)
    assert in_feature[0].path == "src/ledger.py"
    assert all(r.path != "src/ledger.py" for r in in_main)  # a file only the worktree has
    auth = search(worker, feature, "refresh access token", mode=mode, k=20)
    assert all(r.path != "web/auth.ts" for r in auth)  # deleted in the worktree, present in main
    assert any(r.path == "web/auth.ts" for r in search(worker, main, "refresh access token", mode=mode, k=20))
    # the worktree's version of an edited file, never main's
    for r in search(worker, feature, "evict the least recently used entry", mode=mode, k=20):
        assert "least recently used" not in r.snippet
    quokka = search(worker, feature, "quokka policy stalest entry", mode=mode, k=5)
    assert quokka[0].path == "src/cache.py" and "quokka" in quokka[0].snippet
    assert all("quokka" not in r.snippet for r in search(worker, main, "quokka policy", mode=mode, k=20))


def test_changed_filter_returns_only_the_branch_work(repo):
    main, feature, _, worker, _ = repo
    worker.run(ops.index(feature)).result()
    results = search(worker, feature, "function", k=20, filters=SearchFilters(changed_only=True))
    assert results and {r.path for r in results} <= {"src/cache.py", "src/ledger.py"}
    with pytest.raises(SearchError, match="not a worktree scope"):
        search(worker, main, "function", filters=SearchFilters(changed_only=True))


def test_removing_a_worktree_scope_collects_its_chunks(repo):
    main, feature, db, worker, _ = repo
    worker.run(ops.index(feature)).result()

    def chunk_hashes():
        conn = apsw.Connection(str(db))
        ChunkTextCodec(conn)
        try:
            return {r[0] for r in conn.execute("SELECT chunk_text_of(text) FROM chunk")}
        finally:
            conn.close()

    assert any("reconcile_ledger_entries" in t for t in chunk_hashes())
    collected = worker.run(ops.remove_scope(feature)).result()
    assert collected >= 2
    texts = chunk_hashes()
    assert not any("reconcile_ledger_entries" in t for t in texts)
    assert any("refreshAccessToken" in t for t in texts)  # main's chunks stay
    assert search(worker, main, "refresh access token")[0].path == "web/auth.ts"


def test_cli_lists_worktrees_and_flags_ones_git_forgot(repo):
    main, feature, db, worker, _ = repo
    worker.run(ops.index(feature)).result()
    worker.close()

    def scopes():
        proc = subprocess.run(
            [sys.executable, "-m", "desktop_app", "scopes", "--db", str(db), "--json"],
            capture_output=True,
            text=True,
            check=True,
        )
        return {s["root"]: s for s in json.loads(proc.stdout)}

    listed = scopes()
    wt = listed[str(feature.resolve())]
    assert wt["type"] == "worktree" and wt["parent"] == listed[str(main.resolve())]["id"] and not wt["stale"]
    git(main, "worktree", "remove", "--force", str(feature))
    assert scopes()[str(feature.resolve())]["stale"]
    text = subprocess.run(
        [sys.executable, "-m", "desktop_app", "scopes", "--db", str(db)], capture_output=True, text=True, check=True
    ).stdout
    assert "git no longer knows this worktree" in text and f"quarry scopes remove {feature.resolve()}" in text
