"""Counting a tokenizer's tokens without running it over every text: what stage 1 does with each distinct line.

A BERT-style tokenizer (BertNormalizer, BertPreTokenizer and WordPiece: the default model's) cuts a text into
words and punctuation first and gives each piece its word pieces on its own. So a line's count is its punctuation
marks (one token each) and the sum of its words' counts, and code repeats its words endlessly: each distinct word
is cut once, and a line is then a regex split, a count of its marks and a sum. On 285,875 distinct lines of kernel
C, Python, Go, Rust, Java, TypeScript, Ruby, PHP and Markdown that took 12.8 s against 68.2 s for `encode_batch` (2
cores, loaded), with the same count for every line. It was 57 % of a kernel file's preparation in the parse
processes. A new word is cut here, by WordPiece's own rule against the vocabulary (_word_pieces), not by a call of
the tokenizer (~2 us each, most of it the call): over the distinct lines of commons-lang, redis and the stdlib's
asyncio and email, file by file as stage 1 counts them (171,596 lines, a fresh counter each run, CPU seconds,
alternating, eight runs each), 0.89 s with the pieces (punctuation too) read by one regex and each new one through
the tokenizer, 0.82 s with the marks counted by `bytes.translate`, 0.63 s with new words cut here; the same count
for each of the 106,370 distinct words of semble-dev's repositories and the standard library. Rejected: new words
gathered and given to `encode_batch` at once (1.19 s: its threads' time and a second pass), a memo of whole lines
(0.87 s: the lines met again in other files, licence headers mostly, did not pay for the memo's writes).

Only texts where the split is certain are counted this way: ASCII text without control characters (tabs, carriage
returns and line ends, which the normaliser treats as spaces, are no control characters here) holding none of the
tokenizer's added tokens (`[CLS]` in a line is one token, not three). Line ends count: every chunk's document header
has one (its path, then its symbol), and without them each header went through the tokenizer, a batch a file: 15 %
of a kernel parse process's samples (py-spy), most of it waiting on the tokenizer's thread pool for a handful of
texts. Anything else (accents and CJK, which the normaliser changes, control characters, which it drops) goes
through the tokenizer itself, as does every text of a tokenizer of another kind (a model folder's byte-level BPE).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Sequence
from typing import TypeVar

from tokenizers import Tokenizer

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# BERT's split of ASCII: alphanumeric runs (words), and each other printable character (a mark) on its own.
_WORDS = re.compile(r"[A-Za-z0-9]+")
_NOT_MARKS = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz \t\r\n"
# Words remembered at most; then forgotten all at once (the frequent ones come straight back). A kernel parse
# process met millions of distinct identifiers; this many take ~30 MB.
MAX_WORDS = 1 << 18

T = TypeVar("T")


def remember(table: dict[str, T], key: str, value: T, limit: int, lock: threading.Lock) -> T:
    """Keep `value` under `key` in a memo of tokenizer answers; a memo at `limit` is first forgotten whole (the
    frequent keys come straight back). Reads need no lock: a dict's get and set are atomic as they are."""
    with lock:
        if len(table) >= limit:
            table.clear()
        table[key] = value
    return value


def counts_by_pieces(tokenizer: Tokenizer) -> bool:
    """Whether the tokenizer's count of an ASCII text is the sum of its BERT pieces' counts."""
    return _by_pieces(json.loads(tokenizer.to_str()))


def _by_pieces(state: dict) -> bool:
    normalizer, pre_tokenizer, model = state.get("normalizer") or {}, state.get("pre_tokenizer") or {}, state["model"]
    return (
        normalizer.get("type") == "BertNormalizer"
        and normalizer.get("clean_text", False)
        and pre_tokenizer.get("type") == "BertPreTokenizer"
        and model.get("type") == "WordPiece"
    )


class TokenCounter:
    """Tokens per text without special tokens, as `tokenizer.encode_batch(texts, add_special_tokens=False)`
    would count them."""

    def __init__(self, tokenizer: Tokenizer):
        self._tokenizer = tokenizer
        state = json.loads(tokenizer.to_str())
        self._by_pieces = _by_pieces(state)
        added = [t.content for t in tokenizer.get_added_tokens_decoder().values()]
        self._added = re.compile("|".join(re.escape(t) for t in added)) if added else None
        self._words: dict[str, int] = {}  # each word's count
        # WordPiece's vocabulary and settings, where it counts by pieces.
        self._vocab: frozenset[str] = frozenset(state["model"]["vocab"]) if self._by_pieces else frozenset()
        self._longest_word: int = state["model"].get("max_input_chars_per_word", 100)
        self._within: str = state["model"].get("continuing_subword_prefix", "##")  # before a piece inside a word
        self._lowercase: bool = bool((state.get("normalizer") or {}).get("lowercase", False))
        self._lock = threading.Lock()  # see remember

    def __call__(self, texts: Sequence[str]) -> list[int]:
        if not self._by_pieces:
            return self._encoded(texts)
        out: list[int] = []
        slow: list[int] = []
        words = self._words
        for i, text in enumerate(texts):
            if text.isascii() and not _CONTROL.search(text) and (self._added is None or not self._added.search(text)):
                found = _WORDS.findall(text)
                marks = len(text.encode().translate(None, _NOT_MARKS))
                try:
                    out.append(marks + sum(map(words.__getitem__, found)))
                except KeyError:
                    out.append(marks + sum(map(self._word, found)))
            else:
                out.append(0)
                slow.append(i)
        if slow:
            for i, count in zip(slow, self._encoded([texts[i] for i in slow]), strict=True):
                out[i] = count
        return out

    def _word(self, word: str) -> int:
        count = self._words.get(word)
        if count is None:
            count = self._word_pieces(word)
            remember(self._words, word, count, MAX_WORDS, self._lock)
        return count

    def _word_pieces(self, word: str) -> int:
        """WordPiece's count for an ASCII word, as the tokenizer's model counts it: the longest piece of the
        vocabulary at each point, its prefix (`##`) before a piece within the word, one unknown token for a word
        no pieces make or one too long."""
        if len(word) > self._longest_word:
            return 1
        if self._lowercase:
            word = word.lower()
        vocab = self._vocab
        count = start = 0
        while start < len(word):
            prefix = self._within if start else ""
            for end in range(len(word), start, -1):
                if prefix + word[start:end] in vocab:
                    break
            else:
                return 1
            count += 1
            start = end
        return count

    def _encoded(self, texts: Sequence[str]) -> list[int]:
        return [len(e.ids) for e in self._tokenizer.encode_batch(list(texts), add_special_tokens=False)]
