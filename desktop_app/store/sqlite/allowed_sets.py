"""The chunk ids a search in some scopes under some filters may return, kept until the store next changes.

Both vector searches of a SQLite store (vector_index.py in memory, sign_index.py over sign bits) restrict their
scans to these sets, each up to 8 bytes a chunk (8 MB at a million chunks), and keep what they derive from one
(Selections) while it lasts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Generic, TypeVar

import numpy as np

from ..rows import NO_FILTER, HitFilter

if TYPE_CHECKING:
    from .store import SqliteStore

_KEPT = 16  # sets kept at once
_SELECTIONS = 32  # selections kept at once (two kinds of vector a set)

_T = TypeVar("_T")


class AllowedSets:
    def __init__(self, store: SqliteStore):
        self._store = store
        self._sets: dict[tuple, np.ndarray] = {}
        self._generation: tuple[int, int] | None = None

    def forget_unless(self, generation: tuple[int, int]) -> None:
        """Drop the sets when the store's places and files may have changed since they were made."""
        if generation != self._generation:
            self._sets.clear()
            self._generation = generation

    def get(self, scope_ids: Sequence[str], where: HitFilter = NO_FILTER) -> np.ndarray | None:
        """Sorted chunk ids searchable in these scopes under these filters; None when that is every chunk (no
        filter, every scope), which needs no SQL at all (~190 ms a million chunks, paid again after every write)."""
        if where == NO_FILTER and self._store.covers_all_scopes(scope_ids):
            return None
        key = (tuple(scope_ids), where)
        if key not in self._sets:
            if len(self._sets) >= _KEPT:
                self._sets.clear()
            self._sets[key] = self._store.scope_chunk_ids(scope_ids, where)
        return self._sets[key]


class Selections(Generic[_T]):
    """What a search derives from an allowed set for one kind of vector (the rows or entries it selects), kept
    while that very set is in use: keyed by the set's identity, which AllowedSets keeps until the next write.
    The search forgets them when its own rows change."""

    def __init__(self) -> None:
        self._made: dict[tuple[int, bool], tuple[np.ndarray, _T]] = {}

    def get(self, allowed: np.ndarray, names: bool, make: Callable[[], _T]) -> _T:
        cached = self._made.get((id(allowed), names))
        if cached is not None and cached[0] is allowed:
            return cached[1]
        if len(self._made) >= _SELECTIONS:
            self._made.clear()
        made = make()
        self._made[(id(allowed), names)] = (allowed, made)
        return made

    def clear(self) -> None:
        self._made.clear()
