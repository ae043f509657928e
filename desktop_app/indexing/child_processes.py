"""The processes an index run starts beside itself for a big tree: how many, and that they end with it.

Two kinds (each a pool of spawned processes, one per core by default): parse processes for stage 1 (parse_pool.py),
which then serve stage 2's fast model too, and the fast model's own for a stage 2 that follows no stage-1 work
(fast_model_pool.py). QUARRY_PARSE_PROCESSES sets the number of both whatever the
tree's size (0: none, the run's own threads do the work).
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import threading

from .indexing_error import IndexingError

PROCESSES_ENV = "QUARRY_PARSE_PROCESSES"
MAX_PROCESSES = 8


class ParseProcessesInvalid(IndexingError):
    """QUARRY_PARSE_PROCESSES is not a whole number of processes."""


def child_processes(big: bool) -> int:
    """How many processes a step should start: 0 unless its work is `big`, then one per core (at most
    MAX_PROCESSES), unless QUARRY_PARSE_PROCESSES says."""
    configured = os.environ.get(PROCESSES_ENV, "").strip()
    if configured:
        if not configured.isdigit():
            raise ParseProcessesInvalid(f"{PROCESSES_ENV} must be a whole number of processes (got {configured!r})")
        return int(configured)
    if not big:
        return 0
    cores = os.cpu_count() or 1
    return min(cores, MAX_PROCESSES) if cores > 1 else 0


def end_with_parent() -> None:
    """In a child process: end as soon as the process that started it ends. A child outlives an indexing process
    killed outright (SIGKILL, a crash): it sleeps on a queue no one will feed, holding ~190 MB, until killed by
    hand."""
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(target=_end_with, args=(parent.sentinel,), name="quarry-parent-watch", daemon=True).start()


def _end_with(sentinel: int) -> None:
    multiprocessing.connection.wait([sentinel])  # ready once the parent process has ended
    os._exit(1)
