"""Merging results that show the same lines of the same file."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def overlap_share(a: tuple[int, int], b: tuple[int, int]) -> float:
    """Overlapping lines as a share of the smaller of two inclusive line ranges."""
    shared = min(a[1], b[1]) - max(a[0], b[0]) + 1
    if shared <= 0:
        return 0.0
    return shared / min(a[1] - a[0] + 1, b[1] - b[0] + 1)


def merge_overlapping(
    ranked: Sequence[T],
    key: Callable[[T], tuple[str, int, int]],
    threshold: float,
    merge: Callable[[T, T], None],
    limit: int | None = None,
) -> list[T]:
    """Keep results in rank order, folding each into an earlier one from the same file that it
    overlaps by more than `threshold`; `merge(kept, dropped)` lets the kept one absorb labels.
    Stops once `limit` results are kept: what ranks below them cannot change them."""
    kept: list[T] = []
    by_file: dict[str, list[T]] = {}
    for item in ranked:
        if limit is not None and len(kept) >= limit:
            break
        path, start, end = key(item)
        into = next((k for k in by_file.get(path, ()) if overlap_share(key(k)[1:], (start, end)) > threshold), None)
        if into is None:
            kept.append(item)
            by_file.setdefault(path, []).append(item)
        else:
            merge(into, item)
    return kept


def merge_units(ranked: Sequence[T], unit: Callable[[T], str | None], merge: Callable[[T, T], None]) -> list[T]:
    """Fold each result into the earlier one of the same unit (`unit` gives its key, or None for none): the
    windows a long definition is cut into are one result, shown where its best window ranks."""
    kept: list[T] = []
    first: dict[str, T] = {}
    for item in ranked:
        key = unit(item)
        into = first.get(key) if key is not None else None
        if into is None:
            kept.append(item)
            if key is not None:
                first[key] = item
        else:
            merge(into, item)
    return kept
