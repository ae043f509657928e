"""Running the embedding model off the worker thread, in slices.

The model runs on a thread of its own (ONNX Runtime releases the GIL) while the worker thread
waits; while it waits it calls `idle` to serve searches, and between slices it checks for a
cancel. A slice is bounded in padded tokens so neither a search nor a cancel waits long.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

import numpy as np

from ..embedding import Embedder

SLICE_TOKENS = 4096


class ModelRunner:
    def __init__(self, embedder: Embedder, idle: Callable[[], None] | None = None):
        self.embedder = embedder
        self._idle = idle or (lambda: None)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="quarry-model")

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def embed(self, texts: list[str], tokens: list[int], stop: Callable[[], bool],
              tick: Callable[[], None] = lambda: None) -> np.ndarray | None:
        """Vectors for `texts` (token counts in `tokens`), or None when stopped first."""
        out = np.zeros((len(texts), self.embedder.dims), dtype=np.float32)
        order = sorted(range(len(texts)), key=tokens.__getitem__)
        for part in _slices(order, tokens, SLICE_TOKENS):
            if stop():
                return None
            future = self._pool.submit(self.embedder.embed_documents, [texts[i] for i in part])
            while True:
                try:
                    out[part] = future.result(timeout=0.05)
                    break
                except FutureTimeout:
                    self._idle()
                    tick()
        return out


def _slices(order: list[int], tokens: list[int], budget: int) -> Iterator[list[int]]:
    """Consecutive runs of `order` whose padded size (count x longest) stays within `budget`."""
    part: list[int] = []
    longest = 0
    for i in order:
        longest_next = max(longest, tokens[i] + 2)
        if part and longest_next * (len(part) + 1) > budget:
            yield part
            part, longest_next = [], tokens[i] + 2
        part.append(i)
        longest = longest_next
    if part:
        yield part
