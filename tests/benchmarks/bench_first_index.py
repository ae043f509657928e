"""A first index from a cold start, stage by stage, on copies of the standard library of three sizes.

    python tests/benchmarks/bench_first_index.py [--src /usr/lib/python3.11] [--sizes 1000,10000,25000] [--json]

For each size, copies files of SRC (test folders left out) until about that many chunks, and indexes the
copy into a fresh store through the real worker, as the window does. It prints, per size: the time to the
first progress report, to the end of each stage (stage 1: every file's chunks, symbols and keyword index;
stage 2: every chunk's fast vector; stage 3: every chunk's vector of the default model), stage 3's
throughput in tokens/s against the raw model's on the same documents measured in the same run (a fresh
session, one call), and the machine's load. The last line is one JSON object with every figure.
Quality at the end of stage 2 is measured by ../shared/eval against a store frozen there
(`quarry index --until fast`), not here.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from desktop_app.embedding.embedder import Embedder  # noqa: E402
from desktop_app.indexing.documents import chunk_of, document_text, name_text  # noqa: E402
from desktop_app.indexing.progress import Progress  # noqa: E402
from desktop_app.store.sqlite.store import SqliteStore  # noqa: E402
from desktop_app.worker import ops  # noqa: E402
from desktop_app.worker.worker import EngineConfig, Worker  # noqa: E402

# Source bytes per chunk of the standard library with the default model (2,588 chunks from 0.8 MB).
BYTES_PER_CHUNK = 310
TEST_FOLDERS = {"test", "tests", "idle_test", "__pycache__"}
RAW_SAMPLE = 2000  # documents the raw model embeds for the throughput comparison


def copy_tree(src: Path, dest: Path, chunks: int) -> int:
    """Copy .py files of `src` (test folders left out, in path order) until about `chunks` chunks' worth."""
    budget = chunks * BYTES_PER_CHUNK
    copied = 0
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src)
        if TEST_FOLDERS & set(rel.parts[:-1]) or not path.is_file():
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        copied += path.stat().st_size
        if copied >= budget:
            break
    return copied


def raw_tokens_per_s(db: Path) -> tuple[float, int]:
    """The bare model's throughput on the first RAW_SAMPLE documents (and symbol names) of the store."""
    store = SqliteStore(db)
    try:
        ids = store.chunks_without_vectors("none")[:RAW_SAMPLE]  # every chunk lacks a vector of no model
        chunks = store.stored_chunks(ids)
    finally:
        store.close()
    texts = [document_text(chunk_of(c), c.path) for c in chunks]
    texts += [n for n in (name_text(chunk_of(c), c.path) for c in chunks) if n]
    raw = Embedder()
    raw.load()
    raw.embed_documents(texts[:8])  # warm-up, as the pipeline's first batch also pays it
    tokens = sum(min(n + 2, raw.max_tokens) for n in raw.count_tokens(texts))
    started = time.perf_counter()
    raw.embed_documents(texts)
    return tokens / (time.perf_counter() - started), len(texts)


def run(src: Path, chunks: int, work: Path) -> dict:
    tree = work / f"stdlib-{chunks}"
    size = copy_tree(src, tree, chunks)
    db = work / f"index-{chunks}.db"
    reports: list[tuple[float, Progress]] = []
    worker = Worker(EngineConfig(db)).start()
    try:
        started = time.perf_counter()
        handle = worker.run(ops.index(tree, lambda p: reports.append((time.perf_counter() - started, p))))
        stats = handle.result()
    finally:
        worker.close()
    stage3_s = stats.stages["full"] - stats.stages["fast"]
    pipeline = stats.tokens_embedded / stage3_s if stage3_s > 0 else 0.0
    raw, sample = raw_tokens_per_s(db)
    return {
        "target_chunks": chunks,
        "bytes": size,
        "files": stats.files_indexed,
        "chunks": stats.chunks_total,
        "first_progress_s": round(reports[0][0], 3) if reports else None,
        "keyword_s": stats.stages["keyword"],
        "fast_s": stats.stages["fast"],
        "full_s": stats.stages["full"],
        "fast_chunks_per_s": round(stats.chunks_fast / max(1e-9, stats.stages["fast"] - stats.stages["keyword"])),
        "stage3_tokens_per_s": round(pipeline),
        "raw_tokens_per_s": round(raw),
        "raw_sample_texts": sample,
        "stage3_vs_raw": round(pipeline / raw, 3),
        "load_avg": round(os.getloadavg()[0], 2),
    }


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", type=Path, default=Path("/usr/lib/python3.11"))
    ap.add_argument("--sizes", default="1000,10000,25000", help="target chunk counts, comma-separated")
    ap.add_argument("--json", action="store_true", help="print only the JSON line")
    args = ap.parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory(prefix="quarry-bench-first-") as tmp:
        for chunks in (int(s) for s in args.sizes.split(",")):
            out = run(args.src, chunks, Path(tmp))
            results.append(out)
            if not args.json:
                print(
                    f"{out['chunks']:>6} chunks ({out['files']} files): first progress {out['first_progress_s']} s, "
                    f"keyword {out['keyword_s']} s, fast {out['fast_s']} s, full {out['full_s']} s; stage 3 "
                    f"{out['stage3_tokens_per_s']} tokens/s vs raw {out['raw_tokens_per_s']} "
                    f"({out['stage3_vs_raw']}); load {out['load_avg']}",
                    flush=True,
                )
    print(json.dumps(results))
    return results


if __name__ == "__main__":
    main()
