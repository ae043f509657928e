"""Evidence a chunk's own scores do not carry: the query's shape, the file's path, the file's other hits, and
what kind of file the chunk is in.

Measured on semble-dev (41 repositories, 19 languages; targets are files) before these were added, a
question's answer was often a file whose name says it (`features/hover.zig` for "hover information") or a
file with several good hits, while a README heading or a test of the function outranked the code itself.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from ..indexing.identifiers import split_identifier
from ..indexing.languages import classify
from .query import STOPWORDS, ParsedQuery

# How much of the hybrid blend keyword evidence gets, by the query's shape. A question in words leans on the
# model; a query that names code (identifiers, dotted paths) leans on the names and words it contains.
KEYWORD_WEIGHT_WORDS = 0.15
KEYWORD_WEIGHT_CODE = 0.4
# Query words found in the file's path: up to this much added to a chunk's blend (the file stem counts
# double: `bash_completions.go` for "bash completion generation").
PATH_WEIGHT = 0.2
# A file with several candidates: its best chunk gains this share of the runner-up's blend.
FILE_SUPPORT_WEIGHT = 0.25
# Each further definition of an already ranked file keeps this share of its blend, compounding.
SATURATION = 0.5
# Documentation, configuration and tests compete with code at a discount unless the query asks for them.
DOCS_FACTOR = 0.6
CONFIG_FACTOR = 0.6
TEST_FACTOR = 0.6

_DOC_WORDS = frozenset(
    (
        "readme",
        "doc",
        "docs",
        "documentation",
        "guide",
        "tutorial",
        "changelog",
        "example",
        "examples",
        "explain",
        "explained",
        "install",
        "installation",
        "faq",
        "markdown",
    )
)
_CONFIG_WORDS = frozenset(
    (
        "config",
        "configuration",
        "settings",
        "yaml",
        "json",
        "toml",
        "dependency",
        "dependencies",
        "package",
        "build",
        "ci",
        "workflow",
        "docker",
        "manifest",
    )
)
_TEST_WORDS = frozenset(
    ("test", "tests", "testing", "spec", "specs", "fixture", "fixtures", "mock", "mocks", "benchmark", "benchmarks")
)
_TEST_PATH = re.compile(
    r"(^|/)(tests?|specs?|__tests__|testing|testdata|test_?data|fixtures?)(/|$)"
    r"|(^|/)test_[^/]*$|_(test|spec)s?\.[^/]+$|\.(test|spec)\.[^/]+$",
    re.IGNORECASE,
)
_CAMEL_TEST_FILE = re.compile(r"[a-z0-9](Tests?|Specs?)\.[^/.]+$")  # FooTest.java, RouteTests.swift


def stem(word: str) -> str:
    """A crude English stem, enough to match "completion" with "completions" and "handler" with "handlers"."""
    w = word.lower()
    for suffix in ("ies", "es", "s"):
        if len(w) > len(suffix) + 3 and w.endswith(suffix) and not w.endswith("ss"):
            return w[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return w


@dataclass(frozen=True)
class QueryEvidence:
    keyword_weight: float
    words: frozenset[str]  # stemmed content words, for path matching
    wants_docs: bool
    wants_config: bool
    wants_tests: bool


def query_evidence(parsed: ParsedQuery) -> QueryEvidence:
    raw = {w.lower() for w in re.findall(r"\w+", parsed.text)}
    words = frozenset(stem(w) for w in parsed.words if len(w) > 1 and w.lower() not in STOPWORDS)
    code_like = bool(parsed.identifiers) or parsed.looks_like_identifier
    return QueryEvidence(
        keyword_weight=KEYWORD_WEIGHT_CODE if code_like else KEYWORD_WEIGHT_WORDS,
        words=words,
        wants_docs=bool(raw & _DOC_WORDS),
        wants_config=bool(raw & _CONFIG_WORDS),
        wants_tests=bool(raw & _TEST_WORDS),
    )


def is_test_path(path: str) -> bool:
    return bool(_TEST_PATH.search(path) or _CAMEL_TEST_FILE.search(path))


def kind_factor(path: str, query: QueryEvidence) -> float:
    """The discount for a chunk in documentation, configuration or a test, unless the query asks for those."""
    if is_test_path(path) and not query.wants_tests:
        return TEST_FACTOR
    kind = classify(path)
    if kind is None or kind.kind == "code":
        return 1.0
    if kind.kind == "docs":
        return 1.0 if query.wants_docs else DOCS_FACTOR
    return 1.0 if query.wants_config else CONFIG_FACTOR


def path_match(path: str, query: QueryEvidence) -> float:
    """0..1: the share of the query's words named by the file's path, the file stem counting double."""
    if not query.words:
        return 0.0
    p = PurePosixPath(path)
    stem_words = {stem(w) for w in split_identifier(p.stem)}
    folder_words = {stem(w) for part in p.parent.parts for w in split_identifier(part)}
    hits = sum(2 if w in stem_words else 1 if w in folder_words else 0 for w in query.words)
    return min(1.0, hits / (2 * len(query.words)))


def file_support(blends: Sequence[tuple[str, int, float]]) -> dict[int, float]:
    """For each file with several candidates ((file key, candidate id, blend) each): its best candidate's id
    and the blend of the runner-up, which that best one gains a share of."""
    top: dict[str, list[tuple[float, int]]] = {}
    for key, cid, blend in blends:
        best = top.setdefault(key, [])
        best.append((blend, cid))
        best.sort(reverse=True)
        del best[2:]
    return {best[0][1]: best[1][0] for best in top.values() if len(best) > 1}
