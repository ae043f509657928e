"""The query pipeline: validate, embed (cached), retrieve, fuse, filter, de-duplicate, rerank, expand."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Collection, Hashable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import numpy as np

# numpy imports numpy.ma at its first use (np.unique asks np.ma.is_masked). Two threads doing that at once in a
# fresh process can find numpy.ma imported but not yet set on numpy, whose lazy __getattr__ then imports it again
# without end: a RecursionError, seen once in a loaded `.ci/run` (a `quarry search` whose two vector scans reached
# their first np.unique together). Imported here, before any scan thread starts.
import numpy.ma  # noqa: F401

from ..embedding.static_model import STATIC_MODEL_ID
from ..embedding.text_embedder import TextEmbedder
from ..store.identity import repository_key
from ..store.protocols import FileKey, Store, VectorSearch
from ..store.rows import ChunkId, HitFilter, PlaceId, Scope
from .context import FileLines, expand
from .dedup import merge_overlapping, merge_units
from .embedding_cache import QueryEmbeddingCache
from .fusion import Candidate, fast_name_weight, file_key, rank_scores, similarity, uses_outline
from .inline_filters import with_inline_filters
from .overloads import definition_units
from .query import ParsedQuery, any_terms, parse
from .request import MIN_SEMANTIC_CHARS, SearchError, SearchRemedy, SearchRequest, validate
from .results import Coverage, SearchResponse, SearchResult
from .text_pattern import TextPattern
from .text_search import TextSearch

if TYPE_CHECKING:
    from ..indexing.progress import Stage
    from ..indexing.steps import Steps

T = TypeVar("T")

# Seconds of vector loading at a time while warming up, between which waiting searches are answered.
WARM_UP_SLICE_S = 0.1
# Candidates asked of each retriever at first, and at most (a filter that leaves fewer matches than this
# has run dry). 50, as k=10 asked before: 100 and 200 measured the same on semble-dev (0.833 / 0.831 NDCG@10
# over 15 repositories) and cost 4 / 10 ms more per search at p95.
FETCH = 50
MAX_FETCH = 4096
OUTLINES_KEPT = 20_000  # files' outline vectors kept between writes: 30 MB of the default model's
# The fast (static) model's cosines run lower and flatter than the contextual model's; this affine map
# puts them on the contextual scale, so a chunk still waiting for its contextual vector competes fairly
# with those that have one: it maps the mean and spread of each model's 50 best cosines per query onto
# each other (stdlib dev set, 400 queries: trained fast model 0.421 +- 0.120, contextual 0.409 +- 0.100; the
# distilled table it replaced ran at 0.579 +- 0.090, mapped by 1.11 and -0.235). A least squares fit over
# pairs of the same chunks is no use here: the two cosines correlated at 0.36 overall.
FAST_SCALE, FAST_OFFSET = 0.83, 0.060


class _Layer:
    """One model's vectors: its query embeddings (cached) and the in-memory copy of its vectors."""

    def __init__(self, store: Store, embedder: TextEmbedder):
        self.store = store
        self.embedder = embedder
        self.cache = QueryEmbeddingCache(embedder.embed_query)
        self.index: VectorSearch = store.vector_search(embedder.model_id, embedder.dims)
        # The stage results name: the fast model's vectors are "fast" also when it is the chosen model.
        self.stage: Stage = "fast" if embedder.model_id == STATIC_MODEL_ID else "full"
        # Files' outline vectors as read for searches (None: the file has none yet), kept until the store's next
        # write: each key press searches again, over mostly the same files. Reading them took 0.25-0.5 ms a
        # search (laravel-framework, rack, abseil-cpp); at most OUTLINES_KEPT files are kept.
        self._outlines: dict[FileKey, np.ndarray | None] = {}
        self._outlines_of: Hashable = None

    def outlines(self, files: Sequence[FileKey]) -> dict[FileKey, np.ndarray]:
        """The outline vectors of these files that have one."""
        generation = self.store.generation
        if generation != self._outlines_of or len(self._outlines) > OUTLINES_KEPT:
            self._outlines, self._outlines_of = {}, generation
        missing = [f for f in files if f not in self._outlines]
        if missing:
            found = self.store.outline_vectors(self.embedder.model_id, missing)
            self._outlines.update((f, found.get(f)) for f in missing)
        return {f: v for f in files if (v := self._outlines[f]) is not None}


class Searcher:
    """Runs searches against one store; used from the worker thread that owns the store.

    Semantic evidence comes from the store's active model (`embedder`) and, for chunks that have no
    vector of it yet (a first index filling in), from the fast static model (`fast`)."""

    def __init__(
        self,
        store: Store,
        embedder: TextEmbedder | None,
        unavailable: str | None = None,
        fast: TextEmbedder | None = None,
    ):
        self.store = store
        self.embedder = embedder
        self.unavailable = unavailable or "no embedding model is loaded"  # why, when embedder is None
        self.full = _Layer(store, embedder) if embedder else None
        self.fast = _Layer(store, fast) if fast is not None else None
        self.text = TextSearch(store)
        self._coverage: tuple[tuple, Coverage, np.ndarray | None] | None = None

    def warm_up(self) -> Steps[None]:
        """Load the model and the vectors now, so that the first search pays for neither. The vectors load
        in slices, a step each (the worker answers waiting searches between them: until the load is done
        they search the vectors loaded so far and say so)."""
        if self.full is None:
            return
        self.full.embedder.load()
        while not self.full.index.refresh(budget_s=WARM_UP_SLICE_S):
            yield None
        # The fast layer is searched only for chunks the active model has not reached yet.
        if self.fast is not None and self.store.count_chunks() > len(self.full.index.ids()):
            while not self.fast.index.refresh(budget_s=WARM_UP_SLICE_S):
                yield None

    def _loading(self) -> bool:
        """A warm-up is loading vectors in steps: a search between them uses what is loaded, not the rest."""
        return any(layer.index.loading for layer in (self.full, self.fast) if layer is not None)

    def search(self, request: SearchRequest, indexing_roots: Collection[str] = ()) -> SearchResponse:
        with self.store.one_generation():
            return self._search(request, indexing_roots)

    def _search(self, request: SearchRequest, indexing_roots: Collection[str]) -> SearchResponse:
        started = time.perf_counter()
        req = validate(with_inline_filters(request))
        scopes = self._scopes(req)
        # A worktree's changes are against its main checkout; a team index checkout's (its overlay) against the
        # repository's shared base.
        if req.filters.changed_only and any(s.type not in ("worktree", "overlay") for s in scopes):
            main = next(s for s in scopes if s.type not in ("worktree", "overlay"))
            raise SearchError(
                f"changed-only search compares a worktree with its main repository, but {main.root} is not "
                "a worktree scope",
                SearchRemedy.PASS_WORKTREE,
            )
        response = SearchResponse(req.query, req.mode, effective_mode=req.mode)
        response.partial = any(s.root in indexing_roots for s in scopes)
        if req.mode == "text":
            pattern = TextPattern(req.query, **vars(req.text))
            found = self.text.search(scopes, req.filters.hit_filter(), pattern, req.k)
            response.results, response.files_matched, response.matches_total = found.results, found.files, found.matches
            response.text_complete, response.text_stopped_after_s = found.complete, found.stopped_after_s
            if found.stopped_after_s is not None:
                response.notice = (
                    f"the regular expression took too long (over {found.stopped_after_s:g} s) and was stopped; "
                    "results may be incomplete"
                )
        else:
            self._rank(req, scopes, response)
        if req.context:
            self._add_context(response.results, req.context)
        response.scopes_searched = [s.root for s in scopes]
        bases = [s for s in scopes if s.type == "base" and s.published is not None]
        if bases and response.notice is None:
            published = bases[0].published
            assert published is not None
            response.notice = (
                f"{bases[0].root} has no index of its own yet: searched the team's shared base ({published.branch} at "
                f"{published.commit[:10]}), without this checkout's own changes"
            )
        response.elapsed_ms = (time.perf_counter() - started) * 1000
        return response

    def _rank(self, req: SearchRequest, scopes: list[Scope], response: SearchResponse) -> None:
        """The ranked modes (hybrid, semantic, exact): fill in the response's results, coverage and notices."""
        semantic = req.mode != "exact"
        if semantic and len(req.query) < MIN_SEMANTIC_CHARS:
            semantic = _exact_only(response, f"queries under {MIN_SEMANTIC_CHARS} characters use exact matching only")
        elif semantic and self.full is None:
            semantic = _exact_only(response, _unavailable(self.unavailable))

        # The query's embeddings are made on a scan thread (the default model's run takes ~4 ms of a 12 ms search
        # on 2 cores) while this one reads the coverage and the keyword side; the vector scans wait for them there.
        full_vec: Future[tuple[np.ndarray | None, str | None]] | None = None
        fast_vec: Future[tuple[np.ndarray | None, str | None]] | None = None
        if semantic:
            # While warm_up() loads the vectors, search those loaded so far rather than wait for the rest.
            loaded = self._full().index.refresh(budget_s=0 if self._loading() else None)
            response.vectors_loaded = 1.0 if loaded else self._full().index.loaded_share
            if not loaded:
                response.notice = (
                    f"the index is still loading ({response.vectors_loaded:.0%} of its vectors), so "
                    "semantic matches are partial"
                )
            # Where the active model has no vector yet (an index up to its fast stage) and the fast model stands in,
            # the active model's embedding of the query would find nothing: it is not made. On the Linux kernel's
            # fast-stage index that was ~220 ms of a fresh process's first search (loading the ONNX model, one
            # embedding).
            if self.fast is not None and not self._full().index.holds_any():
                # The fast model reads the query with the default model too, whose session a fresh process loads
                # at its first search (~0.3 s): begun before the coverage, which may load the fast vectors.
                fast_vec = _scan_pool().submit(self._embed, req.query, self.fast)
            else:
                full_vec = _scan_pool().submit(self._embed, req.query)
        parsed = parse(req.query)
        try:
            response.coverage, uncovered = self._coverage_of([s.id for s in scopes], refresh_fast=semantic)
            if full_vec is not None and self.fast is not None and (uncovered is None or len(uncovered)):
                # After the active model's, whose embedding of the query the fast model's reuses (Embedder.embed_query).
                fast_vec = _scan_pool().submit(_after, full_vec, self._embed, req.query, self.fast)
            results = self._retrieve(
                req, scopes, _Query(parsed, semantic, full_vec, fast_vec, uncovered), response.effective_mode
            )
        except _Unembedded as exc:
            _exact_only(response, _unavailable(exc.problem))
            results = self._retrieve(req, scopes, _Query(parsed, False, None, None, None), "exact")
        except BaseException:
            # The models and their query caches serve one search at a time: the next must not find these running.
            wait([f for f in (full_vec, fast_vec) if f is not None])
            raise
        if req.relative_cutoff and results:
            # Relative to the best, so the first N of a longer list are still those of a list of N.
            floor = req.relative_cutoff * results[0].score
            kept = [r for r in results if r.score >= floor]
            response.below_cutoff, results = len(results) - len(kept), kept
        response.results = results

    @property
    def stage(self) -> str | None:
        """The stage of the active model's vectors ("full"; "fast" where the fast model is the chosen one), None
        where no model loads."""
        return self.full.stage if self.full is not None else None

    def _full(self) -> _Layer:
        """The active model's layer, for the steps of a search by meaning: there is one only with it."""
        assert self.full is not None
        return self.full

    def coverage(self, scope_ids: list[str]) -> Coverage:
        """How much of these scopes each index stage covers, as a search of them would report it."""
        return self._coverage_of(scope_ids, refresh_fast=False)[0]

    def _coverage_of(self, scope_ids: list[str], refresh_fast: bool) -> tuple[Coverage, np.ndarray | None]:
        """How much of these scopes each layer holds in memory, and the sorted ids of their chunks lacking a
        vector of the active model (searched through the fast layer; None: every chunk); cached until the next
        write. The fast layer's vectors are loaded only while such chunks exist (`refresh_fast`: a search by
        meaning), so a finished index pays nothing for them."""
        key = (tuple(scope_ids), self.store.generation, refresh_fast)
        if self._coverage is not None and self._coverage[0] == key:
            return self._coverage[1], self._coverage[2]
        full = self.full.index.ids() if self.full else np.zeros(0, dtype=np.int64)
        whole = self.store.chunks_of_whole_store(scope_ids) if not len(full) else None
        uncovered: np.ndarray | None
        if whole is not None:
            # No chunk has the active model's vector (a first index up to its fast stage), and the store knows how
            # many chunks the scopes use: their ids need not be read (0.3-0.45 s of a first search of the Linux
            # kernel's 3M chunks), nor matched against the fast layer's (whose entries all belong to live chunks
            # but for vectors deleted since its last rewrite: the count is capped).
            ids_count, full_count = whole, 0
            uncovered = None if whole else np.zeros(0, dtype=np.int64)
            fast_count = min(whole, len(self._fast_ids(refresh_fast))) if whole else 0
        else:
            ids = self.store.scope_chunk_ids(scope_ids)
            has_full = np.isin(ids, full)
            ids_count, full_count = len(ids), int(has_full.sum())
            uncovered = None if len(ids) and not full_count else ids[~has_full]
            if self.fast is not None and full_count < ids_count:
                fast_count = int((has_full | np.isin(ids, self._fast_ids(refresh_fast))).sum())
            else:  # every chunk has the active model's vector, or there is no fast layer beside it
                fast_count = full_count
        coverage = Coverage(ids_count, full_count, fast_count)
        self._coverage = (key, coverage, uncovered)
        return coverage, uncovered

    def _fast_ids(self, refresh: bool) -> np.ndarray:
        """Ids of the chunks the fast layer holds a vector of (none without one), caught up first for a search by
        meaning (budgeted while the window's warm-up is loading)."""
        if self.fast is None:
            return np.zeros(0, dtype=np.int64)
        if refresh:
            self.fast.index.refresh(budget_s=0 if self._loading() else None)
        return self.fast.index.ids()

    # --- steps ----------------------------------------------------------------------------------

    def _scopes(self, req: SearchRequest) -> list[Scope]:
        if req.all_scopes and not req.roots:
            # A team index's bases are searched through their checkouts' overlays, which hold the same files
            # wherever the checkout has not changed them.
            scopes = [s for s in self.store.scopes() if s.type != "base"]
            if not scopes:
                raise SearchError("nothing is indexed yet", SearchRemedy.INDEX_FIRST)
            return scopes
        scopes = []
        for root in req.roots:
            resolved = Path(root).expanduser().resolve()
            scope = self.store.scope_for_root(resolved) or self._base_of(resolved)
            if scope is None:
                raise SearchError(f"{resolved} is not indexed", SearchRemedy.INDEX_FIRST, str(resolved))
            scopes.append(scope)
        return scopes

    def _base_of(self, checkout: Path) -> Scope | None:
        """On a team index, a checkout not indexed yet (or by a role that may only read) searches its repository's
        shared base, shown at the checkout's folder: the committed content, without the checkout's own changes."""
        bases = self.store.bases
        repository = repository_key(checkout) if bases is not None else None
        base = bases.base_scope(repository) if bases is not None and repository is not None else None
        if base is None or base.published is None:
            return None
        return replace(base, root=str(checkout))

    def _embed(self, query: str, layer: _Layer | None = None) -> tuple[np.ndarray | None, str | None]:
        layer = layer or self.full
        if layer is None:
            return None, self.unavailable
        try:
            return layer.cache.get(query), None
        except Exception as exc:  # any model failure degrades to exact search rather than failing
            return None, f"{type(exc).__name__}: {exc}"

    def _retrieve(self, req: SearchRequest, scopes: list[Scope], query: _Query, mode: str) -> list[SearchResult]:
        f = req.filters
        where = f.hit_filter()
        roots = {s.id: s.root for s in scopes}
        scope_ids = list(roots)
        # Filters are applied in SQL, inside retrieval; only the minimum score is applied afterwards, so
        # that one needs many more candidates to leave k. The first fetch does not depend on k, so the
        # first N results of a search for k are exactly those of a search for N (a candidate set sized by
        # k gave -k 5 and -k 30 different keyword evidence and file support, so different orders). A larger
        # fetch, for a k the first leaves short, only adds results after those of the fetches before it:
        # re-ranking the larger candidate set reordered the top 10 of 11 of 794 semble-dev queries between
        # -k 10 and -k 30 (the window's 30), and of more at -k 100 (NDCG@10 0.865 -> 0.860).
        fetch = FETCH * (4 if f.min_score > 0 else 1)
        kept: list[Candidate] = []
        while True:
            candidates, exhausted = self._candidates(scope_ids, query, mode, where, fetch)
            rank_scores(candidates, query.parsed, mode, req.rerank)
            ranked = sorted(
                (c for c in candidates if c.score >= f.min_score),
                key=lambda c: (-c.score, c.hit.path, c.hit.start_line),
            )
            kept = _extend(kept, ranked, req.overlap_threshold, req.k, query.parsed.describes_an_action)
            if len(kept) >= req.k or exhausted or fetch >= MAX_FETCH:
                return [_result(c, roots[c.hit.scope_id]) for c in kept[: req.k]]
            fetch = min(MAX_FETCH, fetch * 4)

    def _candidates(
        self, scope_ids: list[str], query: _Query, mode: str, where: HitFilter, fetch: int
    ) -> tuple[list[Candidate], bool]:
        """Candidates by file_chunk id, and whether every retriever returned all it had."""
        by_id: dict[PlaceId, Candidate] = {}
        exhausted = True
        scans: list[Future] = []
        if query.semantic:
            allowed = self._full().index.allowed(scope_ids, where)
            # The vector scans (numpy, which lets go of the GIL, or the team index's server) run on their own
            # threads while this one waits on the store for the keyword side: they overlap on two cores.
            scans = [_scan_pool().submit(lookup) for lookup in self._nearest(query, allowed, fetch)]
        try:
            keyword = (
                self._keyword_side(scope_ids, query.parsed, mode, where, fetch) if mode in ("exact", "hybrid") else None
            )
        except BaseException:
            wait(scans)  # the next search must not find these scans still reading the vector index
            raise
        if keyword is not None:  # while the scans may still run
            exhausted &= self._add_keyword_candidates(by_id, *keyword, fetch, query.parsed.is_sentence)
            self._fill_extents(by_id)
        if scans:
            nearest = [scan.result() for scan in scans]
            exhausted &= all(len(found) < fetch for found in nearest[::2])  # the code-vector lists
            chunk_ids = list(dict.fromkeys(cid for found in nearest for cid, _ in found))
            for hit in self.store.hits_for_chunks(scope_ids, chunk_ids, where):
                found = by_id.get(hit.place_id)
                if found is None:
                    by_id[hit.place_id] = Candidate(hit, found_semantic=True)
                else:
                    found.found_semantic = True
        if query.semantic:
            self._fill_similarity(by_id, query)
        if query.vector is not None and uses_outline(query.parsed, mode):  # read only when ranking weighs them
            self._fill_outline(by_id, query.vector)
        return list(by_id.values()), exhausted

    def _nearest(
        self, query: _Query, allowed: np.ndarray | None, fetch: int
    ) -> list[Callable[[], list[tuple[ChunkId, float]]]]:
        """The lookups of the nearest chunks, by code and by name vectors in the active model's layer, then,
        among the chunks it does not cover yet, in the fast layer; each can run on a thread of its own. The code
        lookups come first of each pair."""
        lookups: list[Callable[[], list[tuple[ChunkId, float]]]] = []
        if query.full is not None:
            full = self._full().index
            lookups += [
                functools.partial(_lookup, full, query.active_vector, allowed, fetch, names) for names in (False, True)
            ]
        if query.fast is not None and self.fast is not None:
            uncovered = query.uncovered
            if uncovered is None:
                # Every chunk is the fast layer's to search: with no filter, no set to check its 3M entries against
                # (the Linux kernel's first index; 0.17 s of a fresh process's first search).
                pending = allowed
            else:
                # Both are sorted and distinct: not np.intersect1d's np.unique pass (see store/id_arrays.py).
                pending = uncovered if allowed is None else np.intersect1d(allowed, uncovered, assume_unique=True)
            # The fast vector is None where it failed beside the active model's: that one searches alone.
            lookups += [
                functools.partial(_lookup, self.fast.index, query.fast_embedding, pending, fetch, names)
                for names in (False, True)
            ]
        return lookups

    def _keyword_side(
        self, scope_ids: list[str], parsed: ParsedQuery, mode: str, where: HitFilter, fetch: int
    ) -> tuple[list[PlaceId], list[tuple[PlaceId, float]]]:
        """(places whose symbol is named in the query, (place, strength 0..1) keyword matches)."""
        names = list(parsed.identifiers)
        if parsed.looks_like_identifier and parsed.text not in names:
            names.append(parsed.text)
        symbol_ids = self.store.symbol_matches(scope_ids, names, fetch, where) if names else []
        # Exact mode wants every word (and falls back to any when that finds little); hybrid lets the
        # keyword strengths weigh partial matches against the semantic side.
        attempts = [(list(parsed.words), True), (any_terms(parsed), False)] if mode == "exact" else []
        attempts = attempts or [(any_terms(parsed), False)]
        matches: list[tuple[PlaceId, float]] = []
        for terms, every_term in attempts:
            if not terms:
                continue
            matches = self.store.keyword_matches(scope_ids, terms, every_term, fetch, where)
            if len(matches) >= fetch // 5:
                break
        return symbol_ids, matches

    def _add_keyword_candidates(
        self,
        by_id: dict[PlaceId, Candidate],
        symbol_ids: list[PlaceId],
        matches: list[tuple[PlaceId, float]],
        fetch: int,
        sentence: bool,
    ) -> bool:
        """Add the keyword side's candidates: `matches` with their strengths, and the definitions named in the query
        (`symbol_ids`) as the strongest keyword evidence there is, unless the query is a sentence: a doc comment
        names other functions that its own works with ("Pop an authorization context that was previously pushed by
        sqlite3AuthContextPush"), so there a name is only as strong as its words' match. Named in a sentence at
        full strength (hybrid nl MRR@10 after stage 3): the doc-comment sets Go 0.445, Java 0.520, C 0.464, stdlib
        held-out 0.533, semble-dev 0.8217 at the end of stage 2; at their words' strength 0.449, 0.524, 0.466,
        0.535, 0.8237 (stdlib dev 0.571 -> 0.570; full strength kept for names at a sentence's head, "how
        nvm_has checks": semble-dev 0.8225)."""
        strengths = dict(matches)
        new_ids = [fid for fid in [*symbol_ids, *strengths] if fid not in by_id]
        for hit in self.store.hits_for_places(list(dict.fromkeys(new_ids))):
            by_id[hit.place_id] = Candidate(hit)
        for fid, strength in strengths.items():
            by_id[fid].keyword = strength
            by_id[fid].found_keyword = True
        for fid in symbol_ids:
            c = by_id[fid]
            # A heading that names the symbol is about it, not its definition: strong keyword evidence only.
            c.exact_symbol = c.hit.symbol_type != "heading"
            c.found_keyword = True
            if not sentence:
                c.keyword = max(c.keyword, 1.0)
        return len(matches) < fetch and len(symbol_ids) < fetch

    def _fill_extents(self, by_id: dict[PlaceId, Candidate]) -> None:
        """Give each definition named in the query its extent (fusion.EXTENT_WEIGHT) where another file defines the
        same name, spelt the same, as the same kind of thing (types, functions or macros): which of them is meant is
        then in question. Kinds apart, lines do not compare: a C macro's one line wraps the function doing its work
        (the kernel's `kmalloc`, against a four-line stub under tools/)."""
        files: dict[str, set[str]] = {}
        kinds: dict[str, set[tuple[str, bool]]] = {}
        for c in by_id.values():
            if c.exact_symbol and c.hit.symbol_name:
                files.setdefault(c.hit.symbol_name, set()).add(file_key(c.hit))
                kinds.setdefault(c.hit.symbol_name, set()).add((c.hit.chunk_type, c.hit.symbol_type == "macro"))
        shared = {name for name, keys in files.items() if len(keys) > 1 and len(kinds[name]) == 1}
        asked = [pid for pid, c in by_id.items() if c.exact_symbol and c.hit.symbol_name in shared]
        if asked:
            for pid, lines in self.store.definition_extents(asked).items():
                by_id[pid].extent = lines

    def _fill_similarity(self, by_id: dict[PlaceId, Candidate], query: _Query) -> None:
        """Give every candidate its similarity, however it was found, so fusion compares like with like:
        the active model's where the chunk has its vector, else the fast model's on the same scale (with the
        active model's name vector where there is one)."""
        chunk_ids = list({c.hit.chunk_id for c in by_id.values()})
        code: dict[ChunkId, float] = {}
        names: dict[ChunkId, float] = {}
        if query.vector is not None:
            full = self._full().index
            code = full.similarities(query.vector, chunk_ids)
            names = full.similarities(query.vector, chunk_ids, names=True)
        fast_code: dict[ChunkId, float] = {}
        fast_names: dict[ChunkId, float] = {}
        fast_vector = query.fast_embedding()
        if fast_vector is not None and self.fast is not None:
            rest = [cid for cid in chunk_ids if cid not in code]
            fast_code = self.fast.index.similarities(fast_vector, rest)
            fast_names = self.fast.index.similarities(fast_vector, rest, names=True)
        fast_weight = fast_name_weight(query.parsed)
        for c in by_id.values():
            cid = c.hit.chunk_id
            if cid in code:
                c.code = code[cid]
                c.semantic, c.layer = similarity(c.code, names.get(cid)), self._full().stage
            elif cid in fast_code:
                c.code = _on_full_scale(fast_code[cid])
                if cid in names:  # the name's contextual vector (stage 3 makes those first) where it has one
                    c.semantic = similarity(c.code, names[cid])
                else:
                    fast_name = fast_names.get(cid)
                    name = None if fast_name is None else _on_full_scale(fast_name)
                    c.semantic = similarity(c.code, name, fast_weight)
                c.layer = "fast"

    def _fill_outline(self, by_id: dict[PlaceId, Candidate], vector: np.ndarray) -> None:
        """Give every candidate the cosine of its file's outline vector (the file's path and names as the
        active model reads them) to the query, where the file has one."""
        files = list(dict.fromkeys((c.hit.scope_id, c.hit.path) for c in by_id.values()))
        outlines = self._full().outlines(files)
        if not outlines:
            return
        keys = list(outlines)
        cosines = dict(zip(keys, (np.stack([outlines[k] for k in keys]) @ vector).tolist(), strict=True))
        for c in by_id.values():
            c.outline = cosines.get((c.hit.scope_id, c.hit.path))

    def _add_context(self, results: list[SearchResult], n: int) -> None:
        files = FileLines()
        for r in results:
            lines = files.lines_if_current(Path(r.scope_root) / r.path, r.file_sha256)
            if lines is None:
                r.stale = True
                continue
            r.context_start_line, r.context_end_line, r.context = expand(lines, r.start_line, r.end_line, n)


class _Unembedded(Exception):
    """The query could not be embedded for a search by meaning (a model failure); `problem` says why."""

    def __init__(self, problem: str | None):
        super().__init__(problem)
        self.problem = problem


def _lookup(
    index: VectorSearch,
    vector: Callable[[], np.ndarray | None],
    allowed: np.ndarray | None,
    fetch: int,
    names: bool,
) -> list[tuple[ChunkId, float]]:
    """A scan job: the nearest chunks to the query's embedding once it is made (none without one)."""
    query = vector()
    return [] if query is None else index.nearest(query, allowed, fetch, names)


def _after(first: Future, then: Callable[..., T], *args: object) -> T:
    """`then(*args)` once `first` is done (a scan job that must follow another: submitted after it, so never
    waiting on a job no thread has taken)."""
    wait([first])
    return then(*args)


class _Query:
    """A query as the retrievers need it. Its embeddings are made meanwhile on a scan thread; reading one waits
    for it, and raises _Unembedded where the search by meaning cannot go on without it."""

    def __init__(
        self,
        parsed: ParsedQuery,
        semantic: bool,
        full: Future[tuple[np.ndarray | None, str | None]] | None,
        fast: Future[tuple[np.ndarray | None, str | None]] | None,
        uncovered: np.ndarray | None,
    ):
        self.parsed = parsed
        self.semantic = semantic  # searching by meaning: with one of the two embeddings below, or both
        # the active model's embedding, when that model has vectors to search (None: searching without meaning, or
        # the fast model alone stands in)
        self.full = full
        self.fast = fast  # the fast model's, when some chunks lack an active-model vector
        self.uncovered = uncovered  # those chunks' ids, sorted; None: no chunk of the scopes has an active-model vector

    @property
    def vector(self) -> np.ndarray | None:
        return None if self.full is None else self.active_vector()

    def active_vector(self) -> np.ndarray:
        """The active model's embedding of the query: without it the search by meaning is off (_Unembedded)."""
        assert self.full is not None  # asked only where the active model is searched
        vector, problem = self.full.result()
        if vector is None:
            raise _Unembedded(problem)
        return vector

    def fast_embedding(self) -> np.ndarray | None:
        """The fast model's embedding; where it stands in alone, the search by meaning is off without it."""
        if self.fast is None:
            return None
        vector, problem = self.fast.result()
        if vector is None and self.full is None:
            raise _Unembedded(problem)
        return vector


def _exact_only(response: SearchResponse, notice: str) -> bool:
    """Answer a ranked search without meaning, saying why; False: not searching by meaning."""
    response.effective_mode = "exact"
    response.notice = notice
    return False


def _unavailable(problem: str | None) -> str:
    return f"semantic search is unavailable ({problem}); showing exact matches only"


def _on_full_scale(fast_cosine: float) -> float:
    return FAST_SCALE * fast_cosine + FAST_OFFSET


@functools.cache
def _scan_pool() -> ThreadPoolExecutor:
    """Two threads for the vector scans of every searcher in the process (searches run one at a time): a
    search's code and name lookups run side by side. On the team index that is two server processes (two
    walks of ef_search 100: 26 ms one after the other, 8 ms side by side, 100K chunks)."""
    return ThreadPoolExecutor(max_workers=2, thread_name_prefix="quarry-vector-scan")


def _extend(
    shown: list[Candidate], ranked: list[Candidate], overlap_threshold: float, k: int, overloads_apart: bool
) -> list[Candidate]:
    """Up to k results: those already shown, as they are, then those of `ranked` (a fetch's ranking, best first)
    that show none of their chunks, definitions or lines, one per definition (the overloads of a name apart where
    `overloads_apart`: overloads.py) and per stretch of lines. A result taken from a larger fetch shows a score no
    higher than the one before it: its own was weighed among other candidates, and the list reads best first."""
    earlier = {id(c) for c in shown}

    def unless_shown(merge: Callable[[Candidate, Candidate], None]) -> Callable[[Candidate, Candidate], None]:
        """`merge`, except into a result already shown, which stays as it was."""
        return lambda into, dropped: None if id(into) in earlier else merge(into, dropped)

    pool = _drop_cross_scope_copies([*shown, *ranked])
    units = merge_units(pool, definition_units(pool, overloads_apart), unless_shown(_fold_window))
    kept = merge_overlapping(
        units,
        lambda c: (file_key(c.hit), c.hit.start_line, c.hit.end_line),
        overlap_threshold,
        unless_shown(_absorb),
        k,
    )
    if shown:
        for i in range(len(shown), len(kept)):
            kept[i].score = min(kept[i].score, kept[i - 1].score)
    return kept


def _chunk_key(c: Candidate) -> tuple[str, int, int]:
    """One key per chunk shown, whichever scope it was found in (a worktree's unchanged file is in two)."""
    return (c.hit.path, c.hit.chunk_id, c.hit.start_line)


def _drop_cross_scope_copies(ranked: list[Candidate]) -> list[Candidate]:
    """With several scopes, the same chunk at the same path (a worktree's unchanged file) shows once."""
    seen: set[tuple[str, int, int]] = set()
    out = []
    for c in ranked:
        key = _chunk_key(c)
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


def _absorb(kept: Candidate, dropped: Candidate) -> None:
    kept.found_semantic |= dropped.found_semantic
    kept.found_keyword |= dropped.found_keyword


def _fold_window(kept: Candidate, window: Candidate) -> None:
    """Fold a window of the kept result's definition into it. A type's own chunk (its header, doc comment and
    fields) cut into windows is one declaration: the result widens to span the windows that meet it, as a
    function's does not (its best window is the part of a long body a search found). semble-dev: `Rack::Builder`
    showed lines 9-34 of its header, now 9-39 (symbol category 0.964 -> 0.972); stdlib unchanged."""
    _absorb(kept, window)
    a, b = kept.hit, window.hit
    if a.chunk_type != "type" or b.start_line > a.end_line + 1 or a.start_line > b.end_line + 1:
        return
    lines = dict(zip(range(b.start_line, b.end_line + 1), b.text.split("\n"), strict=False))
    lines.update(zip(range(a.start_line, a.end_line + 1), a.text.split("\n"), strict=False))
    start, end = min(a.start_line, b.start_line), max(a.end_line, b.end_line)
    if len(lines) == end - start + 1:  # every line known: the window's text is its lines
        kept.hit = replace(a, start_line=start, end_line=end, text="\n".join(lines[n] for n in range(start, end + 1)))


def _result(c: Candidate, root: str) -> SearchResult:
    h = c.hit
    result = SearchResult(
        path=h.path,
        start_line=h.start_line,
        end_line=h.end_line,
        score=c.score,
        relevance=c.relevance,
        language=h.language,
        chunk_type=h.chunk_type,
        symbol_name=h.symbol_name,
        symbol_type=h.symbol_type,
        parent_symbol=h.parent_symbol,
        snippet=h.text,
        semantic_score=None if c.semantic is None else round(c.semantic, 4),
        stage=c.layer or "keyword",
        scope_root=root,
        file_sha256=h.file_sha256,
        chunk_id=h.chunk_id,
        evidence=_evidence(c),
    )
    return result


def _evidence(c: Candidate) -> tuple[str, ...]:
    named = ("name",) if c.exact_symbol else ()
    return named + (("keyword",) if c.found_keyword else ()) + (("meaning",) if c.found_semantic else ())
