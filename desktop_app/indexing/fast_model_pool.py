"""The fast model in processes: a big fill's texts embedded by the static model on every core.

The static model's embedding is Python and numpy that hold the GIL (static_model.py), and the worker thread beside
it reads the chunks and writes their vectors, so on the model's thread the two shared one core. Measured on two
cores, `quarry index --until fast` from a keyword-stage index, twice each, alternating (load ~1): the Linux
kernel's net/ (103,819 chunks) 10.8 / 10.9 s on the model's thread, 8.0 / 8.4 s in two processes; the Python
standard library without its tests (30,482 chunks) 2.9 / 3.7 s against 2.3 / 2.5 s, the processes' start
included. Below FAST_PROCESSES_MIN_CHUNKS the model's thread does it: the processes' start (~0.3 s) ate what
they gained on commons-lang (7,748 chunks: 0.87-0.98 s on the thread, 0.88-1.28 s in two processes, three runs each).
"""

from __future__ import annotations

import multiprocessing
import time
from concurrent.futures import Future, ProcessPoolExecutor

import numpy as np

from ..embedding.static_model import StaticEmbedder
from .child_processes import child_processes, end_with_parent

FAST_PROCESSES_MIN_CHUNKS = 20_000


def fast_model_processes(chunks: int) -> int:
    """How many processes a fill of `chunks` chunks by the fast model should start (child_processes.py)."""
    return child_processes(chunks >= FAST_PROCESSES_MIN_CHUNKS)


class FastModelPool:
    """Spawned processes each holding the fast model (spawned, not forked: see parse_pool.py)."""

    def __init__(self, processes: int):
        self.processes = processes
        self._pool = ProcessPoolExecutor(
            processes, mp_context=multiprocessing.get_context("spawn"), initializer=_start_child
        )

    def submit(self, texts: list[str]) -> Future[tuple[np.ndarray, float]]:
        """The texts' vectors, and the seconds the model took."""
        return self._pool.submit(_embed_in_child, texts)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


# --- in a fast model's process ------------------------------------------------------------------------------

_model: StaticEmbedder | None = None


def _start_child() -> None:
    global _model

    _model = StaticEmbedder()  # documents only: no query, so the contextual model never loads here
    _model.load()
    end_with_parent()


def _embed_in_child(texts: list[str]) -> tuple[np.ndarray, float]:
    assert _model is not None  # the pool's initializer made it
    started = time.perf_counter()
    return _model.embed_documents(texts), time.perf_counter() - started
