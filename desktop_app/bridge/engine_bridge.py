"""The async seam between the UI thread and the engine's worker thread.

Every call returns an awaitable wrapping the worker's concurrent future on the running (qasync)
loop, so the UI awaits results without blocking. Progress and change notices are emitted on the
worker's threads and relayed through queued connections, so `progressed` and `changed` listeners
always run on the UI thread; a write's notice arrives before its awaitable completes.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal, Slot

from ..indexing.indexer import IndexStats
from ..indexing.progress import Progress
from ..search.request import SearchRequest
from ..search.results import SearchResponse
from ..store.rows import FileState, HistoryEntry, Hit, Scope, ScopeSummary
from ..worker.dropped_paths import DroppedPath
from ..worker.worker import EngineConfig, IndexHandle, Worker


class EngineNotStarted(RuntimeError):
    pass


class EngineBridge(QObject):
    progressed = Signal(object)  # Progress, on the UI thread
    indexing_changed = Signal(bool)  # whether any index run or re-embed is queued or running
    # A write changed the index (an index run, a watched folder's update, a scope removed, a re-embed):
    # ChangeNotice, on the UI thread.
    changed = Signal(object)

    _progress_from_worker = Signal(object)
    _change_from_worker = Signal(object)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._worker: Worker | None = None
        self._config: EngineConfig | None = None
        # Index runs and re-embeds queued or running: (the folder, or None for a re-embed, and the handle).
        self._indexes: dict[int, tuple[str | None, IndexHandle]] = {}
        self._starting: asyncio.Future | None = None  # the worker being started, awaited by early jobs
        self._progress_from_worker.connect(self._relay_progress, Qt.ConnectionType.QueuedConnection)
        self._change_from_worker.connect(self.changed, Qt.ConnectionType.QueuedConnection)

    @property
    def config(self) -> EngineConfig | None:
        return self._config

    @property
    def indexing(self) -> bool:
        return bool(self._indexes)

    @property
    def indexing_roots(self) -> set[str]:
        """Roots (as passed to `index`) of the index jobs queued or running."""
        return {root for root, _ in self._indexes.values() if root is not None}

    # --- lifecycle ------------------------------------------------------------------------------

    async def start(self, config: EngineConfig) -> None:
        """Open the store on a fresh worker thread (waiting for it off the UI thread). A re-embed it starts
        (the configured model differs from the index's) reports progress and can be cancelled like an index
        run."""
        worker = Worker(config, self._change_from_worker.emit)
        self._starting = asyncio.get_running_loop().run_in_executor(None, worker.start)
        await self._starting
        self._worker, self._config = worker, config
        if worker.needs_reembed:
            asyncio.ensure_future(self._follow(None, worker.reembed(self._progress_from_worker.emit)))

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

    # --- jobs -----------------------------------------------------------------------------------

    async def search(self, request: SearchRequest) -> SearchResponse:
        return await self._await((await self._ready()).search(request))

    async def watch(self, root: Path | str) -> None:
        """Keep `root`'s index in step with its files while the engine runs; each update arrives on `changed`.
        Registered off the UI thread: setting up the watches walks the folder tree."""
        worker = await self._ready()
        await asyncio.get_running_loop().run_in_executor(None, worker.watch, root)

    async def index(self, root: Path | str) -> IndexStats:
        """Index (or incrementally re-index) `root`; progress arrives on `progressed`."""
        handle = (await self._ready()).index(root, self._progress_from_worker.emit)
        return await self._follow(str(root), handle)

    def _follow(self, root: str | None, handle: IndexHandle) -> Coroutine[Any, Any, Any]:
        """Count a long write as running (for `indexing` and `cancel_index`) from now until it ends: before
        its first progress report can arrive, so none is taken for a late one."""
        key = id(handle)
        self._indexes[key] = (root, handle)
        if len(self._indexes) == 1:
            self.indexing_changed.emit(True)
        return self._until_done(key, handle)

    async def _until_done(self, key: int, handle: IndexHandle) -> Any:
        try:
            return await self._await(handle.future)
        except asyncio.CancelledError:
            handle.cancel()  # nobody is waiting for this run any more (the window closed)
            raise
        finally:
            del self._indexes[key]
            if not self._indexes:
                self.indexing_changed.emit(False)

    def cancel_index(self) -> None:
        """Ask every queued or running index run and re-embed to stop at its next batch boundary."""
        for _, handle in list(self._indexes.values()):
            handle.cancel()

    async def scopes(self) -> list[ScopeSummary]:
        return await self._await((await self._ready()).scopes())

    async def read_lines(
        self, path: Path | str, sha256: str, start_line: int, end_line: int, context: int
    ) -> tuple[int, int, str, str] | None:
        return await self._await((await self._ready()).read_lines(path, sha256, start_line, end_line, context))

    async def remove_scope(self, root: Path | str) -> int:
        """Remove an indexed folder from the index; its change notice follows on `changed`."""
        return await self._await((await self._ready()).remove_scope(root))

    async def find_files(self, scope: Scope, query: str) -> list[FileState]:
        return await self._await((await self._ready()).find_files(scope, query))

    async def languages(self, scope: Scope) -> list[tuple[str, int]]:
        return await self._await((await self._ready()).languages(scope))

    async def find_symbols(self, scope: Scope, query: str) -> list[Hit]:
        return await self._await((await self._ready()).find_symbols(scope, query))

    async def history(self, limit: int = 50) -> list[HistoryEntry]:
        """The most recent searches recorded (Enter in the window, every CLI search), newest first."""
        return await self._await((await self._ready()).history(limit))

    async def inspect_path(self, path: Path | str) -> DroppedPath:
        return await self._await((await self._ready()).inspect_path(path))

    async def load_model(self) -> tuple[str, str]:
        """Load the embedding model and the index's vectors now, so the first search does not wait for
        them; (model id, provider). Raises ModelError when there is no usable model (searches then fall
        back to exact matching)."""
        return await self._await((await self._ready()).warm_up())

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
