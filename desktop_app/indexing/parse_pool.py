"""Parse processes for a big tree's stage 1: FilePrep.prepare (file_prep.py) in a pool of processes, the answers
in file order, a bounded number ahead of the writes. The index run keeps them for stage 2, whose fast model they run
too (fast_model_pool.py).

Processes, not threads: tree-sitter's parse and the chunker hold the GIL. Spawned, not forked: the process
indexing has threads (the model's, the watcher's, Qt's) whose held locks a fork would copy. A process takes ~0.4 s
to start (imports and the tokenizer), during which the run's own prep thread prepares the first files; a tree under
PARALLEL_MIN_BYTES is prepared on that thread alone. QUARRY_PARSE_PROCESSES sets the number of processes whatever
the tree's size (0: none; child_processes.py).

Measured on 2 cores, `quarry index --until keyword`, stage 1 (the chunks are identical either way): the Python
3.11 library (53 MB, 28,232 chunks) 9.07 s on the prep thread, 8.87 s with one process, 6.91 s with two. The
keyword stage with two processes against none, twice each, alternating (load ~1), once the prep thread worked
while they started: the stdlib's email (0.39 MB) 0.51 / 0.57 s against 0.22 / 0.22 s (the run also waits for
processes still starting when it ends), pydantic (1.8 MB) 0.83 / 0.86 s against 0.75 / 0.78 s, zod (2.1 MB) 1.11
/ 1.15 s against 1.13 / 1.22 s, commons-lang (3.9 MB) 1.19 / 1.20 s against 1.36 / 1.43 s. So one process per
core from 3 MB: the writing thread's share is the smaller one.
"""

from __future__ import annotations

import itertools
import multiprocessing
import threading
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from typing import TYPE_CHECKING

from tokenizers import Tokenizer

from ..embedding.token_counting import TokenCounter
from ..store.rows import FileState
from .child_processes import child_processes, end_with_parent
from .file_prep import FilePrep, Prepared, PrepSettings
from .file_selection import Candidate
from .step_times import StepTimes
from .syntax import parse_without_yielding

if TYPE_CHECKING:
    import numpy as np

PARALLEL_MIN_BYTES = 3 * 1024 * 1024  # to read; a bigger tree is prepared in processes
AHEAD_PER_PROCESS = 16  # files handed to the pool before their answers are taken


def parse_processes(todo_bytes: int) -> int:
    """How many parse processes a run with `todo_bytes` to read should start: 0 for a small tree, else one per
    core, unless QUARRY_PARSE_PROCESSES says."""
    return child_processes(todo_bytes >= PARALLEL_MIN_BYTES)


class ParsePool:
    def __init__(self, processes: int, settings: PrepSettings, tokenizer: Tokenizer):
        self.processes = processes
        self._ahead = processes * AHEAD_PER_PROCESS
        # What a process starts with comes through a queue, not with the process's start: a start waits until the
        # process has read all it is sent, which it does once its imports are done, and the tokenizer is ~0.5 MB
        # pickled (a worktree's main scope's file states can be more). Sent with the start, the processes started one
        # after the other and the pool took 0.48 s to make; the queue's own thread writes it meanwhile.
        context = multiprocessing.get_context("spawn")
        self._start: multiprocessing.Queue[tuple[PrepSettings, Tokenizer]] = context.Queue()
        for _ in range(processes):
            self._start.put((settings, tokenizer))
        self._pool = ProcessPoolExecutor(
            processes, mp_context=context, initializer=_start_child, initargs=(self._start,)
        )
        # One empty task a process: the pool spawns a process a task (on demand), so all of them start now, and
        # the first answer says a process is ready to take files.
        self._started = [self._pool.submit(_started) for _ in range(processes)]

    def prepare_all(
        self,
        todo: Iterable[tuple[Candidate, FileState | None]],
        times: StepTimes,
        halt: threading.Event,
        here: FilePrep | None = None,
    ) -> Iterator[Prepared]:
        """Each file of `todo` prepared, in order; the children's step seconds are added to `times`. With `here`,
        the files before a process is ready to take them are prepared by it, on the calling thread: a process
        takes ~0.4 s to start, three of them on two cores then (commons-lang: 9 to 22 of its 259 files prepared
        here, the processes' first answer 0.40-0.44 s after the pool was made, the last ~0.8 s later)."""
        items = iter(todo)
        if here is not None:
            for cand, state in items:
                if halt.is_set():
                    return
                if any(f.done() for f in self._started):
                    items = itertools.chain([(cand, state)], items)
                    break
                yield here.prepare(cand, state)
        window: deque[Future[tuple[Prepared, dict[str, float]]]] = deque()
        for cand, state in items:
            if halt.is_set():
                return
            window.append(self._pool.submit(_prepare_in_child, cand, state))
            if len(window) >= self._ahead:
                yield _taken(window.popleft(), times)
        while window and not halt.is_set():
            yield _taken(window.popleft(), times)

    def submit(self, texts: list[str]) -> Future[tuple[np.ndarray, float]]:
        """The texts' vectors by the fast model (the processes of stage 1 serve stage 2: fast_model_pool.py), and
        the seconds the model took."""
        from .fast_model_pool import embed_in_child  # numpy and the model: for stage 2, not a process's start

        return self._pool.submit(embed_in_child, texts)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._start.cancel_join_thread()  # what a process that never started did not read is dropped
        self._start.close()


def _taken(future: Future[tuple[Prepared, dict[str, float]]], times: StepTimes) -> Prepared:
    prepared, seconds = future.result()  # raises what preparing the file raised
    for step, spent in seconds.items():
        times.add(step, spent)
    return prepared


# --- in a parse process ------------------------------------------------------------------------------

_child: FilePrep | None = None


def _start_child(start: multiprocessing.Queue[tuple[PrepSettings, Tokenizer]]) -> None:
    global _child

    end_with_parent()  # first: a parent killed before its queue was written would leave this one waiting on it
    settings, tokenizer = start.get()  # one for each process (ParsePool)
    _child = FilePrep(settings, TokenCounter(tokenizer), StepTimes())  # as the embedder's count_tokens
    parse_without_yielding()


def _started() -> None:
    """Nothing: its answer says the process that ran it has started."""


def _prepare_in_child(cand: Candidate, state: FileState | None) -> tuple[Prepared, dict[str, float]]:
    assert _child is not None  # the pool's initializer made it
    _child.times = StepTimes()
    return _child.prepare(cand, state), _child.times.totals()
