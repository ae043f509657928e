"""Distilling a static (token-level) embedding model from the bundled contextual one, as model2vec does.

    python -m desktop_app.embedding.distill OUT_DIR

Every vocabulary token goes through the ONNX model on its own ("[CLS] token [SEP]", mean-pooled and
normalised, exactly as the model embeds a one-token text); the 384-dim vectors are centred and reduced
by PCA to STATIC_DIMS; each token's vector is then weighted by SIF over a Zipf estimate of its
frequency (the BERT vocabulary lists whole words from id 1996 on in corpus-frequency order), so
frequent tokens ("the", "self", "=") count less in a text's mean. The output is deterministic for a
given model file and numpy build, and ships in resources/ with its sha256 recorded in static_model.py,
so nothing is computed or fetched at run time.

Measured on this 2-core VM: ~50 s to distill (30,522 one-token texts).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

from .embedder import Embedder
from .model_spec import default_model_spec

STATIC_DIMS = 256
# SIF's a: a token's weight is a / (a + p(token)). 1e-3 is the value model2vec and the SIF paper use.
SIF_COEFFICIENT = 1e-3
# Ids below this are padding, [unusedN], special tokens and single characters: not frequency-ordered.
FIRST_RANKED_ID = 1996
VECTORS_FILE = "vectors.npy"  # int8 (vocabulary, STATIC_DIMS): each row's values over its scale
SCALES_FILE = "scales.npy"  # float32 (vocabulary,)
CONFIG_FILE = "static-model.json"


def token_vectors(embedder: Embedder, batch: int = 512) -> np.ndarray:
    """(vocabulary, dims) float32: the contextual model's embedding of each token alone."""
    embedder.load()
    tokenizer = embedder._get_tokenizers().embedding
    vocab = tokenizer.get_vocab_size()
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    out = np.empty((vocab, embedder.dims), dtype=np.float32)
    for start in range(0, vocab, batch):
        ids = np.arange(start, min(start + batch, vocab), dtype=np.int64)
        input_ids = np.stack([np.full_like(ids, cls), ids, np.full_like(ids, sep)], axis=1)
        out[ids] = embedder._run(input_ids, np.ones_like(input_ids))
        print(f"\r{min(start + batch, vocab)}/{vocab} tokens", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return out


def reduce(vectors: np.ndarray, dims: int) -> np.ndarray:
    """Centre and project onto the top `dims` principal components (signs fixed so the result is stable)."""
    centred = vectors - vectors.mean(axis=0)
    _, _, vt = np.linalg.svd(centred.astype(np.float64), full_matrices=False)
    components = vt[:dims]
    signs = np.sign(components[np.arange(dims), np.abs(components).argmax(axis=1)])
    return (centred @ (components * signs[:, None]).T).astype(np.float32)


def sif_weights(vocab: int) -> np.ndarray:
    """SIF weights from a Zipf estimate of each token's probability by its rank in the vocabulary."""
    ranks = np.maximum(np.arange(vocab) - FIRST_RANKED_ID, 0) + 1
    probability = (1.0 / ranks) / np.sum(1.0 / ranks)
    return (SIF_COEFFICIENT / (SIF_COEFFICIENT + probability)).astype(np.float32)


def quantize(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int8 rows and their float32 scales (a row is codes * scale)."""
    scales = np.maximum(np.abs(vectors).max(axis=1), 1e-12) / 127.0
    codes = np.clip(np.rint(vectors / scales[:, None]), -127, 127).astype(np.int8)
    return codes, scales.astype(np.float32)


def distill(out_dir: Path) -> dict[str, str]:
    spec = default_model_spec()
    vectors = token_vectors(Embedder(spec, threads=None))
    weighted = reduce(vectors, STATIC_DIMS) * sif_weights(len(vectors))[:, None]
    codes, scales = quantize(weighted)
    out_dir.mkdir(parents=True, exist_ok=True)
    np.save(out_dir / VECTORS_FILE, codes, allow_pickle=False)
    np.save(out_dir / SCALES_FILE, scales, allow_pickle=False)
    digests = {name: hashlib.sha256((out_dir / name).read_bytes()).hexdigest() for name in (VECTORS_FILE, SCALES_FILE)}
    (out_dir / CONFIG_FILE).write_text(
        json.dumps({"distilled_from": spec.id, "dims": STATIC_DIMS, "sha256": digests}, indent=2) + "\n"
    )
    return digests


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir", type=Path)
    args = parser.parse_args(argv)
    for name, digest in distill(args.out_dir).items():
        print(f"{name} {digest}")


if __name__ == "__main__":
    main()
