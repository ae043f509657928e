"""Index throughput against the raw model, side by side in one run.

    python tests/benchmarks/bench_index.py PATH [--json]

Indexes PATH into a fresh store (walk, read, chunk, tokenize, embed, write), then embeds exactly
the texts that run embedded with the bare model in one call, and reports both rates and their ratio.
The last line printed is a JSON object. `ratio` compares wall-clock throughput (meaningful on a quiet
machine); `cpu_ratio` compares CPU seconds spent for the same tokens (raw / pipeline), which other
load on the machine hardly moves.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from desktop_app.embedding.embedder import Embedder  # noqa: E402
from desktop_app.indexing.documents import document_text, name_text  # noqa: E402
from desktop_app.indexing.file_selection import select_files  # noqa: E402
from desktop_app.indexing.indexer import Indexer  # noqa: E402
from desktop_app.indexing.source_reader import SkipFile, read_source  # noqa: E402
from desktop_app.store.sqlite.store import SqliteStore  # noqa: E402


def embedded_texts(root: Path, indexer: Indexer) -> list[str]:
    """The documents and symbol-name texts an index of `root` embeds (unique, as the indexer dedups)."""
    from desktop_app.indexing.chunking import chunk_file

    texts: dict[str, None] = {}
    names: list[str] = []
    for cand in select_files(root).candidates:
        try:
            source = read_source(cand.abs_path, indexer.options.selection)
        except SkipFile:
            continue
        for ch in chunk_file(
            source.text,
            cand.language,
            cand.rel_path,
            indexer.embedder.count_tokens,
            indexer.chunk_tokens,
            indexer.options.overlap_tokens,
        ):
            doc = document_text(ch, cand.rel_path)
            if doc not in texts:
                texts[doc] = None
                name = name_text(ch, cand.rel_path)
                if name:
                    names.append(name)
    return list(texts) + names


def cpu_seconds() -> float:
    """User + system CPU time of this process, all threads: a figure other load on the machine hardly moves."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("path", type=Path)
    ap.add_argument("--json", action="store_true", help="print only the JSON line")
    args = ap.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="quarry-bench-") as tmp:
        embedder = Embedder()
        embedder.load()
        store = SqliteStore(Path(tmp) / "index.db")
        indexer = Indexer(store, embedder)
        started, cpu0 = time.perf_counter(), cpu_seconds()
        stats = indexer.index(args.path)
        pipeline_s, pipeline_cpu = time.perf_counter() - started, cpu_seconds() - cpu0
        store.close()

        texts = embedded_texts(args.path.resolve(), indexer)
        tokens = sum(min(n + 2, embedder.max_tokens) for n in embedder.count_tokens(texts))
        raw = Embedder()  # a fresh session, all inference threads, nothing else running
        raw.load()
        raw.embed_documents(texts[:8])  # warm-up, as the pipeline's first batch also pays it
        started, cpu0 = time.perf_counter(), cpu_seconds()
        raw.embed_documents(texts)
        raw_s, raw_cpu = time.perf_counter() - started, cpu_seconds() - cpu0

    out = {
        "path": str(args.path),
        "files": stats.files_indexed,
        "chunks": stats.chunks_total,
        "texts_embedded": stats.chunks_embedded,
        "tokens_embedded": stats.tokens_embedded,
        "seconds": round(pipeline_s, 2),
        "tokens_per_s": round(stats.tokens_embedded / pipeline_s),
        "raw_texts": len(texts),
        "raw_tokens": tokens,
        "raw_seconds": round(raw_s, 2),
        "raw_tokens_per_s": round(tokens / raw_s),
        "ratio": round((stats.tokens_embedded / pipeline_s) / (tokens / raw_s), 3),
        "cpu_seconds": round(pipeline_cpu, 1),
        "raw_cpu_seconds": round(raw_cpu, 1),
        "cpu_ratio": round(raw_cpu / pipeline_cpu, 3),
        "load_avg": os.getloadavg()[0],
        "provider": stats.provider,
    }
    if not args.json:
        print(
            f"pipeline: {out['tokens_per_s']} tokens/s over {out['seconds']} s; raw model: "
            f"{out['raw_tokens_per_s']} tokens/s over {out['raw_seconds']} s; ratio {out['ratio']}"
        )
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
