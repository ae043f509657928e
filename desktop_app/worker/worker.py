"""The one thread that owns the store and the model, and the scheduler that runs every operation on it.

Operations (ops.py) wait in a priority queue: searches first, then other reads, then writes. A short
operation runs to its end. A long one (an index run, a re-embed, a warm-up) is a sequence of steps
(indexing/steps.py) that the scheduler drives: after each step, and while a step waits for the model's
thread or the thread reading files, it runs the reads waiting in the queue, never a write, so a search
typed during indexing runs when the current step ends. A cancelled write stops at its next step. Everything
that waits here waits on one condition: an operation queued, a step's future done, a stop asked for, the
worker closing.

Callers get a concurrent.futures.Future for each operation. Nothing else touches the store, with one
exception written in store/protocols.py: a search's vector lookups run on the scan pool while it waits.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
from collections.abc import Callable, Generator
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from ..indexing.indexer import IndexingError
from ..indexing.progress import PROGRESS_INTERVAL_S
from ..indexing.steps import Steps, Wait
from ..indexing.watcher import ChangeWatcher
from ..search.request import SearchError
from ..store.errors import ScopeRemoved
from ..store.rows import PageCheck
from . import ops
from .engine import Engine, EngineConfig
from .operations import FOLDER_BACK, FOLDER_GONE, UPDATE, Change, ChangeNotice, Read, Write

_log = logging.getLogger(__name__)
T = TypeVar("T")
# Failures that are the user's input or doing (a folder removed by another command), explained by the front end;
# other job failures go to the log too.
_USER_ERRORS = (SearchError, IndexingError, LookupError, ScopeRemoved)

PRIORITY_SEARCH = 0  # urgent reads: searches, the preview's lines, Quick Open
PRIORITY_READ = 1
PRIORITY_WRITE = 2


@dataclass(order=True)
class _Job:
    priority: int
    seq: int
    operation: Read | Write = field(compare=False)
    future: Future = field(compare=False)


class Worker:
    """The engine's thread and its queue of named operations.

    `on_change` hears one ChangeNotice after each write, and the watcher's FOLDER_GONE and FOLDER_BACK, on the
    worker's threads: a front end hands it over to its own.
    """

    def __init__(
        self,
        config: EngineConfig,
        on_change: Callable[[ChangeNotice], None] | None = None,
        on_check: Callable[[PageCheck], None] | None = None,
    ):
        """`on_change` hears of each write's end, `on_check` of the index file read whole for damage (opening an
        index that changed since it was last found sound takes that long); both from threads of the worker's."""
        self.config = config
        self._on_change = on_change
        self._on_check = on_check
        self._heap: list[_Job] = []
        self._cond = threading.Condition()
        self._seq = itertools.count()
        self._closing = False
        self._engine: Engine | None = None
        self._writes: set[Write] = set()  # long writes queued or running, stopped when the worker closes
        self._running: Write | None = None  # the long write whose steps are being driven
        self._thread = threading.Thread(target=self._run, name="quarry-worker", daemon=True)
        self._ready: Future = Future()
        # Set by start(): the configured model differs from the one the index's vectors were made with, so
        # the front end should run ops.reembed() (searches meanwhile use the old model's vectors).
        self.needs_reembed = False
        self._watcher: ChangeWatcher | None = None
        self._watched: set[str] = set()
        self._auto_jobs: dict[str, Future] = {}
        # Watched folders that changed while their update ran, with the paths seen changing (none: any of them).
        self._dirty: dict[str, set[str]] = {}
        self._checked_intact = False  # a write of this session found the index undamaged (see _execute)
        self._away: set[str] = set()  # watched folders not at their path now

    def start(self) -> Worker:
        """Start the thread and wait until the store is open; raises what opening it raised."""
        self._thread.start()
        self._ready.result()
        return self

    def run(self, operation: Read[T] | Write[T]) -> Future[T]:
        """Queue an operation (ops.py); its future gives what it returns (or raises). A long write stops at its
        next step once `operation.cancel()` is called."""
        if isinstance(operation, Write):
            priority = PRIORITY_WRITE
        else:
            priority = PRIORITY_SEARCH if operation.urgent else PRIORITY_READ
        future: Future[T] = Future()
        with self._cond:
            if self._closing:
                future.set_exception(RuntimeError("the worker has stopped"))
                return future
            if isinstance(operation, Write) and operation.stop is not None:
                self._writes.add(operation)
                operation.stop.listen(self._wake)
            heapq.heappush(self._heap, _Job(priority, next(self._seq), operation, future))
            self._cond.notify_all()
        return future

    # --- watched folders ------------------------------------------------------------------------

    def watch(self, root: Path | str) -> None:
        """Keep `root`'s index in step with its files: each burst of changes becomes one "update" write
        (coalesced: while one runs for a root, further changes queue exactly one more), announced by its
        change notice. When the folder is moved away or deleted a FOLDER_GONE notice says so; when a folder
        is at its path again, FOLDER_BACK, and an update of that folder. Returns once the watches are in place."""
        key = str(Path(root).expanduser().resolve())
        with self._cond:
            if self._watcher is None:
                self._watcher = ChangeWatcher(
                    self._changed, ignore=self.config.location.local_files(), on_presence=self._presence
                )
            self._watched.add(key)
        self._watcher.watch(Path(key))

    def _unwatch(self, root: str) -> None:
        with self._cond:
            self._watched.discard(root)
            self._dirty.pop(root, None)
            self._away.discard(root)
            watcher = self._watcher
        if watcher is not None:
            watcher.unwatch(root)

    def _presence(self, root: str, present: bool) -> None:
        with self._cond:
            if root not in self._watched or self._closing:
                return
            if present:
                self._away.discard(root)
            else:
                self._away.add(root)
        self._tell(ChangeNotice(FOLDER_BACK if present else FOLDER_GONE, Change(0), (root,)))
        if present:
            self._changed(root, set())  # files may have changed while it was away, or it is another folder

    def _changed(self, root: str, paths: set[str]) -> None:
        """The paths under a watched folder seen changing (none: any of them may have, as after the folder came
        back or the watcher's queue overflowed)."""
        with self._cond:
            if root not in self._watched or root in self._away or self._closing:
                return  # an update of a folder that is away would only fail; it runs when it is back
            running = self._auto_jobs.get(root)
            if running is not None and not running.done():
                # One more run after the current one sees every change.
                seen = self._dirty.get(root)
                if seen is None:
                    self._dirty[root] = set(paths)
                elif seen and paths:
                    seen |= paths
                else:
                    self._dirty[root] = set()  # any path may have changed
                return
            update = self.run(ops.update(root, frozenset(paths)))
            self._auto_jobs[root] = update
        update.add_done_callback(partial(self._auto_done, root))

    def _auto_done(self, root: str, _future: Future) -> None:
        with self._cond:
            paths = self._dirty.pop(root, None)
            if self._closing:
                return
        if paths is not None:
            self._changed(root, paths)

    def close(self, timeout: float | None = 30) -> None:
        with self._cond:
            self._closing = True
            watcher, self._watcher = self._watcher, None
            self._watched.clear()
            self._away.clear()
            writes = list(self._writes)
            self._cond.notify_all()
        for write in writes:
            write.cancel()
        if watcher is not None:
            watcher.close()
        if self._thread.is_alive():
            self._thread.join(timeout)

    # --- the thread -----------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            self._engine = Engine(self.config, self._on_check)
        except BaseException as exc:
            self._ready.set_exception(exc)
            self._fail_pending(exc)
            return
        self.needs_reembed = self._engine.needs_reembed
        self._ready.set_result(None)
        try:
            while True:
                job = self._next_job()
                if job is None:
                    return
                self._execute(job)
        finally:
            self._fail_pending(RuntimeError("the worker has stopped"))
            self._engine.close()

    def _next_job(self) -> _Job | None:
        with self._cond:
            while not self._heap and not self._closing:
                self._cond.wait()
            if self._closing:
                return None
            return heapq.heappop(self._heap)

    # --- the scheduler --------------------------------------------------------------------------

    def _drive(self, steps: Steps[T]) -> T:
        """Run a long operation's steps to its end, serving the reads queued after each step and while a step
        waits. Reads run here between steps, never inside one; a write never runs before this one ends."""
        try:
            waiting = next(steps)
            while True:
                self._serve_reads()
                if waiting is not None:
                    self._wait_for(waiting)
                waiting = steps.send(None)
        except StopIteration as end:
            return end.value

    def _wait_for(self, waiting: Wait) -> None:
        """Until `waiting`'s future is done or a stop is asked for, run each read as it is queued, and move the
        step's progress on every PROGRESS_INTERVAL_S."""
        waiting.future.add_done_callback(lambda _: self._wake())
        while True:
            with self._cond:
                while not (waiting.future.done() or self._read_queued() or self._stopping()):
                    if not self._cond.wait(PROGRESS_INTERVAL_S):
                        break  # time to report progress: elapsed time and rate move on while the model runs
            if waiting.future.done() or self._stopping():
                return
            self._serve_reads()
            waiting.tick()

    def _serve_reads(self) -> None:
        """Run the reads queued now, most urgent first, never a write."""
        while True:
            with self._cond:
                if not self._read_queued() or self._closing:
                    return
                job = heapq.heappop(self._heap)
            self._execute(job)

    def _read_queued(self) -> bool:
        return bool(self._heap) and self._heap[0].priority < PRIORITY_WRITE

    def _stopping(self) -> bool:
        """The running long write has been asked to stop (or the worker to close): its step goes on to stop."""
        running = self._running
        return self._closing or (running is not None and running.stop is not None and running.stop())

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def _execute(self, job: _Job) -> None:
        operation = job.operation
        try:
            if job.future.set_running_or_notify_cancel():
                self._execute_running(operation, job.future)
        finally:
            if isinstance(operation, Write):
                with self._cond:
                    self._writes.discard(operation)

    def _execute_running(self, operation: Read | Write, future: Future) -> None:
        try:
            assert self._engine is not None  # jobs run only once _run() has opened the engine
            if isinstance(operation, Write) and (operation.name != UPDATE or not self._checked_intact):
                # Nothing is written into a damaged index. A watched folder's updates (each file saved) rely on
                # the session's first check; an index run, a re-embed or a removal checks again, which reads
                # the whole file only when it is not as it was last found sound (0.85 s for a 684 MB index).
                self._engine.store.check_intact()
                self._checked_intact = True
            result = operation.run(self._engine)
            if isinstance(result, Generator):
                result = self._drive_as(operation, result)
            if isinstance(operation, Write):
                # Found sound before writing, so sound after this session's own writes: the next index run
                # (of this window, or a CLI run beside it) need not read it whole again.
                self._engine.store.remember_intact()
        except BaseException as exc:  # delivered to whoever awaits the job
            if not isinstance(exc, _USER_ERRORS):  # bad input is the front end's to explain; the rest is kept
                _log.error("engine operation %r failed", operation.name, exc_info=exc)
            result = exc
        # However it ended: the watches first, then the notice, then the future (whoever awaits it heard).
        self._unwatch_removed(operation)
        self._announce(operation, result)
        if isinstance(result, BaseException):
            future.set_exception(result)
        else:
            future.set_result(result)

    def _unwatch_removed(self, operation: Read | Write) -> None:
        """A folder a write names that is no longer in the index (removed by this write, or by another window or
        command before a watched folder's update) is no longer watched: a change on disk must not index it again."""
        if not isinstance(operation, Write) or self._engine is None:
            return
        with self._cond:
            watched = [root for root in operation.roots if root in self._watched]
        try:
            gone = [root for root in watched if self._engine.store.scope_for_root(Path(root)) is None]
        except Exception:  # the store failed the write too: its notice says so; the watches stay
            _log.exception("could not tell whether %s are still indexed", ", ".join(watched))
            return
        for root in gone:
            self._unwatch(root)

    def _drive_as(self, operation: Read | Write, steps: Steps[Any]) -> Any:
        """Drive a long operation's steps; a long write is the one `_stopping` asks about meanwhile."""
        if isinstance(operation, Read):
            return self._drive(steps)  # a warm-up: only a write's stop flag ends a wait early
        self._running = operation
        try:
            return self._drive(steps)
        finally:
            self._running = None

    def _announce(self, operation: Read | Write, result: Any) -> None:
        """One change notice after a write, whatever its outcome (a stopped or failed run keeps its batches),
        sent before its future resolves, so whoever awaits the write hears of the change first."""
        if isinstance(operation, Write):
            self._tell(ChangeNotice(operation.name, operation.changes, operation.roots, result))

    def _tell(self, notice: ChangeNotice) -> None:
        if self._on_change is not None:
            try:
                self._on_change(notice)
            except Exception:  # a listener's failure must not fail the write it heard of
                _log.exception("a change listener failed")

    def _fail_pending(self, exc: BaseException) -> None:
        with self._cond:
            jobs, self._heap = self._heap, []
        for job in jobs:
            if job.future.set_running_or_notify_cancel():
                job.future.set_exception(exc)


__all__ = ["EngineConfig", "Engine", "Worker", "ChangeNotice", "Change"]
