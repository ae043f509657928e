"""Time a 20,000-character query in every mode (it used to be a timed assertion in the test suite).

    python tests/benchmarks/bench_long_query.py [--work DIR] [--json]

Indexes the test suite's mixed repository into a fresh store (the real model), then runs the same query
the reliability test sends (5,000 random words, cut to 20,000 characters) through `quarry search --json`
in hybrid, exact and semantic mode, three times each, and prints the engine's `elapsed_ms` for each run.
The last line printed is a JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests import mixed_repo  # noqa: E402

QUARRY = [sys.executable, "-m", "desktop_app"]


def long_query() -> str:
    words = random.Random(3).choices(["retry", "http", "cache", "parse", "matrix", "x" * 40, "Ünïcode", "*"], k=5000)
    return " ".join(f"{w}{i}" if i % 2 else w for i, w in enumerate(words))[:20_000]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=None, help="folder for the repository and the store")
    parser.add_argument("--json", action="store_true", help="print only the JSON line")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="quarry-long-query-"))
    root = mixed_repo.build(work / "repo")
    db = work / "index.db"
    subprocess.run([*QUARRY, "index", str(root), "--db", str(db), "--quiet"], cwd=REPO, check=True)
    query = long_query()
    figures: dict[str, list[float]] = {}
    for mode in ("hybrid", "exact", "semantic"):
        for _ in range(3):
            out = subprocess.run(
                [*QUARRY, "search", query, "--root", str(root), "--db", str(db), "--mode", mode, "--json"],
                cwd=REPO,
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            figures.setdefault(mode, []).append(json.loads(out)["elapsed_ms"])
        if not args.json:
            print(f"{mode:9} elapsed_ms {figures[mode]}")
    print(json.dumps({"query_chars": len(query), "elapsed_ms": figures, "load": os.getloadavg()[0]}))


if __name__ == "__main__":
    main()
