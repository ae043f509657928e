"""The chunk texts text search read lately, kept for the next search.

A pattern typed a letter at a time reads the same chunks again ("retu", then "return": the longer pattern's
candidates are among the shorter one's), and reading them is no longer free: the store keeps chunk text
compressed (store/sqlite/text_codec.py), ~1.2 us a chunk to decompress. A chunk's text never changes and its id
is never reused, so what is kept stays right across writes; the least recently read go first.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

from ..store.protocols import Store
from ..store.rows import ChunkId

# Characters kept (~1-2 bytes each in memory): the text of ~90,000 chunks of 355 characters.
CACHE_CHARACTERS = 32 << 20


class ChunkTextCache:
    def __init__(self, store: Store, budget: int = CACHE_CHARACTERS):
        self._store = store
        self._budget = budget
        self._texts: OrderedDict[ChunkId, str] = OrderedDict()
        self._size = 0

    def texts(self, chunk_ids: Sequence[ChunkId]) -> dict[ChunkId, str]:
        """{chunk id: text} of those of `chunk_ids` that are stored (as Store.chunk_texts)."""
        out: dict[ChunkId, str] = {}
        missing: list[ChunkId] = []
        for cid in chunk_ids:
            text = self._texts.get(cid)
            if text is None:
                missing.append(cid)
            else:
                self._texts.move_to_end(cid)
                out[cid] = text
        if missing:
            read = self._store.chunk_texts(missing)
            out.update(read)
            for cid, text in read.items():
                self._texts[cid] = text
                self._size += len(text)
            while self._size > self._budget:
                self._size -= len(self._texts.popitem(last=False)[1])
        return out
