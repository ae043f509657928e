"""Search latency, memory and vector recall on a synthetic store of N chunks.

    python tests/benchmarks/bench_search.py --chunks N [--dims 384] [--queries 200] [--rebuild] [--json]

Builds (once; cached under --cache-dir keyed by N and dims) a store of N chunks with realistic metadata
and random unit vectors through the store API (no model, see synthetic_corpus.py), in a child process so
the building does not count towards this process's memory. Then opens it as the app does, times the
vector load, and runs the queries end to end through `Searcher.search` in hybrid mode: keyword queries
of several shapes, some with filters, each with a random unit query vector handed over in place of the
model's (embedding time excluded; retrieval, filters and fusion included). Finally it measures recall@10
of the vector index's `nearest` against exact float32 brute force over the same allowed chunks.
The last line printed is a JSON object.

From 250,000 vectors (sign_index.SIGN_SEARCH_MIN) a store built by this code is searched by its vectors' sign
bits, whose worst case random vectors are: at 1M, recall@10 0.50 where the in-memory search gave 0.998 (the
benchmarks' README says why, and what real embeddings kept). A store built before schema 5 is searched in
memory until an index run's garbage collection writes its sign packs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from synthetic_corpus import MODEL_ID, ROOT, STOP, Vocabulary, build, draw_words  # noqa: E402

from desktop_app.search.pipeline import Searcher  # noqa: E402
from desktop_app.search.request import SearchFilters, SearchRequest  # noqa: E402
from desktop_app.store.sqlite.store import SqliteStore  # noqa: E402

FILTERS = [
    SearchFilters(languages=("python",)),
    SearchFilters(languages=("typescript", "javascript")),
    SearchFilters(chunk_types=("function",)),
    SearchFilters(languages=("go",), chunk_types=("type",)),
    SearchFilters(globs=("src/**",)),
    SearchFilters(symbol_types=("method",)),
]
FILTERED_SHARE = 0.3
RECALL_K = 10


class QueryVectors:
    """Stands in for the embedder: the query vector of each benchmark query is drawn up front."""

    model_id = MODEL_ID

    def __init__(self, dims: int):
        self.dims = dims
        self.vectors: dict[str, np.ndarray] = {}

    def load(self) -> None:
        """Nothing to load: the vectors are drawn up front."""

    def embed_query(self, text: str) -> np.ndarray:
        return self.vectors[text]


def make_queries(count: int, dims: int, seed: int) -> tuple[list[SearchRequest], QueryVectors]:
    rng = np.random.default_rng(seed)
    vocab = Vocabulary.make()
    requests: list[SearchRequest] = []
    vectors = QueryVectors(dims)
    while len(requests) < count:
        shape = rng.random()
        ident = int(vocab.draw(rng, 1)[0])
        if shape < 0.4:  # a question in words
            words = draw_words(rng, int(rng.integers(2, 5)), flatten=0.5)
            words.insert(int(rng.integers(len(words))), STOP[int(rng.integers(len(STOP)))])
            text = " ".join(words)
        elif shape < 0.65:  # an identifier as typed
            text = [vocab.snake, vocab.camel, vocab.pascal][int(rng.integers(3))][ident]
        elif shape < 0.8:  # words around an identifier
            text = f"where is {vocab.camel[ident]} {draw_words(rng, 1, flatten=0.5)[0]}"
        else:  # one or two words
            text = " ".join(draw_words(rng, int(rng.integers(1, 3)), flatten=0.5))
        if text in vectors.vectors or len(text) < 3:
            continue
        vec = rng.standard_normal(dims).astype(np.float32)
        vectors.vectors[text] = vec / np.linalg.norm(vec)
        # The first query, which pays for opening the store, is a plain one.
        filtered = rng.random() < FILTERED_SHARE and bool(requests)
        filters = FILTERS[len(requests) % len(FILTERS)] if filtered else SearchFilters()
        requests.append(SearchRequest(text, roots=(ROOT,), k=10, mode="hybrid", filters=filters))
    return requests, vectors


def rss_mb(field: str = "VmRSS") -> float:
    """Resident memory now (VmRSS) or at its peak so far (VmHWM), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def ensure_store(db: Path, chunks: int, dims: int, rebuild: bool) -> float:
    """Build the store in a child process unless a complete one is cached; returns its build seconds."""
    meta = db.with_suffix(".json")
    if rebuild or not meta.exists() or not db.exists():
        for stale in (db, meta, Path(f"{db}-wal"), Path(f"{db}-shm")):
            stale.unlink(missing_ok=True)
        db.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, __file__, "--build-only", "--chunks", str(chunks), "--dims", str(dims), "--db", str(db)],
            check=True,
        )
    return json.loads(meta.read_text())["build_s"]


def _rebatched(
    batches: Iterator[tuple[np.ndarray, np.ndarray]], size: int = 20_000
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The store's batches (down to one vec0 chunk each) joined into batches of about `size` rows."""
    ids: list[np.ndarray] = []
    rows: list[np.ndarray] = []
    for i, r in batches:
        ids.append(i)
        rows.append(r)
        if sum(map(len, ids)) >= size:
            yield np.concatenate(ids), np.concatenate(rows)
            ids, rows = [], []
    if ids:
        yield np.concatenate(ids), np.concatenate(rows)


def exact_nearest(store: SqliteStore, names: bool, queries: np.ndarray, masks: list[np.ndarray], k: int) -> list[set]:
    """Exact top-k chunk ids per query among its allowed ids (masks: bool by chunk id), streaming the store."""
    best_sims = np.full((len(queries), k), -np.inf, dtype=np.float32)
    best_ids = np.zeros((len(queries), k), dtype=np.int64)
    for ids, rows in _rebatched(store.iter_vectors(MODEL_ID, names)):
        sims = (rows @ queries.T).T
        for qi, mask in enumerate(masks):
            s = np.where(mask[ids], sims[qi], -np.inf)
            both_s = np.concatenate([best_sims[qi], s])
            both_i = np.concatenate([best_ids[qi], ids])
            top = np.argpartition(-both_s, k - 1)[:k]
            best_sims[qi], best_ids[qi] = both_s[top], both_i[top]
    return [
        {int(i) for i, s in zip(ids_, sims_, strict=True) if s > -np.inf}
        for ids_, sims_ in zip(best_ids, best_sims, strict=True)
    ]


def recall(searcher: Searcher, requests: list[SearchRequest], vectors: QueryVectors) -> tuple[float, float]:
    """Mean recall@10 of the index's `nearest` against exact search, for code vectors and name vectors."""
    index = searcher.full.index
    scope_ids = [searcher.store.scope_for_root(ROOT).id]
    allowed = [index.allowed(scope_ids, r.filters.hit_filter()) for r in requests]
    top_id = searcher.store.scope_chunk_ids(scope_ids)[-1] + 1
    by_set: dict[int, np.ndarray] = {}  # `allowed` hands out one array per filter set (None: every chunk)
    for a in allowed:
        if id(a) not in by_set:
            by_set[id(a)] = np.zeros(top_id, dtype=bool)
            by_set[id(a)][slice(None) if a is None else a] = True
    masks = [by_set[id(a)] for a in allowed]
    queries = np.stack([vectors.vectors[r.query] for r in requests])
    out = []
    for names in (False, True):
        exact = exact_nearest(searcher.store, names, queries, masks, RECALL_K)
        scores = []
        for q, a, truth in zip(queries, allowed, exact, strict=True):
            if truth:
                found = {cid for cid, _ in index.nearest(q, a, RECALL_K, names=names)}
                scores.append(len(found & truth) / len(truth))
        out.append(float(np.mean(scores)))
    return out[0], out[1]


def run(args: argparse.Namespace) -> dict:
    db = args.db or args.cache_dir / f"search-{args.chunks}-d{args.dims}.db"
    build_s = ensure_store(db, args.chunks, args.dims, args.rebuild)
    requests, vectors = make_queries(args.queries + 1, args.dims, args.seed)
    rss_before = rss_mb()

    started = time.perf_counter()
    store = SqliteStore(db)
    searcher = Searcher(store, vectors)
    early: dict = {}

    def search_while_loading() -> None:  # as the worker does for a search typed during the app's warm-up
        if not early:
            t = time.perf_counter()
            response = searcher.search(requests[0])
            early.update(
                searchable_s=time.perf_counter() - started,
                ms=(time.perf_counter() - t) * 1000,
                loaded=response.vectors_loaded,
            )

    for _ in searcher.warm_up():
        search_while_loading()
    load_s = time.perf_counter() - started
    t = time.perf_counter()
    searcher.search(requests[0])
    first_ms = (time.perf_counter() - t) * 1000
    searchable_s = early.get("searchable_s", load_s + first_ms / 1000)

    times = []
    for req in requests[1:]:
        started = time.perf_counter()
        searcher.search(req)
        times.append((time.perf_counter() - started) * 1000)
    rss, peak_rss = rss_mb(), rss_mb("VmHWM")
    code_recall, name_recall = recall(searcher, requests[1:], vectors)
    store.close()

    db_bytes = sum(p.stat().st_size for p in (db, Path(f"{db}-wal")) if p.exists())
    out = {
        "chunks": args.chunks,
        "p50_ms": round(float(np.percentile(times, 50)), 2),
        "p95_ms": round(float(np.percentile(times, 95)), 2),
        "max_ms": round(max(times), 2),
        "rss_mb": round(rss),
        "peak_rss_mb": round(peak_rss),
        "rss_before_open_mb": round(rss_before),
        "db_mb": round(db_bytes / 2**20),
        "db_bytes_per_chunk": round(db_bytes / args.chunks),
        "build_s": round(build_s, 1),
        "load_s": round(load_s, 2),
        "first_search_ms": round(first_ms, 1),
        "searchable_s": round(searchable_s, 3),
        "search_while_loading_ms": round(early.get("ms", 0), 1),
        "vectors_loaded_then": round(early.get("loaded", 1.0), 3),
        "recall_at_10": round((code_recall + name_recall) / 2, 4),
        "recall_at_10_code": round(code_recall, 4),
        "recall_at_10_names": round(name_recall, 4),
    }
    if not args.json:
        print(
            f"{args.chunks} chunks: p50 {out['p50_ms']} ms, p95 {out['p95_ms']} ms, RSS {out['rss_mb']} MB, "
            f"db {out['db_mb']} MB, load {out['load_s']} s, recall@10 {out['recall_at_10']}"
        )
    print(json.dumps(out))
    return out


def build_only(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    build(args.db, args.chunks, args.dims)
    args.db.with_suffix(".json").write_text(json.dumps({"build_s": time.perf_counter() - started}))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--chunks", type=int, required=True)
    ap.add_argument("--dims", type=int, default=384)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--cache-dir", type=Path, default=Path("/tmp/quarry-bench-search"))
    ap.add_argument("--db", type=Path, help="store to use (default: one per N and dims in --cache-dir)")
    ap.add_argument("--rebuild", action="store_true", help="build the store again even if one is cached")
    ap.add_argument("--build-only", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--json", action="store_true", help="print only the JSON line")
    args = ap.parse_args(argv)
    if args.build_only:
        build_only(args)
    else:
        run(args)


if __name__ == "__main__":
    main()
