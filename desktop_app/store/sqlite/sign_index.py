"""A large index's vectors searched by their sign bits, with exact scores read from the store.

vector_index.py holds every vector's int8 codes in memory: on the Linux kernel's index (2.97M code and 1.86M
name vectors of the static model) a fresh process spent 5 s and 1.7 GB loading them before its first answer by
meaning. Here only the sign bits are held (sign_packs.py: 32 bytes a 256-dim vector, 8 bytes of id beside it),
and a search
1. ranks every allowed vector by the Hamming distance of its signs to the query's (~17 ms for 3M vectors),
2. rescores the HAMMING_SHORTLIST nearest by the query against their signs (the query kept in float),
3. reads the best of those (sign_shortlist) from the vec0 table and scores them exactly.
On the kernel's index that kept 0.99-1.0 of the exact top 10 (see sign_packs.py), and the searches' top 10
results overlapped the in-memory search's by 0.94-0.99 (same first result for 78 of 80 queries). The contextual
model's vectors were not measured at that size; at the same shortlist-to-corpus ratio (80K of its vectors, 133
by Hamming distance) the Hamming step kept 0.96 of their top 10, as it did for 110K of the static model's (0.957).
The scores a search reports are exact, as vector_index.py's are; random vectors, which have no near neighbours,
are the worst case (tests/benchmarks/README.md).

A model with fewer than SIGN_SEARCH_MIN vectors is searched by vector_index.py: it is exact, and small there.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..id_arrays import among, distinct_sorted
from ..rows import NO_FILTER, ChunkId, HitFilter
from .allowed_sets import AllowedSets, Selections
from .scan_reader import ScanReader
from .sign_packs import SignPacks, sign_words, signs_of

if TYPE_CHECKING:
    from .store import SqliteStore

SIGN_SEARCH_MIN = 250_000  # vectors of a model (code and name) from which its searches use sign bits
HAMMING_SHORTLIST = 5_000
_NOT_ALLOWED = np.iinfo(np.uint16).max
_BYTE_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).astype(np.float32)  # each byte's 8 bits


def sign_shortlist(k: int) -> int:
    """How many of the Hamming shortlist, rescored against their signs, are read and scored exactly for k
    results: 200 for k up to 50 (0.99 of the exact top 10 on the kernel; 100 gave 0.94)."""
    return max(200, 4 * k)


class _Signs:
    """The sign bits of one kind of vector (code or symbol name) of one model, as its packs hold them."""

    def __init__(self, packs: SignPacks, dims: int):
        self.packs = packs
        self.dims = dims
        self.size = 0
        self.ids = np.zeros(0, dtype=np.int64)
        self.words = np.zeros((sign_words(dims), 0), dtype=np.uint64)  # a row per word: the scan reads them whole
        self._first_pack: int | None = None
        self._last_pack = 0
        self._packs = 0
        self._unique: np.ndarray | None = None

    def rewritten(self) -> bool:
        """Whether the packs held were rewritten since (maintain), so that all must be read again."""
        return self._first_pack is not None and self.packs.held_since(self._first_pack, self._last_pack) < self._packs

    def load(self, deadline: float | None) -> bool:
        """Read the packs written since; with a deadline, stop after it (at least one pack). True when caught up."""
        wanted = self.packs.entries()
        if wanted > self.ids.shape[0]:
            self._grow(wanted + wanted // 8)
        for pack_id, rowids, signs in self.packs.read(self._last_pack):
            end = self.size + len(rowids)
            if end > self.ids.shape[0]:
                self._grow(max(end, 2 * self.ids.shape[0]))
            self.ids[self.size : end] = rowids
            self.words[:, self.size : end] = signs
            self.size = end
            if self._first_pack is None:
                self._first_pack = pack_id
            self._last_pack = pack_id
            self._packs += 1
            self._unique = None
            if deadline is not None and time.perf_counter() >= deadline:
                return False
        return True

    def _grow(self, capacity: int) -> None:
        ids = np.zeros(capacity, dtype=np.int64)
        words = np.zeros((self.words.shape[0], capacity), dtype=np.uint64)
        ids[: self.size] = self.ids[: self.size]
        words[:, : self.size] = self.words[:, : self.size]
        self.ids, self.words = ids, words

    def unique_ids(self) -> np.ndarray:
        if self._unique is None:
            self._unique = distinct_sorted(self.ids[: self.size])
        return self._unique

    def distances(self, query: np.ndarray) -> np.ndarray:
        """Hamming distance of every entry's signs to the query's."""
        wanted = signs_of(query[None, :]).view(np.uint64)[0]
        scratch = np.empty(self.size, dtype=np.uint64)
        count = np.empty(self.size, dtype=np.uint8)
        out = np.zeros(self.size, dtype=np.uint16)
        for word, row in zip(wanted, self.words, strict=True):
            np.bitwise_xor(row[: self.size], word, out=scratch)
            np.bitwise_count(scratch, out=count)
            out += count
        return out

    def sign_scores(self, query: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """The query's dot product with the 0/1 signs of these entries (the query kept in float), which orders
        them as its dot product with their ±1 signs does: per byte of signs, the sum of the query's coordinates
        that byte's set bits stand for, from a table of its 256 values (1 ms for 5,000 entries, where unpacking
        every bit took 7)."""
        padded = np.zeros(self.words.shape[0] * 64, dtype=np.float32)
        padded[: self.dims] = query
        table = _BYTE_BITS @ padded.reshape(-1, 8).T  # 256 x bytes: value of each byte at each position
        packed = np.ascontiguousarray(self.words[:, positions].T).view(np.uint8)  # entries x bytes
        return table[packed, np.arange(packed.shape[1])].sum(axis=1)


class SignIndex:
    """A model's code and name vectors searched by sign bits (see the module's notes)."""

    def __init__(
        self, store: SqliteStore, model_id: str, dims: int, code: SignPacks, names: SignPacks, reader: ScanReader
    ):
        self.store = store
        self._reader = reader  # nearest() runs on a scan thread: it reads the vectors on a connection of its own
        self.model_id = model_id
        self.dims = dims
        self._code = _Signs(code, dims)
        self._names = _Signs(names, dims)
        self._generation: tuple[int, int] | None = None
        self._loading = False
        self._allowed = AllowedSets(store)
        self._selections: Selections[np.ndarray] = Selections()  # masks of the entries an allowed set leaves out
        # names -> (query, {chunk id: exact similarity}) read by the last nearest()
        self._scored: dict[bool, tuple[np.ndarray, dict[int, float]]] = {}

    def refresh(self, budget_s: float | None = None) -> bool:
        """Catch up with the packs the store's writes appended (all again if they were rewritten); with a budget,
        stop after about that many seconds (0: nothing new). True when caught up."""
        generation = self.store.generation
        if generation == self._generation:
            return True
        if budget_s == 0:
            return False
        deadline = None if budget_s is None else time.perf_counter() + budget_s
        self._allowed.forget_unless(generation)
        self._selections.clear()
        self._scored.clear()
        self._generation = None
        if self._code.rewritten():
            self._code = _Signs(self._code.packs, self.dims)
        if self._names.rewritten():
            self._names = _Signs(self._names.packs, self.dims)
        for signs in (self._code, self._names):
            if not signs.load(deadline):
                self._loading = True
                return False
        self._generation = generation
        self._loading = False
        return True

    @property
    def loading(self) -> bool:
        return self._loading

    @property
    def loaded_share(self) -> float:
        if self._generation is not None:
            return 1.0
        stored = self._code.packs.entries() + self._names.packs.entries()
        return min(1.0, (self._code.size + self._names.size) / stored) if stored else 1.0

    def ids(self) -> np.ndarray:
        """Ids of the chunks whose code vector has signs held, sorted. A vector deleted while its chunk stays (none
        is today: a chunk's code vector goes with it) would be listed until its pack is rewritten."""
        return self._code.unique_ids()

    def holds_any(self) -> bool:
        return bool(self._code.size or self._names.size)

    def allowed(self, scope_ids: Sequence[str], where: HitFilter = NO_FILTER) -> np.ndarray | None:
        return self._allowed.get(scope_ids, where)

    def _left_out(self, signs: _Signs, allowed: np.ndarray, names: bool) -> np.ndarray:
        """Mask of the entries whose chunk `allowed` leaves out."""

        def mask() -> np.ndarray:
            return ~among(signs.ids[: signs.size], allowed)

        return self._selections.get(allowed, names, mask)

    def nearest(
        self, query: np.ndarray, allowed: np.ndarray | None, k: int, names: bool = False
    ) -> list[tuple[ChunkId, float]]:
        signs = self._names if names else self._code
        if not signs.size:
            return []
        distances = signs.distances(query)
        if allowed is not None:
            distances[self._left_out(signs, allowed, names)] = _NOT_ALLOWED
        positions = _smallest(distances, HAMMING_SHORTLIST)
        positions = positions[distances[positions] != _NOT_ALLOWED]
        if not len(positions):
            return []
        wanted = sign_shortlist(k)
        if len(positions) > wanted:
            positions = positions[np.argpartition(-signs.sign_scores(query, positions), wanted - 1)[:wanted]]
        exact = self._exact(query, signs.ids[positions], names)
        self._scored[names] = (query, exact)
        best = sorted(exact.items(), key=lambda item: (-item[1], item[0]))[:k]
        return [(ChunkId(cid), sim) for cid, sim in best]

    def _exact(self, query: np.ndarray, chunk_ids: np.ndarray, names: bool) -> dict[int, float]:
        """Cosine similarity of each of these chunks that has a vector of this kind, read from the store."""
        out: dict[int, float] = {}
        table = (self._names if names else self._code).packs.table
        for ids, rows in self._reader.codes(table, self.dims, chunk_ids):
            matrix = rows.astype(np.float32)
            norms = np.linalg.norm(matrix, axis=1)
            sims = (matrix @ query) / np.where(norms > 0, norms, 1)
            out.update(zip(ids.tolist(), sims.tolist(), strict=True))
        return out

    def similarities(
        self, query: np.ndarray, chunk_ids: Sequence[ChunkId], names: bool = False
    ) -> dict[ChunkId, float]:
        # The search that asks this has usually just scored many of these chunks in nearest().
        last_query, known = self._scored.get(names, (None, {}))
        if last_query is not query:
            known = {}
        missing = np.array([cid for cid in chunk_ids if cid not in known], dtype=np.int64)
        read = self._exact(query, missing, names) if len(missing) else {}
        return {ChunkId(cid): sim for cid in chunk_ids if (sim := known.get(cid, read.get(cid))) is not None}


def _smallest(values: np.ndarray, k: int) -> np.ndarray:
    """Positions of k smallest values (of those tied with the k-th, the first), in no particular order: a count
    per distance is ~5 ms for 3M entries where argpartition takes ~8."""
    if k >= len(values):
        return np.arange(len(values))
    cut = int(np.searchsorted(np.cumsum(np.bincount(values)), k))
    below = np.flatnonzero(values < cut)
    return np.concatenate([below, np.flatnonzero(values == cut)[: k - len(below)]])
