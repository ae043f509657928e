"""The fast model: token vectors distilled from the default model (see distill.py), averaged per text.

A text's vector is the normalised sum of its tokens' weighted vectors, so embedding costs a
tokenizer pass and a gather: ~100x the contextual model's throughput on a CPU. Identifiers are
followed by their words first (`parseHeader` -> `parseHeader parse header`), which WordPiece alone
splits badly: measured on the stdlib dev set, semantic-only nl MRR@10 over all chunks went from
0.292 to 0.343 (words in place of identifiers: 0.313; corpus IDF weights on top: 0.347, not worth
tying vectors to one corpus; centring on the corpus mean: 0.230). It is the semantic
layer of a first index (stage 2) while the contextual model catches up, and a model of its own
("fast") for machines too slow for the contextual one.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
from tokenizers import Tokenizer

from desktop_app.assets import resource_path
from desktop_app.identifiers import expand_identifiers

from .distill import SCALES_FILE, STATIC_DIMS, VECTORS_FILE
from .model_spec import DEFAULT_MODEL_ID, DEFAULT_TOKENIZER_SHA256, TOKENIZER_FILE, ModelError, verify_sha256

STATIC_MODEL_ID = "quarry-static-minilm-256"
STATIC_SOURCE = "fast"
# Written by `python -m desktop_app.embedding.distill resources/models/quarry-static-minilm-256`.
VECTORS_SHA256 = "9bf580439bf7dbce133c11ea272e2e4044d932e4909f921f94e98bfc821c3bff"
SCALES_SHA256 = "b581dd8cc82dc5693f04b85dd046540b5e4eb90f11e52c48843a37d276b0bf18"
# Chunks are sized for the model the vectors were distilled from, so both layers share one chunking.
MAX_TOKENS = 256


class StaticEmbedder:
    """Embeds with the distilled token vectors; loading reads ~8 MB."""

    def __init__(self) -> None:
        self._table: np.ndarray | None = None
        self._tokenizer: Tokenizer | None = None
        self._lock = threading.Lock()

    model_id = STATIC_MODEL_ID
    source = STATIC_SOURCE
    dims = STATIC_DIMS
    max_tokens = MAX_TOKENS
    provider = "numpy"
    static = True

    @property
    def loaded(self) -> bool:
        return self._table is not None

    def load(self) -> None:
        if self._table is not None:
            return
        with self._lock:
            if self._table is not None:
                return
            folder = resource_path("models", STATIC_MODEL_ID)
            for name, digest in ((VECTORS_FILE, VECTORS_SHA256), (SCALES_FILE, SCALES_SHA256)):
                verify_sha256(folder / name, digest)
            codes = np.load(folder / VECTORS_FILE, allow_pickle=False)
            scales = np.load(folder / SCALES_FILE, allow_pickle=False)
            if codes.shape != (len(scales), STATIC_DIMS):
                raise ModelError(f"{folder} holds {codes.shape} token vectors; reinstall Quarry.")
            self._get_tokenizer()
            self._table = codes.astype(np.float32) * scales[:, None]

    def _get_tokenizer(self) -> Tokenizer:
        if self._tokenizer is None:
            path = resource_path("models", DEFAULT_MODEL_ID, TOKENIZER_FILE)
            verify_sha256(path, DEFAULT_TOKENIZER_SHA256)
            tokenizer = Tokenizer.from_file(str(path))
            tokenizer.no_padding()
            tokenizer.no_truncation()
            self._tokenizer = tokenizer
        return self._tokenizer

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return [len(e.ids) for e in self._get_tokenizer().encode_batch(list(texts), add_special_tokens=False)]

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """float32 (len(texts), dims), L2-normalised; a text with no tokens gets a zero vector."""
        self.load()
        assert self._table is not None
        out = np.zeros((len(texts), STATIC_DIMS), dtype=np.float32)
        if not texts:
            return out
        words = [expand_identifiers(text) for text in texts]
        encodings = self._get_tokenizer().encode_batch(words, add_special_tokens=False)
        lengths = np.array([len(e.ids) for e in encodings])
        ids = np.fromiter((i for e in encodings for i in e.ids), dtype=np.int64, count=int(lengths.sum()))
        filled = lengths > 0
        if ids.size:
            starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))[filled]
            out[filled] = np.add.reduceat(self._table[ids], starts, axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]
