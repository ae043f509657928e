"""Keyword queries as FTS5 expressions that can never be a syntax error, and that keep their work bounded.

Every term is quoted, so characters such as `*`, `"`, `(`, `-`, `:` or `NEAR` in a query are searched for
as text rather than read as FTS5 operators.

FTS5 scores every row an expression matches before it can keep the best ones (~1.3 us a row here: BM25
looks up each row's length), so `"get" OR "file" OR "data"` over a million chunks, where each of those
words is in a good share of them, costs half a second. Words that common carry little BM25 weight (idf is
log(N / rows with the word)), so, with the rows each word is in (estimated by the store):

* every word ORed, while the rows matched stay within RANK_BUDGET (always so on small indexes);
* otherwise only the rarest words that fit the budget, ORed: the chunks they find rank as before except
  for the common words' small share of the score;
* a query whose every word is in more rows than that is left to the semantic and symbol-name retrievers
  (an AND of common words was tried: walking their row lists and scoring the overlap cost 30-60 ms at a
  million chunks).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

RANK_BUDGET = 5000  # rows BM25 may score for one query: ~7 ms


def quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def every_term(terms: Sequence[str]) -> str | None:
    """Every term must appear (in any column)."""
    return " AND ".join(quote(t) for t in terms) if terms else None


def any_term(terms: Sequence[str]) -> str | None:
    """Any term may appear; BM25 orders by how many and how rare."""
    return " OR ".join(quote(t) for t in terms) if terms else None


def bounded_any(terms: Sequence[str], row_counts: Callable[[Sequence[str]], Mapping[str, int]]) -> str | None:
    """`any_term(terms)`, or a cheaper expression for the same query when that one would match too many rows.

    `row_counts` gives the (estimated) keyword-index rows holding each term.
    """
    if not terms:
        return None
    counts = row_counts(terms)
    if sum(counts.values()) <= RANK_BUDGET:
        return any_term(terms)
    rare: list[str] = []
    total = 0
    for term in sorted(terms, key=lambda t: counts[t]):
        if total + counts[term] > RANK_BUDGET:
            break
        rare.append(term)
        total += counts[term]
    return any_term(rare) if rare else None


def strengths(ranks: Sequence[tuple[int, float]]) -> list[tuple[int, float]]:
    """BM25 ranks (FTS5's sign: negative, lower is better) to 0..1 relative to the best one, in order."""
    if not ranks:
        return []
    best = min(r for _, r in ranks)
    if best >= 0:
        return [(rowid, 1.0) for rowid, _ in ranks]
    return [(rowid, max(0.0, r / best)) for rowid, r in ranks]
