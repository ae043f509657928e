"""The ways training walks its texts and pairs, shared by the CPU and GPU paths (numpy only, runs anywhere)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np


def padded_batches(
    sequences: list[list[int]], batch_tokens: int
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(rows, ids, attention mask) of padded batches within `batch_tokens`, longest texts first: similar
    lengths share a batch, so little of it is padding."""
    lengths = np.array([len(s) for s in sequences])
    order = np.argsort(-lengths, kind="stable")
    start = 0
    while start < len(order):
        width = int(lengths[order[start]])
        rows = order[start : start + max(1, batch_tokens // max(width, 1))]
        ids = np.zeros((len(rows), width), dtype=np.int64)
        for r, i in enumerate(rows):
            ids[r, : lengths[i]] = sequences[i]
        yield rows, ids, (np.arange(width) < lengths[rows][:, None]).astype(np.int64)
        start += len(rows)


def epoch_batches(ids: list[np.ndarray], epochs: int, batch: int, seed: int = 0) -> Iterator[np.ndarray]:
    """Rows of the texts that have tokens, `batch` at a time, in a new seeded order each epoch."""
    order = np.array([i for i, t in enumerate(ids) if len(t)])
    rnd = np.random.default_rng(seed)
    for _ in range(epochs):
        rnd.shuffle(order)
        for start in range(0, len(order), batch):
            yield order[start : start + batch]


def pair_epochs(usable: np.ndarray, epochs: int, batch: int, seed: int = 0) -> Iterator[list[np.ndarray]]:
    """Each epoch's batches of the usable pairs' rows, in a new seeded order each epoch (shuffled in place); a
    batch of one pair is left out, as it has no other answer to learn from."""
    rnd = np.random.default_rng(seed)
    for _ in range(epochs):
        rnd.shuffle(usable)
        batches = (usable[start : start + batch] for start in range(0, len(usable), batch))
        yield [rows for rows in batches if len(rows) >= 2]
