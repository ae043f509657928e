"""Text mode against ripgrep, side by side in one run, on the same real source trees.

    python tests/benchmarks/bench_text.py [--sizes 10000,100000] [--runs 5] [--work DIR] [--json]

For each size it copies repositories of ../shared/eval/semble-dev into one folder (in the order of REPOS
until the index holds about that many chunks), indexes it with `quarry index --until keyword` (text mode
needs no vectors), and asks a fixed set of literals and regular expressions: rare identifiers sampled from
the indexed chunks (seeded), common words, and regexes with and without a literal run the trigram index can
use. Each query runs `--runs` times through the engine (a Worker, as the window and the CLI use it: the
engine's `elapsed_ms`) and through ripgrep (`rg -n` over the same folder, wall time of the process, output
read into a pipe), alternating query by query. It prints p50/p95 of each side for literals and for regexes,
and checks that text mode's matches (file, line, column) are ripgrep's for every query matching at most 100
files (the files text mode lists at most), counting ripgrep's matches in indexed files only. The last line
printed is a JSON object.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import apsw

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from desktop_app.search.request import SearchRequest, TextOptions  # noqa: E402
from desktop_app.store.sqlite import text_codec  # noqa: E402
from desktop_app.worker import ops  # noqa: E402
from desktop_app.worker.worker import EngineConfig, Worker  # noqa: E402
from tests.ripgrep import rg_matches  # noqa: E402

SEMBLE = REPO.parent / "shared" / "eval" / "semble-dev" / "repos"
QUARRY = [sys.executable, "-m", "desktop_app"]
# Smallest first, so each size takes whole repositories until it is reached; all of them hold ~110K chunks.
REPOS = [
    "serde",
    "zod",
    "tokio",
    "commons-lang",
    "pandoc",
    "curl",
    "redis",
    "newtonsoft-json",
    "nlohmann-json",
    "laravel-framework",
    "abseil-cpp",
]
COMMON = ["return", "error", "TODO", "static", "include", "self"]
REGEXES = [
    r"TODO|FIXME",  # no literal every match holds: every chunk is read
    r"[A-Z][a-zA-Z]+Exception\b",
    r"#include\s+<\w+\.h>",
    r"\bfn\s+\w+_test",
    r"public function get\w+\(",
    r"return\s+nullptr;",
]
MAX_LISTED = 100  # text mode lists at most this many files (search.request.MAX_K)


def build(work: Path, size: int) -> tuple[Path, Path, int]:
    """(corpus folder, index file, chunks) for about `size` chunks, reused when already built."""
    corpus, db = work / f"corpus-{size}", work / f"text-{size}.db"
    if db.exists() and corpus.exists():
        return corpus, db, _chunks(db)
    shutil.rmtree(corpus, ignore_errors=True)
    db.unlink(missing_ok=True)
    corpus.mkdir(parents=True)
    for name in REPOS:
        shutil.copytree(SEMBLE / name, corpus / name, symlinks=True)
        subprocess.run([*QUARRY, "index", str(corpus), "--db", str(db), "--until", "keyword", "--quiet"], check=True)
        if _chunks(db) >= size * 0.9:
            break
    return corpus, db, _chunks(db)


@contextlib.contextmanager
def _reading(db: Path) -> Iterator[apsw.Connection]:
    """The index file, read only, for what the benchmark reads around the engine (with the store's function
    that reads a chunk's text, which may be compressed)."""
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    text_codec.ChunkTextCodec(conn)
    try:
        yield conn
    finally:
        conn.close()


def _chunks(db: Path) -> int:
    with _reading(db) as conn:
        return next(conn.execute("SELECT count(*) FROM chunk"))[0]


def rare_literals(db: Path, count: int = 10) -> list[str]:
    """Identifiers of 8+ characters from chunks picked at random (seeded): what a user pastes to find."""
    with _reading(db) as conn:
        high = next(conn.execute("SELECT max(id) FROM chunk"))[0]
        rng = random.Random(7)
        out: list[str] = []
        while len(out) < count:
            row = next(
                conn.execute(
                    f"SELECT {text_codec.UNPACK}(text) FROM chunk WHERE id >= ? LIMIT 1", (rng.randint(1, high),)
                ),
                None,
            )
            words = re.findall(r"[A-Za-z_][A-Za-z0-9_]{7,}", row[0] if row else "")
            if words:
                word = rng.choice(words)
                if word not in out:
                    out.append(word)
        return out


def rg(root: Path, pattern: str, literal: bool) -> tuple[float, str]:
    started = time.perf_counter()
    proc = subprocess.run(
        ["rg", "-n", "-i", *(["-F"] if literal else []), "--no-heading", "-e", pattern, str(root)],
        capture_output=True,
        text=True,
        check=False,
    )
    return (time.perf_counter() - started) * 1000, proc.stdout


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run_size(work: Path, size: int, runs: int, quiet: bool) -> dict:
    corpus, db, chunks = build(work, size)
    literals = rare_literals(db) + COMMON
    queries = [(q, False) for q in literals] + [(q, True) for q in REGEXES]
    worker = Worker(EngineConfig(db)).start()
    times: dict[str, dict[str, list[float]]] = {"literal": {"quarry": [], "rg": []}, "regex": {"quarry": [], "rg": []}}
    checked = identical = 0
    try:
        indexed = {s.scope.root: s for s in worker.run(ops.scopes()).result()}
        root = str(corpus.resolve())
        files = set(_indexed_paths(db))
        for query, regex in queries:
            kind = "regex" if regex else "literal"
            request = SearchRequest(
                query, roots=(root,), mode="text", k=MAX_LISTED, text=TextOptions(regex=regex), record_history=False
            )
            for _ in range(runs):
                response = worker.run(ops.search(request)).result()
                times[kind]["quarry"].append(response.elapsed_ms)
                times[kind]["rg"].append(rg(corpus, query, not regex)[0])
            if response.files_matched <= MAX_LISTED:
                checked += 1
                ours = {(r.path, m["line"], m["start_col"], m["end_col"]) for r in response.results for m in r.matches}
                theirs = {m for m in rg_matches(corpus, query, "-i", *([] if regex else ["-F"])) if m[0] in files}
                same = ours == theirs
                identical += same
                if not same and not quiet:
                    print(f"  differs from ripgrep: {query!r}")
            if not quiet:
                print(
                    f"  {kind:7} {query[:40]!r:44} {response.files_matched:6} files {response.matches_total:8} "
                    f"matches  quarry p50 {statistics.median(times[kind]['quarry'][-runs:]):7.1f} ms   "
                    f"rg p50 {statistics.median(times[kind]['rg'][-runs:]):7.1f} ms"
                )
        assert root in indexed
    finally:
        worker.close()
    figures = {
        kind: {
            side: {"p50": round(percentile(v, 0.5), 1), "p95": round(percentile(v, 0.95), 1)}
            for side, v in sides.items()
        }
        for kind, sides in times.items()
    }
    return {
        "chunks": chunks,
        "queries": len(queries),
        "runs": runs,
        "checked_against_rg": checked,
        "identical_to_rg": identical,
        **figures,
    }


def _indexed_paths(db: Path) -> list[str]:
    with _reading(db) as conn:
        return [r[0] for r in conn.execute("SELECT path FROM file")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="chunk counts, comma-separated")
    parser.add_argument("--runs", type=int, default=5, help="runs of each query on each side")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "quarry-bench-text")
    parser.add_argument("--json", action="store_true", help="print only the JSON line")
    args = parser.parse_args()
    if shutil.which("rg") is None:
        sys.exit("bench_text.py needs ripgrep (rg) on PATH")
    args.work.mkdir(parents=True, exist_ok=True)
    out = {"load": round(os.getloadavg()[0], 2), "sizes": {}}
    for size in (int(s) for s in args.sizes.split(",")):
        if not args.json:
            print(f"~{size} chunks")
        result = run_size(args.work, size, args.runs, args.json)
        out["sizes"][size] = result
        if not args.json:
            for kind in ("literal", "regex"):
                q, r = result[kind]["quarry"], result[kind]["rg"]
                print(
                    f"{result['chunks']} chunks, {kind:7}: quarry p50 {q['p50']} / p95 {q['p95']} ms, "
                    f"rg p50 {r['p50']} / p95 {r['p95']} ms"
                )
            print(f"identical to ripgrep: {result['identical_to_rg']} of {result['checked_against_rg']} checked")
    out["load_after"] = round(os.getloadavg()[0], 2)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
