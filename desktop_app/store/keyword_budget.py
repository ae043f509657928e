"""Keeping a keyword query's work bounded on big indexes, the same way in every store.

Ranking scores every row a query matches (FTS5's BM25: ~1.3 us a row; PostgreSQL's ts_rank: a few us a
row, reading each row's keywords), so `get OR file OR data` over a million chunks, where each of those words
is in a good share of them, costs half a second. Words that common say little about which chunk is meant
(idf is log(N / rows with the word)), so, with the rows each word is in (estimated by the store):

* every word, while the rows matched stay within RANK_BUDGET;
* otherwise only the rarest words that fit the budget: the chunks they find rank as before except for the
  common words' small share of the score;
* none when every word is in more rows than that: the query is left to the semantic and symbol-name
  retrievers (an AND of common words was tried in SQLite: walking their row lists and scoring the overlap
  cost 30-60 ms at a million chunks).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

# Rows one query may rank in SQLite: ~2.6 ms with FTS5, beside the ~4 ms the default model takes to embed the query
# on 2 cores. 5,000 before (~7 ms): 2,000 ranks as well or better (hybrid; 5,000 / 2,000 / 1,000): semble-dev at
# the end of stage 2 0.8583 / 0.8583 / 0.8550 (at 2,000 15 questions up, 14 down), its 25 repositories
# with a full index 0.8823 / 0.8838; nl MRR@10 at the end of stage 2 stdlib dev 0.5668 / 0.5665, held-out 0.4718 /
# 0.4735, the doc-comment sets' mean 0.5362 / 0.5377; on the full index 0.623 / 0.623, 0.544 / 0.545, 0.5571 / 0.5576.
# A word in more rows than this says little there (idf); 1,000 dropped words that did.
RANK_BUDGET = 2000


def affordable_terms(terms: Sequence[str], row_counts: Mapping[str, int], budget: int = RANK_BUDGET) -> list[str]:
    """The terms an "any term" query keeps, in their order: all of them, or the rarest that fit the budget."""
    if sum(row_counts.get(t, 0) for t in terms) <= budget:
        return list(terms)
    kept: set[str] = set()
    total = 0
    for term in sorted(terms, key=lambda t: row_counts.get(t, 0)):
        if total + row_counts.get(term, 0) > budget:
            break
        kept.add(term)
        total += row_counts.get(term, 0)
    return [t for t in terms if t in kept]
