"""A team index checkout's own changes at the size of a real repository: what a checkout with 10 changed files
costs when the base is in place (issue 33's overlay goal).

A git repository of N real source files (the first N `.py` files of this interpreter's site-packages, sorted by
path: numpy, psycopg, PySide6's helpers...) is indexed into a fresh team index on a pgserver started here:
`quarry index A --until fast` (the base and A's overlay). Then, side by side in one run:

* a clean clone B: its first index (the overlay maps every file to the base's chunks);
* B with 10 files changed (a function appended to each): the next index;
* a fresh clone C with the same 10 changes: its first index.

Each is a cold `quarry index --until fast --json` process; printed are its wall time, the run's own time, the
files it read again and mapped, and the chunks it embedded, with the machine's load.

Usage: python tests/benchmarks/bench_overlay.py [--files 5000] [--changed 10] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SITE = Path(next(p for p in sys.path if p.endswith("site-packages")))
GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "b@x"}  # fmt: skip


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, check=True, capture_output=True)


def make_repository(root: Path, files: int) -> None:
    sources = sorted(SITE.rglob("*.py"))[:files]
    for source in sources:
        target = root / source.relative_to(SITE)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "seed")


def change(root: Path, count: int) -> list[str]:
    changed = sorted(p for p in root.rglob("*.py") if ".git" not in p.parts)[:: max(1, files_in(root) // count)]
    for n, path in enumerate(changed[:count]):
        with path.open("a") as f:
            f.write(f"\n\ndef bench_overlay_change_{n}(values):\n    return sorted(values)[{n}:]\n")
    return [str(p.relative_to(root)) for p in changed[:count]]


def files_in(root: Path) -> int:
    return sum(1 for p in root.rglob("*.py") if ".git" not in p.parts)


def index(root: Path, url: str) -> dict:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "desktop_app", "index", str(root), "--db", url, "--until", "fast", "--json", "--quiet"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    stats = json.loads(done.stdout.splitlines()[-1])
    return {
        "wall_s": round(wall, 2),
        "run_s": stats["seconds"],
        "files_indexed": stats["files_indexed"],
        "files_changed": stats["files_changed"],
        "files_copied": stats["files_copied"],
        "chunks_fast": stats["chunks_fast"],
        "base": stats["base"]["action"] if stats["base"] else None,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=5000)
    ap.add_argument("--changed", type=int, default=10)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    import pgserver

    os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.mkdtemp(prefix="qpg-run-"))
    work = Path(tempfile.mkdtemp(prefix="bench-overlay-"))
    server = pgserver.get_server(work / "pg", cleanup_mode="delete")
    try:
        url = f"postgresql://postgres@/postgres?host={work / 'pg'}"
        a = work / "a" / "repo"
        a.mkdir(parents=True)
        make_repository(a, args.files)
        rows = {"A, first index (base and overlay)": index(a, url)}
        b, c = work / "b" / "repo", work / "c" / "repo"
        git(work, "clone", "-q", str(a), str(b))
        rows["B, clean clone, first index"] = index(b, url)
        changed = change(b, args.changed)
        rows[f"B, {len(changed)} files changed, next index"] = index(b, url)
        git(work, "clone", "-q", str(a), str(c))
        change(c, args.changed)
        rows[f"C, fresh clone with the same {len(changed)} changes"] = index(c, url)
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"{args.files} files, load {load}")
        for name, row in rows.items():
            print(
                f"{name:48} wall {row['wall_s']:7.2f} s, run {row['run_s']:7.2f} s, {row['files_changed']:5} read "
                f"again, {row['files_copied']:5} mapped, {row['chunks_fast']:6} chunks embedded, base {row['base']}"
            )
        print(json.dumps({"files": args.files, "load": load, "runs": rows}))
    finally:
        server.cleanup()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
