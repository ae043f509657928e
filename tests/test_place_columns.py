"""place_columns.py: a filter's allowed chunks as a mask over the scopes' places."""

from __future__ import annotations

import numpy as np

from desktop_app.store.place_columns import PlaceColumns
from desktop_app.store.rows import NO_FILTER, HitFilter


def _ids(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


# Places as (chunk type, symbol type, chunk ids, file ids); chunk 7 is in two files (two checkouts' places), and
# file 99's row was not read (a file gone between the two reads).
PLACES = [
    ("function", "method", _ids(7, 3, 12), _ids(10, 10, 20)),
    ("function", None, _ids(5, 99), _ids(30, 99)),
    ("type", "class", _ids(7, 1), _ids(20, 30)),
]
FILES = [("python", _ids(20, 10)), (None, _ids(30))]


def test_a_filter_allows_the_distinct_chunks_of_the_places_passing_it_in_order():
    columns = PlaceColumns.of(PLACES, FILES)
    assert columns.allowed(NO_FILTER).tolist() == [1, 3, 5, 7, 12]  # never chunk 99, whose file was not read
    assert columns.allowed(HitFilter(languages=("python",))).tolist() == [3, 7, 12]
    assert columns.allowed(HitFilter(languages=("go",))).tolist() == []
    assert columns.allowed(HitFilter(chunk_types=("function",))).tolist() == [3, 5, 7, 12]
    assert columns.allowed(HitFilter(symbol_types=("class", "method"))).tolist() == [1, 3, 7, 12]
    assert columns.allowed(HitFilter(chunk_types=("type",), globs=("a/*",)), [20]).tolist() == [7]
    assert columns.allowed(HitFilter(globs=("b/*",)), []).tolist() == []
    assert columns.allowed(NO_FILTER).dtype == np.int64


def test_filters_on_names_and_on_a_worktrees_changes_are_left_to_the_store():
    assert PlaceColumns.answers(HitFilter(languages=("go",), globs=("x",), chunk_types=("type",)))
    assert not PlaceColumns.answers(HitFilter(symbol_names=("main",)))
    assert not PlaceColumns.answers(HitFilter(changed_only=True))


def test_scopes_without_places_allow_nothing():
    assert PlaceColumns.of([], []).allowed(NO_FILTER).tolist() == []
    assert PlaceColumns.of([], FILES).allowed(HitFilter(languages=("python",))).tolist() == []
