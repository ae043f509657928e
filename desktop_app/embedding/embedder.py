"""Turning text into unit vectors with an ONNX sentence-embedding model."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

from .. import model_prefetch
from .model_spec import ModelError, ModelSpec, default_model_spec, model_source, verify_sha256
from .providers import PREFERENCES, cpu_threads, verified_session
from .token_counting import TokenCounter

# Padded tokens per model run. Measured on a 2-core machine, runs of ~2k tokens beat both single texts
# (per-run overhead) and large batches (attention tensors fall out of cache).
BATCH_TOKEN_BUDGET = 2048
# Short texts (symbol names, ~12 tokens) fill a run up to this many: 519 names/s at 64, 556 at 128, 533 at 256.
MAX_BATCH_TEXTS = 128

_SUPPORTED_INPUTS = {"input_ids", "attention_mask", "token_type_ids"}


@dataclass(frozen=True)
class _Counting:
    tokenizer: Tokenizer  # no truncation: callers need true lengths to split long chunks
    counter: TokenCounter  # counts as `tokenizer` does, a word at a time where that is exact


class Embedder:
    """Embeds documents and queries; construction is cheap, the model loads on first use or load()."""

    def __init__(
        self, spec: ModelSpec | None = None, provider_preference: str = "auto", threads: int | None = None
    ) -> None:
        if provider_preference not in PREFERENCES:
            raise ValueError(
                f"provider_preference must be one of {', '.join(PREFERENCES)}, not {provider_preference!r}"
            )
        self.spec = spec if spec is not None else default_model_spec()
        self.provider_preference = provider_preference
        self.threads = threads if threads is not None else cpu_threads()
        self.provider_note: str | None = None  # why the preferred accelerator is not in use, if it is not
        self._session: ort.InferenceSession | None = None
        self._output_name = ""
        self._feeds_token_types = False
        # Read apart, each when first needed: a search embeds and never counts, an index run counts first. Reading
        # both was 36 ms of a fresh process's first search (a read of tokenizer.json 13 ms, the counter's words 10).
        self._embedding_tokenizer: Tokenizer | None = None  # truncates to max_tokens, special tokens included
        self._counting: _Counting | None = None
        # Separate locks so counting tokens never waits for the (slow) model session to be created.
        self._session_lock = threading.Lock()
        self._tokenizer_lock = threading.Lock()
        self._last_query: tuple[str, np.ndarray] | None = None  # replaced whole, so a reader sees one pair

    @property
    def model_id(self) -> str:
        return self.spec.id

    static = False  # a contextual model: its cost grows with the padded length of a batch

    @property
    def source(self) -> str:
        return model_source(self.spec)

    @property
    def dims(self) -> int:
        return self.spec.dims

    @property
    def max_tokens(self) -> int:
        return self.spec.max_tokens

    @property
    def loaded(self) -> bool:
        """Whether the inference session exists (load() has run)."""
        return self._session is not None

    @property
    def provider(self) -> str:
        """The execution provider running the model, e.g. "CPUExecutionProvider"."""
        if self._session is None:
            raise RuntimeError("Embedder.provider is known only after load()")
        return self._session.get_providers()[0]

    def load(self) -> None:
        """Create the inference session; safe to call repeatedly and from several threads."""
        if self._session is not None:
            return
        with self._session_lock:
            if self._session is not None:
                return
            # The session the entry point began for this model, if it did (model_prefetch.py).
            spec = self.spec
            begun = model_prefetch.take(
                model_prefetch.session_key(spec.model_path, spec.model_sha256, self.provider_preference, self.threads)
            )
            session, note = begun or verified_session(
                spec.model_path, spec.model_sha256, self.provider_preference, self.threads
            )
            inputs = {node.name for node in session.get_inputs()}
            missing = {"input_ids", "attention_mask"} - inputs
            unsupported = inputs - _SUPPORTED_INPUTS
            if missing or unsupported:
                raise ModelError(
                    f"{self.spec.model_path} must take input_ids and attention_mask (and optionally "
                    f"token_type_ids); it takes {', '.join(sorted(inputs))}. Export it as a plain encoder."
                )
            output = session.get_outputs()[0]
            width = output.shape[-1] if output.shape else None
            if isinstance(width, int) and width != self.spec.dims:
                raise ModelError(f"{self.spec.model_path} produces {width}-dim vectors, not {self.spec.dims}.")
            self._output_name = output.name
            self._feeds_token_types = "token_type_ids" in inputs
            self.provider_note = note
            self._session = session
            if not isinstance(width, int):
                # An output of dynamic width: one short run shows its size (_run checks it) before the store
                # records the model with the size its quarry-model.json declares.
                try:
                    self._embed(["probe"])
                except ModelError:
                    self._session = None
                    raise

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Tokens per text without special tokens or prefixes; uses the tokenizer only."""
        return self._get_counting().counter(texts)

    def counting_tokenizer(self) -> Tokenizer:
        return self._get_counting().tokenizer

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """float32 array (len(texts), dims) of L2-normalised vectors, in input order."""
        return self._embed([self.spec.document_prefix + text for text in texts])

    def embed_query(self, text: str) -> np.ndarray:
        """float32 array (dims,), L2-normalised (not to be modified: the last query's is handed out again).

        While stage 3 fills in, a search embeds its query twice with this model: for the chunks that have its
        vectors and, through the fast model's query map, for those that do not; the second is the last query's."""
        last = self._last_query
        if last is not None and last[0] == text:
            return last[1]
        vector = self._embed([self.spec.query_prefix + text])[0]
        self._last_query = (text, vector)
        return vector

    def _get_counting(self) -> _Counting:
        if self._counting is not None:
            return self._counting
        with self._tokenizer_lock:
            if self._counting is None:
                counting = self._read_tokenizer()
                counting.no_truncation()
                self._counting = _Counting(counting, TokenCounter(counting))
        return self._counting

    def _get_embedding_tokenizer(self) -> Tokenizer:
        if self._embedding_tokenizer is not None:
            return self._embedding_tokenizer
        with self._tokenizer_lock:
            if self._embedding_tokenizer is None:
                embedding = self._read_tokenizer()
                embedding.enable_truncation(max_length=self.spec.max_tokens)
                self._embedding_tokenizer = embedding
        return self._embedding_tokenizer

    def _read_tokenizer(self) -> Tokenizer:
        path = self.spec.tokenizer_path
        verify_sha256(path, self.spec.tokenizer_sha256)
        try:
            tokenizer = Tokenizer.from_file(str(path))
        except Exception as exc:  # tokenizers raises a bare Exception for malformed files
            raise ModelError(f"{path} is not a valid Hugging Face tokenizer.json: {exc}") from exc
        # tokenizer.json files often carry fixed padding/truncation (e.g. pad to 128 or 512); batches are padded
        # here, per batch, to their longest text instead.
        tokenizer.no_padding()
        return tokenizer

    def _embed(self, texts: list[str]) -> np.ndarray:
        result = np.empty((len(texts), self.spec.dims), dtype=np.float32)
        if not texts:
            return result
        self.load()
        encodings = self._get_embedding_tokenizer().encode_batch(texts)
        lengths = np.array([len(encoding.ids) for encoding in encodings], dtype=np.int64)
        # Longest first: similar lengths share a batch (little padding) and peak memory shows up at once.
        order = np.argsort(-lengths, kind="stable")
        for start, stop in _plan_batches(lengths[order]):
            rows = order[start:stop]
            width = int(lengths[rows[0]])
            input_ids = np.zeros((len(rows), width), dtype=np.int64)
            for row, index in enumerate(rows):
                input_ids[row, : lengths[index]] = encodings[index].ids
            attention_mask = (np.arange(width) < lengths[rows][:, None]).astype(np.int64)
            result[rows] = self._run(input_ids, attention_mask)
        return result

    def _run(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        assert self._session is not None
        feed = {"input_ids": input_ids, "attention_mask": attention_mask}
        if self._feeds_token_types:
            feed["token_type_ids"] = np.zeros_like(input_ids)
        (hidden,) = self._session.run([self._output_name], feed)
        # fp16 exports would lose precision summing hundreds of token vectors.
        hidden = hidden.astype(np.float32, copy=False)
        if hidden.ndim == 2:  # the model pools itself
            pooled = hidden
        elif self.spec.pooling == "cls":
            pooled = hidden[:, 0]
        else:
            mask = attention_mask.astype(hidden.dtype)
            pooled = np.einsum("bld,bl->bd", hidden, mask) / np.maximum(mask.sum(axis=1, keepdims=True), 1.0)
        if pooled.shape[-1] != self.spec.dims:
            raise ModelError(f"{self.spec.model_path} produced {pooled.shape[-1]}-dim vectors, not {self.spec.dims}.")
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.maximum(norms, 1e-12)


def _plan_batches(sorted_lengths: np.ndarray) -> list[tuple[int, int]]:
    """Split lengths sorted longest first into [start, stop) runs within the padded-token budget."""
    batches = []
    start = 0
    while start < len(sorted_lengths):
        # Every text in the run is padded to the first (longest) one; always take at least one text.
        per_batch = max(1, min(MAX_BATCH_TEXTS, BATCH_TOKEN_BUDGET // int(sorted_lengths[start])))
        stop = min(start + per_batch, len(sorted_lengths))
        batches.append((start, stop))
        start = stop
    return batches
