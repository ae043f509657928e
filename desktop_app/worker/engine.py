"""What lives on the worker's thread: the store, the models and the searcher, and the few steps of an index run
or a model switch that need more than one of them. Only operations (ops.py) run on it, one at a time, on the
worker's thread (worker.py).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..embedding.choice import configured_embedder, embedder_for_source
from ..embedding.embedder import Embedder
from ..embedding.model_spec import DEFAULT_MODEL_ID, ModelError
from ..embedding.static_model import RETIRED_STATIC_MODEL_IDS, STATIC_MODEL_ID, StaticEmbedder
from ..embedding.text_embedder import TextEmbedder
from ..indexing.indexer import Indexer, IndexOptions, IndexStats
from ..indexing.progress import Progress
from ..indexing.reembed import reembed
from ..indexing.steps import Steps
from ..indexing.vector_fill import WantedChunks
from ..search.pipeline import Searcher
from ..store.location import DEFAULT_EF_SEARCH, StoreLocation, open_store
from ..store.rows import PageCheck
from ..store.until_next_write import UntilNextWrite
from .scope_lookup import scope_containing

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EngineConfig:
    store: StoreLocation | Path | str  # where the index lives (a SQLite file's path)
    # A switch of the index's model: "default" (contextual) or "fast" (static), see embedding.choice; None
    # keeps the model the index was made with (the default model for a new index). Never a side effect of a
    # run that names no model: a custom model's vectors would be replaced by the default's.
    model: str | None = None
    model_dir: Path | None = None  # a model folder, instead of `model`
    provider: str = "auto"  # "auto" | "cpu" | "cuda" | "coreml"
    index_options: IndexOptions = field(default_factory=IndexOptions)
    ef_search: int = DEFAULT_EF_SEARCH  # a team index's HNSW candidates per vector query

    @property
    def location(self) -> StoreLocation:
        return StoreLocation.of(self.store)


class Engine:
    """What lives on the worker thread. Only the worker calls it."""

    def __init__(self, config: EngineConfig, on_check: Callable[[PageCheck], None] | None = None):
        """`on_check` hears of the index file read whole for damage, at the open or before a write (its own
        thread may call it)."""
        self.config = config
        self.store = open_store(config.location, config.ef_search, on_check)
        self.model_error: str | None = None
        # The fast static model: stage 2 of every index run, and the semantic layer of chunks the configured
        # model has not reached yet. It ships with Quarry and loads in a fraction of a second.
        self.fast = StaticEmbedder()
        try:
            self.embedder: TextEmbedder | None = self._configured_embedder()
        except ModelError as exc:
            self.embedder, self.model_error = None, str(exc)
        if isinstance(self.embedder, Embedder) and self.embedder.model_id == DEFAULT_MODEL_ID:
            # The fast model reads queries with the default model too: one session serves both.
            self.fast.query_model = self.embedder
        self.indexing_roots: set[str] = set()
        # Folders whose every file this engine has seen a run's stage 1 through (a walk of all of it, to the end):
        # only their updates read the changed files alone. A folder whose first run stopped half way holds only
        # some of its files, and the next update's walk finds the rest.
        self._walked_roots: set[str] = set()
        # Chunks searches came across without a vector of the configured model: embedded first.
        self.wanted = WantedChunks()
        self.searcher = self._searcher_for_active_model()
        self._models_tidied = False  # see index()
        # Lists read from the store for Quick Open, Go to Symbol and the filter bar (a scope's paths, its
        # symbols, its languages), kept until the next write.
        self.listings: UntilNextWrite[tuple[str, str], Any] = UntilNextWrite(lambda: self.store.generation)

    def _configured_embedder(self) -> TextEmbedder:
        """The model the configuration switches to, else the one the index was made with."""
        config = self.config
        if config.model_dir is None and config.model is None:
            active = self.store.active_model()
            if active is None:
                return configured_embedder("default", None, config.provider)
            if active == STATIC_MODEL_ID:
                return self.fast
            try:
                return embedder_for_source(self.store.model_source(active) or "", config.provider)
            except ModelError as exc:
                raise ModelError(
                    f"the index's model {active} cannot be loaded ({exc}); choose its folder again, or switch the "
                    "index to another model"
                ) from exc
        if config.model == "fast" and config.model_dir is None:
            return self.fast
        return configured_embedder(config.model or "default", config.model_dir, config.provider)

    @property
    def needs_reembed(self) -> bool:
        """The configured model differs from the one the store's vectors were made with."""
        return self._pending_reembed() is not None

    def _pending_reembed(self) -> tuple[str, TextEmbedder] | None:
        """(the store's active model, the configured embedder) when they differ, else None."""
        active = self.store.active_model()
        if self.embedder is None or active is None or active == self.embedder.model_id:
            return None
        return active, self.embedder

    def _searcher(self, embedder: TextEmbedder | None, unavailable: str | None = None) -> Searcher:
        fast = self.fast if embedder is None or embedder.model_id != STATIC_MODEL_ID else None
        return Searcher(self.store, embedder, unavailable, fast=fast)

    def _searcher_for_active_model(self) -> Searcher:
        """Search with the model the store's vectors belong to: the configured one, or while a re-embed
        is pending, the previous one (loaded again from where the store says it came from)."""
        pending = self._pending_reembed()
        if pending is None:
            return self._searcher(self.embedder, self.model_error)
        active, embedder = pending
        if active == STATIC_MODEL_ID:
            return self._searcher(self.fast)
        try:
            old = embedder_for_source(self.store.model_source(active) or "", self.config.provider)
        except ModelError as exc:
            return self._searcher(
                None, f"the index's model {active} cannot be loaded ({exc}); re-embedding with {embedder.model_id}"
            )
        return self._searcher(old)

    def load_model(self) -> TextEmbedder:
        """The configured model, loaded: raises ModelError when there is none that runs (a model folder whose
        model.onnx is missing, or makes vectors of another size than its quarry-model.json declares)."""
        if self.embedder is None:
            raise ModelError(self.model_error or "no embedding model")
        self.embedder.load()
        return self.embedder

    def warm_up(self) -> Steps[tuple[str, str]]:
        """Load the model and the index's vectors before the first search needs them; (model id, provider).

        Raises ModelError when there is no usable model (searches then fall back to exact matching).
        """
        embedder = self.load_model()
        yield from self.searcher.warm_up()
        return embedder.model_id, embedder.provider

    def reembed(self, progress: Callable[[Progress], None] | None, should_stop: Callable[[], bool]) -> Steps[bool]:
        """Re-embed the store with the configured model; searches switch to it when it is complete."""
        pending = self._pending_reembed()
        if pending is None:
            return True
        _, embedder = pending
        finished = yield from reembed(self.store, embedder, progress, should_stop, self.wanted)
        if finished:
            self.searcher = self._searcher(embedder)
        return finished

    def _tidy_models(self) -> None:
        # A model recorded but never given a vector is a switch begun and abandoned (searches of earlier builds
        # began one and stopped at once): its tables would stay for good. This run's model is about to get its.
        assert self.embedder is not None  # index() checked
        dropped = self.store.drop_models_without_vectors(keep=[self.embedder.model_id, STATIC_MODEL_ID])
        if dropped:
            _log.info("dropped models that never got a vector: %s", ", ".join(dropped))
        self._retire_old_fast_models()

    def _retire_old_fast_models(self) -> None:
        """Drop the vectors of an earlier fast model beside another active one: this run's fast stage gives
        every chunk of the folder a vector of the current one, and searches read only the current one's.
        (Where an earlier fast model is the active one, the run re-embeds with the current one and the
        switch drops it.)"""
        active = self.store.active_model()
        retired = [m for m in RETIRED_STATIC_MODEL_IDS if m != active and self.store.model_source(m) is not None]
        if active is not None and retired:
            assert self.embedder is not None  # index() checked
            self.store.activate_model(active, keep=[STATIC_MODEL_ID, self.embedder.model_id])
            _log.info("dropped the vectors of earlier fast models: %s", ", ".join(retired))

    def index(
        self,
        root: Path,
        progress: Callable[[Progress], None] | None,
        should_stop: Callable[[], bool],
        add: bool = True,
        changed: Collection[str] = (),
    ) -> Steps[IndexStats]:
        """Index `root` (see Indexer.index_steps; `add` False: only if it is in the index; `changed`: the paths a
        watcher saw change)."""
        if self.embedder is None:
            raise ModelError(self.model_error or "no embedding model")
        if not self._models_tidied:  # what earlier builds left: once per engine, not on every watched save
            self._tidy_models()
            self._models_tidied = True
        indexer = Indexer(self.store, self.embedder, self.config.index_options, fast=self.fast, wanted=self.wanted)
        key = str(Path(root).expanduser().resolve())
        self.indexing_roots.add(key)
        _log.info("indexing %s into %s", key, self.config.location)
        try:
            named = changed if key in self._walked_roots else ()
            stats = yield from indexer.index_steps(root, progress, should_stop, add, named)
            if "keyword" in stats.stages and "walk" in stats.step_seconds:
                self._walked_roots.add(key)
            if "full" in stats.stages and self.needs_reembed:
                # Stage 3 gave every chunk a vector of the configured model: it replaces the old one.
                self.store.activate_model(self.embedder.model_id, keep=[STATIC_MODEL_ID])
                self.searcher = self._searcher(self.embedder)
            _log.info(
                "indexed %s: %d files changed, %d chunks embedded in %.1f s%s",
                key,
                stats.files_changed,
                stats.chunks_embedded,
                stats.seconds,
                " (cancelled)" if stats.cancelled else "",
            )
            return stats
        finally:
            self.indexing_roots.discard(key)

    def want_file(self, path: Path) -> None:
        """Queue the chunks of the indexed file at `path` (absolute) to be embedded before the rest."""
        scope = scope_containing(self.store, path)
        if scope is not None:
            self.wanted.add(self.store.chunk_ids_of_files(scope.id, [path.relative_to(scope.root).as_posix()]))

    def close(self) -> None:
        self.store.close()
