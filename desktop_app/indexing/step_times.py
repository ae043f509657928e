"""Where an index run's time goes: seconds per step, for the index stats (their JSON form) and the fast-stage benchmark.

Steps run on different threads at once (the prep thread reads and chunks the next batch while the
worker writes this one; the model runs on a thread of its own), so the seconds of all steps can add
up to more than the run's wall time: each says how long that step kept its thread busy.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

# The steps, in the order a run goes through them (a step a run never entered is left out of its report):
#   walk      listing the folder and applying the ignore rules
#   read      reading files, hashing and decoding them
#   chunk     parsing (tree-sitter) and cutting files into chunks, counting the tokens of their lines
#   tokenise  counting the tokens of the chunks' document headers and hashing the documents
#   write     stage 1's store writes: files, chunks, keyword and text indexes
#   <stage>_embed, <stage>_write  a vector stage's model time and its store writes (fast, names, full)
STEPS = ("walk", "read", "chunk", "tokenise", "write")


class StepTimes:
    """Seconds per step, added to from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seconds: dict[str, float] = {}

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - started)

    def add(self, name: str, seconds: float) -> None:
        with self._lock:
            self._seconds[name] = self._seconds.get(name, 0.0) + seconds

    def totals(self) -> dict[str, float]:
        """The seconds per step, unrounded (to be added up elsewhere)."""
        with self._lock:
            return dict(self._seconds)

    def as_dict(self) -> dict[str, float]:
        with self._lock:
            return {name: round(seconds, 3) for name, seconds in self._seconds.items()}
