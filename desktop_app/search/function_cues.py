"""What a question that says what code does shares with the function it describes beyond meaning and keywords: the
words of the function's declaration, and the words its name holds abbreviated or run together.

A doc comment names what its function takes and gives: "Copies bytes from a URL to an OutputStream." describes
`copy(URL url, OutputStream output)`, "Generates 32-bit hash from the byte array with the given offset, length and
seed." `hash32x86(byte[] data, int offset, int length, int seed)`, "Removes all items from the btree."
`func (t *BTree) Clear()`. The overloads of a name, and the families of functions of one file, differ mostly
there: their bodies hold much the same words, so the keyword index and a chunk's vector tell them apart poorly
(of the Java doc-comment set's 168 questions whose answer was not first, 121 had another function of the answer's
own file first). So a function whose declaration (its text up to the body's opening after its name: annotations,
modifiers, receiver, parameters, return type) holds the question's content words is raised, up to
DECLARATION_WORDS of them.

A name may also hold a word of the question in a form the keyword index, which matches whole words, cannot see:
abbreviated (`glm_max` for "maximum", `glm_make_deg` for "degree", `getLen` for "length") or run into another word
(`isclosed` for "True if the connection is closed.", `getheaders`, `heapify`, `astring` for "Asserts something is a
string."). So a name word of three letters or more, none of the question's words, that begins a question word two
letters longer or more (not just by a derivational ending: `read` does not abbreviate "reader") or holds one of four
letters or more, raises its function too. The weights are fusion.py's.
"""

from __future__ import annotations

import functools
import re

from ..identifiers import last_name, split_identifier
from ..store.rows import Hit
from .query import ParsedQuery
from .verb_names import LETTERS, opening_word, word_key

# How far into a chunk its function's name may stand for the text before it to be the declaration's (annotations,
# modifiers and a leading comment come first).
DECLARATION_CHARS = 400
# Matched question words for the whole raise: a question names a few of what its function takes. Over the
# doc-comment sets at the end of stage 2 (with a first form of the hidden words' raise): 2 / 3 / 4 words, mean nl
# MRR@10 0.524 / 0.527 / 0.528, the stdlib dev set 0.537 / 0.539 / 0.533.
DECLARATION_WORDS = 3
# Where a body opens: a brace (C-like languages), a colon ending the line (Python), a semicolon (a declaration
# without a body: an abstract or interface method, a C prototype).
_BODY_OPENS = ("{", ":\n", ";")
# A name word abbreviates a question word it begins when it is this long and the other at least this much longer,
# unless what is left is a derivational ending (a word and its derivative are two words, both the index's to match);
# a name word holds a question word run into another when that one is this long.
ABBREVIATION_MIN = 3
ABBREVIATION_MORE = 2
DERIVATIONAL_ENDINGS = frozenset(
    ("er", "ers", "or", "ors", "ing", "ings", "ed", "ion", "ions", "able", "ment", "ments", "ly", "ness")
)
RUN_INTO_MIN = 4


def question_words(parsed: ParsedQuery) -> frozenset[str]:
    """The keys of the question's content words after its verb (three letters or more), as declarations are read."""
    verb = opening_word(parsed.text)
    return frozenset(word_key(w) for w in parsed.words if len(w) > 2) - {verb}


@functools.lru_cache(maxsize=1 << 12)  # a live search ranks mostly the same candidates keystroke after keystroke
def declaration_words(text: str, name: str) -> frozenset[str]:
    """The keys of the words of a function's declaration in its chunk's text; none where the name does not stand
    near the chunk's start (a later window of a long function, or a text that does not declare it)."""
    found = re.search(rf"\b{re.escape(name)}\b", text[:DECLARATION_CHARS])
    if found is None:
        return frozenset()
    ends = [i for i in (text.find(mark, found.end()) for mark in _BODY_OPENS) if i >= 0]
    declaration = text[: min(ends, default=len(text))]
    return frozenset(word_key(part) for word in LETTERS.findall(declaration) for part in split_identifier(word))


def declaration_fit(words: frozenset[str], hit: Hit) -> float:
    """How much of what the question names a function's declaration holds: 0..1, full at DECLARATION_WORDS."""
    if not words or hit.chunk_type != "function" or not hit.symbol_name:
        return 0.0
    held = words & declaration_words(hit.text, last_name(hit.symbol_name))
    return min(1.0, len(held) / DECLARATION_WORDS)


def abbreviates(part: str, word: str) -> bool:
    """Whether `part` is `word` cut short (`max` for "maximum", `util` for "utility"), not just without a
    derivational ending (`read` does not abbreviate "reader")."""
    return (
        len(part) >= ABBREVIATION_MIN
        and len(word) >= len(part) + ABBREVIATION_MORE
        and word.startswith(part)
        and word[len(part) :] not in DERIVATIONAL_ENDINGS
    )


def abbreviations(words: frozenset[str]) -> dict[str, frozenset[str]]:
    """Each cut-short form of `words` that abbreviates one, with the words it stands for."""
    forms: dict[str, set[str]] = {}
    for word in words:
        for end in range(ABBREVIATION_MIN, len(word) - ABBREVIATION_MORE + 1):
            if abbreviates(word[:end], word):
                forms.setdefault(word[:end], set()).add(word)
    return {form: frozenset(full) for form, full in forms.items()}


def hidden_word_fit(symbol_name: str | None, parsed: ParsedQuery) -> float:
    """1 when the name holds a word of the question abbreviated (`max` for "maximum") or run into another
    (`isclosed` for "closed"), else 0."""
    if not symbol_name:
        return 0.0
    spelt, keys = _spelt(parsed.words)
    for part in split_identifier(last_name(symbol_name)):
        if len(part) < ABBREVIATION_MIN or part in spelt or word_key(part) in keys:
            continue
        for word in spelt:
            if abbreviates(part, word) or (len(word) >= RUN_INTO_MIN and len(part) > len(word) and word in part):
                return 1.0
    return 0.0


@functools.lru_cache(maxsize=64)  # one question's words, for each of its candidates
def _spelt(words: tuple[str, ...]) -> tuple[frozenset[str], frozenset[str]]:
    """A question's content words and their keys."""
    return frozenset(words), frozenset(word_key(w) for w in words)
