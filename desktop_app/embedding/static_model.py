"""The fast model: Quarry's own static code model, a token table averaged per text.

The table ships in resources/models/quarry-static-code-256-v3/ (its card says how it was trained: the default
model as teacher over 215,000 chunks, names and outlines of 314 permissively licensed packages in 17
languages, then two contrastive rounds on doc comment -> function pairs from the same packages (43,545, then
83,426), desktop_app/training/). It replaced a table distilled from the default model on first use (each token alone
through MiniLM, PCA, Zipf-rank SIF weights), which froze a machine's first index for 20-40 s and ranked
worse: semantic mode alone, stdlib dev nl MRR@10 0.362 -> 0.432, semble-dev NDCG@10 0.669 -> 0.709.

A text's vector is the normalised sum of its tokens' vectors, so embedding costs a tokenizer pass and a
gather: ~100x the contextual model's throughput on a CPU. Identifiers are followed by their words first
(`parseHeader` -> `parseHeader parse header`), which WordPiece alone splits badly (measured with the distilled
table on the stdlib dev set, semantic-only nl MRR@10 0.292 -> 0.343), and the table was trained on text read
the same way. It is the semantic layer of a first index (stage 2) while the contextual model catches up, and
a model of its own ("fast") for machines too slow for the contextual one.

A query is one short text, so it is read by the default contextual model as well: its embedding, carried into
the table's space by a trained linear map (query_map.npy, training/query_map.py), is added to the query's own
static vector. A static vector is the sum of a question's words, blind to their order; the contextual model
reads the question whole, for a few milliseconds a query. Chunks keep their static vectors, so the map needs no
re-embedding. Measured at the end of stage 2 (hybrid nl MRR@10): stdlib dev 0.482 -> 0.491, the held-out
doc-comment sets' mean 0.444 -> 0.458, semble-dev unchanged (see the model card). Rejected: the contextual
embedding alone through a map fitted by least squares (semantic stdlib 0.433 -> 0.403; half and half with the
static vector, hybrid Go doc comments 0.411 -> 0.396).
"""

from __future__ import annotations

import bisect
import logging
import re
import threading
from collections.abc import Sequence
from itertools import chain
from typing import TYPE_CHECKING

import numpy as np
from tokenizers import Tokenizer

from desktop_app.assets import resource_path
from desktop_app.identifiers import expansion, words_of

from .model_spec import DEFAULT_MODEL_ID, DEFAULT_TOKENIZER_SHA256, TOKENIZER_FILE, ModelError, verify_sha256
from .token_counting import TokenCounter

if TYPE_CHECKING:
    from .embedder import Embedder

_log = logging.getLogger(__name__)

STATIC_MODEL_ID = "quarry-static-code-256-v3"
# Earlier fast models: an index that holds their vectors drops them on its next run (worker.Engine.index).
RETIRED_STATIC_MODEL_IDS = ("quarry-static-minilm-256", "quarry-static-code-256", "quarry-static-code-256-v2")
STATIC_SOURCE = "fast"
STATIC_DIMS = 256
CODES_FILE = "codes.npy"  # int8 (vocabulary, dims): each row's values over its scale
SCALES_FILE = "scales.npy"  # float32 (vocabulary,)
CODES_SHA256 = "5f3e90bc4043859ccd8488b2c6f56121c70ad899351fefd3d145633dda4bf1a5"
SCALES_SHA256 = "6c99b6798c8ad04e9b797be6683e2e66b78ba3e2c650114fb1aec8fa754c9ff6"
QUERY_MAP_FILE = "query_map.npy"  # float32 (the default model's dims, dims): its query embedding into the table's space
QUERY_MAP_SHA256 = "93d823a7df271c262fa83ed3df01bf04c087a7da0547742b07c2d07fa04f7695"
# Chunks are sized for the default model's tokenizer, which the table shares, so both layers share one chunking.
MAX_TOKENS = 256
MAX_WORDS = 1 << 16  # words remembered with their vectors (_word_rows): 64 MB of float32 rows
# The pieces of an ASCII word that the tokenizer reads apart (its pre-tokenizer cuts at spaces and punctuation).
_PIECE = re.compile(r"[^_ ]+|_")
SUM_SLICE = 8192  # word or token rows gathered at a time (8 MB at 256 dims)


def _shipped(name: str, digest: str) -> np.ndarray:
    """One of the model's arrays, checked against its sha256 first."""
    path = resource_path("models", STATIC_MODEL_ID, name)
    verify_sha256(path, digest)
    return np.load(path, allow_pickle=False)


def _table() -> np.ndarray:
    """The shipped table as float32 (vocabulary, dims)."""
    return _shipped(CODES_FILE, CODES_SHA256).astype(np.float32) * _shipped(SCALES_FILE, SCALES_SHA256)[:, None]


class StaticEmbedder:
    """Embeds with the shipped token vectors; loading reads 7.9 MB. Queries also go through the default contextual
    model: `query_model` (an engine shares the one it searches with), else one of its own, loaded at the first
    query."""

    def __init__(self, query_model: Embedder | None = None) -> None:
        self.query_model = query_model
        # Why queries are read by the table alone (the contextual model would not load), once that is known.
        self.query_model_error: str | None = None
        self._query_map: np.ndarray | None = None
        self._table: np.ndarray | None = None
        self._tokenizer: Tokenizer | None = None
        self._counter: TokenCounter | None = None
        self._words = _WordRows(0, STATIC_DIMS)  # see _word_rows
        self._piece_ids: dict[str, tuple[int, ...]] = {}  # see _tokens_of
        self._words_lock = threading.Lock()
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
            self._get_tokenizer()
            self._table = _table()

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
        if self._counter is None:
            self._counter = TokenCounter(self._get_tokenizer())
        return self._counter(texts)

    def counting_tokenizer(self) -> Tokenizer:
        return self._get_tokenizer()

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """float32 (len(texts), dims), L2-normalised; a text with no tokens gets a zero vector.

        A text's vector is the sum of its words' vectors, each word's the sum of its tokens' rows, kept for the
        words seen lately (_word_rows): code repeats its words, so each is read by the tokenizer once, and what is
        left per word runs in C (a dict look-up by map, a gather, a sum per text); a new word's ids come from its
        pieces' (_tokens_of). The fast stage (`quarry index --until fast` on a keyword-stage index of the Linux
        kernel's net/, 103,819 chunks, 188,381 texts, 5.4M words of which 152,000 differ; alternating, load ~1):
        a word and a token at a time in Python 16.5-20.1 s; words kept with their vectors 13.0 / 14.6 s; and
        their pieces kept too 10.6 / 12.3 s. Rejected: keeping each word's token ids instead of its vector (as
        before, but looked up and gathered the same way), 13.5 / 15.2 s, and np.add.reduceat for the sums
        (_sum_segments)."""
        self.load()
        assert self._table is not None
        out = np.zeros((len(texts), STATIC_DIMS), dtype=np.float32)
        if not texts:
            return out
        words = [words_of(text) for text in texts]
        lengths = np.fromiter(map(len, words), dtype=np.intp, count=len(words))
        rows, index = self._word_rows(list(chain.from_iterable(words)))
        _sum_segments(rows, index, lengths, out)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)

    def _word_rows(self, words: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """The rows of word vectors these words are in, and each word's row: new words are read by the tokenizer
        as expand_identifiers reads them (the word, then its parts when they differ). A text is read as its
        words joined by spaces, which the tokenizer's pre-tokenizer splits on first, so its tokens are its
        words' tokens in turn. At most MAX_WORDS are remembered, then all are forgotten at once; the rows handed
        out are never written again (forgetting starts a new array), so another thread may sum them meanwhile."""
        assert self._table is not None
        with self._words_lock:
            known, distinct = self._words, set(words)
            new = distinct.difference(known.index)
            if known.count + len(new) > len(known.rows):
                known = self._words = _WordRows(max(MAX_WORDS, len(distinct)), STATIC_DIMS)
                new = distinct
            if new:
                added = sorted(new)
                flat, token_counts = self._tokens_of(added)
                start = known.count
                _sum_segments(self._table, flat, token_counts, known.rows[start : start + len(added)])
                known.index.update(zip(added, range(start, start + len(added)), strict=True))
                known.count += len(added)
            index = np.fromiter(map(known.index.__getitem__, words), dtype=np.intp, count=len(words))
            return known.rows, index

    def _tokens_of(self, words: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """The token ids of the words in turn (as expand_identifiers reads each), and how many each has.

        An ASCII word is read piece by piece, as the tokenizer's pre-tokenizer cuts it (at spaces, and around
        each underscore, its one punctuation), each piece's ids kept (_piece_ids): identifiers share their
        pieces (`CONFIG_NETROM_MODULE` is CONFIG, NETROM, MODULE twice over), and the tokenizer cost ~2 us a
        token, ~11 tokens for each of the 152,000 words of the Linux kernel's net/. Other words go to it whole."""
        pieces = [_PIECE.findall(expansion(w).lower()) if w.isascii() else None for w in words]
        memo, distinct = self._piece_ids, {piece for cut in pieces if cut is not None for piece in cut}
        new = distinct.difference(memo)
        if len(memo) + len(new) > MAX_WORDS:
            memo = self._piece_ids = {}
            new = distinct
        whole = [w for w, cut in zip(words, pieces, strict=True) if cut is None]
        read = sorted(new)
        tokens = self._encode_apart([*read, *(expansion(w) for w in whole)])
        memo.update(zip(read, tokens, strict=False))
        of_whole = iter(tokens[len(read) :])
        ids = [
            next(of_whole) if cut is None else tuple(chain.from_iterable(map(memo.__getitem__, cut))) for cut in pieces
        ]
        counts = np.fromiter(map(len, ids), dtype=np.intp, count=len(ids))
        return np.fromiter(chain.from_iterable(ids), dtype=np.intp, count=int(counts.sum())), counts

    def _encode_apart(self, texts: list[str]) -> list[tuple[int, ...]]:
        """Each text's token ids, from one tokenizer call over them all, told apart by their offsets (a call a
        text cost ~9 us more)."""
        if not texts:
            return []
        starts = np.cumsum([0] + [len(t) + 1 for t in texts[:-1]])
        encoding = self._get_tokenizer().encode(" ".join(texts), add_special_tokens=False)
        token_starts = np.fromiter((o[0] for o in encoding.offsets), dtype=np.intp, count=len(encoding.ids))
        ends = np.searchsorted(np.searchsorted(starts, token_starts, side="right") - 1, np.arange(len(texts)), "right")
        ids = encoding.ids
        return [tuple(ids[a:b]) for a, b in zip([0, *ends[:-1].tolist()], ends.tolist(), strict=True)]

    def embed_query(self, text: str) -> np.ndarray:
        """The query's static vector plus its contextual embedding carried into the table's space, normalised;
        the static vector alone where the contextual model cannot load (query_model_error says why)."""
        own = self.embed_documents([text])[0]
        contextual = self._contextual_query(text)
        if contextual is None:
            return own
        # Equal parts. The carried part weighed more helps questions about functions and costs questions about
        # files (hybrid at the end of stage 2, carried part x1 / x1.5 / x2: stdlib dev nl MRR@10 0.502 / 0.509 /
        # 0.510, a held-out stdlib set 0.458 / 0.459 / 0.456, the doc-comment sets' mean 0.462 / 0.466 / 0.469,
        # semble-dev NDCG@10 0.8430 / 0.8409 / 0.8390; x0.6: 0.503, 0.460, 0.454), so it stays as trained.
        both = own + contextual
        return (both / max(float(np.linalg.norm(both)), 1e-12)).astype(np.float32)

    def _contextual_query(self, text: str) -> np.ndarray | None:
        if self.query_model_error is not None:
            return None
        with self._lock:
            if self._query_map is None:
                self._query_map = _shipped(QUERY_MAP_FILE, QUERY_MAP_SHA256)
            if self.query_model is None:
                from .embedder import Embedder  # onnxruntime: not for the parse processes, which embed nothing

                self.query_model = Embedder()
        try:
            return self.query_model.embed_query(text) @ self._query_map
        except ModelError as exc:
            self.query_model_error = str(exc)
            _log.warning("queries by meaning are read by the fast model's table alone: %s", exc)
            return None


class _WordRows:
    """Words seen lately and their vectors: `index` gives a word's row of `rows`, filled up to `count`."""

    def __init__(self, capacity: int, dims: int) -> None:
        self.index: dict[str, int] = {}
        self.rows = np.empty((capacity, dims), dtype=np.float32)
        self.count = 0


def _sum_segments(rows: np.ndarray, index: np.ndarray, lengths: np.ndarray, out: np.ndarray) -> None:
    """out[i] = the sum of rows[index[j]] over text i's segment of `index` (lengths[i] entries; none: zeros).
    The rows are gathered SUM_SLICE at a time, so that they stay in the cache (gathering every text's rows into one
    array wrote and read back 800 MB for commons-lang's 7,577 chunks: 3.1 s), and each text's are summed apart:
    np.add.reduceat over the slice's segments took 6.4 ms a slice of 8,192 rows, a cumulative sum 23 ms, the
    loop 2.2 ms."""
    ends = np.cumsum(lengths).tolist()
    text, total = 0, len(ends)
    while text < total:
        lo = ends[text] - int(lengths[text])
        # As many texts as fit in a slice, and at least one.
        last = max(text + 1, bisect.bisect_right(ends, lo + SUM_SLICE, text))
        gathered = rows[index[lo : ends[last - 1]]]
        start = 0
        for row in range(text, last):
            end = ends[row] - lo
            out[row] = gathered[start:end].sum(axis=0) if end > start else 0.0
            start = end
        text = last
