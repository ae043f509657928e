"""Tokenizing a piece at a time gives what the tokenizer gives for the whole text: the same counts, on real source
lines and on the lines where a piece-wise split would go wrong (accents, CJK, control characters, added tokens),
with the bundled tokenizer and with a tokenizer of another kind; and the fast model's vectors, made from each
word's remembered token ids, are those of the whole text's tokens."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer, models, pre_tokenizers

from desktop_app.embedding import static_model, token_counting
from desktop_app.embedding.model_spec import default_model_spec
from desktop_app.embedding.static_model import StaticEmbedder
from desktop_app.embedding.token_counting import TokenCounter, counts_by_pieces
from desktop_app.identifiers import expand_identifiers


def bundled() -> Tokenizer:
    tokenizer = Tokenizer.from_file(str(default_model_spec().tokenizer_path))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def encoded(tokenizer: Tokenizer, texts: list[str]) -> list[int]:
    return [len(e.ids) for e in tokenizer.encode_batch(texts, add_special_tokens=False)]


TRICKY = [
    "",
    "   \t  ",
    "def parse_header(self, raw: bytes) -> dict[str, int]:  # noqa: E501",
    "x = a->b[i++] << 2 | ~mask;\r",  # a CRLF file's line keeps its \r
    "print('[CLS] and [SEP] are one token each, [MASK] too')",
    "café = naïve_résumé  # accents the normaliser strips",
    "名前 = '東京'  # CJK characters are words of their own",
    "bell\x07and\x0bvertical\x0ctab",  # control characters the normaliser drops or spaces
    "\ufeffBOM at the start",
    "a" * 150 + " " + "b_" * 80,  # a piece over WordPiece's 100 characters is one [UNK]
    "0x7fffffff 3.14159e-10 1_000_000",
    "CONFIG_NET_RX_BUSY_POLL __init__ _ a__b x_ _y kmalloc_array(GFP_KERNEL) café_NAME",  # pieces at underscores
    "emoji 🚀 in a comment",
    "src/http/client.py\nfunction HTTPClient.send_request: send request",  # a document header: its line end
    "two\nlines\r\nand [SEP] three",
    "XMLHttpRequest getElementById qqqzzzxxyv ZZZqqq 12345678901234567890 x86_64 UTF8Decoder",  # cut in pieces here
]


def test_counts_match_the_tokenizer_on_real_source_and_on_tricky_lines():
    tokenizer = bundled()
    assert counts_by_pieces(tokenizer)
    lines = list(TRICKY)
    library = Path(os.__file__).parent  # real code of every shape: this interpreter's standard library
    for path in sorted(library.glob("*.py"))[:80] + sorted((library / "email").glob("*.py")):
        lines += list(dict.fromkeys(path.read_text(encoding="utf-8", errors="replace").split("\n")))
    assert len(lines) > 20_000
    counter = TokenCounter(tokenizer)
    assert counter(lines) == encoded(tokenizer, lines)
    assert counter(lines[:500]) == encoded(tokenizer, lines[:500])  # again, from the remembered words
    files = ["\n".join(lines[i : i + 40]) for i in range(0, 4000, 40)]  # texts of many lines
    assert counter(files) == encoded(tokenizer, files)
    assert counter([]) == []


def test_the_remembered_words_are_bounded(monkeypatch):
    monkeypatch.setattr(token_counting, "MAX_WORDS", 50)
    tokenizer = bundled()
    counter = TokenCounter(tokenizer)
    lines = [f"identifier_{i} = other_{i * 7} + {i}" for i in range(400)]
    assert counter(lines) == encoded(tokenizer, lines)
    assert len(counter._words) <= 50


def test_a_tokenizer_of_another_kind_is_run_as_it_is():
    """A model folder may bring any tokenizer: one that does not split BERT's way is never counted by pieces."""
    vocab = {"[UNK]": 0, "a": 1, "b": 2, "ab": 3, " ": 4}
    tokenizer = Tokenizer(models.BPE(vocab, [("a", "b")], unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Split(" ", "isolated")
    assert not counts_by_pieces(tokenizer)
    texts = ["ab ab", "abab", "a b", "ba"]
    assert TokenCounter(tokenizer)(texts) == encoded(tokenizer, texts)


def test_the_fast_models_vectors_are_those_of_the_whole_texts_tokens(monkeypatch):
    monkeypatch.setattr(static_model, "MAX_WORDS", 500)  # and forgetting them on the way changes nothing
    library = Path(os.__file__).parent
    texts = TRICKY + [p.read_text(encoding="utf-8", errors="replace")[:4000] for p in sorted(library.glob("*.py"))[:60]]
    texts.insert(3, "")  # no word at all, between texts that have some
    model = StaticEmbedder()
    # A few texts a call, as a fill's batches come, and all of them at once (more new words than MAX_WORDS).
    got = np.concatenate([model.embed_documents(texts[i : i + 7]) for i in range(0, len(texts), 7)])
    np.testing.assert_allclose(model.embed_documents(texts), got, atol=1e-6)
    tokenizer, table = model._get_tokenizer(), model._table
    assert table is not None
    for row, text in enumerate(texts):
        ids = tokenizer.encode(expand_identifiers(text), add_special_tokens=False).ids
        want = table[ids].sum(axis=0) if ids else np.zeros(table.shape[1], dtype=np.float32)
        want = want / max(float(np.linalg.norm(want)), 1e-12)
        # The model sums a text's words (each word's pieces summed once) where this sums its pieces: float32 sums of
        # up to ~1,000 rows in another order, which differed by 1.07e-6 in one component with v3's table.
        np.testing.assert_allclose(got[row], want, atol=1e-5)
    model.embed_documents(["brand_new_word another_unseen_word"])
    assert len(model._words.index) <= 500  # forgotten once full, however much one call brought
