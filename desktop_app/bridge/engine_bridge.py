"""The async seam between the UI thread and the engine's worker thread.

The window runs every engine operation (worker/ops.py) with `await bridge.run(op)`: an awaitable wrapping
the worker's concurrent future on the running (qasync) loop, so the UI awaits results without blocking. The
bridge itself only starts, restarts and stops the worker, follows long writes and relays their signals.
Progress, change notices and page checks are emitted on the worker's threads and relayed through queued
connections, so `progressed`, `changed` and `checking` listeners always run on the UI thread; a write's notice
arrives before its awaitable completes.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

from PySide6.QtCore import QObject, Qt, Signal, Slot

from ..indexing.progress import Progress
from ..worker import ops
from ..worker.engine import EngineConfig
from ..worker.operations import Read, Write
from ..worker.worker import Worker

T = TypeVar("T")


class EngineNotStarted(RuntimeError):
    pass


class EngineBridge(QObject):
    progressed = Signal(object)  # Progress, on the UI thread
    indexing_changed = Signal(bool)  # whether any index run or re-embed is queued or running
    # A write changed the index (an index run, a watched folder's update, a scope removed, a re-embed):
    # ChangeNotice, on the UI thread.
    changed = Signal(object)
    # The index file is being read whole for damage before it is used (it is not as Quarry last left it):
    # PageCheck, on the UI thread, at the start, each second and at the end.
    checking = Signal(object)

    _progress_from_worker = Signal(object)
    _change_from_worker = Signal(object)
    _check_from_worker = Signal(object)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._worker: Worker | None = None
        self._config: EngineConfig | None = None
        # Index runs and re-embeds queued or running (long writes), by id.
        self._indexes: dict[int, Write] = {}
        self._starting: asyncio.Future | None = None  # the worker being started, awaited by early jobs
        self._progress_from_worker.connect(self._relay_progress, Qt.ConnectionType.QueuedConnection)
        self._change_from_worker.connect(self.changed, Qt.ConnectionType.QueuedConnection)
        self._check_from_worker.connect(self.checking, Qt.ConnectionType.QueuedConnection)

    @property
    def config(self) -> EngineConfig | None:
        return self._config

    @property
    def indexing(self) -> bool:
        return bool(self._indexes)

    @property
    def indexing_roots(self) -> set[str]:
        """The folders (resolved) of the index runs queued or running."""
        return {root for write in self._indexes.values() for root in write.roots}

    # --- lifecycle ------------------------------------------------------------------------------

    async def start(self, config: EngineConfig) -> None:
        """Open the store on a fresh worker thread (waiting for it off the UI thread). A re-embed it starts
        (the configured model differs from the index's) reports progress and can be cancelled like an index
        run."""
        worker = Worker(config, self._change_from_worker.emit, self._check_from_worker.emit)
        self._starting = asyncio.get_running_loop().run_in_executor(None, worker.start)
        await self._starting
        self._worker, self._config = worker, config
        if worker.needs_reembed:
            reembed = ops.reembed(self.report_progress)
            asyncio.ensure_future(self._follow(reembed, worker.run(reembed)))

    async def restart(self, config: EngineConfig) -> None:
        """Stop the current worker (cancelling any index run) and start one with `config`."""
        old = self._detach()
        if old is not None:
            await asyncio.get_running_loop().run_in_executor(None, old.close)
        await self.start(config)

    def shutdown(self) -> None:
        """Cancel index runs and stop the worker thread; blocks until it has stopped."""
        old = self._detach()
        if old is not None:
            old.close()

    def _detach(self) -> Worker | None:
        self.cancel_index()
        worker, self._worker = self._worker, None
        return worker

    # --- operations -----------------------------------------------------------------------------

    async def run(self, operation: Read[T] | Write[T]) -> T:
        """Run an engine operation (worker/ops.py) on the worker's thread and await its answer. A long write (an
        index run, a re-embed) counts as running for `indexing` and `cancel_index` from now until it ends."""
        future = (await self._ready()).run(operation)
        if isinstance(operation, Write) and operation.stop is not None:
            return await self._follow(operation, future)
        return await self._await(future)

    def report_progress(self, progress: Progress) -> None:
        """The progress sink to give a long write (ops.index, ops.reembed): called on the worker's thread, it
        arrives on `progressed` on the UI thread."""
        self._progress_from_worker.emit(progress)

    async def watch(self, root: Path | str) -> None:
        """Keep `root`'s index in step with its files while the engine runs; each update arrives on `changed`.
        Registered off the UI thread: setting up the watches walks the folder tree."""
        worker = await self._ready()
        await asyncio.get_running_loop().run_in_executor(None, worker.watch, root)

    def _follow(self, write: Write, future: Future) -> Coroutine[Any, Any, Any]:
        """Count a long write as running (for `indexing` and `cancel_index`) from now until it ends: before
        its first progress report can arrive, so none is taken for a late one."""
        key = id(write)
        self._indexes[key] = write
        if len(self._indexes) == 1:
            self.indexing_changed.emit(True)
        return self._until_done(key, write, future)

    async def _until_done(self, key: int, write: Write, future: Future) -> Any:
        try:
            return await self._await(future)
        except asyncio.CancelledError:
            write.cancel()  # nobody is waiting for this run any more (the window closed)
            raise
        finally:
            del self._indexes[key]
            if not self._indexes:
                self.indexing_changed.emit(False)

    def cancel_index(self) -> None:
        """Ask every queued or running index run and re-embed to stop at its next step."""
        for write in list(self._indexes.values()):
            write.cancel()

    # --- plumbing -------------------------------------------------------------------------------

    async def _ready(self) -> Worker:
        """The running worker; a job asked for while it is still starting (a query typed the moment the
        window appears) waits for it rather than failing."""
        starting = self._starting
        if self._worker is None and starting is not None and not starting.done():
            with contextlib.suppress(Exception):  # start() reports its own failure; here it only means "not running"
                await asyncio.shield(starting)
        if self._worker is None:
            raise EngineNotStarted("the engine is not running")
        return self._worker

    @staticmethod
    async def _await(future: Future) -> Any:
        # Cancelling the awaiting task cancels the job too if the worker has not started it yet.
        return await asyncio.wrap_future(future)

    @Slot(object)
    def _relay_progress(self, progress: Progress) -> None:
        self.progressed.emit(progress)
