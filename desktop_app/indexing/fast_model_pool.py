"""The fast model in processes: a big fill's texts embedded by the static model on every core.

The static model's embedding is Python and numpy that hold the GIL (static_model.py), and the worker thread beside
it reads the chunks and writes their vectors, so on the model's thread the two shared one core. Measured on two
cores, `quarry index --until fast` from a keyword-stage index, twice each, alternating (load ~1): the Linux
kernel's net/ (103,819 chunks) 10.8 / 10.9 s on the model's thread, 8.0 / 8.4 s in two processes; the Python
standard library without its tests (30,482 chunks) 2.9 / 3.7 s against 2.3 / 2.5 s, the processes' start
included. Below FAST_PROCESSES_MIN_CHUNKS the model's thread does it: the processes' start (~0.3 s) ate what
they gained on commons-lang (7,748 chunks: 0.87-0.98 s on the thread, 0.88-1.28 s in two processes, three runs each).

An index run whose stage 1 ran in parse processes (parse_pool.py) embeds in those, whatever the fill's size: they
are started already, and load the model with their first texts (embed_in_child). The fast stage's own time,
`quarry index --until fast`, alternating, six runs each (load ~1.5): commons-lang 0.92 -> 0.57 s, laravel-framework
(18,634 chunks) 1.99 -> 1.48 s. This pool is for the rest: a fast stage after no stage-1 work (a keyword-stage
index continued, a model's first run on an index).
"""

from __future__ import annotations

import multiprocessing
import time
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Protocol

import numpy as np

from ..embedding.static_model import StaticEmbedder
from .child_processes import child_processes, end_with_parent

FAST_PROCESSES_MIN_CHUNKS = 20_000


def fast_model_processes(chunks: int) -> int:
    """How many processes a fill of `chunks` chunks by the fast model should start (child_processes.py)."""
    return child_processes(chunks >= FAST_PROCESSES_MIN_CHUNKS)


class ModelProcesses(Protocol):
    """Processes that embed texts with the fast model: a pool of their own, or an index run's parse processes
    (parse_pool.py), which load the model at their first texts."""

    processes: int

    def submit(self, texts: list[str]) -> Future[tuple[np.ndarray, float]]:
        """The texts' vectors, and the seconds the model took."""
        ...


class FastModelPool:
    """Spawned processes each holding the fast model (spawned, not forked: see parse_pool.py)."""

    def __init__(self, processes: int):
        self.processes = processes
        self._pool = ProcessPoolExecutor(
            processes, mp_context=multiprocessing.get_context("spawn"), initializer=_start_child
        )

    def submit(self, texts: list[str]) -> Future[tuple[np.ndarray, float]]:
        """The texts' vectors, and the seconds the model took."""
        return self._pool.submit(embed_in_child, texts)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


# --- in a fast model's process ------------------------------------------------------------------------------

_model: StaticEmbedder | None = None


def _start_child() -> None:
    _loaded()  # with the process's start, not its first texts
    end_with_parent()


def _loaded() -> StaticEmbedder:
    global _model

    if _model is None:
        _model = StaticEmbedder()  # documents only: no query, so the contextual model never loads here
        _model.load()
    return _model


def embed_in_child(texts: list[str]) -> tuple[np.ndarray, float]:
    """In a process of either kind: the texts' vectors by the fast model, loaded first if need be, and the
    seconds it took to embed them."""
    model = _loaded()
    started = time.perf_counter()
    return model.embed_documents(texts), time.perf_counter() - started
