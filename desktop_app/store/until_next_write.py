"""Values read from a store and kept until its change counter (Store.generation) moves: a write by this process
or, on the team index, by any."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

_K = TypeVar("_K", bound=Hashable)
_V = TypeVar("_V")


class UntilNextWrite(Generic[_K, _V]):
    """One round trip for the counter, instead of the read, while nothing changed; all dropped once it moves."""

    def __init__(self, generation: Callable[[], Hashable]):
        self._generation = generation
        self._seen: Hashable = None
        self._values: dict[_K, _V] = {}

    def get(self, key: _K, read: Callable[[], _V]) -> _V:
        generation = self._generation()
        if generation != self._seen:
            self._values.clear()
            self._seen = generation
        if key not in self._values:
            self._values[key] = read()
        return self._values[key]
