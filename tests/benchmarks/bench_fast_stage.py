"""The fast stage against parse speed: a cold `quarry index --until fast` beside a cold process that only reads
and tree-sitter-parses the same files, alternating, on real trees of three sizes.

    python tests/benchmarks/bench_fast_stage.py [--trees repo,stdlib] [--repo PATH] [--rounds 2] [--json]
    python tests/benchmarks/bench_fast_stage.py --trees kernel      # fetches Debian's linux-source once
    python tests/benchmarks/bench_fast_stage.py --trees kernel --rounds 1 --searches --db-space

Trees:
  repo    a benchmark repository (default: commons-lang from ../shared/eval/semble-dev, else --repo PATH)
  stdlib  this interpreter's standard library without its tests, copied into a temporary folder
  kernel  the Linux kernel from Debian's `linux-source-*` package: `apt-get download` into
          ~/.cache/quarry-bench/kernel/ and unpacked there the first time (~1 GB); never by the default tests

Each round runs, one after the other, `quarry index TREE --db NEW --until fast --json` and
`bench_fast_stage.py --parse-only TREE` (Quarry's own file selection, reading and tree-sitter parse of every
file with a grammar, nothing else). Printed per tree (medians over the rounds): the index process's in-process
time to the end of the fast stage (`index --json`'s `stages.fast`) and its wall time (the difference is the
process's start-up and close), the parse process's in-process time, their ratio, the index process's peak RSS
and the database's size against the source's, and the index's time per step (`step_seconds`: walk, read,
chunk, tokenise, write, fast_embed, fast_write). The last line is one JSON object.

With `--searches`, the last round's index is then searched in each mode by one cold `quarry search
--queries-file` process of 20 queries (names and text patterns taken from the index itself, spread over its
symbols in id order; sentences from a fixed list; five regexes with no literal to narrow them, two of them
rare): the first query's engine time, p50 and p95 of the other 19, the process's wall time and peak RSS. With
`--db-space`, what takes the database's space, by part (sqlite's dbstat).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SEMBLE_REPO = ROOT.parent / "shared" / "eval" / "semble-dev" / "repos" / "commons-lang"
KERNEL_CACHE = Path.home() / ".cache" / "quarry-bench" / "kernel"
STDLIB_SKIP = {"test", "tests", "idle_test", "site-packages", "dist-packages", "__pycache__", "lib2to3"}


def parse_only(root: Path) -> dict:
    """Select, read and parse every file of `root` the way the indexer does, and nothing more."""
    from tree_sitter import Parser

    from desktop_app.indexing.file_selection import SelectionOptions, select_files
    from desktop_app.indexing.source_reader import SkipFile, read_source
    from desktop_app.indexing.syntax import _GRAMMARS, _load

    started = time.perf_counter()
    selection = select_files(root)
    files = parsed = size = 0
    for cand in selection.candidates:
        try:
            source = read_source(cand.abs_path, SelectionOptions())
        except SkipFile:
            continue
        files += 1
        size += source.size
        key = "tsx" if cand.language == "typescript" and cand.rel_path.endswith(".tsx") else cand.language
        language = _load(key) if key in _GRAMMARS else None
        if language is not None:
            Parser(language).parse(source.text.encode("utf-8", "replace"))
            parsed += 1
    return {"seconds": round(time.perf_counter() - started, 3), "files": files, "parsed": parsed, "bytes": size}


def _run(cmd: list[str]) -> tuple[str, float, float]:
    """(stdout, wall seconds, peak RSS in MB) of a child process."""
    started = time.perf_counter()
    # Run from the temporary folder, not the checkout: `python -m` puts the working directory first on the path,
    # and PYTHONPATH then picks the build measured (an older worktree for a before/after comparison).
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=tempfile.gettempdir()
    )
    out = proc.stdout.read() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}")
    return out, wall, usage.ru_maxrss / 1024


SENTENCES = [
    "allocate memory for a buffer",
    "parse the command line arguments",
    "read a file into memory",
    "free the resources when the device is removed",
    "compare two strings ignoring case",
    "handle an interrupt from the hardware",
    "retry the request after a timeout",
    "lock to protect the list from concurrent access",
    "convert a number to a string",
    "send a packet over the network",
    "check the user's permissions",
    "write the log message to the output",
    "sort the entries by name",
    "open a connection to the server",
    "initialise the driver's state",
    "compute a checksum of the data",
    "escape special characters in a string",
    "wait until the queue is empty",
    "register a callback for an event",
    "encode the value as json",
]
# Text patterns with no literal to narrow them: every chunk is a candidate. The first three match often (the first k
# files come soon); the last two rarely (on the Linux kernel 3 files for `x{4}y`): every chunk is read.
WIDE_REGEXES = [r"0x[0-9A-F]{8}", r"\b[A-Z]{3,}_[A-Z]{3,}\b", r"\d{4,}", r"_{5,}[a-z]", r"x{4}y"]
# The parts of a store, by the tables and indexes that make them up (a name, or a prefix ending in "_").
SPACE_PARTS = [
    ("chunk text and hashes", ("chunk", "sqlite_autoindex_chunk_1", "text_dictionary")),
    ("keyword index", ("fts_",)),
    ("text index (trigrams)", ("chunk_text_",)),
    ("vectors", ("vec_",)),
    ("vectors' sign bits", ("vector_sign", "vector_sign_")),
    ("places (file_chunk and its indexes)", ("file_chunk", "file_chunk_")),
    ("file outlines", ("file_outline", "file_outline_")),
    ("files", ("file", "sqlite_autoindex_file_1")),
]


def search_queries(db: Path) -> dict[str, tuple[list[str], list[str]]]:
    """{label: (quarry search arguments, 20 queries)} for each mode, names taken from the index at `db`."""
    import apsw

    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    sample = [
        r[0]
        for r in conn.execute(
            "SELECT symbol_name FROM file_chunk WHERE symbol_name GLOB '[A-Za-z_]*' AND length(symbol_name) > 5 "
            "AND id % (1 + (SELECT count(*) FROM file_chunk) / 400) = 0 ORDER BY id"
        )
    ]
    names = sample[:: max(1, len(sample) // 20)][:20]  # spread over the whole index
    conn.close()
    regexes = [rf"\b{n}\s*\(" for n in names[:15]] + WIDE_REGEXES
    return {
        "exact (names)": (["--mode", "exact"], names),
        "hybrid (names)": (["--mode", "hybrid"], names),
        "semantic (sentences)": (["--mode", "semantic"], SENTENCES),
        "hybrid (sentences)": (["--mode", "hybrid"], SENTENCES),
        "text, literal": (["--mode", "text"], names),
        "text, regex": (["--mode", "text", "--regex"], regexes),
    }


def searches(db: Path, root: Path, tmp: Path) -> dict[str, dict]:
    """Each mode's cold process of 20 queries: first query's and the others' engine times, wall, peak RSS."""
    out = {}
    for label, (flags, queries) in search_queries(db).items():
        listed = tmp / "queries.txt"
        listed.write_text("\n".join(queries) + "\n", encoding="utf-8")
        cmd = [sys.executable, "-m", "desktop_app", "search", "--db", str(db), "--root", str(root)]
        printed, wall, rss = _run([*cmd, *flags, "--queries-file", str(listed), "--json", "-k", "10"])
        times = [json.loads(line)["elapsed_ms"] for line in printed.splitlines() if line.startswith("{")]
        rest = sorted(times[1:])
        out[label] = {
            "first_ms": round(times[0]),
            "p50_ms": round(statistics.median(rest)),
            "p95_ms": round(rest[min(len(rest) - 1, round(0.95 * (len(rest) - 1)))]),
            "wall_s": round(wall, 2),
            "peak_rss_mb": round(rss),
        }
    return out


def db_space(db: Path) -> dict[str, float]:
    """MB of each part of the store (SPACE_PARTS; "other" for the rest)."""
    import apsw

    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    parts: dict[str, float] = {}
    for name, size in conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"):
        part = next(
            (
                label
                for label, names in SPACE_PARTS
                if any(name == n or (n.endswith("_") and name.startswith(n)) for n in names)
            ),
            "other",
        )
        parts[part] = parts.get(part, 0.0) + size / 1e6
    conn.close()
    return {k: round(v, 1) for k, v in sorted(parts.items(), key=lambda kv: -kv[1])}


def stdlib_copy(tmp: Path) -> Path:
    source = Path(os.__file__).parent
    target = tmp / "stdlib"
    shutil.copytree(source, target, ignore=lambda _d, names: [n for n in names if n in STDLIB_SKIP], symlinks=True)
    return target


def kernel_tree() -> Path:
    """Debian's kernel source, unpacked once into KERNEL_CACHE."""
    unpacked = [p for p in KERNEL_CACHE.glob("linux-source-*") if p.is_dir()]
    if unpacked:
        return unpacked[0]
    KERNEL_CACHE.mkdir(parents=True, exist_ok=True)
    listing = subprocess.run(
        ["apt-cache", "search", "--names-only", "^linux-source-[0-9.]+$"], capture_output=True, text=True, check=True
    ).stdout.split()
    names = sorted(
        (n for n in listing if n.startswith("linux-source-")), key=lambda n: [int(x) for x in n[13:].split(".")]
    )
    if not names:
        raise SystemExit("no linux-source-* package is known to apt here (run apt-get update first)")
    subprocess.run(["apt-get", "download", names[-1]], cwd=KERNEL_CACHE, check=True)
    deb = next(KERNEL_CACHE.glob(f"{names[-1]}_*.deb"))
    subprocess.run(["dpkg", "-x", str(deb), str(KERNEL_CACHE / "deb")], check=True)
    archive = next((KERNEL_CACHE / "deb" / "usr" / "src").glob("linux-source-*.tar.*"))
    with tarfile.open(archive) as tar:
        tar.extractall(KERNEL_CACHE, filter="data")
    shutil.rmtree(KERNEL_CACHE / "deb")
    deb.unlink()
    # Debian's tree ships a .gitignore that ends in `/*` (it is meant for packaging); a kernel developer's
    # checkout has the kernel's own. Without that line the tree is what a developer indexes.
    ignore = next(p for p in KERNEL_CACHE.glob("linux-source-*") if p.is_dir()) / ".gitignore"
    if ignore.exists():
        ignore.write_text("".join(line for line in ignore.read_text().splitlines(True) if line.strip() != "/*"))
    return next(p for p in KERNEL_CACHE.glob("linux-source-*") if p.is_dir())


def measure(name: str, root: Path, rounds: int, tmp: Path, search: bool = False, space: bool = False) -> dict:
    index_runs, parse_runs = [], []
    extra: dict[str, dict] = {}
    for round_ in range(rounds):
        db = tmp / f"{name}-{round_}.db"
        out, wall, rss = _run(
            [sys.executable, "-m", "desktop_app", "index", str(root), "--db", str(db), "--until", "fast", "--json"]
        )
        stats = json.loads(out.strip().splitlines()[-1])
        db_bytes = sum(p.stat().st_size for p in tmp.glob(f"{name}-{round_}.db*"))
        index_runs.append((stats, wall, rss, db_bytes))
        out, parse_wall, _ = _run([sys.executable, __file__, "--parse-only", str(root)])
        parse_runs.append(json.loads(out))
        if round_ == rounds - 1:
            if search:
                extra["searches"] = searches(db, root, tmp)
            if space:
                extra["db_space_mb"] = db_space(db)
        for p in tmp.glob(f"{name}-{round_}.db*"):
            p.unlink()
    fast = statistics.median(s["stages"].get("fast", s["seconds"]) for s, *_ in index_runs)
    parse = statistics.median(p["seconds"] for p in parse_runs)
    stats = index_runs[-1][0]
    # A build from before step_seconds existed reports none: the benchmark still compares its stages.
    steps = {
        k: statistics.median(s.get("step_seconds", {}).get(k, 0.0) for s, *_ in index_runs)
        for k in stats.get("step_seconds", {})
    }
    src = stats["bytes"]  # of the files indexed
    result = {
        "tree": name,
        "files": stats["files_indexed"],
        "chunks": stats["chunks_total"],
        "source_mb": round(src / 1e6, 1),
        "keyword_s": round(statistics.median(s["stages"].get("keyword", 0.0) for s, *_ in index_runs), 3),
        "fast_s": round(fast, 3),
        "index_wall_s": round(statistics.median(w for _, w, _, _ in index_runs), 3),
        "parse_s": round(parse, 3),
        "ratio": round(fast / parse, 1) if parse else None,
        "s_per_1000_chunks": round(fast / max(1, stats["chunks_total"]) * 1000, 3),
        "peak_rss_mb": round(max(r for _, _, r, _ in index_runs)),
        "db_mb": round(index_runs[-1][3] / 1e6, 1),
        "db_to_source": round(index_runs[-1][3] / src, 2) if src else None,
        "step_seconds": {k: round(v, 3) for k, v in steps.items()},
        **extra,
    }
    return result


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trees", default="repo,stdlib", help="comma-separated: repo, stdlib, kernel")
    ap.add_argument("--repo", type=Path, default=SEMBLE_REPO, help="the 'repo' tree")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--json", action="store_true", help="print only the JSON line")
    ap.add_argument("--searches", action="store_true", help="search the last round's index in each mode")
    ap.add_argument("--db-space", action="store_true", help="what takes the last round's database's space")
    ap.add_argument("--parse-only", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.parse_only:
        out = parse_only(args.parse_only)
        print(json.dumps(out))
        return out

    results = []
    with tempfile.TemporaryDirectory(prefix="quarry-bench-fast-") as tmp_name:
        tmp = Path(tmp_name)
        for name in args.trees.split(","):
            root = {"repo": lambda: args.repo, "stdlib": lambda: stdlib_copy(tmp), "kernel": kernel_tree}[name]()
            result = measure(name, root, args.rounds, tmp, args.searches, args.db_space)
            results.append(result)
            if not args.json:
                print(
                    f"{name}: {result['files']} files, {result['chunks']} chunks, {result['source_mb']} MB; "
                    f"keyword stage {result['keyword_s']} s, fast stage {result['fast_s']} s "
                    f"(process {result['index_wall_s']} s); read+parse {result['parse_s']} s; "
                    f"ratio {result['ratio']}x; {result['s_per_1000_chunks']} s per 1,000 chunks; "
                    f"peak RSS {result['peak_rss_mb']} MB; database {result['db_mb']} MB "
                    f"({result['db_to_source']}x the source)\n  steps: {result['step_seconds']}"
                )
                for label, figures in result.get("searches", {}).items():
                    print(f"  search, {label}: {figures}")
                if "db_space_mb" in result:
                    print(f"  database by part, MB: {result['db_space_mb']}")
    out = {"trees": results, "rounds": args.rounds, "load_avg": os.getloadavg()[0], "cpus": os.cpu_count()}
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
