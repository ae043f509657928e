"""Evidence a chunk's own scores do not carry: the query's shape, the file's path, and what kind of file the
chunk is in.

Measured on semble-dev (41 repositories, 19 languages; targets are files) before these were added, a
question's answer was often a file whose name says it (`features/hover.zig` for "hover information") or a
file with several good hits, while a README heading or a test of the function outranked the code itself.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..identifiers import split_identifier
from ..indexing.languages import classify
from .function_cues import abbreviations
from .query import ParsedQuery

# How much of the hybrid blend keyword evidence gets, by the query's shape. A question in words leans on the
# model; a query that names code (identifiers, dotted paths) leans on the names and words it contains.
KEYWORD_WEIGHT_WORDS = 0.15
# 0.4 before the file's meaning was evidence (FILE_MEANING); with it, semble-dev over 40 repositories 0.853 at
# 0.4, 0.855 at 0.3 (symbol category 0.960 -> 0.966), stdlib unchanged.
KEYWORD_WEIGHT_CODE = 0.3
# At least this much for a chunk whose meaning comes from the fast static model (a first index filling
# in): its cosines say less, so its keywords say more. Stdlib dev set, store frozen after stage 2, nl
# MRR@10: with the distilled fast model's name vectors 0.467 at 0.15, 0.486 at 0.3, 0.479 at 0.45; with the
# contextual name vectors 0.516 at 0.15, 0.520 at 0.2, 0.509 at 0.25, 0.508 at 0.3. With the trained static
# model alone (stage 2 since it ships; the contextual names are stage 3's first step), dev / held-out stdlib
# 0.475 / 0.449 at 0.2, 0.491 / 0.458 at 0.3, 0.495 / 0.468 at 0.4, 0.486 / 0.470 at 0.5; but semble-dev (17
# repositories, its questions are about files) 0.843 at 0.2 against 0.835 at 0.4, so 0.2 stays.
KEYWORD_WEIGHT_FAST = 0.2
# Query words found in the file's path: up to this much added to a chunk's blend (the file stem counts
# double: `bash_completions.go` for "bash completion generation").
PATH_WEIGHT = 0.2
# Each further definition of an already ranked file keeps this share of its blend, compounding: the windows
# and neighbours of one good hit give way a little to other files. Measured (hybrid, 11 semble-dev
# repositories / stdlib dev set nl MRR@10): none 0.835 / 0.563, 0.97 0.851 / 0.565, 0.95 0.855 / 0.562,
# 0.9 0.857 / 0.556, 0.5 0.866 / 0.514. semble-dev's targets are files, the stdlib set's are functions: a
# strong decay finds more files but buries the second-best function of a file, so the mild one is kept.
# Rejected, same measure: giving a file's best chunk a share of its runner-up (0.25: 0.876 / 0.478 with
# decay 0.5, 0.860 / 0.554 at 0.05 with 0.95), and raising every chunk of a file with two good hits
# (0.854 / 0.558).
SATURATION = 0.95
# The best-ranked chunk of each file gains up to this share of the best blend, in proportion to its file's
# summed blends against the file with the most (a file with several good hits is about the query; semble's
# "file coherence" does the same). Measured with NAME_WEIGHT (fusion.py) and TYPE_FACTOR, hybrid, NDCG@10 on
# 17 semble-dev repositories / 10 others not used for tuning / stdlib dev set nl MRR@10:
#   none, name 0.3, type 1: 0.850 / 0.851 / 0.562    0.2, name 0.3, type 1: 0.870 / 0.869 / 0.547
#   0.1, name 0.4, type 1: 0.855 / 0.864 / 0.561      0.2, name 0.4, type 0.9: 0.862 / 0.866 / 0.561 (kept)
#   0.2, name 0.45, type 0.9: 0.858 / 0.862 / 0.567   0.2, name 0.4, type 0.8: 0.863 / 0.863 / 0.562
# Giving the bonus to the file's best blend instead of its best-ranked chunk reordered chunks inside a file
# (`_copytree` over `copytree`: 0.536 at 0.2); summing only a file's best 2, 3 or 5, the square root of the
# sum, or only blends above half the best moved the stdlib figure by under 0.003. File evidence costs the
# stdlib set about what it gains semble-dev: its targets are functions, and a file with many near misses
# lifts its best one over the right function elsewhere. Rejected the same way: a bonus for a file whose whole
# name is among the query's words (`Headers.scala` for "Headers and individual Header types", `json.hpp`
# excluded as a name most candidate files share): +0.009 / -0.012 stdlib at 0.1, +0.002 / -0.001 at 0.2
# divided by the query's word count.
FILE_SUPPORT = 0.2
# What a file means, as its best candidate's code cosine says (between the candidate files' lowest, 0, and highest,
# 1): up to FILE_MEANING is added to each of its candidates and FILE_MEANING_BEST more to its best-ranked one. The
# best-ranked chunk of a file is often there for its name or words (a `driver` method), while the chunk whose
# meaning is closest to the question is another of the same file; and among files, the one holding the closest
# meaning is the likelier answer to a question about what code does.
# Measured on 40 semble-dev repositories / stdlib nl MRR@10, the rest of the ranking as now: neither 0.848 /
# 0.567 (with FILE_MEANING_BEST alone 0.854 / 0.564), 0.1 and 0.05 0.855 / 0.566; FILE_MEANING_BEST 0.075 0.859 /
# 0.564, 0.1 0.860 / 0.561 (too near the stdlib floor). Tuned by coordinate ascent over
# 17 weights on 17 repositories (NDCG@10 0.861 -> 0.884) it lifted the 23 others from 0.805 to 0.832; tuned on
# those 23 (-> 0.835), the 17 went from 0.861 to 0.876. Rejected: the whole file's best cosine (every chunk of
# the file, not just its candidates: +0.002 for a query per search), its mean or best three (lower), and the
# same for keyword strength (+0.000) or name cosine (-0.003).
FILE_MEANING = 0.1
FILE_MEANING_BEST = 0.075
# What a file is about as a whole: the cosine between the query and the file's outline vector (its path and the
# names it defines, read by the model as one text: indexing/outline_fill.py), between the candidate files' lowest
# (0) and highest (1), added to each file's best-ranked chunk; not for a query that is only a name (the name's
# tier answers it). Measured on 40 semble-dev repositories / stdlib nl MRR@10 (the harness, 0.8594 / 0.564 without):
# 0.03 0.8640 / 0.562 (the 17 tuning repositories +0.0048, the 23 others +0.0043; symbol category unchanged),
# 0.045 0.8631 / 0.559, 0.06 0.8627 / 0.555; for bare names too, symbol 0.967 -> 0.964. Rejected beside it: the
# mean of the file's name vectors' cosines (+0.001), the cosine to the mean of all its code vectors (+0.004 at
# stdlib 0.559, +0.002 at 0.560), both with the outline (not additive), the file's size (lower).
FILE_OUTLINE = 0.03
# A type's own chunk (its header, docstring and fields; its members are chunks of their own) competes at this
# share: its docstring sums up every member, so it outranked the method a question describes (`HtmlDiff` over
# `HtmlDiff.make_file`). Stdlib nl MRR@10 0.562 -> 0.568 at 0.9, semble-dev unchanged (0.855 / 0.855).
TYPE_FACTOR = 0.9
# ... and at this share when the question says what code does ("Returns the element at index", query.py's
# describes_an_action): a type does nothing itself, its methods do. A struct or interface whose name the question
# shares (`Encoder` for "Writes the TOML encoding of v to the stream", `IteratorWithIndex` for "Returns the element
# at index") came first for 7-12 % of the Go, Java and Rust doc-comment sets' questions on the full index, never the
# answer. Hybrid, full index (every stage), this share 0.9 / 0.75 / 0.6 / 0.45 / 0.3: the doc-comment sets' mean
# 0.489 / 0.500 / 0.503 / 0.504 / 0.504 (Go 0.449 -> 0.467, TypeScript 0.551 -> 0.564, Java 0.537 -> 0.546, Rust
# 0.441 -> 0.467, C 0.468 -> 0.472 at 0.6); stdlib dev nl MRR@10 0.573 / 0.574 / 0.574 / 0.574 / 0.574, the held-out
# stdlib set 0.513 / 0.514 / 0.514 / 0.513 / 0.511. At the end of stage 2 (0.9 -> 0.6): doc-comment mean 0.469 ->
# 0.483, stdlib dev 0.512 -> 0.515, held-out 0.462 -> 0.463. semble-dev's questions never open so.
ACTION_TYPE_FACTOR = 0.6
# Among the definitions of a name the query gives, one in a file named after it comes first: Swift extensions
# (`Application+Sessions.swift`), Ruby's reopened modules and Rust's re-declared types share the name with
# the definition a user means.
NAMED_FILE_BONUS = 0.2
# A question about a part of the code that writes a type's name (query.type_names) raises the file named after it:
# "Request type and HTTP request representation in Vapor" asks for Request.swift, "Job interface and coroutine
# lifecycle management" for Job.kt, where the words matched in a path (PATH_WEIGHT) favoured
# HTTPServerRequestDecoder.swift. semble-dev at the end of stage 2 0.8513 -> 0.8570 over 40 repositories (23
# questions up, 4 down), on the full index of 7 of them 0.8495 -> 0.8529 (2 up, none down); 0.05 / 0.1 gave 0.8529
# / 0.8541 with snake-case names and acronyms counted, which lost more (`from_json.hpp`, `order_by.ex`, `http.py`).
# The function-level sets: one TypeScript question a place down at the end of stage 2, nothing else.
NAMED_TYPE_WEIGHT = 0.15
# Documentation, configuration and tests compete with code at a discount unless the query asks for them.
DOCS_FACTOR = 0.6
CONFIG_FACTOR = 0.6
TEST_FACTOR = 0.6
# ... and so does a copy under an older major version's folder than another candidate's beside it (`src/v3/` with
# `src/v4/`: zod keeps v3 for compatibility), unless the query names that version ("v3 compatibility error types"):
# the newest is the code in use. The discount is the others', not one tuned: zod is the only semble-dev repository
# with such folders (0.482 -> 0.546 at the end of stage 2, no question lower; the whole set's 40 repositories 0.8497
# -> 0.8513; 0.85 / 0.7 / 0.5 / 0.3 gave zod 0.485 / 0.528 / 0.564 / 0.600), and none of the function-level sets has
# one. A `v1/` folder beside unversioned copies of its files is the older too (pydantic keeps v1's `fields.py` beside
# its own: 0.782 -> 0.809 at the end of stage 2, 0.748 -> 0.785 on the full index); any `v1/` beside unversioned
# code did the same there, but `api/v1/` beside `api/` is often the one version a service has. Not `v2/` and up:
# a Go module's next major version is the folder beside its root's code.
SUPERSEDED_FACTOR = 0.6

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
# Module and class names that hold a file's tests. Rust's inline `mod tests` ranked above the functions they test
# (bit-vec's `test_big_xnor` above `BitVec.xnor`): Rust doc-comment set 0.414 -> 0.435, the other sets unchanged.
_TEST_SCOPES = frozenset(("tests", "test"))
_CAMEL_TEST_FILE = re.compile(r"[a-z0-9](Tests?|Specs?)\.[^/.]+$")  # FooTest.java, RouteTests.swift
# The same paths as gitignore patterns, for the "hide tests" filter that the stores apply in SQL (tests check
# that both say the same of real test paths). One difference: `test_*` takes folders named so too.
TEST_GLOBS = tuple(
    f"{cap}{rest}"
    for cap, rest in (
        *((c, d) for c in "Tt" for d in ("est/", "ests/", "esting/", "estdata/", "est_data/", "estData/")),
        *((c, d) for c in "Ss" for d in ("pec/", "pecs/")),
        *((c, d) for c in "Ff" for d in ("ixture/", "ixtures/")),
        *((c, "est_*") for c in "Tt"),
    )
) + (
    "__tests__/",
    "*_test.*",
    "*_tests.*",
    "*_spec.*",
    "*_specs.*",
    "*.test.*",
    "*.spec.*",
    "*[a-z0-9]Test.*",
    "*[a-z0-9]Tests.*",
    "*[a-z0-9]Spec.*",
    "*[a-z0-9]Specs.*",
)


_VERSION_FOLDER = re.compile(r"v(\d{1,3})", re.IGNORECASE)
_VERSION_WORD = re.compile(r"\bv(\d{1,3})\b", re.IGNORECASE)


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
    # The words' cut-short forms a path may use (`utils` for "utility", `impls` for "implementations", `init` for
    # "initializes"), with the words each stands for. semble-dev at the end of stage 2 0.8570 -> 0.8576 (gin's
    # utils.go, rack's utils.rb, nlohmann-json's iter_impl.hpp, serde's impls.rs; 7 questions up, 2 down), the
    # doc-comment sets' mean 0.5359 -> 0.5362 (0.5567 -> 0.5571 on the full index). The same stem with -ing and -ed
    # taken off as well (verb_names.word_key: "streaming" -> streams.py): 0.8564, not kept.
    abbreviated: dict[str, frozenset[str]]
    wants_docs: bool
    wants_config: bool
    wants_tests: bool


def query_evidence(parsed: ParsedQuery) -> QueryEvidence:
    raw = {w.lower() for w in re.findall(r"\w+", parsed.text)}
    words = frozenset(stem(w) for w in parsed.words if len(w) > 1)  # parse() has dropped the stopwords
    code_like = bool(parsed.identifiers) or parsed.looks_like_identifier
    return QueryEvidence(
        keyword_weight=KEYWORD_WEIGHT_CODE if code_like else KEYWORD_WEIGHT_WORDS,
        words=words,
        abbreviated=abbreviations(words),
        wants_docs=bool(raw & _DOC_WORDS),
        wants_config=bool(raw & _CONFIG_WORDS),
        wants_tests=bool(raw & _TEST_WORDS),
    )


def is_test_path(path: str) -> bool:
    return bool(_TEST_PATH.search(path) or _CAMEL_TEST_FILE.search(path))


@dataclass(frozen=True)
class PathFacts:
    """What ranking reads off a file's path, worked out once per path (a search scores hundreds of chunks
    from a few dozen files)."""

    kind: str  # "code" | "docs" | "config" | "test"
    stem_words: frozenset[str]  # stemmed words of the file name without its extension
    folder_words: frozenset[str]  # stemmed words of the folders above it
    # The last folder naming a major version, with the folders above it: ("packages/zod/src", 3) for
    # `packages/zod/src/v3/types.ts`.
    versioned: tuple[str, int] | None


@functools.lru_cache(maxsize=65536)
def path_facts(path: str) -> PathFacts:
    folder, _, name = path.rpartition("/")
    kind = classify(path)
    parts = folder.split("/")
    versions = [(i, int(m[1])) for i, part in enumerate(parts) if (m := _VERSION_FOLDER.fullmatch(part))]
    return PathFacts(
        kind="test" if is_test_path(path) else (kind.kind if kind is not None else "code"),
        stem_words=frozenset(stem(w) for w in split_identifier(name.split(".", 1)[0] or name)),
        folder_words=frozenset(stem(w) for part in parts if part for w in split_identifier(part)),
        versioned=("/".join(parts[: versions[-1][0]]), versions[-1][1]) if versions else None,
    )


def superseded_factors(paths: Sequence[str], text: str) -> list[float]:
    """SUPERSEDED_FACTOR for each path under an older major version's folder than another of `paths` under the
    same folders (`src/v3/` beside `src/v4/`; `v1/` beside an unversioned copy of one of its files), unless `text`
    names its version ("v3"); 1.0 for the rest."""
    newest: dict[str, int] = {}
    present = frozenset(paths)
    for path in paths:
        if versioned := path_facts(path).versioned:
            root, version = versioned
            newest[root] = max(newest.get(root, version), version)
            if version == 1 and _has_unversioned_copy(path, root, present):
                newest[root] = max(newest[root], 2)
    if not newest:
        return [1.0] * len(paths)
    asked = {int(m[1]) for m in _VERSION_WORD.finditer(text)}
    factors = []
    for path in paths:
        versioned = path_facts(path).versioned
        older = versioned is not None and versioned[1] < newest[versioned[0]] and versioned[1] not in asked
        factors.append(SUPERSEDED_FACTOR if older else 1.0)
    return factors


def _has_unversioned_copy(path: str, root: str, present: frozenset[str]) -> bool:
    """Whether `present` holds `path` without its version folder (`fields.py` for `v1/fields.py`)."""
    prefix = f"{root}/" if root else ""
    _, _, rest = path[len(prefix) :].partition("/")
    return prefix + rest in present


def named_after(path: str, symbol_name: str | None) -> bool:
    """Whether the file is named after this symbol (`semaphore.rs` for `Semaphore`, `Application.swift` for
    `Application`, not `batch_semaphore.rs` or `Application+Responder.swift`)."""
    if not symbol_name:
        return False
    return path_facts(path).stem_words == _name_stems(symbol_name)


def named_after_any(path: str, names: frozenset[str]) -> bool:
    """Whether the file is named after one of `names`."""
    stems = path_facts(path).stem_words
    return any(stems == _name_stems(name) for name in names)


@functools.lru_cache(maxsize=4096)  # asked for every candidate of a search, mostly of the same few names
def _name_stems(name: str) -> frozenset[str]:
    """The stemmed words of a name, as a file's stem words are read."""
    return frozenset(stem(w) for w in split_identifier(name))


def chunk_factor(chunk_type: str, parsed: ParsedQuery) -> float:
    """The discount for a type's own chunk (TYPE_FACTOR, ACTION_TYPE_FACTOR for a question that says what code
    does)."""
    if chunk_type != "type":
        return 1.0
    return ACTION_TYPE_FACTOR if parsed.describes_an_action else TYPE_FACTOR


def is_test_scope(parent: str | None) -> bool:
    """Whether a definition sits in a file's test module or class (`mod tests` in Rust, where unit tests live in
    the file they test, not under a test path)."""
    return parent is not None and any(part.lower() in _TEST_SCOPES for part in parent.split("."))


def kind_factor(path: str, query: QueryEvidence, parent: str | None = None) -> float:
    """The discount for a chunk in documentation, configuration or a test (by its path, or the module or class it
    is defined in: `parent`), unless the query asks for those."""
    kind = path_facts(path).kind
    if kind == "code" and is_test_scope(parent):
        kind = "test"
    if kind == "test":
        return 1.0 if query.wants_tests else TEST_FACTOR
    if kind == "docs":
        return 1.0 if query.wants_docs else DOCS_FACTOR
    if kind == "config":
        return 1.0 if query.wants_config else CONFIG_FACTOR
    return 1.0


def path_match(path: str, query: QueryEvidence) -> float:
    """0..1: the share of the query's words named by the file's path (or cut short in it), the file stem counting
    double."""
    if not query.words:
        return 0.0
    facts = path_facts(path)
    in_stem = facts.stem_words.union(*(query.abbreviated.get(part, ()) for part in facts.stem_words))
    in_folders = facts.folder_words.union(*(query.abbreviated.get(part, ()) for part in facts.folder_words))
    hits = sum(2 if w in in_stem else 1 if w in in_folders else 0 for w in query.words)
    return min(1.0, hits / (2 * len(query.words)))
