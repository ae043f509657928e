"""The keyword retriever's expression, chosen so that its work stays bounded on big indexes.

FTS5 scores every row an expression matches before it can keep the best ones (~1.3 us a row here:
BM25 looks up each row's length), so `"get" OR "file" OR "data"` over a million chunks, where each of
those words is in a good share of them, costs half a second. Words that common carry little BM25
weight (idf is log(N / rows with the word)), so, with the rows each word is in (estimated by the store):

* every word ORed, while the rows matched stay within RANK_BUDGET (always so on small indexes);
* otherwise only the rarest words that fit the budget, ORed: the chunks they find rank as before
  except for the common words' small share of the score;
* a query whose every word is in more rows than that is left to the semantic and symbol-name
  retrievers (an AND of common words was tried: walking their row lists and scoring the overlap
  cost 30-60 ms at a million chunks).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from .query import ParsedQuery, fts_any

RANK_BUDGET = 5000  # rows BM25 may score for one query: ~7 ms


def keyword_terms(parsed: ParsedQuery) -> list[str]:
    """The terms `fts_any` ORs together: content words, then whole identifiers."""
    return list(dict.fromkeys([*parsed.words, *(i.lower() for i in parsed.identifiers)]))


def bounded_any(parsed: ParsedQuery, row_counts: Callable[[Sequence[str]], Mapping[str, int]]) -> str | None:
    """`fts_any(parsed)`, or a cheaper expression for the same query when that one would match too many rows.

    `row_counts` gives the (estimated) keyword-index rows holding each term.
    """
    terms = keyword_terms(parsed)
    if not terms:
        return None
    counts = row_counts(terms)
    if sum(counts.values()) <= RANK_BUDGET:
        return fts_any(parsed)
    rare: list[str] = []
    total = 0
    for term in sorted(terms, key=lambda t: counts[t]):
        if total + counts[term] > RANK_BUDGET:
            break
        rare.append(term)
        total += counts[term]
    return fts_any(_only(parsed, rare)) if rare else None


def _only(parsed: ParsedQuery, terms: list[str]) -> ParsedQuery:
    return ParsedQuery(parsed.text, tuple(terms), (), False)
