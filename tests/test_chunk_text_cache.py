"""Text search's cache of chunk texts (search/chunk_text_cache.py): what it gives is what the store holds, a
chunk read again is not read from the store, and it keeps no more than its budget."""

from __future__ import annotations

from collections.abc import Sequence

from desktop_app.search.chunk_text_cache import ChunkTextCache
from desktop_app.store.rows import ChunkId
from desktop_app.store.sqlite.store import SqliteStore

from .test_text_compression import Library, _library_files


class CountingStore(SqliteStore):
    """A real store that remembers which chunks were read from it."""

    def __init__(self, path):
        super().__init__(path)
        self.read: list[ChunkId] = []

    def chunk_texts(self, chunk_ids: Sequence[ChunkId]) -> dict[ChunkId, str]:
        self.read += chunk_ids
        return super().chunk_texts(chunk_ids)


def test_the_cache_gives_the_stored_text_reads_each_chunk_once_and_keeps_to_its_budget(tmp_path):
    store = CountingStore(tmp_path / "index.db")
    library = Library(store)
    ids = library.write(_library_files(0, 40))  # compressed: the store's text, decompressed
    try:
        budget = sum(len(library.texts[i]) for i in ids[:100])
        cache = ChunkTextCache(store, budget)
        assert cache.texts(ids[:100]) == {i: library.texts[i] for i in ids[:100]}
        assert store.read == ids[:100]
        assert cache.texts(ids[50:100]) == {i: library.texts[i] for i in ids[50:100]}
        assert store.read == ids[:100]  # all kept: nothing read again
        assert cache.texts([*ids[90:110], ChunkId(10**9)]) == {i: library.texts[i] for i in ids[90:110]}
        assert store.read == [*ids[:100], *ids[100:110], ChunkId(10**9)]  # only what it lacked
        # Over budget, the least recently read went first: the first read, not the last.
        store.read.clear()
        cache.texts(ids[90:110])
        assert store.read == []
        cache.texts([ids[0]])
        assert store.read == [ids[0]]
    finally:
        store.close()
