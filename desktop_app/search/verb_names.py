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


# The first words of a predicate's name, and what a question says of the truth value it returns, within this many
# words after its verb ("Returns true if", "Return whether", "Returns a boolean indicating"). Hybrid at the end of
# stage 2, nl MRR@10: stdlib dev 0.5490 -> 0.5504, held-out 0.472 -> 0.474, the doc-comment sets' mean 0.5294 ->
# 0.5297; on the full index 0.605 -> 0.606, 0.531 -> 0.532, 0.5522 -> 0.5523; no question lower.
PREDICATE_WORDS = frozenset(word_key(w) for w in ("is", "has", "have", "can", "should", "does", "are", "was"))
TRUTH_WORDS = frozenset(word_key(w) for w in ("true", "false", "whether", "if", "boolean", "bool", "yes", "nonzero"))
TRUTH_WITHIN = 3


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
    """The shares of the words the question's opening verb is named with ({} for a verb the table lacks), without a
    predicate's words (`is_absolute`, `hasNext`) where the verb does not ask for one itself and the question speaks
    of no truth value right after it: "Return an absolute version of this path" asks for `absolute`. The table,
    learned from every question opening with a verb, gives "returns" -> is 0.41, from its "Returns true if ..."."""
    verb = opening_word(question)
    shares = table().get(verb, {}) if verb else {}
    if any(shares.get(word) == 1.0 for word in PREDICATE_WORDS):
        return shares  # "Checks if ...", "Determines whether ...": the verb's own functions are predicates
    said = {word_key(w) for w in LETTERS.findall(question)[1 : 1 + TRUTH_WITHIN]}
    if said & TRUTH_WORDS:
        return shares
    return {word: share for word, share in shares.items() if word not in PREDICATE_WORDS}


def fit_of(name: str | None, shares: dict[str, float]) -> float:
    """A symbol name's fit to a verb's shares (0 when none of its words is among them)."""
    if not name or not shares:
        return 0.0
    return max((shares.get(w, 0.0) for w in name_words(name)), default=0.0)
