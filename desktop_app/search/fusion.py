"""How a result's score is made. Scores are in 0..1 and are read like this:

* similarity: 0.8 x the cosine similarity between the query and the chunk (as embedded with its
  path and symbol header) + 0.2 x the cosine similarity between the query and the chunk's symbol
  name in words (see indexing/documents.py); a chunk that defines no symbol has only the first part. A
  chunk known only to the fast model so far: 0.7 and 0.3 of its two cosines (FAST_NAME_WEIGHT; 0.55 and 0.45 for
  a question that says what code does).
* keyword evidence: BM25 over symbol names, paths and identifier-split text, relative to the best
  keyword match of the query.
* the blend: semantic mode, similarity; exact mode, keyword evidence; hybrid mode, a mix of the two whose keyword
  share depends on the query's shape (evidence.py: 0.15 for words, 0.3 when the query names code). Every candidate
  gets its real similarity, however it was found, so the mix is like for like. The blend is raised when the query's
  words are in the file's path or the file is named after a type the query writes (NAMED_TYPE_WEIGHT, for a question
  about a part of the code), and then discounted for documentation, configuration and tests unless the query asks for
  them (the raise too: nvm's test scripts are named after the functions they test), and for a copy under an older
  version's folder than another candidate's (`v3/` beside `v4/`) unless the query names that version, and for a type's
  own chunk (its members are chunks of their own: TYPE_FACTOR, more for a question that says what code does); each
  file's best-ranked chunk is raised by what the file's outline means (its path and names: FILE_OUTLINE). Unless the
  question says what code does (it then asks for a function, not a file), the blend is also raised by the meaning of
  the chunk's file (the best code cosine among its candidates: FILE_MEANING, and more for the file's best-ranked
  chunk), each file's best-ranked chunk by the support of the file's other candidates (FILE_SUPPORT), and each further
  definition from an already ranked file keeps a share of its blend (SATURATION), compounding.
* tiers: outside semantic mode, a chunk whose symbol name is the whole query ranks in a tier of its own,
  0.9..0.95 (0.95..1 when spelt as typed), and so does one named as typed among code-like words (`MapAccess
  and SeqAccess`); a name in a sentence is keyword evidence only, as strong as its words' match
  (pipeline.py). Within the tier, among the definitions of one name, the one in a file named after it, the one with
  the most to it (EXTENT_WEIGHT) and not one under an older version's folder (SUPERSEDED_PENALTY) come first. So a
  definition asked for by name comes first; the rest scale into 0..0.9. Rerank boosts
  (RerankOptions) move results within their tier, never across it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

from ..indexing.progress import Stage
from ..store.rows import Hit
from .evidence import (
    FILE_MEANING,
    FILE_MEANING_BEST,
    FILE_OUTLINE,
    FILE_SUPPORT,
    KEYWORD_WEIGHT_FAST,
    NAMED_FILE_BONUS,
    NAMED_TYPE_WEIGHT,
    PATH_WEIGHT,
    SATURATION,
    chunk_factor,
    kind_factor,
    named_after,
    named_after_any,
    path_facts,
    path_match,
    query_evidence,
    superseded_factors,
)
from .function_cues import declaration_fit, hidden_word_fit, question_words
from .query import ParsedQuery
from .request import RerankOptions
from .verb_names import fit_of, name_fit

# The name vector's share of a chunk's similarity. 0.3 was tuned before file support (evidence.py) existed;
# with it (0.2, types at 0.9, private helpers at -0.1), stdlib nl MRR@10 / semble-dev NDCG@10 over 17
# repositories / over 10 others: 0.3 0.561 / 0.865 / 0.865, 0.35 0.566 / 0.865 / 0.864, 0.4 0.571 / 0.861 /
# 0.866, 0.45 0.567 / 0.858 / 0.862 (with private helpers at -0.05). With the file's meaning (evidence.py:
# FILE_MEANING) the name says less: semble-dev over 40 repositories / stdlib nl MRR@10, 0.4 0.849 / 0.568,
# 0.2 0.855 / 0.566, 0.1 lower on both.
NAME_WEIGHT = 0.2
# The same share where both vectors are the fast model's (a chunk stage 3 has not reached): a static model sums
# a long chunk's words into a vague vector, while a name of a few words stays sharp, so the name says more there.
# Hybrid at the end of stage 2, share 0.2 / 0.3 / 0.4 / 0.5: stdlib dev nl MRR@10 0.491 / 0.502 / 0.504 / 0.514,
# a held-out stdlib set (asyncio, concurrent, xml, importlib and 17 more modules, make_corpus.py) 0.449 / 0.458 /
# 0.468 / 0.477, the held-out doc-comment sets' mean (Go, TypeScript, Java, Rust, C) 0.458 / 0.462 / 0.466 /
# 0.471; semble-dev NDCG@10 over its 40 repositories 0.8442 / 0.8430 / 0.8418 / 0.8386 (at 0.4 Rust -0.038,
# TypeScript -0.025, C++ -0.022, 20 queries each). 0.3 gains on every set of functions for 0.001 on files.
FAST_NAME_WEIGHT = 0.3
# ... and more for a question that says what code does (query.py's describes_an_action), which asks for a function:
# its name often restates the question's verb and object. Hybrid at the end of stage 2, this share 0.3 / 0.45 / 0.6
# for such questions: stdlib dev nl MRR@10 0.519 / 0.525 / 0.523, the held-out stdlib set 0.473 / 0.481 / 0.478,
# the doc-comment sets' mean 0.490 / 0.491 / 0.487. semble-dev's questions never open so (at 0.4 for every
# question it lost 0.001).
FAST_NAME_WEIGHT_ACTION = 0.45
# A question that says what code does raises the definitions whose names hold a word the functions its verb
# describes are named with (verb_names.py: "Removes all nodes" -> `Clear`, "Checks if ..." -> `isValid`), by this
# much at the word the verb's functions hold most often. On the full index (hybrid, nl MRR@10), none / 0.07 / 0.1 /
# 0.15: stdlib dev 0.577 / 0.592 / 0.589 / 0.586, held-out 0.518 / 0.520 / 0.518 / 0.506, the doc-comment sets'
# mean 0.523 / 0.532 / 0.535 / 0.528 (at 0.1 Go 0.483 -> 0.490, TypeScript 0.582 -> 0.575, Java 0.598 -> 0.621,
# Rust 0.471 -> 0.495, C 0.480 -> 0.493). At the end of stage 2, none / 0.1: stdlib dev 0.529 / 0.534, held-out
# 0.483 / 0.480, the doc-comment sets' mean 0.502 / 0.520. Rejected: the name's first word alone (its prefix,
# `sqlite3`, `glm`, `Zopfli`, hid the verb: C 0.480 -> 0.474), and a table from every word of the question to
# every word of the name (0.1: doc-comment mean 0.529, stdlib dev 0.573; 0.2: doc-comment mean 0.522).
VERB_NAME_WEIGHT = 0.1
# ... and the definitions whose declarations hold what the question names (function_cues.py: "Copies bytes from a URL
# to an OutputStream." -> `copy(URL url, OutputStream output)` among its overloads), and those whose names hold a
# word of it abbreviated or run into another (`glm_max` for "maximum", `isclosed` for "closed"). As built (hybrid,
# nl MRR@10), none / both: on the full index the doc-comment sets' mean 0.535 / 0.552 (Go 0.490 -> 0.509,
# TypeScript 0.575 -> 0.613, Java 0.621 both, Rust 0.495 -> 0.506, C 0.493 -> 0.513), stdlib dev 0.589 / 0.605, a
# held-out stdlib set 0.517 / 0.531; at the end of stage 2 0.520 / 0.529, 0.534 / 0.549, 0.467 / 0.472. The name's
# hidden word, 0.03 / 0.05 / 0.08 / 0.1 / 0.12 (declaration 0.08, before the derivational endings were left out):
# doc-comment mean 0.545 / 0.547 / 0.550 / 0.552 / 0.551, stdlib dev 0.597 / 0.601 / 0.604 / 0.605 / 0.604 (Java
# 0.622 -> 0.610 from the lowest to the highest); the declaration, 0.04 / 0.06 / 0.08 / 0.1 (abbreviations alone at
# 0.03): mean 0.542 / 0.543 / 0.545 / 0.546, stdlib dev 0.593 / 0.596 / 0.597 / 0.593. Rejected: the share of the
# name's words the question holds (0.05: the doc-comment mean at the end of stage 2 0.520 -> 0.517; keywords and the
# name's vector weigh them already), the declaration's words weighed by their rarity among the candidates (0.520),
# the declaration without the name's own words (0.518: a Go method's receiver names its type), and the words of the
# definition's parent with the declaration's (full index: mean 0.546 but stdlib dev 0.598 -> 0.593).
DECLARATION_WEIGHT = 0.08
HIDDEN_WORD_WEIGHT = 0.1
# Among the definitions of a name the query gives in several files, the one with the most to it comes first, by up to
# this much: in proportion to the lines its file's definitions of the name span with their members (a file's
# definitions of one name share its widest, so a class and its constructor keep their order), against the widest
# file's. The class over the interface it implements (Laravel's `Container` and its contract), the class over a facade
# or a thin subclass (flask's `Blueprint` in blueprints.py subclasses the one in sansio/blueprints.py, which does the
# work), the current `Field` over a legacy copy (pydantic's `v1/`). semble-dev at the end of stage 2 (40
# repositories): 0.8475 -> 0.8497, symbol category 0.954 -> 0.967, no query lower; at 0.1 flask's and Laravel's
# `Request` stayed second; at 0.3 0.8487 (gin's `Engine` and zod's `ZodObject` second), though on the full index
# only 0.3 put flask's first (its thin subclass's cosine 0.616, the sansio class's 0.486). The identifier questions
# of the stdlib and doc-comment sets (R@1) unchanged; without the file's widest, Java's fell 0.973 -> 0.947 (a class
# outranked its constructor, the doc comment's target).
EXTENT_WEIGHT = 0.2
# ... and one under an older major version's folder than another's (`v3/` beside `v4/`: zod keeps both) loses this
# much: the newest is the one in use. zod's `ZodObject` (v4's interface is smaller than v3's class) came second
# without it.
SUPERSEDED_PENALTY = 0.1
EXACT_TIER = 0.9
# Within the tier of definitions named in the query, a name spelt exactly as typed ranks first: the tier's
# upper half is theirs.
EXACT_CASE_TIER = 0.95
_DAY = 86_400.0


@dataclass
class Candidate:
    hit: Hit
    semantic: float | None = None  # similarity (blend of code and name cosines), 0..1
    code: float | None = None  # the code cosine alone (the chunk as embedded with its path and header)
    outline: float | None = None  # the cosine of its file's outline (path and names defined), where it has one
    keyword: float = 0.0  # 0..1, relative to the best keyword match of the query
    found_semantic: bool = False
    found_keyword: bool = False
    exact_symbol: bool = False
    score: float = 0.0
    layer: Stage | None = None  # whose vectors gave `semantic`: "full" (the active model) or "fast"
    extent: int | None = None  # lines its definition spans, members included, where others share its name

    @property
    def relevance(self) -> str:
        if self.found_keyword or self.exact_symbol:
            return "both" if self.found_semantic else "exact"
        return "semantic"


def fast_name_weight(parsed: ParsedQuery) -> float:
    """The name's share of a fast-layer chunk's similarity for this question."""
    return FAST_NAME_WEIGHT_ACTION if parsed.describes_an_action else FAST_NAME_WEIGHT


def similarity(code_cosine: float, name_cosine: float | None, weight: float = NAME_WEIGHT) -> float:
    blend = (1 - weight) * code_cosine + weight * max(0.0, name_cosine or 0.0)
    return min(1.0, max(0.0, blend))


def blend(c: Candidate, mode: str, keyword_weight: float = 0.0) -> float:
    """The candidate's retrieval score before evidence, boosts and tiers (`keyword_weight`: hybrid mode's
    share of keyword evidence)."""
    sem = c.semantic or 0.0
    if mode == "semantic":
        return sem
    if mode == "exact":
        return c.keyword
    return (1 - keyword_weight) * sem + keyword_weight * c.keyword


def file_key(hit: Hit) -> str:
    """One key per file of a scope."""
    return f"{hit.scope_id}/{hit.path}"


def uses_outline(parsed: ParsedQuery, mode: str) -> bool:
    """Whether ranking weighs the files' outlines (FILE_OUTLINE): in hybrid mode, for a query that is more than
    a name (a bare name is answered by its tier)."""
    return mode == "hybrid" and not parsed.looks_like_identifier


def definition_key(hit: Hit) -> str | None:
    """One key per definition in a file: its windows (and overloads of one name in one type, which overloads.py
    tells apart for a question asking for a function) share it; None for a chunk that defines nothing."""
    if not hit.symbol_name:
        return None
    return f"{file_key(hit)}/{hit.parent_symbol}/{hit.symbol_type}/{hit.symbol_name}"


def rank_scores(
    candidates: Sequence[Candidate], parsed: ParsedQuery, mode: str, rerank: RerankOptions, now: float | None = None
) -> None:
    """Set every candidate's score: its blend, weighed in hybrid mode by the evidence around it (evidence.py),
    plus the rerank boosts, in its tier; in hybrid mode each further definition from an already ranked file
    then loses a share (SATURATION), so ten hits of one file do not push a second relevant file off the
    first page, unless the question says what code does (it asks for a function, not a file). Exact and
    semantic modes keep their plain blend, as the user asked."""
    # `Request` typed: the class, before a `request` method. A name spelt as typed in code-like words (`MapAccess and
    # SeqAccess`, `def parse_args`) takes the tier too; a name in a sentence does not, and counts as its words'
    # keyword match: "Returns a DecodeHookFunc that converts strings to net.IP" describes a function that returns
    # one, and "how pandoc converts a document to LaTeX" is about LaTeX output, not a function `latex`. Giving
    # names spelt as typed the tier in sentences too put the type first for 9 % of the Go doc-comment set's
    # questions; without it (hybrid, full index): the doc-comment sets Go 0.426 -> 0.445, TypeScript 0.509 ->
    # 0.543, Java 0.505 -> 0.520, stdlib dev nl MRR@10 0.562 -> 0.571, held-out 0.531 -> 0.533; semble-dev
    # unchanged at the end of stage 2 (0.8182, 41 repositories; 0.8180 keeping the tier for names at the
    # sentence's head, "JsonTextReader for reading JSON").
    typed = set() if parsed.is_sentence else set(parsed.identifiers)
    loose = _NAME_TIER if parsed.looks_like_identifier else _PLAIN
    tiers = [
        _CASE_TIER if c.exact_symbol and c.hit.symbol_name in typed else loose if c.exact_symbol else _PLAIN
        for c in candidates
    ]
    boosts = [_boost(c.hit, rerank, now) for c in candidates]
    weight = rerank.similarity_weight
    if mode == "hybrid":
        query = query_evidence(parsed)
        # Divided by the most the path's words can add, so the blend stays in 0..1 without ties at the top; a file
        # named after a type the question writes (NAMED_TYPE_WEIGHT) may pass 1 only with a near-perfect blend.
        scale = 1 / (1 + PATH_WEIGHT)
        superseded = superseded_factors([c.hit.path for c in candidates], parsed.text)
        about_files = not parsed.describes_an_action
        types = parsed.type_names if about_files else frozenset()
        # The path's raise is discounted with the rest: a test named after the function it tests (nvm's
        # `test/fast/Unit tests/nvm_download_artifact`) outranked the function (semble-dev at the end of stage 2
        # 0.8182 -> 0.8192, nvm 0.758 -> 0.800; the function-level sets unchanged).
        bases = [
            (
                blend(
                    c,
                    mode,
                    query.keyword_weight if c.layer != "fast" else max(query.keyword_weight, KEYWORD_WEIGHT_FAST),
                )
                * chunk_factor(c.hit.chunk_type, parsed)
                + PATH_WEIGHT * path_match(c.hit.path, query)
                + (NAMED_TYPE_WEIGHT if named_after_any(c.hit.path, types) else 0.0)
            )
            * kind_factor(c.hit.path, query, c.hit.parent_symbol)
            * older
            * scale
            for c, older in zip(candidates, superseded, strict=True)
        ]

        def standing() -> list[float]:
            """Each candidate's score as the bases stand now: what "best-ranked" means at each step below."""
            return [b * weight + x for b, x in zip(bases, boosts, strict=True)]

        before = standing()  # the file's meaning and its outline both pick a file's best from the same standing
        # A question that says what code does ("Returns the ...", "parse a MIME header") asks for a function, not a
        # file: the evidence about files that serves questions about a part of the code (semble-dev's answers are
        # files) is left out for it. The file holding the closest meaning is no likelier to hold that function
        # (FILE_MEANING); a file with many near misses lifts its best one over the right function elsewhere
        # (FILE_SUPPORT); and the function is often the second-best candidate of the right file, which SATURATION
        # would push below other files. Hybrid at the end of stage 2, the file's meaning for such questions / not:
        # stdlib dev nl MRR@10 0.502 / 0.512, a held-out stdlib set 0.458 / 0.462, the doc-comment sets' mean 0.462
        # / 0.469; half of it 0.507, 0.460, 0.466. Then on the full index (every stage), support and saturation
        # for such questions / neither: the doc-comment sets' mean 0.503 / 0.515 (Go 0.467 -> 0.475, TypeScript
        # 0.564 -> 0.591, Java 0.546 -> 0.560, Rust 0.467 -> 0.475, C 0.472 both), stdlib dev 0.574 -> 0.576,
        # held-out 0.514 -> 0.517; without support alone 0.512, without saturation alone 0.508; without the
        # outline's raise as well 0.515, stdlib dev 0.575 (kept). At the end of stage 2: doc-comment mean 0.483 ->
        # 0.489 (Rust 0.505 -> 0.483, the other four up), stdlib dev 0.515 -> 0.517, held-out 0.463 -> 0.471.
        # semble-dev is unchanged by construction: none of its questions opens with an action verb.
        if about_files:
            _file_meaning(candidates, bases, before)
        else:
            shares = name_fit(parsed.text)  # the names the question's verb is given (VERB_NAME_WEIGHT)
            words = question_words(parsed)  # what the question names, as declarations hold it (DECLARATION_WEIGHT)
            for i, c in enumerate(candidates):
                bases[i] += (
                    VERB_NAME_WEIGHT * fit_of(c.hit.symbol_name, shares)
                    + DECLARATION_WEIGHT * declaration_fit(words, c.hit)
                    + HIDDEN_WORD_WEIGHT * hidden_word_fit(c.hit.symbol_name, parsed)
                )
        if uses_outline(parsed, mode):
            _file_outline(candidates, bases, before)
        if about_files:
            _support_files(candidates, bases, standing())
            after = standing()
            _saturate(candidates, bases, sorted(range(len(candidates)), key=lambda i: (-tiers[i], -after[i])))
    else:
        bases = [blend(c, mode) for c in candidates]
    if mode != "semantic":
        _order_named_definitions(candidates, tiers, bases)
    for c, tier, base, boost in zip(candidates, tiers, bases, boosts, strict=True):
        c.score = _in_tier(tier, min(1.0, max(0.0, base * weight + boost)), mode)


def _order_named_definitions(candidates: Sequence[Candidate], tiers: list[int], bases: list[float]) -> None:
    """Among the definitions a query names (those in a tier), raise the one in a file named after it
    (NAMED_FILE_BONUS) and the one with the most to it (EXTENT_WEIGHT), lower one under an older version's folder
    (SUPERSEDED_PENALTY), then scale their bases back into 0..1: at the tier's top they passed 1 and tied there (the
    score's min), and ties go by path."""
    named = [i for i, tier in enumerate(tiers) if tier != _PLAIN and candidates[i].hit.symbol_name]
    # The widest extent of each name, and of each file's definitions of it: those share their file's widest, so that
    # a class and its constructor, or overloads, keep their order among themselves.
    widest: dict[str, int] = {}
    widest_in_file: dict[tuple[str, str], int] = {}
    newest: dict[str, int] = {}  # the highest version a folder names among each name's paths (any spelling)
    for i in named:
        hit = candidates[i].hit
        name = str(hit.symbol_name)
        if extent := candidates[i].extent:
            widest[name] = max(widest.get(name, 0), extent)
            widest_in_file[file_key(hit), name] = max(widest_in_file.get((file_key(hit), name), 0), extent)
        if versioned := path_facts(hit.path).versioned:
            newest[name.lower()] = max(newest.get(name.lower(), versioned[1]), versioned[1])
    for i in named:
        c = candidates[i]
        name = str(c.hit.symbol_name)
        if named_after(c.hit.path, name):
            bases[i] += NAMED_FILE_BONUS
        if c.extent:
            bases[i] += EXTENT_WEIGHT * widest_in_file[file_key(c.hit), name] / widest[name]
        versioned = path_facts(c.hit.path).versioned
        if versioned and versioned[1] < newest[name.lower()]:
            bases[i] -= SUPERSEDED_PENALTY
    for i, tier in enumerate(tiers):
        if tier != _PLAIN:
            bases[i] /= 1 + NAMED_FILE_BONUS + EXTENT_WEIGHT


def _support_files(candidates: Sequence[Candidate], bases: list[float], keys: list[float]) -> None:
    """Add FILE_SUPPORT x the best base x (the file's summed bases / the largest such sum) to the base of each
    file's best-ranked candidate (by `keys`, so the order within a file stays), then scale every base back
    into 0..1."""
    sums: dict[str, float] = {}
    for i, c in enumerate(candidates):
        file = file_key(c.hit)
        sums[file] = sums.get(file, 0.0) + bases[i]
    most = max(sums.values(), default=0.0)
    if most <= 0:
        return
    unit = FILE_SUPPORT * max(bases)
    for file, i in _best_ranked_per_file(candidates, keys).items():
        bases[i] += unit * sums[file] / most
    for i in range(len(bases)):
        bases[i] /= 1 + FILE_SUPPORT


def _best_ranked_per_file(candidates: Sequence[Candidate], keys: list[float]) -> dict[str, int]:
    """Each file's best-ranked candidate (by `keys`), by index."""
    best: dict[str, int] = {}
    for i, c in enumerate(candidates):
        file = file_key(c.hit)
        if file not in best or keys[i] > keys[best[file]]:
            best[file] = i
    return best


def _file_meaning(candidates: Sequence[Candidate], bases: list[float], keys: list[float]) -> None:
    """Raise every candidate by FILE_MEANING x its file's meaning, and each file's best-ranked candidate (by
    `keys`) by FILE_MEANING_BEST x it more, then scale every base back into 0..1. A file's meaning is the best
    code cosine among its candidates, placed between the files' lowest (0) and highest (1)."""
    best_code: dict[str, float] = {}
    for c in candidates:
        file = file_key(c.hit)
        best_code[file] = max(best_code.get(file, 0.0), c.code or 0.0)
    share = _spread(best_code)
    if share is None:
        return
    for i, c in enumerate(candidates):
        bases[i] += FILE_MEANING * share[file_key(c.hit)]
    for file, i in _best_ranked_per_file(candidates, keys).items():
        bases[i] += FILE_MEANING_BEST * share[file]
    for i in range(len(bases)):
        bases[i] /= 1 + FILE_MEANING + FILE_MEANING_BEST


def _file_outline(candidates: Sequence[Candidate], bases: list[float], keys: list[float]) -> None:
    """Raise each file's best-ranked candidate (by `keys`) by FILE_OUTLINE x its file's outline cosine, placed
    between the candidate files' lowest (0) and highest (1), then scale every base back into 0..1. Files without
    an outline vector yet (an index still filling in) are left as they are."""
    share = _spread({file_key(c.hit): c.outline for c in candidates if c.outline is not None})
    if share is None:
        return
    for file, i in _best_ranked_per_file(candidates, keys).items():
        if file in share:
            bases[i] += FILE_OUTLINE * share[file]
    for i in range(len(bases)):
        bases[i] /= 1 + FILE_OUTLINE


def _spread(values: dict[str, float]) -> dict[str, float] | None:
    """Each file's value placed between the lowest (0) and the highest (1); None when they do not differ."""
    if not values:
        return None
    low, high = min(values.values()), max(values.values())
    if high <= low:
        return None
    return {file: (v - low) / (high - low) for file, v in values.items()}


def _saturate(candidates: Sequence[Candidate], bases: list[float], order: list[int]) -> None:
    """Walking `order` (best first), scale each candidate's base by SATURATION per definition of its file
    ranked before it; windows of a definition already counted are not counted again."""
    counted: set[str] = set()
    per_file: dict[str, int] = {}
    for i in order:
        hit = candidates[i].hit
        unit = definition_key(hit) or f"{file_key(hit)}#{hit.start_line}"
        if unit in counted:
            continue
        file = file_key(hit)
        bases[i] *= SATURATION ** per_file.get(file, 0)
        per_file[file] = per_file.get(file, 0) + 1
        counted.add(unit)


_PLAIN, _NAME_TIER, _CASE_TIER = 0, 1, 2


def _in_tier(tier: int, base: float, mode: str) -> float:
    """`base` (0..1, boosts included) placed in its tier."""
    if mode == "semantic":
        return round(base, 4)
    if tier == _CASE_TIER:
        return round(EXACT_CASE_TIER + (1 - EXACT_CASE_TIER) * base, 4)
    if tier == _NAME_TIER:
        return round(EXACT_TIER + (EXACT_CASE_TIER - EXACT_TIER) * base, 4)
    return round(EXACT_TIER * base, 4)


def _boost(hit: Hit, rerank: RerankOptions, now: float | None) -> float:
    boost = 0.0
    if hit.symbol_name:
        boost += rerank.symbol_boost
        if hit.symbol_name.startswith("_") and not hit.symbol_name.endswith("__"):
            boost -= rerank.private_penalty
    if hit.chunk_type in rerank.preferred_chunk_types:
        boost += rerank.chunk_type_boost
    if rerank.recency_boost:
        age_days = max(0.0, ((now or time.time()) - hit.file_mtime_ns / 1e9) / _DAY)
        boost += rerank.recency_boost * math.pow(0.5, age_days / rerank.recency_half_life_days)
    return boost
