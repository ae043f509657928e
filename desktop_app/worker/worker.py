"""The one thread that owns the store and the model and runs every operation against them.

Operations (operations.py) wait in a priority queue: searches first, then other reads, then writes.
While a write waits on the model it calls back into the queue (Indexer's `idle` hook) and runs any
waiting read, so a search never waits for a whole index run; a write never runs inside another.
Callers get a concurrent.futures.Future for each operation; nothing else touches the store.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from ..embedding import ModelError
from ..embedding.choice import configured_embedder, embedder_for_source
from ..embedding.static_model import RETIRED_STATIC_MODEL_IDS, STATIC_MODEL_ID, StaticEmbedder
from ..embedding.text_embedder import TextEmbedder
from ..identifiers import qualified
from ..indexing.indexer import Indexer, IndexingError, IndexOptions, IndexStats
from ..indexing.languages import classify
from ..indexing.progress import Progress
from ..indexing.reembed import reembed
from ..indexing.vector_fill import WantedChunks
from ..indexing.watcher import ChangeWatcher
from ..search.context import FileLines, expand
from ..search.fuzzy import fuzzy_rank
from ..search.pipeline import Searcher
from ..search.request import SearchError, SearchRequest
from ..search.results import SearchResponse
from ..store.errors import ScopeRemoved
from ..store.location import DEFAULT_EF_SEARCH, StoreLocation, open_store
from ..store.rows import FileState, HistoryEntry, Hit, HitFilter, PlaceId, Scope, ScopeSummary
from ..store.until_next_write import UntilNextWrite
from .dropped_paths import DroppedPath, inspect_dropped
from .operations import Change, ChangeNotice, Read, Write
from .scope_lookup import scope_containing

_log = logging.getLogger(__name__)
T = TypeVar("T")
# Failures that are the user's input or doing (a folder removed by another command), explained by the front end;
# other job failures go to the log too.
_USER_ERRORS = (SearchError, IndexingError, LookupError, ScopeRemoved)


class ScopeNotFound(LookupError):
    """A folder named as an indexed scope is not one."""

    def __init__(self, root: Path | str):
        super().__init__(f"{root} is not an indexed scope")
        self.root = root


PRIORITY_SEARCH = 0  # urgent reads: searches and the preview's lines
QUICK_OPEN_LIMIT = 50  # files or symbols listed by Quick Open and Go to Symbol
LEAD_LINES = 1000  # lines before an excerpt handed to the preview's highlighter (see read_lines)
PRIORITY_READ = 1
PRIORITY_WRITE = 2
# The names of the writes the worker starts by itself.
UPDATE = "update"  # a watched folder changed on disk
REEMBED = "re-embed"  # the configured model differs from the one the index's vectors were made with
# The notices of a watched folder that no write sends (they change nothing in the index).
FOLDER_GONE = "folder gone"  # moved away or deleted: its index is kept, and no update runs until it is back
FOLDER_BACK = "folder back"  # a folder is at the watched path again: an update of it follows


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

    def __init__(self, config: EngineConfig, idle: Callable[[], None]):
        self.config = config
        self.store = open_store(config.location, config.ef_search)
        self.model_error: str | None = None
        # The fast static model: stage 2 of every index run, and the semantic layer of chunks the configured
        # model has not reached yet. It ships with Quarry and loads in a fraction of a second.
        self.fast = StaticEmbedder()
        try:
            self.embedder: TextEmbedder | None = self._configured_embedder()
        except ModelError as exc:
            self.embedder, self.model_error = None, str(exc)
        self.indexing_roots: set[str] = set()
        # Chunks searches came across without a vector of the configured model: embedded first.
        self.wanted = WantedChunks()
        self._idle = idle
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
        return Searcher(self.store, embedder, unavailable, fast=fast, wanted=self.wanted)

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

    def warm_up(self) -> tuple[str, str]:
        """Load the model and the index's vectors before the first search needs them; (model id, provider).

        Raises ModelError when there is no usable model (searches then fall back to exact matching).
        """
        embedder = self.load_model()
        self.searcher.warm_up(between=self._idle)
        return embedder.model_id, embedder.provider

    def reembed(self, progress: Callable[[Progress], None] | None, should_stop: Callable[[], bool]) -> bool:
        """Re-embed the store with the configured model; searches switch to it when it is complete."""
        pending = self._pending_reembed()
        if pending is None:
            return True
        _, embedder = pending
        finished = reembed(self.store, embedder, self._idle, progress, should_stop, self.wanted)
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
    ) -> IndexStats:
        """Index `root` (see Indexer.index; `add` False: only if it is in the index)."""
        if self.embedder is None:
            raise ModelError(self.model_error or "no embedding model")
        if not self._models_tidied:  # what earlier builds left: once per engine, not on every watched save
            self._tidy_models()
            self._models_tidied = True
        indexer = Indexer(
            self.store, self.embedder, self.config.index_options, idle=self._idle, fast=self.fast, wanted=self.wanted
        )
        key = str(Path(root).expanduser().resolve())
        self.indexing_roots.add(key)
        _log.info("indexing %s into %s", key, self.config.location)
        try:
            stats = indexer.index(root, progress, should_stop, add)
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

    def search(self, request: SearchRequest) -> SearchResponse:
        return self.searcher.search(request, self.indexing_roots)

    def want_file(self, path: Path) -> None:
        """Queue the chunks of the indexed file at `path` (absolute) to be embedded before the rest."""
        scope = scope_containing(self.store, path)
        if scope is not None:
            self.wanted.add(self.store.chunk_ids_of_files(scope.id, [path.relative_to(scope.root).as_posix()]))

    def close(self) -> None:
        self.store.close()


@dataclass(order=True)
class _Job:
    priority: int
    seq: int
    operation: Read | Write = field(compare=False)
    future: Future = field(compare=False)


class IndexHandle:
    """A running write (an index run or a re-embed): its future, and a way to stop it between batches."""

    def __init__(self, future: Future, stop: threading.Event):
        self.future = future
        self._stop = stop

    def cancel(self) -> None:
        self._stop.set()

    def result(self, timeout: float | None = None) -> Any:
        return self.future.result(timeout)


class Worker:
    """The engine's thread and its queue of named operations.

    `on_change` hears one ChangeNotice after each write, and the watcher's FOLDER_GONE and FOLDER_BACK, on the
    worker's threads: a front end hands it over to its own.
    """

    def __init__(self, config: EngineConfig, on_change: Callable[[ChangeNotice], None] | None = None):
        self.config = config
        self._on_change = on_change
        self._heap: list[_Job] = []
        self._cond = threading.Condition()
        self._seq = itertools.count()
        self._closing = False
        self._engine: Engine | None = None
        self._stops: set[threading.Event] = set()
        self._thread = threading.Thread(target=self._run, name="quarry-worker", daemon=True)
        self._ready: Future = Future()
        # Set by start(): the configured model differs from the one the index's vectors were made with, so
        # the front end should start reembed() (searches meanwhile use the old model's vectors).
        self.needs_reembed = False
        self._watcher: ChangeWatcher | None = None
        self._watched: set[str] = set()
        self._auto_jobs: dict[str, IndexHandle] = {}
        self._dirty: set[str] = set()
        self._checked_intact = False  # a write of this session found the index undamaged (see _execute)
        self._away: set[str] = set()  # watched folders not at their path now

    def start(self) -> Worker:
        """Start the thread and wait until the store is open; raises what opening it raised."""
        self._thread.start()
        self._ready.result()
        return self

    # --- operations -----------------------------------------------------------------------------

    def run(self, operation: Read[T] | Write[T]) -> Future[T]:
        """Queue an operation; its future gives what it returns (or raises)."""
        if isinstance(operation, Write):
            priority = PRIORITY_WRITE
        else:
            priority = PRIORITY_SEARCH if operation.urgent else PRIORITY_READ
        future: Future[T] = Future()
        with self._cond:
            if self._closing:
                future.set_exception(RuntimeError("the worker has stopped"))
                return future
            heapq.heappush(self._heap, _Job(priority, next(self._seq), operation, future))
            self._cond.notify()
        return future

    def _stoppable(
        self,
        name: str,
        run: Callable[[Engine, Callable[[], bool]], Any],
        changes: Change,
        roots: tuple[str, ...] = (),
    ) -> IndexHandle:
        """Queue a long write that stops at its next batch boundary when its handle is cancelled."""
        stop = threading.Event()
        with self._cond:
            self._stops.add(stop)

        def job(engine: Engine) -> Any:
            try:
                return run(engine, stop.is_set)
            finally:
                with self._cond:
                    self._stops.discard(stop)

        return IndexHandle(self.run(Write(name, job, changes, tuple(roots))), stop)

    def search(self, request: SearchRequest) -> Future[SearchResponse]:
        return self.run(Read("search", lambda e: e.search(request), urgent=True))

    def index(self, root: Path | str, progress: Callable[[Progress], None] | None = None) -> IndexHandle:
        return self._index("index", root, progress)

    def _index(self, name: str, root: Path | str, progress: Callable[[Progress], None] | None) -> IndexHandle:
        key = str(Path(root).expanduser().resolve())
        return self._stoppable(
            name, lambda e, stop: e.index(Path(root), progress, stop), Change.SCOPES | Change.CONTENT, (key,)
        )

    def _update(self, root: str) -> IndexHandle:
        """A watched folder's update. When another window or command has removed the folder from the index, the
        removal wins: the update adds nothing back, the folder is no longer watched, and the update's change
        notice carries the ScopeRemoved for the front end to say so."""

        def run(engine: Engine, stop: Callable[[], bool]) -> IndexStats:
            try:
                return engine.index(Path(root), None, stop, add=False)
            except ScopeRemoved:
                self._unwatch(root)
                raise

        return self._stoppable(UPDATE, run, Change.SCOPES | Change.CONTENT, (root,))

    def reembed(self, progress: Callable[[Progress], None] | None = None) -> IndexHandle:
        """Give every chunk a vector of the configured model, then search with it (see Engine.reembed)."""
        return self._stoppable(REEMBED, lambda e, stop: e.reembed(progress, stop), Change.CONTENT | Change.MODEL)

    def read_lines(self, path: Path | str, sha256: str, start_line: int, end_line: int, context: int) -> Future:
        """(first, last, text, lead) of lines start-context .. end+context of an indexed file, read on this
        thread, `lead` being up to LEAD_LINES lines before them (a highlighter reads them first, so that an
        excerpt starting inside a docstring is coloured as one); None when the file is gone or its content no
        longer has `sha256` (it changed since indexing)."""

        def job(engine: Engine) -> tuple[int, int, str, str] | None:
            engine.want_file(Path(path))  # a file the user looks at gets the model's vectors first
            lines = FileLines().lines_if_current(Path(path), sha256)
            if lines is None:
                return None
            first, last, text = expand(lines, start_line, end_line, context)
            lead = lines[max(0, first - 1 - LEAD_LINES) : first - 1]
            return first, last, text, "".join(line + "\n" for line in lead)

        return self.run(Read("read lines", job, urgent=True))

    def scopes(self) -> Future[list[ScopeSummary]]:
        return self.run(Read("list scopes", lambda e: e.store.list_scopes()))

    def remove_scope(self, root: Path | str) -> Future[int]:
        """Remove an indexed folder (and its worktrees); waits for a running index run to end first."""
        key = Path(root).expanduser().resolve()

        def job(engine: Engine) -> int:
            scope = engine.store.scope_for_root(key)
            if scope is None:
                raise ScopeNotFound(root)
            self._unwatch(str(key))  # a change on disk must not index the folder again
            return engine.store.remove_scope(scope.id)

        return self.run(Write("remove scope", job, Change.SCOPES | Change.CONTENT, (str(key),)))

    def scope_containing(self, path: Path | str) -> Future[Scope | None]:
        """The indexed scope whose folder holds `path` (symlinks resolved): the innermost one, so a worktree
        inside its repository's folder is its own scope."""
        # Resolved in the job, on the worker's thread: following symlinks touches the disk, and callers
        # include an event loop.
        return self.run(
            Read("find scope", lambda e: scope_containing(e.store, Path(path).expanduser().resolve()), urgent=True)
        )

    def definitions(
        self, scope: Scope, name: str, symbol_types: tuple[str, ...] = (), limit: int = 50
    ) -> Future[list[Hit]]:
        """Where a symbol called `name` (any case) is defined in `scope`: those spelt as given first, then by
        path and line."""

        def job(engine: Engine) -> list[Hit]:
            where = HitFilter(symbol_types=symbol_types)
            hits = engine.store.hits_for_places(engine.store.symbol_matches([scope.id], [name], limit, where))
            return sorted(hits, key=lambda h: (h.symbol_name != name, h.path, h.start_line))

        return self.run(Read("find symbol", job, urgent=True))

    def find_files(self, scope: Scope, query: str, limit: int = QUICK_OPEN_LIMIT) -> Future[list[FileState]]:
        """Quick Open: the files in `scope` whose paths fuzzily match `query`, best first (search/fuzzy.py)."""

        def job(engine: Engine) -> list[FileState]:
            def read() -> tuple[list[str], list[FileState]]:
                states = engine.store.file_states(scope.id).values()
                files = sorted((f for f in states if f.sha256 is not None), key=lambda f: f.path)  # indexed ones
                return [f.path for f in files], files

            paths, files = engine.listings.get(("files", scope.id), read)
            return [files[i] for i in fuzzy_rank(query, paths, limit)]

        return self.run(Read("find files", job, urgent=True))

    def languages(self, scope: Scope) -> Future[list[tuple[str, int]]]:
        """The languages of `scope`'s indexed files with how many files each has, most first (the window
        offers these as filters, not every language Quarry knows)."""

        def job(engine: Engine) -> list[tuple[str, int]]:
            def read() -> list[tuple[str, int]]:
                counts: dict[str, int] = {}
                for state in engine.store.file_states(scope.id).values():
                    kind = classify(state.path) if state.sha256 is not None else None
                    if kind is not None:
                        counts[kind.language] = counts.get(kind.language, 0) + 1
                return sorted(counts.items(), key=lambda item: (-item[1], item[0]))

            return engine.listings.get(("languages", scope.id), read)

        return self.run(Read("project languages", job))

    def find_symbols(self, scope: Scope, query: str, limit: int = QUICK_OPEN_LIMIT) -> Future[list[Hit]]:
        """Go to Symbol: the definitions in `scope` whose `Parent.name` fuzzily matches `query`, best first;
        one place per definition (the first window of a long one)."""

        def job(engine: Engine) -> list[Hit]:
            def read() -> tuple[list[str], list[PlaceId]]:
                first: dict[tuple[str, str | None, str], PlaceId] = {}
                for place, name, parent, path in engine.store.symbol_places([scope.id]):
                    first.setdefault((name, parent, path), place)
                return [qualified(n, p) for n, p, _ in first], list(first.values())

            names, places = engine.listings.get(("symbols", scope.id), read)
            ranked = fuzzy_rank(query, names, limit, tail_separator=".")
            hits = {h.place_id: h for h in engine.store.hits_for_places([places[i] for i in ranked])}
            return [hits[places[i]] for i in ranked if places[i] in hits]

        return self.run(Read("find symbols", job, urgent=True))

    def history(self, limit: int = 50) -> Future[list[HistoryEntry]]:
        return self.run(Read("search history", lambda e: e.store.history(limit)))

    def inspect_path(self, path: Path | str) -> Future[DroppedPath]:
        return self.run(Read("inspect path", lambda e: inspect_dropped(e.store, Path(path))))

    def warm_up(self) -> Future[tuple[str, str]]:
        """Load the model and the index's vectors now (see Engine.warm_up)."""
        return self.run(Read("load model", Engine.warm_up))

    def load_model(self) -> Future[None]:
        """Load the configured model now, not the index's vectors (see Engine.load_model)."""

        def job(engine: Engine) -> None:
            engine.load_model()

        return self.run(Read("load model", job))

    def status(self) -> Future[dict]:
        def job(engine: Engine) -> dict:
            emb = engine.embedder
            return {
                "model": emb.model_id if emb else None,
                "active_model": engine.store.active_model(),  # differs from "model" until a switch completes
                "model_error": engine.model_error,
                "provider": emb.provider if emb and emb.loaded else None,
                "reembedding": engine.needs_reembed,
                "scopes": engine.store.list_scopes(),
                "indexing": sorted(engine.indexing_roots),
            }

        return self.run(Read("status", job))

    # --- watched folders ------------------------------------------------------------------------

    def watch(self, root: Path | str) -> None:
        """Keep `root`'s index in step with its files: each burst of changes becomes one "update" write
        (coalesced: while one runs for a root, further changes queue exactly one more), announced by its
        change notice. When the folder is moved away or deleted a FOLDER_GONE notice says so; when a folder
        is at its path again, FOLDER_BACK, and an update of that folder. Returns once the watches are in place."""
        key = str(Path(root).expanduser().resolve())
        with self._cond:
            if self._watcher is None:
                self._watcher = ChangeWatcher(
                    self._changed, ignore=self.config.location.local_files(), on_presence=self._presence
                )
            self._watched.add(key)
        self._watcher.watch(Path(key))

    def _unwatch(self, root: str) -> None:
        with self._cond:
            self._watched.discard(root)
            self._dirty.discard(root)
            self._away.discard(root)
            watcher = self._watcher
        if watcher is not None:
            watcher.unwatch(root)

    def _presence(self, root: str, present: bool) -> None:
        with self._cond:
            if root not in self._watched or self._closing:
                return
            if present:
                self._away.discard(root)
            else:
                self._away.add(root)
        self._tell(ChangeNotice(FOLDER_BACK if present else FOLDER_GONE, Change(0), (root,)))
        if present:
            self._changed(root, set())  # files may have changed while it was away, or it is another folder

    def _changed(self, root: str, paths: set[str]) -> None:
        with self._cond:
            if root not in self._watched or root in self._away or self._closing:
                return  # an update of a folder that is away would only fail; it runs when it is back
            running = self._auto_jobs.get(root)
            if running is not None and not running.future.done():
                self._dirty.add(root)  # one more run after the current one sees every change
                return
            handle = self._update(root)
            self._auto_jobs[root] = handle
        handle.future.add_done_callback(partial(self._auto_done, root))

    def _auto_done(self, root: str, _future: Future) -> None:
        with self._cond:
            again = root in self._dirty and not self._closing
            self._dirty.discard(root)
        if again:
            self._changed(root, set())

    def close(self, timeout: float | None = 30) -> None:
        with self._cond:
            self._closing = True
            watcher, self._watcher = self._watcher, None
            self._watched.clear()
            self._away.clear()
            for stop in self._stops:
                stop.set()
            self._cond.notify_all()
        if watcher is not None:
            watcher.close()
        if self._thread.is_alive():
            self._thread.join(timeout)

    # --- the thread -----------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            self._engine = Engine(self.config, idle=self._serve_reads)
        except BaseException as exc:
            self._ready.set_exception(exc)
            self._fail_pending(exc)
            return
        self.needs_reembed = self._engine.needs_reembed
        self._ready.set_result(None)
        try:
            while True:
                job = self._next_job()
                if job is None:
                    return
                self._execute(job)
        finally:
            self._fail_pending(RuntimeError("the worker has stopped"))
            self._engine.close()

    def _next_job(self) -> _Job | None:
        with self._cond:
            while not self._heap and not self._closing:
                self._cond.wait()
            if self._closing:
                return None
            return heapq.heappop(self._heap)

    def _serve_reads(self) -> None:
        """Run waiting reads, never a write; called from inside a write (an index run) between its slices."""
        while True:
            with self._cond:
                if not self._heap or self._heap[0].priority >= PRIORITY_WRITE or self._closing:
                    return
                job = heapq.heappop(self._heap)
            self._execute(job)

    def _execute(self, job: _Job) -> None:
        if not job.future.set_running_or_notify_cancel():
            return
        operation = job.operation
        try:
            assert self._engine is not None  # jobs run only once _run() has opened the engine
            if isinstance(operation, Write) and (operation.name != UPDATE or not self._checked_intact):
                # Nothing is written into a damaged index. A watched folder's updates (each file saved) would
                # pay the whole check each time (0.85 s for a 684 MB index): they rely on the session's
                # first check; an index run, a re-embed or a removal checks again.
                self._engine.store.check_intact()
                self._checked_intact = True
            result = operation.run(self._engine)
        except BaseException as exc:  # delivered to whoever awaits the job
            if not isinstance(exc, _USER_ERRORS):  # bad input is the front end's to explain; the rest is kept
                _log.error("engine operation %r failed", operation.name, exc_info=exc)
            self._announce(operation, exc)
            job.future.set_exception(exc)
        else:
            self._announce(operation, result)
            job.future.set_result(result)

    def _announce(self, operation: Read | Write, result: Any) -> None:
        """One change notice after a write, whatever its outcome (a stopped or failed run keeps its batches),
        sent before its future resolves, so whoever awaits the write hears of the change first."""
        if isinstance(operation, Write):
            self._tell(ChangeNotice(operation.name, operation.changes, operation.roots, result))

    def _tell(self, notice: ChangeNotice) -> None:
        if self._on_change is not None:
            try:
                self._on_change(notice)
            except Exception:  # a listener's failure must not fail the write it heard of
                _log.exception("a change listener failed")

    def _fail_pending(self, exc: BaseException) -> None:
        with self._cond:
            jobs, self._heap = self._heap, []
        for job in jobs:
            if job.future.set_running_or_notify_cancel():
                job.future.set_exception(exc)


__all__ = [
    "EngineConfig",
    "Engine",
    "Worker",
    "IndexHandle",
    "IndexStats",
    "ScopeSummary",
    "HistoryEntry",
    "ChangeNotice",
    "Change",
]
