"""Every operation the engine offers, by name: the one place to read what Quarry can do to an index.

Each function returns a `Read` or a `Write` (operations.py) that the worker's thread runs against the engine
(engine.py). The CLI and the MCP server run them with `worker.run(op)`, the window with `await bridge.run(op)`.

Reads: search, read_lines, scopes, scope_containing, definitions, find_files, find_symbols, languages, history,
inspect_path, file_row, scope_report, status, load_model, warm_up.
Writes: index, update, reembed (long: they stop at their next step when cancelled), remove_scope.

A read changes nothing a search could see. Two leave a trace that is not the index's content, after their
answer is made: a search records itself in the search history (when its request asks to), and a search or a
preview asks the filling model to embed what it showed first.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..identifiers import qualified
from ..indexing.languages import classify
from ..search.context import FileLines, expand
from ..search.fuzzy import fuzzy_rank
from ..search.request import SearchRequest
from ..search.results import Coverage, SearchResponse
from ..store.rows import FileState, HistoryEntry, Hit, HitFilter, PlaceId, Scope, ScopeSummary
from .dropped_paths import DroppedPath, inspect_dropped
from .operations import REEMBED, UPDATE, Change, Read, StopFlag, Write
from .scope_lookup import scope_containing as _scope_containing

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..indexing.indexer import IndexStats
    from ..indexing.progress import Progress
    from .engine import Engine

QUICK_OPEN_LIMIT = 50  # files or symbols listed by Quick Open and Go to Symbol
LEAD_LINES = 1000  # lines before an excerpt handed to the preview's highlighter (see read_lines)


class ScopeNotFound(LookupError):
    """A folder named as an indexed scope is not one."""

    def __init__(self, root: Path | str):
        super().__init__(f"{root} is not an indexed scope")
        self.root = root


# --- reads ----------------------------------------------------------------------------------------


def search(request: SearchRequest) -> Read[SearchResponse]:
    """A search (every mode); then, where the request asks, its entry in the history, and the results still
    lacking the configured model's vectors are queued to be embedded first, best first."""

    def run(engine: Engine) -> SearchResponse:
        response = engine.searcher.search(request, engine.indexing_roots)
        filling = engine.searcher.stage  # the stage of the active model's vectors; None without a model
        if filling is not None and response.mode != "text":
            engine.wanted.add([r.chunk_id for r in reversed(response.results) if r.stage != filling])
        if request.record_history:
            engine.store.add_history(_history_entry(request, response))
        return response

    return Read("search", run, urgent=True)


def _history_entry(request: SearchRequest, response: SearchResponse) -> HistoryEntry:
    roots = response.scopes_searched
    return HistoryEntry(
        time.time(),
        " ".join(request.query.split()) if response.mode != "text" else request.query,  # as typed, filters too
        ",".join(roots) if len(roots) < 4 else "(all scopes)",
        response.mode,
        len(response.results),
        response.results[0].score if response.results else None,
        round(response.elapsed_ms, 3),
    )


def read_lines(
    path: Path | str, sha256: str, start_line: int, end_line: int, context: int
) -> Read[tuple[int, int, str, str] | None]:
    """(first, last, text, lead) of lines start-context .. end+context of an indexed file, `lead` being up to
    LEAD_LINES lines before them (a highlighter reads them first, so that an excerpt starting inside a docstring
    is coloured as one); None when the file is gone or its content no longer has `sha256` (it changed since
    indexing). The file's chunks are then queued to be embedded first: a file the user looks at gets the
    model's vectors first."""

    def run(engine: Engine) -> tuple[int, int, str, str] | None:
        lines = FileLines().lines_if_current(Path(path), sha256)
        engine.want_file(Path(path))
        if lines is None:
            return None
        first, last, text = expand(lines, start_line, end_line, context)
        lead = lines[max(0, first - 1 - LEAD_LINES) : first - 1]
        return first, last, text, "".join(line + "\n" for line in lead)

    return Read("read lines", run, urgent=True)


def scopes() -> Read[list[ScopeSummary]]:
    """Every indexed folder with its counts."""
    return Read("list scopes", lambda engine: engine.store.list_scopes())


def scope_containing(path: Path | str) -> Read[Scope | None]:
    """The indexed scope whose folder holds `path` (symlinks resolved): the innermost one, so a worktree inside
    its repository's folder is its own scope."""
    # Resolved in the operation, on the worker's thread: following symlinks touches the disk, and callers
    # include an event loop.
    return Read(
        "find scope", lambda engine: _scope_containing(engine.store, Path(path).expanduser().resolve()), urgent=True
    )


def definitions(scope: Scope, name: str, symbol_types: tuple[str, ...] = (), limit: int = 50) -> Read[list[Hit]]:
    """Where a symbol called `name` (any case) is defined in `scope`: those spelt as given first, then by path
    and line."""

    def run(engine: Engine) -> list[Hit]:
        where = HitFilter(symbol_types=symbol_types)
        hits = engine.store.hits_for_places(engine.store.symbol_matches([scope.id], [name], limit, where))
        return sorted(hits, key=lambda h: (h.symbol_name != name, h.path, h.start_line))

    return Read("find symbol", run, urgent=True)


def find_files(scope: Scope, query: str, limit: int = QUICK_OPEN_LIMIT) -> Read[list[FileState]]:
    """Quick Open: the files in `scope` whose paths fuzzily match `query`, best first (search/fuzzy.py)."""

    def run(engine: Engine) -> list[FileState]:
        def listing() -> tuple[list[str], list[FileState]]:
            states = engine.store.file_states(scope.id).values()
            files = sorted((f for f in states if f.sha256 is not None), key=lambda f: f.path)  # indexed ones
            return [f.path for f in files], files

        paths, files = engine.listings.get(("files", scope.id), listing)
        return [files[i] for i in fuzzy_rank(query, paths, limit)]

    return Read("find files", run, urgent=True)


def find_symbols(scope: Scope, query: str, limit: int = QUICK_OPEN_LIMIT) -> Read[list[Hit]]:
    """Go to Symbol: the definitions in `scope` whose `Parent.name` fuzzily matches `query`, best first; one
    place per definition (the first window of a long one)."""

    def run(engine: Engine) -> list[Hit]:
        def listing() -> tuple[list[str], list[PlaceId]]:
            first: dict[tuple[str, str | None, str], PlaceId] = {}
            for place, name, parent, path in engine.store.symbol_places([scope.id]):
                first.setdefault((name, parent, path), place)
            return [qualified(n, p) for n, p, _ in first], list(first.values())

        names, places = engine.listings.get(("symbols", scope.id), listing)
        ranked = fuzzy_rank(query, names, limit, tail_separator=".")
        hits = {h.place_id: h for h in engine.store.hits_for_places([places[i] for i in ranked])}
        return [hits[places[i]] for i in ranked if places[i] in hits]

    return Read("find symbols", run, urgent=True)


def languages(scope: Scope) -> Read[list[tuple[str, int]]]:
    """The languages of `scope`'s indexed files with how many files each has, most first (the window offers
    these as filters, not every language Quarry knows)."""

    def run(engine: Engine) -> list[tuple[str, int]]:
        def listing() -> list[tuple[str, int]]:
            counts: dict[str, int] = {}
            for state in engine.store.file_states(scope.id).values():
                kind = classify(state.path) if state.sha256 is not None else None
                if kind is not None:
                    counts[kind.language] = counts.get(kind.language, 0) + 1
            return sorted(counts.items(), key=lambda item: (-item[1], item[0]))

        return engine.listings.get(("languages", scope.id), listing)

    return Read("project languages", run)


def history(limit: int = 50) -> Read[list[HistoryEntry]]:
    """The most recent searches recorded (Enter in the window, every CLI search), newest first."""
    return Read("search history", lambda engine: engine.store.history(limit))


def inspect_path(path: Path | str) -> Read[DroppedPath]:
    """What a folder or file dropped on the window is to the index (see dropped_paths.py)."""
    return Read("inspect path", lambda engine: inspect_dropped(engine.store, Path(path)))


def file_row(scope: Scope, path: str) -> Read[FileState | None]:
    """What the index holds of the file at `path` (relative to the scope's folder), None where nothing."""
    return Read("file row", lambda engine: engine.store.file_row(scope.id, path), urgent=True)


def scope_report(scope: Scope) -> Read[tuple[tuple[int, int, int], Coverage, dict[str, FileState], str | None, bool]]:
    """For an agent's index status: (files, chunks, bytes), the stages' coverage, the file states, the
    configured model and whether the folder is being indexed now."""

    def run(engine: Engine) -> tuple[tuple[int, int, int], Coverage, dict[str, FileState], str | None, bool]:
        return (
            engine.store.scope_counts(scope.id),
            engine.searcher.coverage([scope.id]),
            engine.store.file_states(scope.id),
            engine.embedder.model_id if engine.embedder else None,
            scope.root in engine.indexing_roots,
        )

    return Read("scope report", run, urgent=True)


def status() -> Read[dict[str, Any]]:
    """The models (configured, active, why none loads), the scopes and the folders being indexed."""

    def run(engine: Engine) -> dict[str, Any]:
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

    return Read("status", run)


def load_model() -> Read[None]:
    """Load the configured model now, not the index's vectors; raises ModelError when none runs."""

    def run(engine: Engine) -> None:
        engine.load_model()

    return Read("load model", run)


def warm_up() -> Read[tuple[str, str]]:
    """Load the model and the index's vectors before the first search needs them; (model id, provider).
    Raises ModelError when there is no usable model (searches then fall back to exact matching)."""
    return Read("warm up", lambda engine: engine.warm_up())


# --- writes ---------------------------------------------------------------------------------------


def index(root: Path | str, progress: Callable[[Progress], None] | None = None) -> Write[IndexStats]:
    """Index (or incrementally re-index) the folder `root`, adding it to the index."""
    stop = StopFlag()
    key = str(Path(root).expanduser().resolve())
    return Write(
        "index",
        lambda engine: engine.index(Path(root), progress, stop),
        Change.SCOPES | Change.CONTENT,
        (key,),
        stop,
    )


def update(root: str, changed: frozenset[str] = frozenset()) -> Write[IndexStats]:
    """A watched folder's update: as `index`, but a folder that another window or command removed from the index
    is not added back (ScopeRemoved, and the worker stops watching it). `changed`: the paths the watcher saw
    change, which the run looks at alone where it can (none: the whole folder)."""
    stop = StopFlag()
    return Write(
        UPDATE,
        lambda engine: engine.index(Path(root), None, stop, add=False, changed=changed),
        Change.SCOPES | Change.CONTENT,
        (root,),
        stop,
    )


def reembed(progress: Callable[[Progress], None] | None = None) -> Write[bool]:
    """Give every chunk a vector of the configured model, then search with it; False when stopped first."""
    stop = StopFlag()
    return Write(REEMBED, lambda engine: engine.reembed(progress, stop), Change.CONTENT | Change.MODEL, (), stop)


def remove_scope(root: Path | str) -> Write[int]:
    """Remove an indexed folder (and its worktrees); the number of chunks collected. Queued behind a running
    index run, like every write; the worker stops watching the folder."""
    key = Path(root).expanduser().resolve()

    def run(engine: Engine) -> int:
        scope = engine.store.scope_for_root(key)
        if scope is None:
            raise ScopeNotFound(root)
        return engine.store.remove_scope(scope.id)

    return Write("remove scope", run, Change.SCOPES | Change.CONTENT, (str(key),))
