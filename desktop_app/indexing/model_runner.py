"""Running the embedding model off the worker thread, in slices.

The model runs on a thread of its own (ONNX Runtime releases the GIL) while the worker thread waits
for each slice as a step (steps.py), serving searches meanwhile, and between slices it checks for a
cancel. A slice is bounded in padded tokens so a cancel does not wait long. The fast model, which holds the
GIL, can run in processes instead (spread(), fast_model_pool.py): a batch is then cut into one slice a process.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ..embedding.text_embedder import TextEmbedder
from .fast_model_pool import FastModelPool, ModelProcesses
from .step_times import StepTimes
from .steps import Steps, Wait

SLICE_TOKENS = 4096


class ModelRunner:
    def __init__(
        self,
        embedder: TextEmbedder,
        times: StepTimes | None = None,
        step: str = "embed",
    ):
        """`times` gets the model's seconds as `step`."""
        self.embedder = embedder
        self._times = times or StepTimes()
        self._step = step
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="quarry-model")
        self._processes: ModelProcesses | None = None
        self._own: FastModelPool | None = None  # processes this runner started, and so ends

    def spread(self, processes: int, warm: ModelProcesses | None = None) -> None:
        """Embed in `warm` processes, started already, or else in `processes` processes of its own from now on
        (none: on the model's thread). The fast model only: each process holds one of its own (VectorFiller asks
        for them only for it)."""
        if self._processes is not None:
            return
        if warm is not None:
            self._processes = warm
        elif processes:
            self._processes = self._own = FastModelPool(processes)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        if self._own is not None:
            self._own.close()

    def submit(self, texts: list[str], tokens: list[int]) -> PendingVectors:
        """Queue `texts` (token counts in `tokens`) for the model, sorted by length into slices; the caller
        can prepare or write other work while they run."""
        if self._processes is not None:
            share = -(-len(texts) // self._processes.processes)
            parts = [list(range(start, min(start + share, len(texts)))) for start in range(0, len(texts), share)]
            return PendingVectors(
                len(texts), self.embedder.dims, [(p, self._processes.submit([texts[i] for i in p])) for p in parts]
            )
        order = sorted(range(len(texts)), key=tokens.__getitem__)
        slices = [
            (part, self._pool.submit(self._embed, [texts[i] for i in part]))
            for part in _slices(order, tokens, SLICE_TOKENS)
        ]
        return PendingVectors(len(texts), self.embedder.dims, slices)

    def _embed(self, texts: list[str]) -> tuple[np.ndarray, float]:
        started = time.perf_counter()
        return self.embedder.embed_documents(texts), time.perf_counter() - started

    def collect(
        self,
        pending: PendingVectors,
        stop: Callable[[], bool],
        tick: Callable[[], None] = lambda: None,
        done: Callable[[int], None] = lambda texts: None,
    ) -> Steps[np.ndarray | None]:
        """Wait for submitted vectors, slice by slice, telling `done` how many texts have their vectors after
        each slice (a batch takes seconds on a slow machine: progress moves within it); None (and the rest
        dropped) when stopped."""
        out = np.zeros((pending.count, pending.dims), dtype=np.float32)
        finished = 0
        for part, future in pending.slices:
            if not future.done():
                yield Wait(future, tick)
            if stop():
                pending.cancel()
                return None
            out[part], seconds = future.result()
            self._times.add(self._step, seconds)
            finished += len(part)
            done(finished)
        return out

    def embed(
        self, texts: list[str], tokens: list[int], stop: Callable[[], bool], tick: Callable[[], None] = lambda: None
    ) -> Steps[np.ndarray | None]:
        """Vectors for `texts` (token counts in `tokens`), or None when stopped first."""
        return (yield from self.collect(self.submit(texts, tokens), stop, tick))


@dataclass
class PendingVectors:
    count: int
    dims: int
    slices: list[tuple[list[int], Future[tuple[np.ndarray, float]]]]

    def cancel(self) -> None:
        for _, future in self.slices:
            future.cancel()


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
