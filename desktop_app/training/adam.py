"""Adam over the rows of a token table that a batch touched: a batch reads a few thousand of its 30,522 rows,
so only those rows' moments and values move (lazy Adam, as sparse embedding training does)."""

from __future__ import annotations

import numpy as np

BETA1, BETA2, EPS = 0.9, 0.999, 1e-8


class RowAdam:
    def __init__(self, table: np.ndarray, learning_rate: float) -> None:
        self.table = table
        self.learning_rate = learning_rate
        self.first = np.zeros_like(table)
        self.second = np.zeros_like(table)
        self.steps = 0

    def step(self, ids: np.ndarray, token_grads: np.ndarray) -> None:
        """Apply one step for per-token gradients `token_grads` of the rows `ids` (repeats summed)."""
        self.steps += 1
        sort = np.argsort(ids, kind="stable")
        touched, starts = np.unique(ids[sort], return_index=True)
        grad = np.add.reduceat(token_grads[sort], starts, axis=0)
        self.first[touched] = BETA1 * self.first[touched] + (1 - BETA1) * grad
        self.second[touched] = BETA2 * self.second[touched] + (1 - BETA2) * grad * grad
        corrected = self.learning_rate * np.sqrt(1 - BETA2**self.steps) / (1 - BETA1**self.steps)
        self.table[touched] -= corrected * self.first[touched] / (np.sqrt(self.second[touched]) + EPS)
