"""How a result's score is made. Scores are in 0..1 and are read like this:

* similarity: 0.7 x the cosine similarity between the query and the chunk (as embedded with its
  path and symbol header) + 0.3 x the cosine similarity between the query and the chunk's symbol
  name in words (see indexing/documents.py); a chunk that defines no symbol has only the first part.
* semantic mode: similarity, plus the small rerank boosts.
* exact mode: keyword evidence (BM25 over symbol names, paths and identifier-split text) relative
  to the best keyword match for this query, scaled into 0..0.9.
* hybrid mode: 0.9 x (SEMANTIC_WEIGHT x similarity + (1 - SEMANTIC_WEIGHT) x keyword evidence).
  Every candidate gets its real similarity, however it was found, so the blend is like for like.

A chunk whose symbol name is exactly a name in the query ranks in a tier of its own,
0.9 + 0.1 x the blend above, so a definition asked for by name always comes first.
Rerank boosts (RerankOptions) move results within their tier, never across it.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from ..store.store import Hit
from .request import RerankOptions

SEMANTIC_WEIGHT = 0.8
NAME_WEIGHT = 0.3
EXACT_TIER = 0.9
_DAY = 86_400.0


@dataclass
class Candidate:
    hit: Hit
    semantic: float | None = None  # similarity (blend of code and name cosines), 0..1
    keyword: float = 0.0  # 0..1, relative to the best keyword match of the query
    found_semantic: bool = False
    found_keyword: bool = False
    exact_symbol: bool = False
    score: float = 0.0

    @property
    def relevance(self) -> str:
        if self.found_keyword or self.exact_symbol:
            return "both" if self.found_semantic else "exact"
        return "semantic"


def similarity(code_cosine: float, name_cosine: float | None) -> float:
    blend = (1 - NAME_WEIGHT) * code_cosine + NAME_WEIGHT * max(0.0, name_cosine or 0.0)
    return min(1.0, max(0.0, blend))


def keyword_strengths(ranks: list[tuple[int, float]]) -> dict[int, float]:
    """BM25 ranks (lower is better, negative) to 0..1 relative to the best one."""
    if not ranks:
        return {}
    best = min(r for _, r in ranks)
    if best >= 0:
        return {fid: 1.0 for fid, _ in ranks}
    return {fid: max(0.0, r / best) for fid, r in ranks}


def score(c: Candidate, mode: str, rerank: RerankOptions, now: float | None = None) -> float:
    sem = c.semantic or 0.0
    if mode == "semantic":
        base = sem
    elif mode == "exact":
        base = c.keyword
    else:
        base = SEMANTIC_WEIGHT * sem + (1 - SEMANTIC_WEIGHT) * c.keyword
    base = min(1.0, max(0.0, base * rerank.similarity_weight + _boost(c.hit, rerank, now)))
    if mode == "semantic":
        return round(base, 4)
    if c.exact_symbol:
        return round(EXACT_TIER + (1 - EXACT_TIER) * base, 4)
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
