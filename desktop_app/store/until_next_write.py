"""Values read from a store and kept until its change counter (Store.generation) moves: a write by this process
or, on the team index, by any."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Hashable, Iterator
from typing import Generic, TypeVar

_K = TypeVar("_K", bound=Hashable)
_V = TypeVar("_V")
_G = TypeVar("_G", bound=Hashable)


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


class PinnedGeneration(Generic[_G]):
    """The counter as the search under way first read it (Store.one_generation): read once inside `pinned`, by its
    scan threads too, and afresh outside it."""

    def __init__(self) -> None:
        self._value: _G | None = None

    def get(self, read: Callable[[], _G]) -> _G:
        value = self._value
        return read() if value is None else value

    @contextlib.contextmanager
    def pinned(self, read: Callable[[], _G]) -> Iterator[None]:
        if self._value is not None:  # a search inside a search: the outer one's counter
            yield
            return
        self._value = read()
        try:
            yield
        finally:
            self._value = None
