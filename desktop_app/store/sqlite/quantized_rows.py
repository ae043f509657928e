"""One kind of vector (code or symbol name) of one model, kept compact in memory.

Each vector is stored as int8 codes with a per-vector scale (x ~ scale * code), which the coarse pass
scans with the int8 kernel, plus a 4-bit residual of the rounding (x ~ scale * (code + residual / 16)),
which rescoring reads for a shortlist only. With the id, scale and bookkeeping that is ~590 bytes a
384-dim vector instead of 1,536 as float32, and the refined similarity is within ~2e-4 of the float32
one (typically 2e-5). Vectors the store keeps as int8 codes (vec0_storage.py) arrive as those codes: they are
held as they are, with no residual (~400 bytes a 384-dim vector, ~270 a 256-dim one), and rescoring reads the
codes alone, which is exact for them.

Codes are held column per vector in blocks of up to BLOCK vectors, the layout the kernel reads fastest.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .int8_matmul import Int8Dot

BLOCK = 65_536
_FIRST_CAPACITY = 1024
_RESIDUAL_STEPS = 16  # 4 bits: -8..7 sixteenths of a code step
_QUANTIZE_ROWS = 2048


def quantize(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(int8 codes n x d, float32 scales n, uint8 packed residuals n x ceil(d/2)) of float rows."""
    peak = np.abs(rows).max(axis=1)
    scales = np.where(peak > 0, peak / 127, 1).astype(np.float32)
    scaled = rows * (1 / scales)[:, None]
    codes = np.rint(scaled)
    # In place from here: at 20,000 x 384 each temporary is 30 MB, and fresh ones cost page faults.
    scaled -= codes
    scaled *= _RESIDUAL_STEPS
    np.rint(scaled, out=scaled)
    np.clip(scaled, -8, 7, out=scaled)
    scaled += 8
    residual = scaled.astype(np.uint8)
    if residual.shape[1] % 2:
        residual = np.pad(residual, ((0, 0), (0, 1)), constant_values=8)
    return codes.astype(np.int8), scales, residual[:, 0::2] | (residual[:, 1::2] << 4)


def quantize_query(query: np.ndarray) -> tuple[np.ndarray, float]:
    """(int8 codes 1 x d, scale) of one query vector."""
    peak = float(np.abs(query).max())
    scale = peak / 127 if peak > 0 else 1.0
    return np.rint(query / scale).astype(np.int8)[None, :], scale


def code_scales(codes: np.ndarray) -> np.ndarray:
    """The scales of rows stored as int8 codes of unit vectors: one over each row's length (0 for zeros)."""
    norms = np.linalg.norm(codes.astype(np.float32), axis=1)
    return np.divide(1, norms, out=np.zeros_like(norms), where=norms > 0)


class _Block:
    def __init__(self, dims: int, capacity: int):
        self.codes = np.zeros((dims, capacity), dtype=np.int8)
        self.column_sums = np.zeros(capacity, dtype=np.int32)
        # Made with the first float rows; rows that came as codes have none (0x88: no correction).
        self.residuals: np.ndarray | None = None
        self.scales = np.zeros(capacity, dtype=np.float32)
        self.ids = np.zeros(capacity, dtype=np.int64)
        self.live = np.zeros(capacity, dtype=bool)
        self.size = 0

    @property
    def capacity(self) -> int:
        return len(self.ids)

    def grown(self, capacity: int) -> _Block:
        bigger = _Block(len(self.codes), capacity)
        n = self.size
        bigger.codes[:, :n] = self.codes[:, :n]
        for name in ("column_sums", "scales", "ids", "live"):
            getattr(bigger, name)[:n] = getattr(self, name)[:n]
        if self.residuals is not None:
            bigger.residuals = np.full((capacity, self.residuals.shape[1]), 0x88, dtype=np.uint8)
            bigger.residuals[:n] = self.residuals[:n]
        bigger.size = n
        return bigger

    def fill(self, ids: np.ndarray, codes: np.ndarray, scales: np.ndarray, residuals: np.ndarray | None) -> None:
        start, end = self.size, self.size + len(ids)
        self.codes[:, start:end] = codes.T
        self.column_sums[start:end] = codes.sum(axis=1, dtype=np.int32)
        if residuals is not None:
            if self.residuals is None:
                self.residuals = np.full((self.capacity, residuals.shape[1]), 0x88, dtype=np.uint8)
            self.residuals[start:end] = residuals
        elif self.residuals is not None:
            self.residuals[start:end] = 0x88
        self.scales[start:end] = scales
        self.ids[start:end] = ids
        self.live[start:end] = True
        self.size = end


class QuantizedRows:
    """Vectors in ascending chunk-id order; rows are addressed by position (0..len-1)."""

    def __init__(self, dims: int, kernel: Int8Dot):
        self.dims = dims
        self._kernel = kernel
        self._blocks: list[_Block] = []
        # All blocks' ids and live flags end to end; None when a change made them stale.
        self._ids: np.ndarray | None = None
        self._live: np.ndarray | None = None
        self._sorted: tuple[np.ndarray, np.ndarray | None] | None = None  # see _lookup()
        self._max_id = 0
        self.live_count = 0

    def __len__(self) -> int:
        return sum(b.size for b in self._blocks)

    @property
    def last_id(self) -> int:
        """The highest chunk id held (alive or not), 0 when empty."""
        return self._max_id

    @property
    def ids(self) -> np.ndarray:
        """Chunk id of every row, in the order added (rows of removed vectors included): ascending, unless
        rows were added below the highest id (a first index fills vectors in by priority, not id)."""
        if self._ids is None:
            self._ids = np.concatenate([b.ids[: b.size] for b in self._blocks] or [np.zeros(0, dtype=np.int64)])
        return self._ids

    def _lookup(self) -> tuple[np.ndarray, np.ndarray | None]:
        """(ids sorted, the positions in that order or None when the rows are in id order already); among
        rows of one id (a vector removed, then added again), the live one sorts last."""
        if self._sorted is None:
            ids = self.ids
            if len(ids) < 2 or bool(np.all(ids[1:] > ids[:-1])):
                self._sorted = (ids, None)
            else:
                order = np.lexsort((self.live, ids))
                self._sorted = (ids[order], order)
        return self._sorted

    @property
    def live(self) -> np.ndarray:
        """Whether each row's vector is still in the store."""
        if self._live is None:
            self._live = np.concatenate([b.live[: b.size] for b in self._blocks] or [np.zeros(0, dtype=bool)])
        return self._live

    def live_ids(self) -> np.ndarray:
        return self.ids[self.live]

    def extend(self, batches: Iterable[tuple[np.ndarray, np.ndarray]], expected: int = 0) -> None:
        """Append (ids, rows) batches of ids not held yet, rows as float unit vectors or as the int8 codes of
        unit vectors. `expected` (how many rows are coming, roughly) lets blocks be made their final size
        instead of grown by copying."""
        for ids, rows in batches:
            self._append(ids, rows if rows.dtype == np.int8 else np.asarray(rows, dtype=np.float32), expected)
            expected = max(0, expected - len(ids))

    def _append(self, ids: np.ndarray, rows: np.ndarray, upcoming: int) -> None:
        done = 0
        while done < len(ids):
            block = self._writable_block(max(len(ids), upcoming) - done)
            # Quantised a cache-sized piece at a time: twice as fast as whole 20,000-row batches.
            take = min(block.capacity - block.size, len(ids) - done, _QUANTIZE_ROWS)
            part = rows[done : done + take]
            if part.dtype == np.int8:
                block.fill(ids[done : done + take], part, code_scales(part), None)
            else:
                block.fill(ids[done : done + take], *quantize(part))
            done += take
        self.live_count += len(ids)
        if len(ids):
            self._max_id = max(self._max_id, int(ids.max()))
        self._ids = self._live = self._sorted = None

    def _writable_block(self, wanted: int) -> _Block:
        """The last block, with room for at least one more row: sized for `wanted` when it must be made.

        Every block is scanned whole by the kernel, filled or not, so room is made as it is needed: by
        doubling, or for all the rows announced at once.
        """
        last = self._blocks[-1] if self._blocks else None
        if last is None or last.size == BLOCK:
            self._blocks.append(_Block(self.dims, min(BLOCK, max(_FIRST_CAPACITY, wanted))))
        elif last.size == last.capacity:
            self._blocks[-1] = last.grown(min(BLOCK, max(2 * last.capacity, last.size + wanted)))
        return self._blocks[-1]

    def remove(self, chunk_ids: np.ndarray) -> None:
        """Forget these vectors; their rows stay (dead) so positions do not shift."""
        pos, found = self.positions(chunk_ids)
        pos = pos[found]
        for b in np.unique(pos // BLOCK):
            cols = pos[pos // BLOCK == b] % BLOCK
            self._blocks[b].live[cols] = False
            self._blocks[b].scales[cols] = 0
        self.live_count -= len(pos)
        self._live = self._sorted = None

    def positions(self, chunk_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(row positions, mask of which chunk_ids have a live vector here)."""
        ids = self.ids
        if not len(ids):
            return np.zeros(len(chunk_ids), dtype=np.int64), np.zeros(len(chunk_ids), dtype=bool)
        ordered, order = self._lookup()
        at = np.maximum(np.searchsorted(ordered, chunk_ids, side="right") - 1, 0)  # the last row of each id
        pos = at if order is None else order[at]
        found = ids[pos] == chunk_ids
        if self.live_count < len(ids):
            found &= self.live[pos]
        return pos, found

    def coarse(self, query: np.ndarray) -> np.ndarray:
        """Approximate similarity of `query` to every row (float32, one per position; 0 for removed rows)."""
        q_codes, q_scale = quantize_query(query)
        out = np.empty(len(self), dtype=np.float32)
        start = 0
        for block in self._blocks:
            dots = self._kernel(q_codes, block.codes, block.column_sums)[0, : block.size]
            np.multiply(dots, block.scales[: block.size] * np.float32(q_scale), out=out[start : start + block.size])
            start += block.size
        return out

    def refine(self, query: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """Similarity of `query` to the rows at `positions` from codes and residuals (float32)."""
        out = np.empty(len(positions), dtype=np.float32)
        which = positions // BLOCK
        for b in np.unique(which):
            sel = np.flatnonzero(which == b)
            block, cols = self._blocks[b], positions[sel] % BLOCK
            # np.take: ~9x faster than fancy indexing along the second axis.
            vectors = np.take(block.codes, cols, axis=1).T.astype(np.float32)
            if block.residuals is not None:
                packed = block.residuals[cols]
                residual = np.empty((len(cols), packed.shape[1] * 2), dtype=np.float32)
                residual[:, 0::2] = packed & 0x0F
                residual[:, 1::2] = packed >> 4
                vectors += (residual[:, : self.dims] - 8) / _RESIDUAL_STEPS
            out[sel] = (vectors @ query) * block.scales[cols]
        return out
