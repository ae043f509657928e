"""Search-as-you-type: a short debounce, and sequence numbers so a superseded answer is never shown."""

from __future__ import annotations

import asyncio

from PySide6.QtCore import QObject, QTimer, Signal

from ..search.request import SearchRequest
from ..search.results import SearchResponse
from ..worker import ops
from .engine_bridge import EngineBridge

DEBOUNCE_MS = 150


class LiveSearch(QObject):
    """Runs the newest request only; `answered` and `failed` fire for the newest request only."""

    answered = Signal(int, object)  # sequence number, SearchResponse
    failed = Signal(int, object)  # sequence number, the exception (the window words it for the user)
    started = Signal(int)  # a request left the debounce and went to the worker

    def __init__(self, bridge: EngineBridge, debounce_ms: int = DEBOUNCE_MS, parent: QObject | None = None):
        super().__init__(parent)
        self._bridge = bridge
        self._seq = 0
        self._pending: SearchRequest | None = None
        self._task: asyncio.Task | None = None
        self._timer = QTimer(self, singleShot=True, interval=debounce_ms)
        self._timer.timeout.connect(self._fire)

    @property
    def seq(self) -> int:
        return self._seq

    @property
    def busy(self) -> bool:
        """A request waits for typing to pause, or its search has not answered yet."""
        return self._timer.isActive() or (self._task is not None and not self._task.done())

    @property
    def debounce_ms(self) -> int:
        return self._timer.interval()

    @debounce_ms.setter
    def debounce_ms(self, value: int) -> None:
        self._timer.setInterval(value)

    def schedule(self, request: SearchRequest) -> int:
        """Search for `request` once typing pauses; supersedes anything asked before."""
        self._supersede(request)
        self._timer.start()
        return self._seq

    def run_now(self, request: SearchRequest | None = None) -> asyncio.Task:
        """Search now for `request` (or the one waiting in the debounce); the task gives the response,
        or None when a newer request superseded it or it failed."""
        if request is not None:
            self._supersede(request)
        self._timer.stop()
        return self._fire()

    def clear(self) -> None:
        """Drop the waiting request and make any answer in flight stale."""
        self._supersede(None)
        self._timer.stop()

    def _supersede(self, request: SearchRequest | None) -> None:
        self._seq += 1
        self._pending = request
        if self._task is not None and not self._task.done():
            self._task.cancel()  # a job the worker has not started yet is dropped
        self._task = None

    def _fire(self) -> asyncio.Task:
        if self._task is None:
            self._task = asyncio.ensure_future(self._run(self._seq, self._pending))
        return self._task

    async def _run(self, seq: int, request: SearchRequest | None) -> SearchResponse | None:
        if request is None:
            return None
        self.started.emit(seq)
        try:
            response = await self._bridge.run(ops.search(request))
        except Exception as exc:  # reported for the window to word, never left to kill it
            error: Exception = exc
        else:
            if seq != self._seq:
                return None
            self.answered.emit(seq, response)
            return response
        if seq == self._seq:
            self.failed.emit(seq, error)
        return None
