"""Index progress snapshots and the 500 ms throttle that paces them."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Literal, get_args

from ..store.rows import OthersClaims

Phase = Literal["analyzing", "started", "in_progress", "completed", "cancelled"]
# Stage 1 writes every file's chunks and keyword index; stage 2 gives every chunk a vector of the fast
# (static) model; stage 3 one of the contextual model, replacing stage 2's in searches chunk by chunk.
Stage = Literal["keyword", "fast", "full"]
STAGES: tuple[Stage, ...] = get_args(Stage)
Step = Literal["chunks", "names", "outlines", "text"]  # see Progress.step
Task = Literal["index", "reembed"]
PROGRESS_INTERVAL_S = 0.5


@dataclass(frozen=True)
class Progress:
    phase: Phase
    root: str  # the folder indexed; for a re-embed, the model's id
    files_done: int = 0
    files_total: int = 0
    # While "analyzing": the files to consider that the walk of the folder has found so far (the Linux kernel's
    # walk takes seconds, which read "0/0 files" before).
    files_found: int = 0
    bytes_done: int = 0
    bytes_total: int = 0
    stage: Stage = "keyword"
    # What stages 2 and 3 embed now: "chunks"; "names" (stage 3's first step: the symbol names' vectors, which
    # chunks_embedded and chunks_total then count); or "outlines" (a contextual model's last step: each file's
    # outline vector, counted by outlines_done and outlines_total); or "text" (the chunks written moving into the
    # text index, after the first vectors; chunks_embedded and chunks_total count them). Rate and ETA are counted
    # from the step's start.
    step: Step = "chunks"
    chunks_embedded: int = 0  # in this step of the stage (stages 2 and 3)
    chunks_total: int = 0  # chunks (or names) this step has to embed
    tokens_embedded: int = 0
    # Stage 3's last step, once its chunks are done: each file's outline vector (indexing/outline_fill.py).
    outlines_done: int = 0
    outlines_total: int = 0
    # Stages 2 and 3 on a team index: this indexer has claimed all it could and waits for the chunks other
    # indexers hold claims on (they embed them, or their claims run out: a killed indexer's); None otherwise.
    awaiting: OthersClaims | None = None
    # Stage 1 on a team index: the files counted are those of this commit, which the run brings the repository's
    # shared base to before it indexes the checkout's own overlay (team_base.py); None otherwise.
    publishing: str | None = None
    elapsed_s: float = 0.0
    stage_elapsed_s: float = 0.0
    task: Task = "index"  # a folder, or every chunk again with a newly chosen model

    @property
    def chunks_per_s(self) -> float:
        return self.chunks_embedded / self.stage_elapsed_s if self.stage_elapsed_s > 0 else 0.0

    def measure(self) -> tuple[int, int]:
        """(done, total) of what the current step works through: bytes in stage 1, then chunks (or names), then
        the files' outlines."""
        if self.stage == "keyword":
            return self.bytes_done, self.bytes_total
        if self.step == "outlines":
            return self.outlines_done, self.outlines_total
        return self.chunks_embedded, self.chunks_total

    @property
    def eta_s(self) -> float | None:
        """Seconds left in this step, from its rate so far; None until there is a rate to go on."""
        done, total = self.measure()
        if done <= 0 or self.stage_elapsed_s <= 0 or total <= done:
            return None if total > done else 0.0
        return (total - done) * self.stage_elapsed_s / done

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
        task: Task = "index",
    ):
        self._sink = sink
        self._interval = interval_s
        self._clock = clock
        self._t0 = self._stage_t0 = clock()
        self._last_emit = float("-inf")
        self.current = Progress("analyzing", root, task=task)

    def update(self, **changes) -> None:
        changed = any(
            key in changes and changes[key] != getattr(self.current, key) for key in ("phase", "stage", "step")
        )
        if any(changes.get(key, getattr(self.current, key)) != getattr(self.current, key) for key in ("stage", "step")):
            self._stage_t0 = self._clock()
        self.current = replace(self.current, **changes)
        if changed:
            self._emit()
        else:
            self.tick()

    def tick(self) -> None:
        if self._clock() - self._last_emit >= self._interval:
            self._emit()

    def _emit(self) -> None:
        now = self._last_emit = self._clock()
        self.current = replace(self.current, elapsed_s=now - self._t0, stage_elapsed_s=now - self._stage_t0)
        if self._sink is not None:
            self._sink(self.current)
