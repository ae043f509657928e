"""How well chunk text compresses, each chunk alone, by the ways store/sqlite/text_codec.py chose between.

    python tests/benchmarks/bench_text_codec.py INDEX.db [--sample 30000] [--batch 8192]

Reads an index's chunk text (as written: compressed chunks decompressed) in the order it was written, and prints
for each way the compressed size as a share of the text and the microseconds to decompress a chunk:
  zlib               level 6, no dictionary
  zstd               level 3 (text_codec.LEVEL), no dictionary
  zstd, early dict   one dictionary trained on the first chunks (what a store could train once, early), on a
                     sample from the rest of the index
  zstd, batch dicts  text_codec's own: each batch of --batch chunks with its dictionary (text_codec.train), the
                     dictionary counted in the share, at three places (start, middle, end)
The first two run on the same sample, drawn from the whole index (seeded). The last line printed is a JSON object.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import apsw
import zstandard

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from desktop_app.store.sqlite import text_codec  # noqa: E402

EARLY_CHUNKS = 40_000


def _texts(db: Path) -> list[bytes]:
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    text_codec.ChunkTextCodec(conn)
    try:
        return [r[0].encode() for r in conn.execute(f"SELECT {text_codec.UNPACK}(text) FROM chunk ORDER BY id")]
    finally:
        conn.close()


def _measure(
    texts: list[bytes], compress: Callable[[bytes], bytes], decompress: Callable[[bytes], bytes], extra: int = 0
) -> dict[str, float]:
    """Share of the texts' size (a chunk that would grow stays as it was; `extra` bytes added, a dictionary's)
    and decompression microseconds a chunk."""
    packed = [compress(t) for t in texts]
    start = time.perf_counter()
    for p in packed:
        decompress(p)
    seconds = time.perf_counter() - start
    size = sum(min(len(p), len(t)) for p, t in zip(packed, texts, strict=True)) + extra
    return {"share": round(size / sum(map(len, texts)), 3), "decompress_us": round(seconds / len(texts) * 1e6, 2)}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("db", type=Path)
    ap.add_argument("--sample", type=int, default=30_000, help="chunks in the sample of the first three ways")
    ap.add_argument("--batch", type=int, default=8192, help="chunks in a batch (the indexer's largest)")
    args = ap.parse_args(argv)
    texts = [t for t in _texts(args.db) if t]
    rng = random.Random(7)
    sample = rng.sample(texts, min(args.sample, len(texts)))
    plain = zstandard.ZstdCompressor(level=text_codec.LEVEL, write_checksum=False)
    out: dict[str, object] = {
        "chunks": len(texts),
        "zlib": _measure(sample, lambda t: zlib.compress(t, 6), zlib.decompress),
        "zstd": _measure(sample, plain.compress, zstandard.ZstdDecompressor().decompress),
    }
    early = text_codec.train([t.decode() for t in texts[:EARLY_CHUNKS]], 1)
    rest = texts[EARLY_CHUNKS:]
    if early is not None and rest:
        far = rng.sample(rest, min(args.sample, len(rest)))
        reader = zstandard.ZstdDecompressor(dict_data=zstandard.ZstdCompressionDict(early))
        out["zstd, early dict"] = _measure(far, text_codec.compressor(early).compress, reader.decompress)
    batches = {}
    for label, at in (("start", 0), ("middle", len(texts) // 2), ("end", max(0, len(texts) - args.batch))):
        batch = texts[at : at + args.batch]
        data = text_codec.train([t.decode() for t in batch], 1)
        if data is not None:
            reader = zstandard.ZstdDecompressor(dict_data=zstandard.ZstdCompressionDict(data))
            batches[label] = _measure(batch, text_codec.compressor(data).compress, reader.decompress, len(data))
    out["zstd, batch dicts"] = batches
    for way, figures in out.items():
        print(f"{way:20s} {figures}")
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
