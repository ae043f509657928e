"""Re-index of an unchanged tree: the cost of finding that nothing changed.

    python tests/benchmarks/bench_reindex.py [--files 10000] [--json]

Generates a tree of small source files (cached under /tmp by size), indexes it once, then times
`quarry index` again in-process with nothing changed, and once more after touching one file.
The last line printed is a JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from desktop_app.embedding.embedder import Embedder  # noqa: E402
from desktop_app.indexing.indexer import Indexer  # noqa: E402
from desktop_app.store.sqlite.store import SqliteStore  # noqa: E402


def build_tree(root: Path, files: int) -> Path:
    if (root / ".complete").exists():
        return root
    for i in range(files):
        d = root / f"pkg{i // 200}" / f"sub{i // 20 % 10}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"mod{i}.py").write_text(f"def handler_{i}(request):\n    return request.rate * {i}\n")
    (root / ".complete").write_text("")
    return root


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--json", action="store_true", help="print only the JSON line")
    args = ap.parse_args(argv)
    root = build_tree(Path(tempfile.gettempdir()) / f"quarry-bench-tree-{args.files}", args.files)
    with tempfile.TemporaryDirectory(prefix="quarry-bench-") as tmp:
        store = SqliteStore(Path(tmp) / "index.db")
        indexer = Indexer(store, Embedder())
        started = time.perf_counter()
        first = indexer.index(root)
        first_s = time.perf_counter() - started
        started = time.perf_counter()
        again = indexer.index(root)
        unchanged_s = time.perf_counter() - started
        touched = root / "pkg0" / "sub0" / "mod0.py"
        touched.write_text(touched.read_text())
        started = time.perf_counter()
        indexer.index(root)
        touched_s = time.perf_counter() - started
        store.close()
    out = {
        "files": first.files_indexed,
        "first_index_s": round(first_s, 1),
        "reindex_unchanged_s": round(unchanged_s, 3),
        "reindex_one_touched_s": round(touched_s, 3),
        "embedded_on_reindex": again.chunks_embedded,
    }
    if not args.json:
        print(
            f"{out['files']} files: first index {out['first_index_s']} s, unchanged re-index "
            f"{out['reindex_unchanged_s']} s, one file touched {out['reindex_one_touched_s']} s"
        )
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
