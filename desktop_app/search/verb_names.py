"""What a function that does what a question's verb says is named: a table learned from doc comments.

A question that says what code does opens with its verb ("Removes all nodes from the tree.", "Checks if a
version satisfies a constraint."), and the function it asks for is often named with another word: `Clear`,
`isValid`, `New` for "Creates". The keywords match the verb itself, and a short name weighs little in a
function's vector. The table, learned by training/verb_names.py from the documented functions of the training
corpus, gives for each opening verb the words the names of the functions it describes hold most often, as
shares of the verb's most usual one: "removes" -> remove 1.0, clear 0.18, delete 0.13, pop 0.09; "checks" -> is
1.0, check 0.39, has 0.14; "creates" -> new 1.0, create 0.85, make 0.62 (its model card has more). A name's fit
is the largest share among its words, so that a prefix (`sqlite3WalkSelect`, `glm_vec2_add`) does not hide the
verb; only the first word of each name counted while the table was learned, where the verb stands in most.
"""

from __future__ import annotations

import functools
import json
import re

from ..assets import resource_path
from ..embedding.model_spec import ModelError, verify_sha256
from ..identifiers import last_name, split_identifier

VERB_NAMES_ID = "quarry-verb-names-v1"
VERB_NAMES_FILE = "verb_names.json"
VERB_NAMES_SHA256 = "f4a4023344454083ea796f4070b579bd65bdf8292491b636813a512a8ee2a6eb"
# A question's words as the table was learned: runs of letters.
LETTERS = re.compile(r"[A-Za-z]+")


def word_key(word: str) -> str:
    """One form for a word's inflections, the same in questions and names: removes, remove, removed, removing ->
    remov; entries -> entry; matches -> match (a crude English stem, never read by a person)."""
    w = word.lower()
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 4 and w.endswith("es") and w[:-2].endswith(("s", "x", "z", "ch", "sh")):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    elif len(w) > 5 and w.endswith("ing"):
        w = w[:-3]
    elif len(w) > 4 and w.endswith("ed"):
        w = w[:-2]
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


def opening_word(text: str) -> str | None:
    """The key of a question's first word (letters only), or None for a question without one."""
    first = LETTERS.search(text)
    return word_key(first.group()) if first else None


@functools.lru_cache(maxsize=1 << 14)  # a live search ranks mostly the same names keystroke after keystroke
def name_words(name: str) -> tuple[str, ...]:
    """The keys of a symbol name's words of two letters or more, in order (`Tree.Clear` -> clear)."""
    return tuple(word_key(w) for w in split_identifier(last_name(name)) if len(w) > 1)


@functools.cache
def table() -> dict[str, dict[str, float]]:
    """The shipped table, checked against its sha256: {verb key: {name word key: share}}."""
    path = resource_path("models", VERB_NAMES_ID, VERB_NAMES_FILE)
    verify_sha256(path, VERB_NAMES_SHA256)
    try:
        verbs = json.loads(path.read_text(encoding="utf-8"))["verbs"]
    except (OSError, ValueError, KeyError) as exc:
        raise ModelError(f"Model file {path} cannot be read ({exc}); reinstall Quarry.") from exc
    return {verb: {word: float(share) for word, share in words.items()} for verb, words in verbs.items()}


def name_fit(question: str) -> dict[str, float]:
    """The shares of the words the question's opening verb is named with ({} for a verb the table lacks)."""
    verb = opening_word(question)
    return table().get(verb, {}) if verb else {}


def fit_of(name: str | None, shares: dict[str, float]) -> float:
    """A symbol name's fit to a verb's shares (0 when none of its words is among them)."""
    if not name or not shares:
        return 0.0
    return max((shares.get(w, 0.0) for w in name_words(name)), default=0.0)
