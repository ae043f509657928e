"""Parse processes for a big tree's stage 1: FilePrep.prepare (file_prep.py) in a pool of processes, the answers
in file order, a bounded number ahead of the writes.

Processes, not threads: tree-sitter's parse and the chunker hold the GIL. Spawned, not forked: the process
indexing has threads (the model's, the watcher's, Qt's) whose held locks a fork would copy. A process starts in
about 0.3 s (imports and the tokenizer), so a tree under PARALLEL_MIN_BYTES is prepared on the run's own prep
thread. QUARRY_PARSE_PROCESSES sets the number of processes whatever the tree's size (0: none; child_processes.py).

Measured on 2 cores, `quarry index --until keyword`, stage 1 (the chunks are identical either way): the Python
3.11 library (53 MB, 28,232 chunks) 9.07 s on the prep thread, 8.87 s with one process, 6.91 s with two;
commons-lang (3.9 MB) 2.16 s on the prep thread, 2.50 s with two (their start-up does not pay back). So one
process per core: the writing thread's share is the smaller one.
"""

from __future__ import annotations

import multiprocessing
import threading
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor

from tokenizers import Tokenizer

from ..embedding.token_counting import TokenCounter
from ..store.rows import FileState
from .child_processes import child_processes, end_with_parent
from .file_prep import FilePrep, Prepared, PrepSettings
from .file_selection import Candidate
from .step_times import StepTimes
from .syntax import parse_without_yielding

PARALLEL_MIN_BYTES = 8 * 1024 * 1024  # to read; a bigger tree is prepared in processes
AHEAD_PER_PROCESS = 16  # files handed to the pool before their answers are taken


def parse_processes(todo_bytes: int) -> int:
    """How many parse processes a run with `todo_bytes` to read should start: 0 for a small tree, else one per
    core, unless QUARRY_PARSE_PROCESSES says."""
    return child_processes(todo_bytes >= PARALLEL_MIN_BYTES)


class ParsePool:
    def __init__(self, processes: int, settings: PrepSettings, tokenizer: Tokenizer):
        self._ahead = processes * AHEAD_PER_PROCESS
        self._pool = ProcessPoolExecutor(
            processes,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_child,
            initargs=(settings, tokenizer),
        )

    def prepare_all(
        self, todo: Iterable[tuple[Candidate, FileState | None]], times: StepTimes, halt: threading.Event
    ) -> Iterator[Prepared]:
        """Each file of `todo` prepared, in order; the children's step seconds are added to `times`."""
        window: deque[Future[tuple[Prepared, dict[str, float]]]] = deque()
        for cand, state in todo:
            if halt.is_set():
                return
            window.append(self._pool.submit(_prepare_in_child, cand, state))
            if len(window) >= self._ahead:
                yield _taken(window.popleft(), times)
        while window and not halt.is_set():
            yield _taken(window.popleft(), times)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def _taken(future: Future[tuple[Prepared, dict[str, float]]], times: StepTimes) -> Prepared:
    prepared, seconds = future.result()  # raises what preparing the file raised
    for step, spent in seconds.items():
        times.add(step, spent)
    return prepared


# --- in a parse process ------------------------------------------------------------------------------

_child: FilePrep | None = None


def _start_child(settings: PrepSettings, tokenizer: Tokenizer) -> None:
    global _child

    _child = FilePrep(settings, TokenCounter(tokenizer), StepTimes())  # as the embedder's count_tokens
    parse_without_yielding()
    end_with_parent()


def _prepare_in_child(cand: Candidate, state: FileState | None) -> tuple[Prepared, dict[str, float]]:
    assert _child is not None  # the pool's initializer made it
    _child.times = StepTimes()
    return _child.prepare(cand, state), _child.times.totals()
