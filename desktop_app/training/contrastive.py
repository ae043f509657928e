"""The static model's contrastive step: a trained table moved so that a question's vector comes nearest the code
it describes (pairs.py mines the pairs), after tokenlearn's distillation taught it the teacher's geometry.

Each batch holds B (question, answer) pairs; every answer is a negative for the other questions and the
reverse (in-batch negatives, the symmetric InfoNCE loss of potion-code's and sentence-transformers'
MultipleNegativesRankingLoss). Texts are read as the app reads them (identifiers split, no special tokens)
and embedded as it embeds them: the normalised sum of their tokens' rows. A pull towards the starting table
(ANCHOR, an L2 penalty on the rows a batch moves) keeps what distillation learned about texts the pairs do
not cover. Plain numpy, like static_train.py.

    python -m desktop_app.training.contrastive TABLE.npz PAIRS.json --tokenizer TOKENIZER --out OUT.npz \
        [--epochs 1] [--rate 1e-4] [--batch 256] [--temperature 0.05]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from .adam import RowAdam
from .batches import pair_epochs
from .static_train import load_table, quantize, student_ids

TEMPERATURE = 0.05
ANCHOR = 1e-3


def _embed(table: np.ndarray, ids: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(unit vectors, norms of the sums, flat token ids, each token's text) of a batch of texts."""
    lengths = np.array([len(t) for t in ids])
    flat = np.concatenate(ids)
    owner = np.repeat(np.arange(len(ids)), lengths)
    sums = np.add.reduceat(table[flat], np.concatenate(([0], np.cumsum(lengths)[:-1])), axis=0)
    norms = np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)
    return sums / norms, norms, flat, owner


def _through_norm(d_unit: np.ndarray, unit: np.ndarray, norm: np.ndarray) -> np.ndarray:
    """The gradient on a sum from the gradient on its normalised vector."""
    return (d_unit - (d_unit * unit).sum(axis=1, keepdims=True) * unit) / norm


def batch_loss(similarities: np.ndarray) -> tuple[float, np.ndarray]:
    """Symmetric InfoNCE over a batch's (question x answer) similarities / temperature, the right answers on
    the diagonal: (loss, its gradient on the similarities)."""
    size = len(similarities)
    rows = np.exp(similarities - similarities.max(axis=1, keepdims=True))
    rows /= rows.sum(axis=1, keepdims=True)
    cols = np.exp(similarities - similarities.max(axis=0, keepdims=True))
    cols /= cols.sum(axis=0, keepdims=True)
    diagonal = np.arange(size)
    loss = -(np.log(rows[diagonal, diagonal]).mean() + np.log(cols[diagonal, diagonal]).mean()) / 2
    eye = np.eye(size, dtype=similarities.dtype)
    return float(loss), ((rows - eye) + (cols - eye)) / (2 * size)


def train_contrastive(
    table: np.ndarray,
    questions: list[np.ndarray],
    answers: list[np.ndarray],
    epochs: int,
    learning_rate: float,
    batch: int = 256,
    temperature: float = TEMPERATURE,
    seed: int = 0,
) -> tuple[np.ndarray, list[float]]:
    """The table after `epochs` passes over the pairs, and the mean loss of each epoch."""
    start = table.astype(np.float32, copy=True)
    table = start.copy()
    adam = RowAdam(table, learning_rate)
    usable = np.array([i for i in range(len(questions)) if len(questions[i]) and len(answers[i])])
    losses = []
    for batches in pair_epochs(usable, epochs, batch, seed):
        epoch_loss = []
        for rows in batches:
            q, q_norm, q_flat, q_owner = _embed(table, [questions[r] for r in rows])
            a, a_norm, a_flat, a_owner = _embed(table, [answers[r] for r in rows])
            loss, d_sim = batch_loss((q @ a.T) / temperature)
            epoch_loss.append(loss)
            d_q = _through_norm(d_sim @ a / temperature, q, q_norm)
            d_a = _through_norm(d_sim.T @ q / temperature, a, a_norm)
            flat = np.concatenate([q_flat, a_flat])
            grads = np.concatenate([d_q[q_owner], d_a[a_owner]])
            grads += ANCHOR * (table[flat] - start[flat])
            adam.step(flat, grads)
        losses.append(float(np.mean(epoch_loss)) if epoch_loss else 0.0)
    return table, losses


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("table", type=Path, help="a trained table: .npz with codes and scales (static_train.py)")
    parser.add_argument("pairs", type=Path, help="pairs.py's JSON list of {question, answer}")
    parser.add_argument("--tokenizer", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True, help="the new table's .npz")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--rate", type=float, default=1e-4)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--temperature", type=float, default=TEMPERATURE)
    args = parser.parse_args(argv)
    table = load_table(args.table)
    pairs = json.loads(args.pairs.read_text())
    questions = student_ids([p["question"] for p in pairs], args.tokenizer)
    answers = student_ids([p["answer"] for p in pairs], args.tokenizer)
    trained, losses = train_contrastive(table, questions, answers, args.epochs, args.rate, args.batch, args.temperature)
    codes, scales = quantize(trained)
    np.savez(args.out, codes=codes, scales=scales)
    print(json.dumps({"pairs": len(pairs), "epoch_loss": [round(x, 4) for x in losses]}))


if __name__ == "__main__":
    main()
