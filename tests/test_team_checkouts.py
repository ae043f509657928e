"""A team index shares a repository's committed content, never a checkout's own changes (issue 33): each
repository has one base holding the files of its default branch's tip, and each checkout an overlay of its own
over it. Real git clones, real `quarry` processes and the real test server."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_app.indexing.indexer import IndexOptions
from desktop_app.store.identity import repository_key
from desktop_app.store.postgres.store import PostgresStore
from desktop_app.worker import ops
from desktop_app.worker.engine import EngineConfig
from desktop_app.worker.worker import Worker

from .gitrepo import commit_all, git, init_repo
from .reliability import REPO, quarry, write_tree
from .test_watch import _OutputLines


@pytest.fixture
def shop(tmp_path, mixed_root) -> Path:
    """The mixed repository as a git repository, `ana`'s; the team's remote is a bare copy of it."""
    source = tmp_path / "seed"
    shutil.copytree(mixed_root, source)
    init_repo(source)
    git(tmp_path, "clone", "-q", "--bare", str(source), str(tmp_path / "remote.git"))
    return _clone(tmp_path, "ana")


def _clone(tmp_path: Path, who: str) -> Path:
    target = tmp_path / who / "shop"
    target.parent.mkdir(parents=True, exist_ok=True)
    git(tmp_path, "clone", "-q", str(tmp_path / "remote.git"), str(target))
    return target


def _index(root: Path, url: str, *extra: str) -> dict:
    done = quarry("index", root, "--db", url, "--json", *extra)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def _search(root: Path, url: str, query: str, *extra: str) -> list[dict]:
    done = quarry("search", query, "--root", root, "--db", url, "--json", *extra)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["results"]


ANA_LINE = "ana_reconciles_the_quarterly_ledger_totals"
BO_LINE = "bo_refunds_the_expired_gift_voucher"


def test_two_clones_each_find_their_own_uncommitted_lines_and_never_the_others(team_server, shop, tmp_path):
    url = team_server.new_database()
    bo = _clone(tmp_path, "bo")
    (shop / "src" / "ledger.py").write_text(f"def {ANA_LINE}(entries):\n    return sum(e.amount for e in entries)\n")
    with (bo / "src" / "http_client.py").open("a") as f:
        f.write(f"\n\ndef {BO_LINE}(voucher):\n    return voucher.refund()\n")
    first = _index(shop, url)
    assert first["scope_type"] == "overlay" and first["base"]["action"] == "publish"
    second = _index(bo, url)
    assert second["base"]["action"] == "current"  # the same commit: nothing of the base is read again
    assert second["chunks_embedded"] <= 2  # bo's changed file: its new chunks only (the rest is the base's)

    for mine, line, theirs in ((shop, ANA_LINE, BO_LINE), (bo, BO_LINE, ANA_LINE)):
        for mode in ("text", "exact", "hybrid"):
            found = _search(mine, url, line, "--mode", mode, "-k", "5")
            assert found and line in found[0]["snippet"], (mine, mode)
            assert all(r["scope_root"] == str(mine.resolve()) for r in found)
            leaked = _search(mine, url, theirs, "--mode", mode, "-k", "20")
            assert not any(theirs in r["snippet"] for r in leaked), (mine, mode, leaked)
        # By meaning: the other's function is nowhere in this checkout's results.
        meaning = _search(mine, url, theirs.replace("_", " "), "--mode", "semantic", "-k", "50")
        assert not any(theirs in r["snippet"] for r in meaning)

    # The base holds the commit's files only: neither edit is in it.
    store = PostgresStore(url)
    try:
        key = repository_key(shop)
        assert key is not None
        base = store.base_scope(key)
        assert base is not None and base.published is not None
        assert base.published.commit == git(shop, "rev-parse", "origin/main").strip()
        assert base.published.branch == "main"
        committed = set(git(shop, "ls-files").split())
        assert set(store.file_states(base.id)) <= committed
        ledger = store.file_states(base.id).get("src/ledger.py")
        overlay = store.scope_for_root(shop)
        assert overlay is not None and overlay.type == "overlay" and overlay.parent_id == base.id
        assert store.file_states(overlay.id)["src/ledger.py"].sha256 != (ledger.sha256 if ledger else None)
        assert store.overlay_differences(overlay.id) == 1
    finally:
        store.close()


def test_a_clean_clone_at_the_base_commit_embeds_nothing_and_sees_exactly_the_base(team_server, shop, tmp_path):
    url = team_server.new_database()
    (shop / "src" / "ledger.py").write_text(f"def {ANA_LINE}(entries):\n    return 0\n")
    _index(shop, url)
    clean = _clone(tmp_path, "cy")
    stats = _index(clean, url)
    assert (stats["chunks_embedded"], stats["chunks_fast"], stats["names_embedded"]) == (0, 0, 0)
    assert stats["files_changed"] == 0 and stats["files_copied"] == stats["files_indexed"] > 0
    assert stats["base"]["action"] == "current"
    assert not _search(clean, url, ANA_LINE, "--mode", "text")
    store = PostgresStore(url)
    try:
        overlay = store.scope_for_root(clean)
        assert overlay is not None and overlay.parent_id is not None
        assert store.overlay_differences(overlay.id) == 0
        base_files = {p: s.sha256 for p, s in store.file_states(overlay.parent_id).items()}
        assert {p: s.sha256 for p, s in store.file_states(overlay.id).items()} == base_files
    finally:
        store.close()


def test_the_base_follows_the_default_branch_forward_only(team_server, shop, tmp_path):
    url = team_server.new_database()
    _index(shop, url)
    bo = _clone(tmp_path, "bo")
    # Ana pushes a commit; bo has not fetched it yet.
    (shop / "src" / "ledger.py").write_text("def post_ledger_entry(amount):\n    return amount\n")
    commit_all(shop, "ledger")
    git(shop, "push", "-q", "origin", "main")
    pushed = git(shop, "rev-parse", "HEAD").strip()
    git(shop, "fetch", "-q")
    moved = _index(shop, url)
    assert moved["base"]["action"] == "publish" and moved["base"]["commit"] == pushed
    assert moved["base"]["files_changed"] == 1 and moved["chunks_embedded"] == 1
    behind = _index(bo, url)
    assert behind["base"]["action"] == "unknown"  # bo lacks the commit: the base stays where it is
    # bo's own checkout is the older commit: its search does not find the new file, ana's does.
    assert not _search(bo, url, "post_ledger_entry", "--mode", "text")
    assert _search(shop, url, "post_ledger_entry", "--mode", "text")[0]["path"] == "src/ledger.py"
    git(bo, "pull", "-q")
    caught_up = _index(bo, url)
    assert caught_up["base"]["action"] == "current" and caught_up["chunks_embedded"] == 0
    assert _search(bo, url, "post_ledger_entry", "--mode", "text")[0]["path"] == "src/ledger.py"


def test_other_machines_overlays_are_not_listed_and_a_base_shows_its_commit(team_server, shop, tmp_path):
    url = team_server.new_database()
    with (shop / "README.md").open("a") as f:
        f.write("\nA local note.\n")
    _index(shop, url)
    here = PostgresStore(url)
    elsewhere = PostgresStore(url, host="bo-laptop")
    try:
        mine = {s.scope.type: s for s in here.list_scopes()}
        assert set(mine) == {"base", "overlay"} and mine["overlay"].differing == 1
        assert mine["base"].scope.published is not None and mine["base"].differing is None
        assert [s.scope.type for s in elsewhere.list_scopes()] == ["base"]
        assert elsewhere.scope_for_root(shop) is None  # the same path on another machine is another checkout
    finally:
        here.close()
        elsewhere.close()
    listing = quarry("scopes", "--db", url)
    assert listing.returncode == 0, listing.stderr
    commit = git(shop, "rev-parse", "HEAD").strip()
    assert commit[:12] in listing.stdout and "main" in listing.stdout, listing.stdout
    assert "1 file differs from the base" in listing.stdout, listing.stdout


def test_a_watched_update_changes_the_overlay_and_leaves_the_base_unless_told_to_publish(team_server, shop):
    url = team_server.new_database()
    first = _index(shop, url, "--until", "keyword")
    before = first["base"]["commit"]
    (shop / "src" / "ledger.py").write_text("def post_ledger_entry(amount):\n    return amount\n")
    commit_all(shop, "ledger")
    git(shop, "push", "-q", "origin", "main")
    git(shop, "fetch", "-q")
    for publish, expected in ((False, before), (True, git(shop, "rev-parse", "HEAD").strip())):
        options = IndexOptions(until="keyword", publish_updates=publish)
        worker = Worker(EngineConfig(url, index_options=options)).start()
        try:
            stats = worker.run(ops.update(str(shop))).result()  # what a watched folder's change runs
            assert (stats.base is None) == (not publish)
        finally:
            worker.close()
        store = PostgresStore(url)
        try:
            key = repository_key(shop)
            assert key is not None
            base = store.base_scope(key)
            assert base is not None and base.published is not None and base.published.commit == expected
            overlay = store.scope_for_root(shop)
            assert overlay is not None and "src/ledger.py" in store.file_states(overlay.id)  # the update made it
        finally:
            store.close()


# Stops for good after the second batch of files written into a scope of the type given (sys.argv[1]), having
# said so: killed there, a base holds part of a commit and records none, an overlay part of the working tree.
_HELD_IN_A_BATCH = """
import sys, threading
import desktop_app.cli as cli
from desktop_app.store.postgres.store import PostgresStore
kind = sys.argv.pop(1)
write_batch = PostgresStore.write_batch
batches = []
def held(self, scope_id, *args, **kwargs):
    write_batch(self, scope_id, *args, **kwargs)
    if self.scope_by_id(scope_id).type == kind:
        batches.append(scope_id)
        if len(batches) == 2:
            print("holding", flush=True)
            threading.Event().wait()
PostgresStore.write_batch = held
sys.exit(cli.main(sys.argv[1:]))
"""


@pytest.mark.parametrize("killed_in", ["base", "overlay"])
def test_an_indexer_killed_mid_write_leaves_what_the_next_run_completes_as_one_run_would(
    team_server, tmp_path, killed_in
):
    root = init_repo(write_tree(tmp_path / "ledger", 300, "ledger"))
    (root / "pkg0" / "local.py").write_text("UNCOMMITTED = 1\n")
    killed_url, whole_url = team_server.new_database(), team_server.new_database()
    command = [sys.executable, "-c", _HELD_IN_A_BATCH, killed_in, "index", str(root), "--db", killed_url]
    held = subprocess.Popen([*command, "--quiet", "--until=keyword"], cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        _OutputLines(held.stdout).until(lambda line: line == "holding")
    finally:
        held.send_signal(signal.SIGKILL)
        held.wait()
    rerun = _index(root, killed_url, "--until", "keyword")["base"]["action"]
    assert rerun == ("publish" if killed_in == "base" else "current")
    _index(root, whole_url, "--until", "keyword")
    tables = []
    for url in (killed_url, whole_url):
        store = PostgresStore(url)
        try:
            key = repository_key(root)
            assert key is not None
            base = store.base_scope(key)
            overlay = store.scope_for_root(root)
            assert base is not None and overlay is not None and base.published is not None
            tables.append(
                [{p: (s.sha256, s.status) for p, s in store.file_states(scope.id).items()} for scope in (base, overlay)]
                + [base.published.commit, store.scope_counts(base.id), store.scope_counts(overlay.id)]
            )
        finally:
            store.close()
    assert tables[0] == tables[1]
    assert "pkg0/local.py" in tables[0][1] and "pkg0/local.py" not in tables[0][0]


def test_a_checkout_not_indexed_yet_searches_the_shared_base_and_says_so(team_server, shop, tmp_path):
    """A teammate before their first index, or with a role that may only read, still searches the team's
    committed code, at their own checkout's paths."""
    url = team_server.new_database()
    (shop / "src" / "ledger.py").write_text(f"def {ANA_LINE}(entries):\n    return 0\n")
    _index(shop, url, "--until", "keyword")
    reader = _clone(tmp_path, "dee")
    done = quarry("search", "def ", "--root", reader, "--db", url, "--json", "--mode", "text", "-k", "50")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["results"] and all(r["scope_root"] == str(reader.resolve()) for r in answer["results"])
    assert not any(ANA_LINE in r["snippet"] for r in answer["results"])  # ana's edit is hers alone
    assert "searched the team's shared base (main at" in answer["notice"]
