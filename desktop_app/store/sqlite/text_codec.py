"""Chunk text kept compressed: zstd with a dictionary trained on each large batch of new chunks.

The chunk table's text was the largest part of a big index: 1,087 MB of the Linux kernel's 5.19 GB fast-stage
index, more than the 1,005 MB of source it came from. A chunk averages 355 bytes, too little for a compressor to
find repeats in alone, so a dictionary does the work, and it works best on code like the code it was trained on.
Chunks each compressed alone (`tests/benchmarks/bench_text_codec.py` on the kernel's index; in brackets on 90,673
chunks of semble-dev's repositories): zlib 53 % of their size (50 %); zstd without a dictionary 56 % (53 %); with
one dictionary trained on the first 40,000 chunks, what a store could train once and early, 50 % of the rest
(44 %); with a dictionary for each batch of 8,192, trained on 1,024 of its chunks and counted in, 38-43 %
(32-36 %). So a write of at least TRAIN_FROM new chunks trains its own dictionary (11 ms: COVER_SEGMENT; 16 ms
to compress 8,192 chunks) and keeps it in `text_dictionary`; a smaller write (the first batches of an index, a
watched file's change) uses the latest one, or none. Each compressed chunk names its dictionary in its zstd
frame. The kernel's whole text came to 37 % of its size. Rejected: one dictionary shipped with Quarry (51 % in a
trial with one trained on other packages' code, and it would carry verbatim fragments of their code); compressing
many chunks together (a chunk is read alone, and freeing one would mean rewriting the rest).

SQL sees three functions on the store's connection: `chunk_text_of(text)` (plain text as it is, a compressed
blob decompressed) for every statement that reads chunk text, `packed_text(text)` for the one that writes it,
and `text_dictionary_of(text)` for counting a dictionary's chunks, so that garbage collection can drop a
dictionary whose chunks are all gone. A dictionary never changes once committed and its id is never reused, so a
reader keeps the ones it has loaded.
"""

from __future__ import annotations

import functools

import apsw
import zstandard

from .connection import query_value

UNPACK = "chunk_text_of"
PACK = "packed_text"
DICTIONARY_OF = "text_dictionary_of"
TRAIN_FROM = 1024  # a write of this many new chunks or more trains a dictionary on this many of them
# A dictionary's size: a 64th of the text it is trained for, from 4 to 32 KB (a 32 KB one is ~1 % of a batch of
# 8,192 kernel chunks; 16 KB compressed that 1 point worse, 8 KB 2 points on a batch of 2,048).
DICTIONARY_SHARE = 64
DICTIONARY_BYTES = (4 << 10, 32 << 10)
# zstd's cover trainer with its segment and d-mer sizes given: left to choose them, it tries several of each, 2.5-4x
# the time for the same ratio. Batches of 4,096 of commons-lang's chunks and 8,192 of the kernel's (the share of
# the text left, default / these): 28.3 / 27.3 %, 27.3 / 27.2, 30.2 / 29.2; 40.6 / 40.2, 43.4 / 43.5, 39.6 /
# 39.5; the training 25-44 ms / 11-12 ms. (k=1024 or 2048 and d=6 did no better.) The trainings were 0.16 s of
# commons-lang's first index (py-spy), whose keyword stage takes about 1 s.
COVER_SEGMENT = 256
COVER_DMER = 8
LEVEL = 3  # level 9 gave 1 point of ratio for a quarter of the speed (38 against 156 MB/s)
KEPT_DICTIONARIES = 64  # decompressors a connection keeps (~100 KB each): a regex over the kernel meets 437


class ChunkTextCodec:
    """The store connection's SQL functions for chunk text and the dictionaries behind them."""

    def __init__(self, conn: apsw.Connection):
        self._conn = conn
        # The dictionaries' decompressors, loaded when a chunk first needs one (a committed dictionary never changes).
        self._decompressor = functools.lru_cache(maxsize=KEPT_DICTIONARIES)(self._load_decompressor)
        self._compressor: zstandard.ZstdCompressor | None = None
        self._compressor_source: tuple[int, bytes] | None = None  # the dictionary (id, data) it was made from
        self._packed = 0  # chunks compressed in this write
        # apsw's stubs type a scalar function as taking any number of SQLite values; each is called with one.
        conn.create_scalar_function(UNPACK, self.unpack, 1, deterministic=True)  # type: ignore[arg-type]
        conn.create_scalar_function(PACK, self.pack, 1)  # type: ignore[arg-type]
        conn.create_scalar_function(DICTIONARY_OF, dictionary_of, 1, deterministic=True)  # type: ignore[arg-type]

    def unpack(self, value: str | bytes | None) -> str | None:
        if not isinstance(value, bytes):  # plain text, or NULL (an outer join's missing chunk)
            return value
        return self._decompressor(_frame_dictionary(value)).decompress(value).decode()

    def pack(self, text: str) -> str | bytes:
        if self._compressor is None:
            return text
        raw = text.encode()
        packed = self._compressor.compress(raw)
        if len(packed) >= len(raw):
            return text
        self._packed += 1
        return packed

    def prepare_to_write(self, texts: list[str]) -> None:
        """Inside a write transaction, before `packed_text` runs over `texts`: train their dictionary, or take
        the latest one, read again each time (the write that trained the one kept may have rolled back)."""
        self._packed = 0
        source = self._train(texts) if len(texts) >= TRAIN_FROM else None
        if source is None:
            row = self._conn.execute("SELECT id, data FROM text_dictionary ORDER BY id DESC LIMIT 1").fetchone()
            source = None if row is None else (int(row[0]), bytes(row[1]))
        if source != self._compressor_source:
            self._compressor_source = source
            self._compressor = None
            if source is not None:
                self._compressor = compressor(source[1])

    def finish_write(self) -> None:
        """Inside the same transaction, after the insert: count the chunks the dictionary now serves (a chunk
        another process stored meanwhile is counted too; a count too high only keeps a dictionary longer)."""
        if self._packed and self._compressor_source is not None:
            self._conn.execute(
                "UPDATE text_dictionary SET chunks = chunks + ? WHERE id = ?",
                (self._packed, self._compressor_source[0]),
            )

    def release(self, chunk_ids_sql: str, args: tuple) -> None:
        """Before the chunks `chunk_ids_sql` selects are deleted: their dictionaries serve that many fewer."""
        self._conn.execute(
            f"WITH gone (id, n) AS (SELECT {DICTIONARY_OF}(text), count(*) FROM chunk "
            f"WHERE id IN ({chunk_ids_sql}) GROUP BY 1) "
            "UPDATE text_dictionary SET chunks = chunks - gone.n FROM gone WHERE text_dictionary.id = gone.id",
            args,
        )

    def drop_unused(self) -> None:
        """After releases: the dictionaries serving no chunk go, but for the latest (small writes use it)."""
        self._conn.execute(
            "DELETE FROM text_dictionary WHERE chunks <= 0 AND id < (SELECT max(id) FROM text_dictionary)"
        )

    def _train(self, texts: list[str]) -> tuple[int, bytes] | None:
        number = query_value(self._conn, int, "SELECT coalesce(max(id), 0) + 1 FROM text_dictionary")
        data = train(texts, number)
        if data is None:
            return None
        self._conn.execute("INSERT INTO text_dictionary (id, data, chunks) VALUES (?, ?, 0)", (number, data))
        return number, data

    def _load_decompressor(self, number: int) -> zstandard.ZstdDecompressor:
        row = self._conn.execute("SELECT data FROM text_dictionary WHERE id = ?", (number,)).fetchone()
        if row is None:
            raise apsw.CorruptError(f"a chunk's text needs text dictionary {number}, which the index does not have")
        return zstandard.ZstdDecompressor(dict_data=zstandard.ZstdCompressionDict(bytes(row[0])))


def train(texts: list[str], number: int) -> bytes | None:
    """Dictionary `number` for a write of `texts` (at least TRAIN_FROM), from TRAIN_FROM of them evenly spaced;
    None when zstd finds too little text to learn from (empty chunks)."""
    step = max(1, len(texts) // TRAIN_FROM)
    samples: list[bytes | bytearray | memoryview] = [t.encode() for t in texts[::step][:TRAIN_FROM] if t]
    size = min(max(sum(map(len, texts)) // DICTIONARY_SHARE, DICTIONARY_BYTES[0]), DICTIONARY_BYTES[1])
    try:
        return zstandard.train_dictionary(
            size, samples, k=COVER_SEGMENT, d=COVER_DMER, dict_id=number, level=LEVEL
        ).as_bytes()
    except zstandard.ZstdError:
        return None


def compressor(dictionary: bytes) -> zstandard.ZstdCompressor:
    """What compresses chunk text with `dictionary`: no checksum (SQLite checks its pages)."""
    return zstandard.ZstdCompressor(
        level=LEVEL, dict_data=zstandard.ZstdCompressionDict(dictionary), write_checksum=False
    )


def dictionary_of(value: str | bytes | None) -> int | None:
    """The id of the dictionary a compressed chunk text was made with; None for plain text (and NULL)."""
    return _frame_dictionary(value) if isinstance(value, bytes) else None


def _frame_dictionary(packed: bytes) -> int:
    return int(zstandard.get_frame_parameters(packed).dict_id)
