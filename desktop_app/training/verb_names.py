"""Learns the verb table (search/verb_names.py): what the functions a doc comment's opening verb describes are named.

Every documented function of the training corpus (pairs.py's documented_functions: a doc comment's first
sentence and the function it sits on) gives one observation: the sentence's first word, less a leading copy of
the name (Go's "Clear removes all nodes" -> removes), against the first word of the function's name
(`Clear` -> clear, `isValid` -> is, `sqlite3WalkExpr` -> sqlite3). For each verb the table keeps the words seen
with it at least MIN_COUNT times, in MIN_PACKAGES packages or more (one package's naming convention, psutil's
`psutil_*` C functions documented "Return ...", is not the language's), and whose share of the verb's functions
is at least MIN_LIFT times their share of all functions (so that `get`, first in every seventh name, is kept for
"returns" and not for "removes"); each as a share of the verb's most usual word. Up to PER_LANGUAGE functions of
each language, files in a seeded order (texts.sample_by_language); one (sentence, name) counted once.

    python -m desktop_app.training.verb_names [--cache ~/.cache/quarry-training]

fetches the corpus the committed manifest pins (cached), writes the table into resources/models/ and prints its
sha256 for search/verb_names.py. About two minutes on two cores.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..assets import resource_path
from ..identifiers import split_identifier
from ..search.verb_names import LETTERS, VERB_NAMES_FILE, VERB_NAMES_ID, word_key
from . import corpus
from .pairs import documented_functions
from .texts import SourceFile, read_text, sample_by_language, source_files

PER_LANGUAGE = 30_000
SEED = 7
MIN_COUNT = 5
# From 1 to 2 packages: 1,634 -> 1,102 words, the function-level sets the same (doc-comment mean 0.535 both,
# stdlib dev 0.589 both); 3 packages: 868 words, the same again.
MIN_PACKAGES = 2
MIN_LIFT = 2.0


def named_questions(source: SourceFile) -> Iterator[dict]:
    """{"question", "name", "language", "package"} for each documented function of one file."""
    text = read_text(source)
    if text is None:
        return
    for d, asked, _ in documented_functions(text, source):
        yield {"question": asked, "name": d.name, "language": source.language, "package": source.package}


def observation(question: str, name: str) -> tuple[str, str] | None:
    """(the question's opening word, the name's first word), as keys; None where either has none."""
    bare = name.rsplit(".", 1)[-1]
    opening = LETTERS.findall(question)[:2]
    if opening and opening[0].lower() == bare.lower():  # Go's doc comments open with the name itself
        opening = opening[1:]
    words = [w for w in split_identifier(bare) if len(w) > 1]
    if not opening or not words:
        return None
    return word_key(opening[0]), word_key(words[0])


def build_table(items: Iterable[dict]) -> dict[str, dict[str, float]]:
    """{verb: {name word: share of the verb's most usual name word}}, from named_questions' items."""
    seen: set[tuple[str, str]] = set()
    pairs: Counter[tuple[str, str]] = Counter()
    packages: dict[tuple[str, str], set[str]] = defaultdict(set)
    for item in items:
        if (item["question"], item["name"]) in seen:
            continue
        seen.add((item["question"], item["name"]))
        found = observation(item["question"], item["name"])
        if found is not None:
            pairs[found] += 1
            packages[found].add(item["package"])
    verbs: Counter[str] = Counter()
    words: Counter[str] = Counter()
    for (verb, word), count in pairs.items():
        verbs[verb] += count
        words[word] += count
    total = sum(pairs.values())
    kept: dict[str, dict[str, float]] = {}
    for (verb, word), count in pairs.items():
        share = count / verbs[verb]
        if count >= MIN_COUNT and len(packages[verb, word]) >= MIN_PACKAGES and share >= MIN_LIFT * words[word] / total:
            kept.setdefault(verb, {})[word] = share
    return {
        verb: {word: round(share / max(shares.values()), 3) for word, share in sorted(shares.items())}
        for verb, shares in sorted(kept.items())
    }


def write_table(table: dict[str, dict[str, float]], path: Path) -> str:
    """Write the table as the app reads it; returns its sha256."""
    text = json.dumps({"verbs": table}, indent=0, sort_keys=True) + "\n"
    path.write_text(text, encoding="utf-8")
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m desktop_app.training.verb_names", description=__doc__)
    parser.add_argument("--cache", type=Path, default=corpus.DEFAULT_CACHE)
    args = parser.parse_args(argv)
    cache = args.cache.expanduser()
    if corpus.main(["fetch", "--cache", str(cache)]) != 0:
        return 1
    items = sample_by_language(source_files(cache / "index.jsonl"), PER_LANGUAGE, SEED, named_questions)
    table = build_table(items)
    target = resource_path("models", VERB_NAMES_ID, VERB_NAMES_FILE)
    digest = write_table(table, target)
    print(f"{len(items)} documented functions, {len(table)} verbs, {sum(map(len, table.values()))} words")
    print(f"{VERB_NAMES_FILE} sha256 {digest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
