"""Distilling a static (token-level) embedding model from the bundled contextual one, as model2vec does.

Every vocabulary token goes through the ONNX model on its own ("[CLS] token [SEP]", mean-pooled and
normalised, exactly as the model embeds a one-token text); the 384-dim vectors are centred and reduced
by PCA to STATIC_DIMS; each token's vector is then weighted by SIF over a Zipf estimate of its
frequency (the BERT vocabulary lists whole words from id 1996 on in corpus-frequency order), so
frequent tokens ("the", "self", "=") count less in a text's mean.

It runs on first use and is cached (static_model.py), so no 8 MB table ships in the repository and
nothing is fetched: the source is the model package itself. Measured on this 2-core VM: ~20 s.
"""

from __future__ import annotations

import numpy as np

from .embedder import Embedder
from .model_spec import default_model_spec

STATIC_DIMS = 256
# SIF's a: a token's weight is a / (a + p(token)). 1e-3 is the value model2vec and the SIF paper use.
SIF_COEFFICIENT = 1e-3
# Ids below this are padding, [unusedN], special tokens and single characters: not frequency-ordered.
FIRST_RANKED_ID = 1996


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


def distill() -> tuple[np.ndarray, np.ndarray]:
    """(int8 codes, float32 scales) of the static model distilled from the bundled default model."""
    vectors = token_vectors(Embedder(default_model_spec()))
    return quantize(reduce(vectors, STATIC_DIMS) * sif_weights(len(vectors))[:, None])
