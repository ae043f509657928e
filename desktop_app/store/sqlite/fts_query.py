"""Keyword queries as FTS5 expressions that can never be a syntax error, and that keep their work bounded.

Every term is quoted, so characters such as `*`, `"`, `(`, `-`, `:` or `NEAR` in a query are searched for
as text rather than read as FTS5 operators.

An "any term" query leaves out the commonest terms when ranking every row they are in would be slow
(store/keyword_budget.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ..keyword_budget import affordable_terms


def quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def every_term(terms: Sequence[str]) -> str | None:
    """Every term must appear (in any column)."""
    return " AND ".join(quote(t) for t in terms) if terms else None


def any_term(terms: Sequence[str]) -> str | None:
    """Any term may appear; BM25 orders by how many and how rare."""
    return " OR ".join(quote(t) for t in terms) if terms else None


def bounded_any(terms: Sequence[str], row_counts: Callable[[Sequence[str]], Mapping[str, int]]) -> str | None:
    """`any_term(terms)`, or a cheaper expression for the same query when that one would match too many rows
    (`row_counts` gives the estimated keyword-index rows holding each term)."""
    if not terms:
        return None
    return any_term(affordable_terms(terms, row_counts(terms)))


def strengths(ranks: Sequence[tuple[int, float]]) -> list[tuple[int, float]]:
    """BM25 ranks (FTS5's sign: negative, lower is better) to 0..1 relative to the best one, in order."""
    if not ranks:
        return []
    best = min(r for _, r in ranks)
    if best >= 0:
        return [(rowid, 1.0) for rowid, _ in ranks]
    return [(rowid, max(0.0, r / best)) for rowid, r in ranks]
