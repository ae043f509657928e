"""The chunk-id array helpers both stores hand searches: sorted, distinct ids, and membership among them."""

from __future__ import annotations

import numpy as np

from desktop_app.store.id_arrays import among, distinct_sorted


def test_distinct_sorted_gives_each_id_once_in_ascending_order():
    rng = np.random.default_rng(5)
    ids = rng.integers(0, 500, 2_000)
    assert distinct_sorted(ids).tolist() == sorted(set(ids.tolist()))
    assert distinct_sorted(np.array([7], dtype=np.int64)).tolist() == [7]
    assert distinct_sorted(np.zeros(0, dtype=np.int64)).tolist() == []


def test_among_tells_which_ids_a_sorted_set_holds_as_isin_does():
    """A walk's candidates checked against a filter's allowed chunks: ids below, inside and past the set's range,
    repeated, and an empty set."""
    rng = np.random.default_rng(6)
    allowed = distinct_sorted(rng.integers(100, 10_000, 3_000))
    ids = np.concatenate([rng.integers(0, 11_000, 1_000), allowed[:5], [0, 99, 10_000, 2**40]])
    assert among(ids, allowed).tolist() == np.isin(ids, allowed).tolist()
    assert among(ids, np.zeros(0, dtype=np.int64)).tolist() == [False] * len(ids)
    assert among(np.zeros(0, dtype=np.int64), allowed).tolist() == []
