"""Training Quarry's static code model, tokenlearn's way: the bundled MiniLM as teacher, a token table as
student.

1. The teacher embeds every training text (mean-pooled, normalised, as the index's full model does).
2. A PCA fitted on those embeddings and the teacher's vector of each token alone gives the student's 256-dim
   target space.
3. The student starts from the teacher's vector of each token alone (what distillation gave, projected into
   that space) and is trained so that the mean of a text's token vectors points where the teacher's
   embedding of the text does (cosine loss); texts are split into tokens as the app's static model splits
   them (identifiers split into words, no special tokens, no truncation).
4. SIF weights from the tokens' frequencies in the training texts are applied after training, as model2vec
   does, so frequent tokens count less in a text's mean.

numpy, onnxruntime and tokenizers only (the app's own dependencies): the teacher is the app's own int8 ONNX
model, the student's training a few hundred Adam steps over a 30,522 x 256 table. It imports nothing from the
app but identifier splitting, so it runs on a bare machine with more cores than a laptop.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

from ..identifiers import expand_identifiers
from .adam import RowAdam
from .batches import epoch_batches, padded_batches
from .gpu_teacher import GpuTeacher, train_table_on_gpu
from .text_file import read_texts

STATIC_DIMS = 256
SIF_COEFFICIENT = 1e-3  # model2vec's and the SIF paper's a
TEACHER_MAX_TOKENS = 256  # the bundled model's limit, special tokens included
STUDENT_MAX_TOKENS = 1024  # the static model reads a chunk whole; this only bounds memory


class Teacher:
    """The bundled contextual model, run as the app runs it (onnxruntime, mean pooling, L2 norm), on every core."""

    def __init__(self, model: Path, tokenizer_path: Path) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=TEACHER_MAX_TOKENS)
        options = ort.SessionOptions()
        options.intra_op_num_threads = os.cpu_count() or 1
        self.session = ort.InferenceSession(str(model), options, providers=ort.get_available_providers())
        self.feeds_types = any(i.name == "token_type_ids" for i in self.session.get_inputs())
        self.output = self.session.get_outputs()[0].name

    def embed(self, texts: list[str], batch_tokens: int = 32768) -> np.ndarray:
        """(len(texts), 384) float32, L2-normalised."""
        return self.embed_ids([e.ids for e in self.tokenizer.encode_batch(texts)], batch_tokens)

    def embed_tokens(self) -> np.ndarray:
        """(vocabulary, 384): each token alone ("[CLS] token [SEP]"), as distillation embeds it."""
        cls, sep = self.tokenizer.token_to_id("[CLS]"), self.tokenizer.token_to_id("[SEP]")
        assert cls is not None and sep is not None  # a BERT vocabulary has both
        return self.embed_ids([[cls, i, sep] for i in range(self.tokenizer.get_vocab_size())])

    def embed_ids(self, sequences: list[list[int]], batch_tokens: int = 32768) -> np.ndarray:
        result = np.zeros((len(sequences), 384), dtype=np.float32)
        for rows, ids, mask in padded_batches(sequences, batch_tokens):
            feed = {"input_ids": ids, "attention_mask": mask}
            if self.feeds_types:
                feed["token_type_ids"] = np.zeros_like(ids)
            (hidden,) = self.session.run([self.output], feed)
            pooled = np.einsum("bld,bl->bd", hidden.astype(np.float32), mask) / mask.sum(axis=1, keepdims=True)
            result[rows] = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return result


def pca(vectors: np.ndarray, dims: int) -> tuple[np.ndarray, np.ndarray]:
    """(mean, components (dims, d)) of `vectors`, each component's sign fixed so the result is stable."""
    mean = vectors.mean(axis=0)
    _, _, vt = np.linalg.svd((vectors - mean).astype(np.float64), full_matrices=False)
    components = vt[:dims]
    signs = np.sign(components[np.arange(dims), np.abs(components).argmax(axis=1)])
    return mean.astype(np.float32), (components * signs[:, None]).astype(np.float32)


def student_ids(texts: list[str], tokenizer_path: Path) -> list[np.ndarray]:
    """Token ids of each text as the app's static model reads it (static_model.StaticEmbedder)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(tokenizer_path))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    encodings = tokenizer.encode_batch([expand_identifiers(t) for t in texts], add_special_tokens=False)
    return [np.asarray(e.ids[:STUDENT_MAX_TOKENS], dtype=np.int64) for e in encodings]


def train_table(
    table: np.ndarray,
    ids: list[np.ndarray],
    targets: np.ndarray,
    epochs: int,
    learning_rate: float,
    batch: int = 1024,
    seed: int = 0,
) -> np.ndarray:
    """The token table after `epochs` passes of Adam on the cosine loss between each text's mean token vector
    and its target (the teacher's embedding in the target space). Plain numpy: the gradient of a mean is
    spread evenly over the text's tokens, and a batch touches only its own tokens' rows."""
    table = table.astype(np.float32, copy=True)
    adam = RowAdam(table, learning_rate)
    goal = targets / np.maximum(np.linalg.norm(targets, axis=1, keepdims=True), 1e-12)
    for rows in epoch_batches(ids, epochs, batch, seed):
        lengths = np.array([len(ids[r]) for r in rows])
        flat = np.concatenate([ids[r] for r in rows])
        owner = np.repeat(np.arange(len(rows)), lengths)
        mean = np.add.reduceat(table[flat], np.concatenate(([0], np.cumsum(lengths)[:-1])), axis=0)
        mean /= lengths[:, None]
        norm = np.maximum(np.linalg.norm(mean, axis=1, keepdims=True), 1e-12)
        unit = mean / norm
        g = goal[rows]
        # d(1 - unit.g)/d(mean) = -(g - (unit.g) unit) / |mean|, shared by the text's tokens / length.
        d_mean = -(g - (unit * g).sum(axis=1, keepdims=True) * unit) / norm / len(rows)
        adam.step(flat, d_mean[owner] / lengths[owner][:, None])
    return table


def sif_weights(ids: list[np.ndarray], vocab: int) -> np.ndarray:
    """a / (a + p(token)), p counted over the training texts (add-one smoothed)."""
    counts = np.bincount(np.concatenate(ids), minlength=vocab).astype(np.float64) + 1.0
    probability = counts / counts.sum()
    return (SIF_COEFFICIENT / (SIF_COEFFICIENT + probability)).astype(np.float32)


def mean_cosine(table: np.ndarray, ids: list[np.ndarray], targets: np.ndarray) -> float:
    """How closely the table's text vectors follow the targets: mean cosine over texts with tokens."""
    sims = []
    goal = targets / np.maximum(np.linalg.norm(targets, axis=1, keepdims=True), 1e-12)
    for t, g in zip(ids, goal, strict=True):
        if len(t):
            v = table[t].sum(axis=0)
            sims.append(float(v @ g / max(float(np.linalg.norm(v)), 1e-12)))
    return float(np.mean(sims)) if sims else 0.0


def quantize(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int8 rows and their float32 scales (a row is codes * scale), the app's table format."""
    scales = np.maximum(np.abs(vectors).max(axis=1), 1e-12) / 127.0
    codes = np.clip(np.rint(vectors / scales[:, None]), -127, 127).astype(np.int8)
    return codes, scales.astype(np.float32)


def dequantize(codes: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """The float32 table that int8 `codes` and their `scales` stand for, as the app reads it."""
    return codes.astype(np.float32) * scales[:, None]


def load_table(path: Path) -> np.ndarray:
    """A table saved as .npz with codes and scales (train() and the training commands write them so)."""
    stored = np.load(path)
    return dequantize(stored["codes"], stored["scales"])


def train(
    texts: list[str],
    runner: Teacher | GpuTeacher,
    tokenizer_path: Path,
    out: Path,
    schedules: list[tuple[int, float]],
) -> dict:
    """Featurise `texts` once, train a table for each (epochs, learning rate) of `schedules` on 95% of them,
    and write each as `E-LR-plain.npz` and `E-LR-sif.npz` (codes, scales) under `out` with report.json: the
    held-out 5%'s mean cosine to the teacher for each table and for the distilled start."""
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    teacher = runner.embed(texts)
    token_teacher = runner.embed_tokens()
    vocab = len(token_teacher)
    featurised = time.perf_counter()
    # Fitted on the texts and the tokens alike: the space must hold both the targets and the starting table
    # (and a corpus smaller than 256 texts still gives 256 components).
    mean, components = pca(np.concatenate([teacher, token_teacher]), STATIC_DIMS)
    targets = (teacher - mean) @ components.T
    initial = (token_teacher - mean) @ components.T
    ids = student_ids(texts, tokenizer_path)
    held = max(1, len(texts) // 20)
    weights = sif_weights(ids, vocab)
    cosine: dict[str, float] = {"distilled-sif": mean_cosine(initial * weights[:, None], ids[:held], targets[:held])}
    for epochs, rate in schedules:
        if isinstance(runner, GpuTeacher):
            trained = train_table_on_gpu(initial, ids[held:], targets[held:], epochs, rate)
        else:
            trained = train_table(initial, ids[held:], targets[held:], epochs, rate)
        for suffix, table in (("plain", trained), ("sif", trained * weights[:, None])):
            name = f"{epochs}-{rate:g}-{suffix}"
            cosine[name] = mean_cosine(table, ids[:held], targets[:held])
            codes, scales = quantize(table)
            np.savez(out / f"{name}.npz", codes=codes, scales=scales)
    report = {
        "texts": len(texts),
        "held_out": held,
        "vocabulary": vocab,
        "held_out_cosine": cosine,
        "featurise_seconds": round(featurised - started, 1),
        "train_seconds": round(time.perf_counter() - featurised, 1),
    }
    (out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    return report


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("texts", type=Path, help="training texts (texts.py's .jsonl.xz)")
    parser.add_argument("--model", type=Path, help="the teacher's model.onnx (the bundled int8 model)")
    parser.add_argument("--gpu-teacher", type=Path, help="a folder with config.json and model.fp16.safetensors")
    parser.add_argument("--tokenizer", type=Path, required=True, help="the teacher's tokenizer.json")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "--schedule", action="append", default=[], help="EPOCHS:LEARNING_RATE of a table to train (repeatable)"
    )
    parser.add_argument("--limit", type=int, default=0, help="use only the first N texts")
    args = parser.parse_args(argv)
    texts = [t["text"] for t in read_texts(args.texts)]
    if args.limit:
        texts = texts[: args.limit]
    if args.gpu_teacher:
        runner: Teacher | GpuTeacher = GpuTeacher(args.gpu_teacher, args.tokenizer, TEACHER_MAX_TOKENS)
    elif args.model:
        runner = Teacher(args.model, args.tokenizer)
    else:
        parser.error("give --model or --gpu-teacher")
    schedules = [(int(e), float(r)) for e, r in (item.split(":") for item in args.schedule or ["3:1e-3"])]
    print(json.dumps(train(texts, runner, args.tokenizer, args.out, schedules)))


if __name__ == "__main__":
    main()
