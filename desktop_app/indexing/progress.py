"""Index progress snapshots and the 500 ms throttle that paces them."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace

PHASES = ("analyzing", "started", "in_progress", "completed", "cancelled")
PROGRESS_INTERVAL_S = 0.5


@dataclass(frozen=True)
class Progress:
    phase: str  # one of PHASES
    root: str
    files_done: int = 0
    files_total: int = 0
    bytes_done: int = 0
    bytes_total: int = 0
    chunks_embedded: int = 0
    tokens_embedded: int = 0
    elapsed_s: float = 0.0

    @property
    def chunks_per_s(self) -> float:
        return self.chunks_embedded / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def eta_s(self) -> float | None:
        """Seconds left, from the byte rate so far; None until there is a rate to go on."""
        if self.bytes_done <= 0 or self.elapsed_s <= 0 or self.bytes_total <= self.bytes_done:
            return None if self.bytes_total > self.bytes_done else 0.0
        return (self.bytes_total - self.bytes_done) * self.elapsed_s / self.bytes_done

    def to_dict(self) -> dict:
        return {**asdict(self), "chunks_per_s": round(self.chunks_per_s, 2), "eta_s": self.eta_s}


class ProgressReporter:
    """Holds the running totals and calls `sink` on phase changes and at most every 500 ms otherwise.

    `clock` is injectable so the pacing can be tested without waiting on real time."""

    def __init__(
        self,
        sink: Callable[[Progress], None] | None,
        root: str,
        interval_s: float = PROGRESS_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ):
        self._sink = sink
        self._interval = interval_s
        self._clock = clock
        self._t0 = clock()
        self._last_emit = float("-inf")
        self.current = Progress("analyzing", root)

    def update(self, **changes) -> None:
        phase_changed = "phase" in changes and changes["phase"] != self.current.phase
        self.current = replace(self.current, **changes, elapsed_s=self._clock() - self._t0)
        if phase_changed:
            self._emit()
        else:
            self.tick()

    def tick(self) -> None:
        if self._clock() - self._last_emit >= self._interval:
            self.current = replace(self.current, elapsed_s=self._clock() - self._t0)
            self._emit()

    def _emit(self) -> None:
        self._last_emit = self._clock()
        if self._sink is not None:
            self._sink(self.current)
