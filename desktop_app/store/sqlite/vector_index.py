"""An in-memory copy of one model's vectors, so a search needs no vector I/O.

sqlite-vec stays the store of record; a vec0 KNN with a scope restriction costs a few ms per query
even on small stores (~50 ms at 100K), and reading one vector back by rowid ~0.4 ms. Here the worker
keeps the code and symbol-name vectors compactly (see quantized_rows.py: the store's int8 codes as they
are, ~270 bytes a 256-dim vector and ~400 a 384-dim one; a store made before int8 codes keeps float32,
which gets a 4-bit residual beside its codes, ~590 bytes a 384-dim vector), appends new rows as indexing
writes them, and answers "nearest chunks among these ids" with an int8 scan of every row followed by
rescoring of a slightly longer shortlist: exact for stored codes, and for float32 rows recall@10 against
exact float32 search ~0.998 on random unit vectors, which are the hard case (real embeddings have far
larger gaps at the top). A model with more vectors than sign_index.SIGN_SEARCH_MIN is searched by their sign
bits instead (sign_index.py), which does not hold them all.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..rows import NO_FILTER, ChunkId, HitFilter
from .allowed_sets import AllowedSets, Selections
from .int8_matmul import Int8Dot
from .quantized_rows import QuantizedRows

if TYPE_CHECKING:
    from .store import SqliteStore

# A candidate set this much smaller than the matrix is kept as positions rather than a row mask.
_SPARSE_SHARE = 8
_SHORTLIST_EXTRA = 16


def shortlist_size(k: int) -> int:
    """How many coarse candidates to rescore for k results. int8 scores err by ~5e-4, which on random
    unit vectors moves the 10th best below ~20th at worst: k + 16 rescored gave recall@10 0.998, and
    k + 10 gave 0.9986 at k = 50, the same as 2k."""
    return k + max(_SHORTLIST_EXTRA, k // 4)


class VectorIndex:
    def __init__(self, store: SqliteStore, model_id: str, dims: int):
        self.store = store
        self.model_id = model_id
        self.dims = dims
        self._kernel = Int8Dot()
        self._code = QuantizedRows(dims, self._kernel)
        self._names = QuantizedRows(dims, self._kernel)
        self._generation: tuple[int, int] | None = None
        self._loading = False  # a budgeted refresh stopped before catching up (see `loading`)
        self._allowed = AllowedSets(store)
        # the rows an allowed set selects: None for all, positions, or a mask of the rows left out
        self._selections: Selections[np.ndarray | None] = Selections()
        # names -> (query, {row position: similarity}) rescored by the last nearest()
        self._rescored: dict[bool, tuple[np.ndarray, dict[int, float]]] = {}

    def refresh(self, budget_s: float | None = None) -> bool:
        """Catch up with the store: append new vectors, forget deleted ones, reload if rows appeared out of
        order. With a budget, stop after about that many seconds (at least one batch; 0: nothing new); rows
        arrive in id order, so the next call goes on where this one stopped. True when caught up."""
        generation = self.store.generation
        if generation == self._generation:
            return True
        if budget_s == 0:
            return False
        deadline = None if budget_s is None else time.perf_counter() + budget_s
        self._allowed.forget_unless(generation)  # the places and files the sets were made from changed
        self._selections.clear()
        self._rescored.clear()
        self._generation = None  # until caught up
        for names in (False, True):
            rows = self._rows(names)
            stored = self.store.vector_count(self.model_id, names)
            batches = self.store.iter_vectors(self.model_id, names, rows.last_id, codes=True)
            try:
                for ids, vectors in batches:
                    rows.extend([(ids, vectors)], stored - rows.live_count)
                    if deadline is not None and time.perf_counter() >= deadline:
                        self._loading = True
                        return False
            finally:
                batches.close()
            if rows.live_count != stored:
                self._reconcile(rows, names)
        self._generation = generation
        self._loading = False
        return True

    def ids(self) -> np.ndarray:
        """Ids of the chunks whose code vector is in memory (in the order they arrived)."""
        return self._code.live_ids()

    def holds_any(self) -> bool:
        return bool(self._code.live_count or self._names.live_count)

    @property
    def loading(self) -> bool:
        """A load in slices (a warm-up's budgeted refreshes) has begun and not caught up yet."""
        return self._loading

    @property
    def loaded_share(self) -> float:
        """How much of the store's vectors are in memory, 0..1 (1 once a refresh has caught up)."""
        if self._generation is not None:
            return 1.0
        held = self._code.live_count + self._names.live_count
        stored = self.store.vector_count(self.model_id) + self.store.vector_count(self.model_id, names=True)
        return min(1.0, held / stored) if stored else 1.0

    def _reconcile(self, rows: QuantizedRows, names: bool) -> None:
        """Catch up with vectors that did not arrive above the highest id held (a first index fills them
        in by priority, a re-embed by id), and forget those deleted."""
        stored = self.store.vector_ids(self.model_id, names)
        held = rows.live_ids()
        missing = np.setdiff1d(stored, held, assume_unique=True)  # each id once: not np.unique's slow pass
        if len(missing):
            rows.extend(self.store.vectors_by_id(self.model_id, names, missing, codes=True), len(missing))
        gone = np.setdiff1d(held, stored, assume_unique=True)
        if len(gone):
            rows.remove(gone)

    def _rows(self, names: bool) -> QuantizedRows:
        return self._names if names else self._code

    def allowed(self, scope_ids: Sequence[str], where: HitFilter = NO_FILTER) -> np.ndarray | None:
        """Sorted chunk ids searchable in these scopes under these filters (see allowed_sets.py)."""
        return self._allowed.get(scope_ids, where)

    def _selection(self, rows: QuantizedRows, allowed: np.ndarray | None, names: bool) -> np.ndarray | None:
        if allowed is None:  # every chunk: only the rows of deleted vectors are left out
            return None if rows.live_count == len(rows) else ~rows.live
        return self._selections.get(allowed, names, lambda: _selected(rows, allowed))

    def nearest(
        self, query: np.ndarray, allowed: np.ndarray | None, k: int, names: bool = False
    ) -> list[tuple[ChunkId, float]]:
        """(chunk id, cosine similarity) of the k allowed chunks (None: any) closest to `query`, best first."""
        rows = self._rows(names)
        if not len(rows):
            return []
        selection = self._selection(rows, allowed, names)
        wanted = shortlist_size(k)
        if selection is not None and selection.dtype != bool and len(selection) <= wanted:
            candidates = selection
        else:
            scores = rows.coarse(query)
            if selection is None:
                candidates = _top(scores, wanted)
            elif selection.dtype == bool:
                scores[selection] = -np.inf
                candidates = _top(scores, wanted)
                candidates = candidates[np.isfinite(scores[candidates])]
            else:
                candidates = selection[_top(scores[selection], wanted)]
        if not len(candidates):
            return []
        sims = rows.refine(query, candidates)
        self._rescored[names] = (query, dict(zip(candidates.tolist(), sims.tolist(), strict=True)))
        best = _top(sims, k)
        best = best[np.argsort(-sims[best], kind="stable")]
        ids = rows.ids
        return [(ChunkId(int(ids[candidates[i]])), float(sims[i])) for i in best]

    def similarities(
        self, query: np.ndarray, chunk_ids: Sequence[ChunkId], names: bool = False
    ) -> dict[ChunkId, float]:
        """Cosine similarity of each chunk that has a vector of this kind."""
        rows = self._rows(names)
        ids = np.asarray(chunk_ids, dtype=np.int64)
        pos, found = rows.positions(ids)
        ids, pos = ids[found].tolist(), pos[found].tolist()
        # The search that asks this has usually just rescored most of these chunks in nearest().
        last_query, known = self._rescored.get(names, (None, {}))
        if last_query is not query:
            known = {}
        missing = [p for p in pos if p not in known]
        known = {
            **known,
            **dict(zip(missing, rows.refine(query, np.array(missing, dtype=np.int64)).tolist(), strict=True)),
        }
        return {cid: known[p] for cid, p in zip(ids, pos, strict=True)}


def _selected(rows: QuantizedRows, allowed: np.ndarray) -> np.ndarray | None:
    """The rows of the allowed chunks: None for all, positions when few, else a mask of the rows left out."""
    pos, found = rows.positions(allowed)
    pos = pos[found]
    if len(pos) == len(rows):
        return None
    if len(pos) * _SPARSE_SHARE < len(rows):
        return pos
    left_out = np.ones(len(rows), dtype=bool)
    left_out[pos] = False
    return left_out


def _top(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k highest scores, in no particular order."""
    k = min(k, len(scores))
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    if k == len(scores):
        return np.arange(k)
    return np.argpartition(-scores, k - 1)[:k]
