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

import logging
import os
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from desktop_app.assets import resource_path
from desktop_app.cache_folder import user_cache_folder
from desktop_app.identifiers import expand_identifiers

from .distill import STATIC_DIMS, distill
from .model_spec import DEFAULT_MODEL_ID, DEFAULT_MODEL_SHA256, DEFAULT_TOKENIZER_SHA256, TOKENIZER_FILE, verify_sha256

STATIC_MODEL_ID = "quarry-static-minilm-256"
STATIC_SOURCE = "fast"
CODES_FILE = "codes.npy"  # int8 (vocabulary, dims): each row's values over its scale
SCALES_FILE = "scales.npy"  # float32 (vocabulary,)
# Chunks are sized for the model the vectors were distilled from, so both layers share one chunking.
MAX_TOKENS = 256

_log = logging.getLogger(__name__)


def cache_dir() -> Path:
    """Where the distilled table is kept (QUARRY_CACHE_DIR overrides the user cache folder); named after the
    default model's hash, so another model file gets its own table."""
    return user_cache_folder() / f"{STATIC_MODEL_ID}-{DEFAULT_MODEL_SHA256[:12]}"


def _cached_table() -> tuple[np.ndarray, np.ndarray]:
    """The distilled table: from the cache, or distilled now (~20 s, once per machine) and cached. A cache
    that cannot be written (a read-only home) only costs distilling again next time. Plain .npy files:
    reading an .npz needs zipfile, which a process that dropped its privileges may not be able to import."""
    folder = cache_dir()
    try:
        codes = np.load(folder / CODES_FILE, allow_pickle=False)
        scales = np.load(folder / SCALES_FILE, allow_pickle=False)
        if codes.shape == (len(scales), STATIC_DIMS):
            return codes, scales
    except (OSError, ValueError):
        pass  # missing, unreadable or damaged: distil again
    _log.info("distilling the fast model from the default one (once; cached in %s)", folder)
    codes, scales = distill()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name, array in ((SCALES_FILE, scales), (CODES_FILE, codes)):
            with tempfile.NamedTemporaryFile(dir=folder, suffix=".npy", delete=False) as handle:
                np.save(handle, array, allow_pickle=False)
            os.chmod(handle.name, 0o644)  # a temporary file is private; the table is not
            os.replace(handle.name, folder / name)  # whole or absent, also with two processes distilling
    except OSError as exc:
        _log.warning("could not cache the fast model in %s: %s", folder, exc)
    return codes, scales


class StaticEmbedder:
    """Embeds with the distilled token vectors; loading reads ~8 MB (distilled on first use on a machine)."""

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
            codes, scales = _cached_table()
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
