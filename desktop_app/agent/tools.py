"""What Quarry offers coding agents: search, definitions, current lines, index status and re-indexing, over
one worker, with every answer bounded in size and confined to the folders the user chose: those indexed, and
the folder the server was started for (which `reindex` may index).

Independent of the protocol that carries it (server.py wraps it for MCP), so each tool is plain async
Python that returns JSON-ready dicts and raises ToolFailure with a message written for the agent.
"""

from __future__ import annotations

import asyncio
import os
import time
from concurrent.futures import Future
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from ..indexing.indexer import IndexingError, IndexStats
from ..indexing.progress import Progress
from ..indexing.source_reader import SkipFile, SourceText, read_source
from ..search.context import READ_ANY
from ..search.request import MODES, SearchError, SearchFilters, SearchRequest, TextOptions
from ..search.results import SearchResult
from ..store.errors import StoreError
from ..store.rows import Hit, Scope
from ..worker import ops
from ..worker.worker import Worker
from .error_text import explain

T = TypeVar("T")

MAX_K = 50
# A query, a symbol name or a path pattern longer than this is a mistake, not a search; refusing it by its
# length alone keeps the answer from carrying it back.
MAX_QUERY_CHARS = 1000
MAX_PATH_CHARS = 4096  # Linux's PATH_MAX: no longer path names a file
# A result's snippet: enough to judge it, small enough that ten results stay a few thousand tokens.
SNIPPET_LINES = 30
SNIPPET_CHARS = 2000
MAX_SPAN_LINES = 400
MAX_SPAN_CHARS = 64_000
MAX_DEFINITIONS = 50
MAX_MATCHES = 100  # text mode: matches listed per file (its snippet holds their lines, cut at SNIPPET_LINES)
STALE_LISTED = 20
MAX_WAIT_S = 300.0
# How long a search by meaning waits for a fresh server's vectors to load before it searches those loaded so
# far (and says how many). Loading ran at about 30,000 vectors a second here (60,000 in 2.2 s on two busy
# cores), so 30 s covers an index of some 400,000 chunks; `quarry mcp --load-wait` sets another.
LOAD_WAIT_S = 30.0
KEPT_RUNNING = "the run that is going was kept: fresh starts another only after it ends"


class ToolFailure(Exception):
    """A tool call that cannot be answered; the message says why and what to call instead."""


class _Run:
    """An index run started by `reindex`, the newest progress it reported, and when it ended."""

    def __init__(self, worker: Worker, folder: Path) -> None:
        self.progress: Progress | None = None
        self.ended_at: float | None = None
        self.future: Future[IndexStats] = worker.run(ops.index(folder, self.report))
        self.future.add_done_callback(self._ended)

    def report(self, progress: Progress) -> None:  # on the worker's thread
        self.progress = progress

    def _ended(self, _future: Future) -> None:  # on the worker's thread
        self.ended_at = self.ended_at or time.time()


class AgentTools:
    """The tools, served from `worker` for an agent working in `cwd` (the default scope is the indexed
    folder holding it). `loading` is the worker's warm-up (the model and the index's vectors loading): a
    search by meaning waits for it, up to `load_wait_s` seconds."""

    def __init__(
        self, worker: Worker, cwd: Path, loading: Future | None = None, load_wait_s: float = LOAD_WAIT_S
    ) -> None:
        self.worker = worker
        self.loading = loading
        self.load_wait_s = load_wait_s
        self.cwd = cwd.expanduser().resolve()
        # The folder the user started the server for, which reindex may index besides the indexed ones. A
        # client that starts its servers in / or the home folder, whatever the project, names none.
        self.chosen = None if self.cwd in (Path(self.cwd.anchor), Path.home().resolve()) else self.cwd
        self._runs: dict[str, _Run] = {}
        self._watched: set[str] = set()

    # --- search ---------------------------------------------------------------------------------

    async def search(
        self,
        query: str,
        mode: str = "hybrid",
        k: int = 10,
        lang: str | None = None,
        path_glob: str | None = None,
        symbol_type: str | None = None,
        changed_only: bool = False,
        root: str | None = None,
        regex: bool = False,
        case_sensitive: bool = False,
    ) -> dict[str, Any]:
        if not query.strip():
            raise ToolFailure("query is empty: describe the code you want, or give an identifier")
        for what, value in (("query", query), ("path_glob", path_glob), ("lang", lang), ("symbol_type", symbol_type)):
            _limit(what, value, MAX_QUERY_CHARS)
        if not 1 <= k <= MAX_K:
            raise ToolFailure(f"k must be between 1 and {MAX_K} (got {k}); page with a narrower query instead")
        if mode not in MODES:
            raise ToolFailure(f"mode must be one of {', '.join(MODES)} (got {mode!r})")
        scope, inside = await self._scope(root)
        globs = [path_glob] if path_glob else []
        if root and inside and not globs:  # a folder named inside the indexed one narrows the search to it
            globs = [f"/{inside}/**"]
        request = SearchRequest(
            query=query,
            roots=(scope.root,),
            k=k,
            mode=mode,
            filters=SearchFilters(
                languages=(lang,) if lang else (),
                symbol_types=(symbol_type,) if symbol_type else (),
                globs=tuple(globs),
                changed_only=changed_only,
            ),
            record_history=False,  # the user's history in the window is theirs, not the agent's
            text=TextOptions(regex=regex, case_sensitive=case_sensitive),
        )
        await self._follow_soon(scope.root)
        if mode in ("hybrid", "semantic"):
            await self._vectors_loaded()
        response = await self._await(self.worker.run(ops.search(request)))
        out: dict[str, Any] = {
            "root": scope.root,
            "mode": response.effective_mode,
            "results": [_result(r) for r in response.results],
            "elapsed_ms": round(response.elapsed_ms, 2),  # the engine's own time, without the protocol's
        }
        notices = [response.notice] if response.notice else []
        if response.vectors_loaded < 1:  # the bound ran out: say how much was searched, in place of the engine's
            # One figure for both: 0.4549 said "45%" beside a vectors_searched of 0.455, which reads as 46%.
            searched = out["vectors_searched"] = round(response.vectors_loaded, 3)
            notices = [
                f"the index's vectors were still loading after {self.load_wait_s:g} s, so meaning was searched in "
                f"{searched:.0%} of them and results may miss the best match; search again for all"
            ]
        if response.partial:
            notices.append("an index run of this folder is still going; results may miss its newest files")
        if response.files_matched is not None:
            out["files_matched"], out["matches_total"] = response.files_matched, response.matches_total
            out["complete"] = response.text_complete
        if notices:
            out["notice"] = " ".join(notices)
        return out

    async def _vectors_loaded(self) -> None:
        """Wait for the warm-up to load the index's vectors, up to load_wait_s. The worker answers searches
        between slices of that load from the vectors loaded so far, which suits a window refining its answer
        with each key press, not an agent that asks once: a fresh server answered its first question from
        61% of its vectors and the right answer fell out of the top 3."""
        if self.loading is not None and not self.loading.done():
            loaded = asyncio.wrap_future(self.loading)
            # A failed load (no model) is the search's to report: marked as seen, or asyncio would log it.
            loaded.add_done_callback(lambda f: f.cancelled() or f.exception())
            await asyncio.wait([loaded], timeout=self.load_wait_s)  # leaves the load running when time is up

    async def find_symbol(self, name: str, kind: str | None = None, root: str | None = None) -> dict[str, Any]:
        name = name.strip()
        if not name:
            raise ToolFailure("name is empty: give the identifier to look up, e.g. parse_config or HttpClient")
        _limit("name", name, MAX_QUERY_CHARS)
        _limit("kind", kind, MAX_QUERY_CHARS)
        if kind is not None and not kind.strip():
            kind = None
        scope, _ = await self._scope(root)
        await self._follow_soon(scope.root)
        hits = await self._await(
            self.worker.run(ops.definitions(scope, name, (kind.strip().lower(),) if kind else (), MAX_DEFINITIONS))
        )
        return {
            "root": scope.root,
            "definitions": [_definition(h) for h in hits],
            **({} if hits else {"notice": f"no definition named {name!r}; try search({name!r}) for uses"}),
        }

    # --- files ----------------------------------------------------------------------------------

    async def read_span(self, path: str, start_line: int, end_line: int) -> dict[str, Any]:
        if start_line < 1 or end_line < start_line:
            raise ToolFailure(f"lines {start_line}-{end_line} are not a span: need 1 <= start_line <= end_line")
        base = None  # a relative path is read from the indexed folder holding the working folder
        if not (path.startswith("~") or Path(path).is_absolute()):
            default = await self._await(self.worker.run(ops.scope_containing(self.cwd)))
            base = Path(default.root) if default else self.cwd
        resolved = self._path(path, "path", base)
        scope = await self._await(self.worker.run(ops.scope_containing(resolved)))
        if scope is None:
            raise ToolFailure(f"{path} is outside every indexed folder; only indexed files can be read")
        relative = resolved.relative_to(scope.root).as_posix()
        state = await self._await(self.worker.run(ops.file_row(scope, relative)))
        if state is None or state.status != "indexed":
            raise ToolFailure(
                f"{relative} is not an indexed file of {scope.root} (ignored, skipped or new); "
                f"call reindex(root={scope.root!r}) if it is new"
            )
        source, stat = await asyncio.to_thread(_read_source, resolved)
        lines = source.lines  # numbered as the index numbers them, so search results' line numbers hold
        wanted = min(end_line, len(lines))  # asking past the end leaves nothing out
        last = min(wanted, start_line + MAX_SPAN_LINES - 1)
        if start_line > len(lines):
            raise ToolFailure(f"{relative} has {len(lines)} lines; start_line {start_line} is past its end")
        body, truncated = _bounded("\n".join(lines[start_line - 1 : last]), MAX_SPAN_CHARS)
        return {
            "path": relative,
            "root": scope.root,
            "start_line": start_line,
            "end_line": last if not truncated else start_line + body.count("\n"),
            "total_lines": len(lines),
            "text": body,
            "truncated": truncated or last < wanted,
            "changed_since_indexed": (stat.st_size, stat.st_mtime_ns) != (state.size, state.mtime_ns),
        }

    # --- the index ------------------------------------------------------------------------------

    async def index_status(self, root: str | None = None) -> dict[str, Any]:
        scope, _ = await self._scope(root)
        report = await self._await(self.worker.run(ops.scope_report(scope)))
        counts, coverage, states, model, indexing = report
        stale, missing = await asyncio.to_thread(_stale_files, Path(scope.root), states)
        files, chunks, size = counts
        run = self._runs.get(scope.root)
        return {
            "root": scope.root,
            "scope_type": scope.type,
            "files": files,
            "chunks": chunks,
            "bytes": size,
            "coverage": coverage.to_dict(),
            "model": model,
            "last_indexed_at": _iso(scope.last_indexed_at),
            "indexing": indexing or (run is not None and not run.future.done()),
            "live_updates": scope.root in self._watched,
            "stale_files": len(stale),
            "deleted_files": len(missing),
            "stale_examples": sorted(stale)[:STALE_LISTED] + sorted(missing)[:STALE_LISTED],
        }

    async def reindex(self, root: str, wait_seconds: float = 0, fresh: bool = False) -> dict[str, Any]:
        """The folder's index run in this session: the first call starts one, later calls report on it
        (progress while it runs, then its summary, as often as asked), and only `fresh` after it ended starts
        another. A poll that started a run each time once ran the agent in circles: each run it started had
        ended before the next poll, which started another, so "finished" never came."""
        if not 0 <= wait_seconds <= MAX_WAIT_S:
            raise ToolFailure(f"wait_seconds must be between 0 and {MAX_WAIT_S:.0f} (got {wait_seconds})")
        asked = self._path(root, "root")
        # Judged before anything is written: an agent that could index any folder could then read any file.
        folder = await self._chosen(asked)
        if folder is None:
            raise ToolFailure(
                f"{root} is not a folder the user chose for Quarry; reindex takes {self._reindexable()}. "
                "Only the user can add another (`quarry index FOLDER` or the window)"
            )
        if not os.path.isdir(asked):
            raise ToolFailure(f"{root} is not a folder; give the repository folder to index")
        key = str(folder)
        run = self._runs.get(key)
        started = run is None or (fresh and run.future.done())
        if started or run is None:
            run = self._runs[key] = _Run(self.worker, folder)
            run.future.add_done_callback(partial(self._follow_when_indexed, key))
        if wait_seconds:
            await asyncio.wait([asyncio.wrap_future(run.future)], timeout=wait_seconds)
        if run.future.done():
            return self._finished(key, run)
        progress = run.progress
        return {
            "root": key,
            "state": "started" if started else "running",
            "progress": None if progress is None else _progress(progress),
            "hint": "search works at once and improves as the run goes on; call reindex again (wait_seconds=0 "
            "polls) for its progress, until its state is finished",
            **({"notice": KEPT_RUNNING} if fresh and not started else {}),
        }

    def _finished(self, key: str, run: _Run) -> dict[str, Any]:
        try:
            stats: IndexStats = run.future.result()
        except (IndexingError, StoreError, OSError) as exc:
            raise ToolFailure(
                f"indexing {key} failed: {explain(exc)}; call reindex(root={key!r}, fresh=true) to try again"
            ) from exc
        # The future is done a moment before its callbacks run on the worker's thread: then the end is now.
        run.ended_at = run.ended_at or time.time()
        return {
            "root": key,
            "state": "cancelled" if stats.cancelled else "finished",
            "files": stats.files_indexed,
            "files_changed": stats.files_changed,
            "chunks": stats.chunks_total,
            "chunks_embedded": stats.chunks_embedded,
            "seconds": round(stats.seconds, 2),
            "finished_at": _iso(run.ended_at),
            "hint": "this run is over and the folder is kept up to date as files change; "
            "reindex(root, fresh=true) starts another run",
        }

    # --- helpers --------------------------------------------------------------------------------

    async def _follow_soon(self, root: str) -> None:
        if root not in self._watched:  # setting up the watches walks the folder: off the event loop
            await asyncio.to_thread(self.follow, root)

    def _follow_when_indexed(self, root: str, future: Future) -> None:
        if future.exception() is None:
            self.follow(root)

    def follow(self, root: str) -> None:
        """Keep a folder the agent works in up to date with its files, from its first use on."""
        if root not in self._watched:
            self._watched.add(root)
            self.worker.watch(root)

    async def _scope(self, root: str | None) -> tuple[Scope, str]:
        """The indexed scope `root` (or the working folder) lies in, and the folder inside it ("" for its
        root)."""
        folder = self._path(root, "root") if root else self.cwd
        if root and not os.path.exists(folder):
            raise ToolFailure(f"root {root} does not exist")
        scope = await self._await(self.worker.run(ops.scope_containing(folder)))
        if scope is None:
            where = f"root {root}" if root else f"the working folder {self.cwd}"
            if self.chosen is not None and folder.is_relative_to(self.chosen):
                raise ToolFailure(f"{where} is in no indexed folder; call reindex(root={str(self.chosen)!r}) first")
            raise ToolFailure(
                f"{where} is in no indexed folder, and only folders the user chose can be indexed; "
                f"reindex takes {self._reindexable()}"
            )
        inside = folder.relative_to(scope.root).as_posix()
        return scope, "" if inside == "." else inside

    def _path(self, given: str, what: str, base: Path | None = None) -> Path:
        """The absolute path `given` names (`~` expanded; a relative one from `base`, else the working folder)
        with symlinks and `..` resolved: a path is judged by where it leads, not by how it is spelt."""
        _limit(what, given, MAX_PATH_CHARS)
        if "\0" in given:
            raise ToolFailure(f"{what} holds a NUL character, which no path can")
        try:
            return ((base or self.cwd) / Path(given).expanduser()).resolve()
        except RuntimeError as exc:  # ~name of an unknown user, or a symlink loop (before Python 3.13)
            raise ToolFailure(f"{what} {given} cannot be followed: {exc}") from exc
        except OSError as exc:
            raise ToolFailure(f"{what} {given} cannot be followed: {exc.strerror or exc}") from exc

    async def _chosen(self, folder: Path) -> Path | None:
        """The folder the user chose that holds `folder` (an indexed one, else the server's), or None. A folder
        inside it is indexed as part of it: indexed on its own, it would be walked without the ignore files
        above it, and a gitignored `secrets/` or `node_modules/` the user's index passes over would become
        readable."""
        scope = await self._await(self.worker.run(ops.scope_containing(folder)))
        if scope is not None:
            return Path(scope.root)
        if self.chosen is not None and folder.is_relative_to(self.chosen):
            return self.chosen
        return None

    def _reindexable(self) -> str:
        inside = "an indexed folder or a folder inside one (indexed as part of it)"
        return f"the server's folder {self.chosen}, a folder inside it or {inside}" if self.chosen else inside

    async def _await(self, future: Any) -> Any:
        try:
            return await asyncio.wrap_future(future)
        except (SearchError, StoreError, IndexingError, LookupError, OSError) as exc:
            raise ToolFailure(explain(exc)) from exc


def _limit(what: str, value: str | None, limit: int) -> None:
    if value is not None and len(value) > limit:
        raise ToolFailure(f"{what} is {len(value)} characters long; keep it to {limit} at most")


def _result(r: SearchResult) -> dict[str, Any]:
    snippet, cut = _bounded_lines(r.snippet)
    return {
        "path": r.path,
        "start_line": r.start_line,
        "end_line": r.end_line,
        "language": r.language,
        "symbol": r.symbol_name,
        "symbol_type": r.symbol_type,
        "parent": r.parent_symbol,
        "score": round(r.score, 4),
        "why": list(r.evidence),
        "snippet": snippet,
        **({"snippet_truncated": True} if cut else {}),
        **(
            {"matches": [{k: m[k] for k in ("line", "start_col", "end_col")} for m in r.matches[:MAX_MATCHES]]}
            if r.matches is not None
            else {}
        ),
    }


def _definition(h: Hit) -> dict[str, Any]:
    snippet, cut = _bounded_lines(h.text, 8)
    return {
        "path": h.path,
        "start_line": h.start_line,
        "end_line": h.end_line,
        "language": h.language,
        "symbol": h.symbol_name,
        "symbol_type": h.symbol_type,
        "parent": h.parent_symbol,
        "snippet": snippet,
        **({"snippet_truncated": True} if cut else {}),
    }


def _progress(p: Progress) -> dict[str, Any]:
    return {
        "phase": p.phase,
        "stage": p.stage,
        "files_done": p.files_done,
        "files_total": p.files_total,
        "chunks_embedded": p.chunks_embedded,
        "chunks_total": p.chunks_total,
        "eta_s": None if p.eta_s is None else round(p.eta_s, 1),
    }


def _bounded_lines(text: str, max_lines: int = SNIPPET_LINES) -> tuple[str, bool]:
    lines = text.split("\n")
    body, cut = _bounded("\n".join(lines[:max_lines]), SNIPPET_CHARS)
    return body, cut or len(lines) > max_lines


def _bounded(text: str, limit: int) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    return text[: text.rfind("\n", 0, limit) + 1 or limit].rstrip("\n"), True


def _iso(ts: float | None) -> str | None:
    return None if ts is None else datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="seconds")


def _read_source(path: Path) -> tuple[SourceText, os.stat_result]:
    """The file read by the index's own reader (decoded as the index decoded it), and its stat, read together
    off the event loop."""
    try:
        return read_source(path, READ_ANY), path.stat()
    except SkipFile as exc:
        raise ToolFailure(f"cannot read {path}: {exc}") from exc
    except OSError as exc:
        raise ToolFailure(f"cannot read {path}: {exc.strerror or exc}") from exc


def _stale_files(root: Path, states: dict) -> tuple[list[str], list[str]]:
    """Indexed files whose size or modification time differ from the index's (changed), and those gone."""
    stale, missing = [], []
    for relative, state in states.items():
        if state.status != "indexed":
            continue
        try:
            st = os.stat(root / relative)
        except FileNotFoundError:
            missing.append(relative)
            continue
        except OSError:
            continue
        if (st.st_size, st.st_mtime_ns) != (state.size, state.mtime_ns):
            stale.append(relative)
    return stale, missing
