"""Long work as steps: a generator that yields at each batch boundary, and while another thread works for it.

An index run, a re-embed or a warm-up is written as `Steps[T]`: a generator whose `yield None` says "a batch
is done: serve whoever waits, then go on" and whose `yield Wait(future)` says "the model's thread (or the
thread preparing files) is working for me: resume me when this future is done". Its return value is the
work's answer. The worker's scheduler (worker/worker.py) drives steps and runs waiting searches between them
and while a step waits; `run_to_end` drives them where nothing waits beside (a test, a benchmark).

Before this, long work called an `idle` hook that ran searches inside it, polling every 50 ms while the model
ran: reads ran nested inside writes and a search typed during indexing waited for the next poll.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Generator
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from .progress import PROGRESS_INTERVAL_S

T = TypeVar("T")


def _nothing() -> None:
    pass


@dataclass(frozen=True)
class Wait:
    """A step waiting for `future`, which another thread resolves; `tick` moves its progress report on while it
    waits (elapsed time and rate, every PROGRESS_INTERVAL_S)."""

    future: Future
    tick: Callable[[], None] = field(default=_nothing)


Steps = Generator[Wait | None, None, T]


def pause(seconds: float) -> Wait:
    """A wait of `seconds` (for other indexers of a shared store to finish what they claimed)."""
    future: Future[None] = Future()
    timer = threading.Timer(seconds, future.set_result, (None,))
    timer.daemon = True
    timer.start()
    return Wait(future)


def run_to_end(steps: Steps[T]) -> T:
    """Drive `steps` on this thread, blocking on each wait (ticking its progress every PROGRESS_INTERVAL_S, as the
    worker's scheduler does)."""
    try:
        waiting = next(steps)
        while True:
            if waiting is not None:
                while not wait([waiting.future], PROGRESS_INTERVAL_S, FIRST_COMPLETED).done:
                    waiting.tick()
            waiting = steps.send(None)
    except StopIteration as end:
        return end.value


class Handoff(Generic[T]):
    """Items a producer thread makes one after another, each taken by the consumer as a future it can wait on
    as a step (`Wait(handoff.take())`). The producer runs at most `ahead` items ahead of the consumer's takes;
    once the consumer closes the handoff the producer's next `put` says to stop."""

    def __init__(self, ahead: int) -> None:
        self.closed = threading.Event()
        self._room = threading.Semaphore(ahead)
        self._futures: queue.SimpleQueue[Future[T]] = queue.SimpleQueue()
        self._next: Future[T] = Future()
        self._futures.put(self._next)

    def put(self, item: T) -> bool:
        """Hand over `item` once there is room; False when the consumer has closed the handoff."""
        self._room.acquire()
        if self.closed.is_set():
            return False
        current, self._next = self._next, Future()
        self._futures.put(self._next)  # before `current` resolves: the consumer's next take finds it there
        current.set_result(item)
        return True

    def fail(self, exc: BaseException) -> None:
        """The producer failed: the consumer's next item raises `exc`."""
        self._next.set_exception(exc)

    def take(self) -> Future[T]:
        """The future of the next item. Call it again only once the last one is done."""
        self._room.release()
        return self._futures.get_nowait()

    def close(self) -> None:
        self.closed.set()
        self._room.release()  # a producer waiting for room wakes and stops
