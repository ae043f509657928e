"""The team index on a real PostgreSQL server with pgvector (started by the suite from the pip package
pgserver): the same answers as the SQLite store, scopes found from any checkout, chunks embedded once by
whoever gets to them first, indexers that share the work and survive each other's death, read-only roles,
and errors that never show a password."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from desktop_app.search.pipeline import Searcher
from desktop_app.search.request import SearchFilters, SearchRequest
from desktop_app.store.errors import StoreError, StoreUnusable
from desktop_app.store.location import StoreLocation, open_store
from desktop_app.store.postgres.store import PostgresStore
from desktop_app.store.postgres.urls import display_url, redact
from desktop_app.store.rows import ChunkRef, FileState, FileWrite, NewChunk
from desktop_app.store.schema_names import vector_table_name
from desktop_app.store.sqlite.store import SqliteStore

from .gitrepo import git, init_repo
from .reliability import QUARRY, REPO, quarry, write_tree
from .team_server import database_of

MODEL = "all-MiniLM-L6-v2-int8"
QUERIES = [
    "retry failed http requests",
    "evict least recently used",
    "transpose a matrix",
    "fetch_with_retry",
    "parse command line arguments",
]


def _identity(result) -> tuple[str, int]:
    return result.path, result.start_line


def test_the_team_index_answers_as_the_sqlite_store_does(mixed_team_index, mixed_index, mixed_root, embedder):
    """Vectors are the same and ranking is the same pipeline: the meaning side agrees exactly (HNSW over a small
    index finds the true neighbours), and every mode puts the same result first."""
    team, local = PostgresStore(mixed_team_index), SqliteStore(mixed_index[0])
    try:
        searchers = Searcher(team, embedder), Searcher(local, embedder)
        for query in QUERIES:
            for mode in ("semantic", "hybrid", "exact"):
                request = SearchRequest(query, roots=(str(mixed_root),), mode=mode, k=5, record_history=False)
                on_team, on_local = (s.search(request).results for s in searchers)
                assert on_team and on_local, (query, mode)
                assert _identity(on_team[0]) == _identity(on_local[0]), (query, mode)
                if mode == "semantic":
                    assert list(map(_identity, on_team)) == list(map(_identity, on_local)), query
                    assert [r.semantic_score for r in on_team] == pytest.approx(
                        [r.semantic_score for r in on_local], abs=0.02
                    )
    finally:
        team.close()
        local.close()


def test_both_stores_give_a_name_spelt_as_typed_before_its_other_spellings(mixed_team_index, mixed_index):
    """Beyond the limit, a common name's other spellings (hundreds of `deserialize` functions) must not crowd out
    the definition spelt as asked (the `Deserialize` trait)."""
    for store in (PostgresStore(mixed_team_index), SqliteStore(mixed_index[0])):
        try:
            scope = store.list_scopes()[0].scope.id
            for typed, other in (("LRUCache", "retrypolicy"), ("RetryPolicy", "lrucache")):
                first = store.symbol_matches([scope], [other, typed], 1)
                assert [h.symbol_name for h in store.hits_for_places(first)] == [typed], (store, typed)
                both = store.symbol_matches([scope], [other, typed], 10)
                assert {h.symbol_name for h in store.hits_for_places(both)} >= {"LRUCache", "RetryPolicy"}
        finally:
            store.close()


def test_both_stores_record_which_chunker_cut_a_scope(mixed_team_index, mixed_index):
    from desktop_app.indexing.chunking import CHUNKING_VERSION

    for store in (PostgresStore(mixed_team_index), SqliteStore(mixed_index[0])):
        try:
            assert store.chunking_of(store.list_scopes()[0].scope.id) == CHUNKING_VERSION, store
            assert store.chunking_of("no-such-scope") is None
        finally:
            store.close()


def test_both_stores_hold_the_same_outline_for_every_file(mixed_team_index, mixed_index):
    import numpy as np

    held = []
    for store in (PostgresStore(mixed_team_index), SqliteStore(mixed_index[0])):
        try:
            scope = store.list_scopes()[0].scope.id
            files = [(scope, path) for path, state in store.file_states(scope).items() if state.status == "indexed"]
            assert files and store.files_without_outline(MODEL, 10) == [], store
            outlines = store.outline_vectors(MODEL, files)
            assert len(outlines) == len(files), store
            held.append({path: v for (_, path), v in outlines.items()})
        finally:
            store.close()
    team, local = held
    assert team.keys() == local.keys()
    assert all(float(np.dot(team[p], local[p])) == pytest.approx(1.0, abs=1e-4) for p in team)


@pytest.mark.parametrize("way", ["exact", "walk"])
def test_a_filtered_meaning_search_agrees_with_the_sqlite_store_either_way(
    way, monkeypatch, mixed_team_index, mixed_index, mixed_root, embedder
):
    """A restricted vector search scores the allowed chunks exactly or walks the HNSW index and keeps the
    allowed candidates, by a cost model; both ways find what the SQLite store finds."""
    from desktop_app.store.postgres import vector_search

    monkeypatch.setattr(vector_search, "WALK_US_PER_CANDIDATE" if way == "exact" else "EXACT_US_PER_CHUNK", 1e9)
    team, local = PostgresStore(mixed_team_index), SqliteStore(mixed_index[0])
    try:
        searchers = Searcher(team, embedder), Searcher(local, embedder)
        for filters in (SearchFilters(languages=("python",)), SearchFilters(globs=("cli/**", "*.ts"))):
            for query in QUERIES:
                request = SearchRequest(
                    query, roots=(str(mixed_root),), mode="semantic", k=5, filters=filters, record_history=False
                )
                on_team, on_local = (s.search(request).results for s in searchers)
                assert list(map(_identity, on_team)) == list(map(_identity, on_local)), (query, filters)
    finally:
        team.close()
        local.close()


def _clone(source, target):
    git(source.parent, "clone", "-q", str(source), str(target))
    return target


@pytest.fixture
def shop(tmp_path, mixed_root):
    """The mixed repository as a git repository."""
    root = tmp_path / "ana" / "shop"
    shutil.copytree(mixed_root, root)
    return init_repo(root)


def test_a_second_checkout_at_another_path_finds_the_scope_and_embeds_nothing(team_server, shop, tmp_path):
    url = team_server.new_database()
    first = quarry("index", shop, "--db", url, "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout.splitlines()[-1])["chunks_embedded"] > 0
    other = _clone(shop, tmp_path / "bo" / "work" / "shop")
    second = quarry("index", other, "--db", url, "--json")
    assert second.returncode == 0, second.stderr
    stats = json.loads(second.stdout.splitlines()[-1])
    assert (stats["chunks_embedded"], stats["chunks_fast"], stats["files_indexed"]) == (0, 0, stats["files_indexed"])
    assert stats["files_indexed"] > 0
    found = quarry("search", "retry failed http requests", "--root", other, "--db", url, "--json")
    assert found.returncode == 0, found.stderr
    results = json.loads(found.stdout)["results"]
    assert results[0]["path"] == "src/http_client.py" and results[0]["scope_root"] == str(other.resolve())
    scopes = json.loads(quarry("scopes", "--db", url, "--json").stdout)
    # One project: its base, and each checkout's overlay over it, the same as the base here.
    assert sorted((s["type"], s["differing"]) for s in scopes) == [("base", None), ("overlay", 0), ("overlay", 0)]
    (base,) = (s for s in scopes if s["type"] == "base")
    assert base["base"]["commit"] == git(shop, "rev-parse", "HEAD").strip()


def test_a_linked_worktree_is_its_own_overlay_over_the_repositorys_base(team_server, shop, tmp_path):
    url = team_server.new_database()
    assert quarry("index", shop, "--db", url).returncode == 0
    feature = tmp_path / "ana" / "shop-feature"
    git(shop, "worktree", "add", "-q", "-b", "feature", str(feature))
    (feature / "src" / "ledger.py").write_text("def post_ledger_entry(amount):\n    return amount\n")
    done = quarry("index", feature, "--db", url, "--json")
    assert done.returncode == 0, done.stderr
    stats = json.loads(done.stdout.splitlines()[-1])
    assert stats["scope_type"] == "overlay" and stats["chunks_embedded"] == 1 and stats["files_copied"] > 0
    hit = quarry("search", "post ledger entry", "--root", feature, "--db", url, "--json", "-k", "1")
    assert json.loads(hit.stdout)["results"][0]["symbol_name"] == "post_ledger_entry"


# --- several indexers ---------------------------------------------------------------------------------


def test_two_indexers_at_once_embed_each_chunk_once(team_server, tmp_path):
    url = team_server.new_database()
    root = write_tree(tmp_path / "ledger", 300, "ledger")
    procs = [
        subprocess.Popen(
            [*QUARRY, "index", str(root), "--db", url, "--json"],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in outputs]
    stats = [json.loads(out.splitlines()[-1]) for out, _ in outputs]
    # However the two interleave (one may even finish before the other starts), no chunk is embedded twice.
    assert sum(s["chunks_embedded"] for s in stats) == 300
    assert sum(s["chunks_fast"] for s in stats) == 300
    store = PostgresStore(url)
    try:
        assert store.chunks_without_vectors(MODEL) == [] and len(store.vector_ids(MODEL)) == 300
    finally:
        store.close()


def _wait_until_blocked_on_a_lock(watcher, pending: Future) -> None:
    """Until a session of the test's database waits on a lock (the server's state, polled), failing if `pending`
    ends first."""
    waiting = "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"
    while not watcher.execute(waiting).fetchone()[0]:
        assert not pending.done(), pending.exception()
        time.sleep(0.05)


def test_a_write_that_loses_a_race_for_a_file_row_is_tried_again_and_lands(team_server, tmp_path):
    """Two indexers writing one file at once: the loser's insert waits on the winner's row, then fails on the
    unique key once it commits. That transaction is tried again (and deletes the winner's row, which holds the
    same content), rather than failing the whole run as it did for 1 run in 2 of three indexers."""
    import psycopg

    url = team_server.new_database()
    store = PostgresStore(url)
    scope = store.create_scope(tmp_path)
    rival = psycopg.connect(url)
    rival.execute(
        "INSERT INTO file (scope_id, path, size, mtime_ns, status, indexed_at) VALUES (%s, 'a.py', 1, 1, 'indexed', 0)",
        (scope.id,),
    )  # not committed yet: the store's insert of the same path waits for it
    watcher = psycopg.connect(url, autocommit=True)
    pool = ThreadPoolExecutor(1)
    try:
        written = pool.submit(store.write_batch, scope.id, MODEL, [], [FileWrite("a.py", 2, 2, "sha", "python")])
        _wait_until_blocked_on_a_lock(watcher, written)  # the store's write waits on the rival's row
        rival.commit()
        written.result(timeout=120)
    finally:
        rival.close()  # also ends the rival's transaction if the loop failed, so the write cannot hang
        watcher.close()
        pool.shutdown()
    assert store.file_row(scope.id, "a.py") == FileState("a.py", 2, 2, "sha", "indexed")
    store.close()


def test_a_chunk_whose_vector_lands_while_another_indexer_claims_it_is_not_claimed_again(team_server, tmp_path):
    """Indexer A writes a chunk's vector and drops its claim in one transaction; indexer B's claim on the same
    chunk, begun before that commit, waits on A's claim row and then found it gone. It took the chunk and
    embedded it a second time (44 of 300 chunks, once in CI); B now gets nothing."""
    import psycopg

    url = team_server.new_database()
    first, second = PostgresStore(url), PostgresStore(url)
    rival = psycopg.connect(url)
    watcher = psycopg.connect(url, autocommit=True)
    pool = ThreadPoolExecutor(1)
    try:
        scope = first.create_scope(tmp_path)
        ref = ChunkRef("h1", 0, 1, 1, "function", None, None, None, "", "a.py", "pass")
        first.write_batch(
            scope.id, "", [NewChunk("h1", "pass", 1, None)], [FileWrite("a.py", 4, 1, "s", "python", [ref])]
        )
        first.register_model(MODEL, 3, "/models/m")
        [chunk] = first.chunks_without_vectors(MODEL)
        assert first.claim_chunks(MODEL, False, [chunk]) == [chunk]
        # A's add_vectors, held open at its commit: the vector written, the claim deleted.
        rival.execute(f"INSERT INTO {vector_table_name(MODEL)} (chunk_id, embedding) VALUES (%s, '[1,0,0]')", (chunk,))
        rival.execute("DELETE FROM claim WHERE chunk_id = %s", (chunk,))
        claimed = pool.submit(second.claim_chunks, MODEL, False, [chunk])
        _wait_until_blocked_on_a_lock(watcher, claimed)  # B's claim waits on A's claim row
        rival.commit()
        assert claimed.result(timeout=120) == []
        assert second.claimed_elsewhere(MODEL, False) is None and first.claimed_elsewhere(MODEL, False) is None
    finally:
        rival.close()
        watcher.close()
        pool.shutdown()
        first.close()
        second.close()


# An indexer whose first vector write waits forever, holding the claims on the chunks it embedded: killed
# there, it leaves claims that only run out (QUARRY_CLAIM_LEASE_S) for another indexer to take over.
_HELD_AT_FIRST_VECTORS = """
import sys, threading
import desktop_app.cli as cli
from desktop_app.store.postgres.store import PostgresStore
add_vectors = PostgresStore.add_vectors
def held(self, model_id, vectors):
    if not model_id.startswith("quarry-static"):
        print("holding", flush=True)
        threading.Event().wait()
    return add_vectors(self, model_id, vectors)
PostgresStore.add_vectors = held
sys.exit(cli.main(sys.argv[1:]))
"""


def test_a_killed_indexers_claims_are_taken_over_by_the_next(team_server, tmp_path):
    url = team_server.new_database()
    root = write_tree(tmp_path / "ledger", 120, "ledger")
    env = {**os.environ, "QUARRY_CLAIM_LEASE_S": "2"}
    held = subprocess.Popen(
        [sys.executable, "-c", _HELD_AT_FIRST_VECTORS, "index", str(root), "--db", url, "--quiet"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    assert held.stdout.readline().strip() == "holding"  # it has claimed and embedded its first batch
    os.kill(held.pid, signal.SIGKILL)
    held.wait(timeout=30)
    finisher = quarry("index", root, "--db", url, "--json", env={"QUARRY_CLAIM_LEASE_S": "2"})
    assert finisher.returncode == 0, finisher.stderr
    assert json.loads(finisher.stdout.splitlines()[-1])["chunks_embedded"] == 120
    store = PostgresStore(url)
    try:
        assert store.chunks_without_vectors(MODEL) == []
    finally:
        store.close()


# --- roles, passwords and failures -----------------------------------------------------------------------


def test_a_read_only_role_searches_and_indexing_says_it_cannot_write(team_server, mixed_team_index, mixed_root):
    database = database_of(mixed_team_index)
    team_server.sql(
        "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'reader') THEN "
        "CREATE ROLE reader LOGIN; END IF; END $$;"
    )
    team_server.sql("GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader;", database)
    url = team_server.url(database, user="reader")
    found = quarry("search", "retry failed http requests", "--root", mixed_root, "--db", url, "--json")
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["results"][0]["path"] == "src/http_client.py"
    indexing = quarry("index", mixed_root, "--db", url)
    assert indexing.returncode == 1
    lines = indexing.stderr.strip().splitlines()
    assert "cannot be written with this role" in lines[-1] and "Traceback" not in indexing.stderr


def test_a_wrong_password_is_one_clear_line_that_never_shows_it(team_server, tmp_path):
    database = database_of(team_server.new_database())
    team_server.sql(
        "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'ana') THEN "
        "CREATE ROLE ana LOGIN PASSWORD 'right-horse-battery'; END IF; END $$;"
    )
    hba = team_server.folder / "pg_hba.conf"
    rules = hba.read_text()
    if "local all ana scram-sha-256" not in rules:
        hba.write_text("local all ana scram-sha-256\n" + rules)
        team_server.sql("SELECT pg_reload_conf();")
    wrong = f"postgresql://ana:Sekrit-Wrong-99@/{database}?host={team_server.folder}"
    proc = quarry("search", "anything", "--all-scopes", "--db", wrong)
    assert proc.returncode == 1
    assert "refused the login" in proc.stderr and "Sekrit-Wrong-99" not in proc.stderr + proc.stdout
    assert len(proc.stderr.strip().splitlines()) == 1
    # The right password from PGPASSWORD (libpq reads it): the URL carries none. The database lacks pgvector,
    # which only a superuser may add: said so in one line.
    tree = write_tree(tmp_path / "t", 3, "tiny")
    plain = f"postgresql://ana@/{database}?host={team_server.folder}"
    password = {"PGPASSWORD": "right-horse-battery"}
    missing = quarry("index", tree, "--db", plain, env=password)
    assert missing.returncode == 1 and f"run CREATE EXTENSION vector in the database {database}" in missing.stderr
    team_server.sql("CREATE EXTENSION vector; GRANT ALL ON SCHEMA public TO ana;", database)
    right = quarry("index", tree, "--db", plain, env=password)
    assert right.returncode == 0, right.stderr
    assert "right-horse-battery" not in right.stderr + right.stdout


def test_an_unreachable_server_is_one_line_and_exit_1(tmp_path):
    proc = quarry("search", "anything", "--all-scopes", "--db", "postgresql://ana:pw-123@127.0.0.1:1/nothing")
    assert proc.returncode == 1
    assert "cannot reach the team index server postgresql://ana@127.0.0.1:1/nothing" in proc.stderr
    assert "pw-123" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_passwords_are_redacted_from_urls_and_messages():
    assert display_url("postgresql://ana:s3cret@db.example:5432/code?sslmode=require") == (
        "postgresql://ana@db.example:5432/code?sslmode=require"
    )
    assert "s3cret" not in redact("could not connect: postgresql://ana:s3cret@db/x password=s3cret")
    assert str(StoreLocation.of("postgresql://ana:s3cret@db/x")) == "postgresql://ana@db/x"


def test_a_schema_from_a_newer_quarry_is_refused(team_server):
    url = team_server.new_database()
    open_store(url).close()
    database = database_of(url)
    team_server.sql("UPDATE quarry_meta SET value = '99' WHERE key = 'schema_version';", database)
    with pytest.raises(StoreUnusable, match="newer Quarry"):
        open_store(url)


def test_ef_search_is_settable_and_checked(mixed_team_index, mixed_root):
    for ef in ("1", "200"):
        proc = quarry(
            "search",
            "evict least recently used",
            "--root",
            mixed_root,
            "--db",
            mixed_team_index,
            "--ef-search",
            ef,
            "--mode",
            "semantic",
            "--json",
        )
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["results"]
    bad = quarry("search", "x y z", "--root", mixed_root, "--db", mixed_team_index, "--ef-search", "0")
    assert bad.returncode == 2 and "--ef-search" in bad.stderr


def test_a_dropped_connection_fails_one_call_and_the_next_connects_again(team_server):
    url = team_server.new_database()
    store = PostgresStore(url)
    database = database_of(url)
    team_server.sql(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        f"WHERE datname = '{database}' AND pid <> pg_backend_pid();"
    )
    with pytest.raises(StoreError, match="connection to the team index") as caught:
        store.list_scopes()
    assert "Traceback" not in str(caught.value)
    assert store.list_scopes() == []  # the next call connects again
    store.close()


def test_a_searchs_vector_lookups_leave_the_stores_own_connection_to_the_worker(mixed_team_index, embedder):
    """A search's vector lookups run on scan threads (store/protocols.py): on the team index each uses a
    connection of its own, never the store's, which the worker's thread uses meanwhile and replaces after a dropped
    connection. The server's own record of each connection's last statement shows which ran where."""
    import psycopg

    store = PostgresStore(mixed_team_index)
    watcher = psycopg.connect(mixed_team_index, autocommit=True)
    try:
        index = store.vector_search(MODEL, embedder.dims)
        allowed = index.ids()[:5]  # a filtered search: the cost model asks how many vectors the table holds
        marker = "SELECT 'worker thread', pg_backend_pid()"
        main_pid = store.execute_read(marker)[0][1]
        query = embedder.embed_query("retry failed http requests")
        with ThreadPoolExecutor(2) as scans:  # as the searcher's scan pool runs them
            found = [scans.submit(index.nearest, query, allowed, 3), scans.submit(index.nearest, query, None, 3, True)]
            assert all(f.result() for f in found)
        last = watcher.execute("SELECT query FROM pg_stat_activity WHERE pid = %s", (main_pid,)).fetchone()
        assert last == (marker,)
    finally:
        watcher.close()
        store.close()
