"""An LRU cache of query vectors, so repeated and as-you-type queries are embedded once."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

import numpy as np


class QueryEmbeddingCache:
    def __init__(self, embed: Callable[[str], np.ndarray], capacity: int = 512):
        self._embed = embed
        self._capacity = capacity
        self._items: OrderedDict[str, np.ndarray] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, query: str) -> np.ndarray:
        vec = self._items.get(query)
        if vec is not None:
            self._items.move_to_end(query)
            self.hits += 1
            return vec
        self.misses += 1
        vec = self._embed(query)
        self._items[query] = vec
        if len(self._items) > self._capacity:
            self._items.popitem(last=False)
        return vec
