"""`quarry` on the command line: index, search, scopes and history over the same worker the GUI uses.

Exit status: 0 success, 1 a failure (store, model, file system), 2 bad usage or input.
Errors are one line on stderr that says what is wrong and what to do.
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import os
import re
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

from . import shared_settings
from .agent.client_config import CLIENTS, WHERE, claude_add_line, client_config
from .agent.tools import LOAD_WAIT_S
from .cli_messages import explain, ignored_top_line, page_check_line
from .command_words import COMMANDS, first_word
from .desktop_entry import install_for_current_user
from .editor_command import editor_command, runs_in_terminal
from .embedding.choice import MODEL_CHOICES
from .embedding.model_spec import ModelError
from .embedding.providers import PREFERENCES, shown_provider
from .errors import UsageError
from .indexing.file_selection import SelectionOptions
from .indexing.git_worktrees import is_known_worktree
from .indexing.indexer import IndexingError, IndexOptions
from .indexing.path_text import as_latin1, first_non_utf8_name, is_utf8, shown
from .indexing.progress import STAGES, Progress
from .indexing.team_base import PUBLISH, BaseReport
from .logs import setup_logging
from .search.request import (
    CODE_SEARCH_PRESET,
    MODES,
    NO_RERANK,
    RerankOptions,
    SearchError,
    SearchFilters,
    SearchRequest,
    TextOptions,
)
from .store.errors import ScopeRemoved, StoreError, StoreUnusable
from .store.location import (
    DEFAULT_EF_SEARCH,
    StoreLocation,
    busy_timeout_ms,
    check_store,
    check_url,
    default_location,
    display_url,
    has_password,
    move_aside,
)
from .store.rows import OthersClaims, PageCheck
from .wording import counted
from .worker import ops
from .worker.engine import EngineConfig
from .worker.operations import FOLDER_BACK, FOLDER_GONE, UPDATE, ChangeNotice, Write
from .worker.worker import Worker

_log = logging.getLogger(__name__)
EXIT_FAILURE = 1
EXIT_USAGE = 2
MAX_HISTORY = 100_000  # `quarry history -n`: more than any store keeps, and an int SQLite takes


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # No abbreviations: `--mode` must never be read as the start of `--model`.
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:  # one line, not usage + traceback-ish noise
        raise UsageError(f"{message} (see `{self.prog} --help`)")


def _add_common(p: argparse.ArgumentParser, top: bool = False) -> None:
    # --db works before or after the subcommand; SUPPRESS keeps a later default from overwriting it.
    p.add_argument(
        "--db",
        default=None if top else argparse.SUPPRESS,
        help="index database file, or a team index as postgresql://USER@HOST:PORT/DB "
        "(default: $QUARRY_DB or a file in the per-user data directory)",
    )
    p.add_argument(
        "--model",
        choices=MODEL_CHOICES,
        default=None if top else argparse.SUPPRESS,
        help="switch the index to the bundled contextual model (what a new index uses) or to Quarry's own fast static "
        "model for slow machines (default: the model the index was made with); only index and mcp "
        "switch, other commands take only the index's model",
    )
    p.add_argument(
        "--model-dir",
        type=_path,
        default=None if top else argparse.SUPPRESS,
        help="switch the index to the model in this folder (model.onnx, tokenizer.json and quarry-model.json); "
        "later runs keep using it; only index and mcp switch, other commands take only the index's model",
    )
    p.add_argument(
        "--provider",
        choices=PREFERENCES,
        default="auto" if top else argparse.SUPPRESS,
        help="ONNX execution provider preference",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="quarry", description="Search a codebase by meaning and by name.")
    _add_common(parser, top=True)
    parser.add_argument("--root", type=_path, help="(GUI) project folder to open (also `quarry FOLDER`)")
    parser.add_argument("--query", help="(GUI) query to run at start")
    parser.add_argument("--screenshot", type=_path, help="(GUI) save a PNG of the window and exit")
    parser.add_argument(
        "--install-desktop-entry",
        action="store_true",
        help='add Quarry to this user\'s applications menu and to "Open with" for folders, then exit',
    )
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    p = sub.add_parser(
        "index", help="index a folder (a main scope, a worktree scope, or on a team index this checkout's overlay)"
    )
    _add_common(p)
    p.add_argument("path", type=_path)
    p.add_argument("--json", action="store_true", help="print a stats object on stdout at the end")
    p.add_argument("--max-file-size", type=int, default=512 * 1024, help="skip files larger than this (bytes)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument(
        "--until",
        choices=STAGES,
        default="full",
        help="build the index up to this stage: keyword (files, symbols, keywords), fast (static vectors) or "
        "full (the model's vectors); a later run goes on from there",
    )
    p.add_argument(
        "--watch",
        action="store_true",
        help="after indexing, keep the index in step with file changes until interrupted (Ctrl+C)",
    )
    p.add_argument(
        "--publish",
        action="store_true",
        help="team index, with --watch: each update also brings the repository's shared base to its default "
        "branch's tip (as an index run does); without it, updates change only this checkout's own overlay",
    )
    p.add_argument(
        "--rebuild",
        action="store_true",
        help="if the index database is damaged, not a database or from a newer Quarry, move it aside "
        "(to FILE.broken-DATE-TIME) and build a fresh one",
    )

    p = sub.add_parser("search", help="search an indexed folder")
    _add_common(p)
    # Words as the shell splits them make one query: `quarry search parse a mime header` needs no quotes.
    p.add_argument("query", nargs="*", help="what to look for (its words need no quotes)")
    p.add_argument("--queries-file", type=_path, help="run one query per line of this file")
    p.add_argument(
        "--root",
        type=_path,
        action="append",
        default=[],
        help="indexed folder to search (repeatable; default: the indexed folder holding the working directory)",
    )
    p.add_argument("--all-scopes", action="store_true", help="search every indexed scope")
    p.add_argument("-k", type=int, default=10, help="number of results (1..100)")
    p.add_argument(
        "--mode",
        default="hybrid",
        help=f"one of {', '.join(MODES)}; text lists every line holding the query as typed (a literal, or a "
        "regular expression with --regex), like grep",
    )
    p.add_argument("--regex", action="store_true", help="text mode: the query is a regular expression (Python re)")
    p.add_argument("--case-sensitive", action="store_true", help="text mode: match case (ignored by default)")
    p.add_argument("--word", action="store_true", help="text mode: whole words only")
    p.add_argument("--lang", action="append", default=[], help="only this language (repeatable)")
    p.add_argument("--glob", action="append", default=[], help="only paths matching this gitignore-style pattern")
    p.add_argument("--chunk-type", action="append", default=[], help="only this chunk type (repeatable)")
    p.add_argument("--symbol-type", action="append", default=[], help="only this symbol type (repeatable)")
    p.add_argument("--symbol", action="append", default=[], help="only chunks defining this symbol name")
    p.add_argument("--min-score", type=float, default=0.0, help="drop results scoring below this (0..1)")
    p.add_argument(
        "--cutoff",
        type=float,
        default=0.0,
        help="drop results scoring below this share of the best one (0..1, e.g. 0.4 as the window does)",
    )
    p.add_argument(
        "--changed",
        action="store_true",
        help="in a worktree: only files that differ from the main repository (on a team index: from the base)",
    )
    p.add_argument("--no-tests", action="store_true", help="leave out test files and folders")
    p.add_argument("--no-docs", action="store_true", help="leave out documentation (Markdown, reStructuredText, ...)")
    p.add_argument("--context", type=int, default=0, help="lines of context above and below each result")
    p.add_argument(
        "--overlap", type=float, default=0.5, help="merge same-file results overlapping more than this share (0..1]"
    )
    p.add_argument("--rerank", choices=("code", "none"), default="code", help="reranking preset")
    p.add_argument(
        "--weights",
        default="",
        help="override rerank weights of the preset, e.g. "
        "'similarity=1,symbol=0.05,chunk_type=0.03,recency=0.02,private=0.1'",
    )
    p.add_argument("--json", action="store_true", help="print JSON (one object per query)")
    p.add_argument(
        "--ef-search",
        type=int,
        default=DEFAULT_EF_SEARCH,
        help=f"team index: HNSW candidates per vector query; more finds more, slower (default {DEFAULT_EF_SEARCH})",
    )

    p = sub.add_parser("scopes", help="list indexed scopes, or `scopes remove PATH`")
    _add_common(p)
    p.add_argument("action", nargs="?", choices=("list", "remove"), default="list")
    p.add_argument("path", nargs="?", type=_path)
    p.add_argument("--json", action="store_true")

    p = sub.add_parser(
        "mcp",
        help="serve the index to coding agents and editors over the Model Context Protocol (stdio)",
        description="Serve search, find_symbol, read_span, index_status and reindex to an MCP client on stdin/"
        "stdout. The default folder is the indexed one holding the working directory (or --root).",
    )
    _add_common(p)
    p.add_argument("--root", type=_path, help="the folder agents work in (default: the working directory)")
    p.add_argument(
        "--load-wait",
        type=_seconds,
        default=LOAD_WAIT_S,
        metavar="SECONDS",
        help="how long a search by meaning waits for a fresh server's vectors to load before it searches those "
        f"loaded so far and says how many (default: {LOAD_WAIT_S:g})",
    )
    p.add_argument(
        "--print-config",
        choices=CLIENTS,
        metavar="CLIENT",
        help=f"print the snippet that registers this server with CLIENT ({', '.join(CLIENTS)}) and exit",
    )

    p = sub.add_parser("open", help="open PATH:LINE in the editor chosen in Settings (else $VISUAL or $EDITOR)")
    p.add_argument("target", help="a file, optionally with :LINE (and :COLUMN), as results print them")

    p = sub.add_parser("history", help="recent searches")
    _add_common(p)
    p.add_argument("-n", type=int, default=20, help="how many")
    p.add_argument("--json", action="store_true")
    return parser


def _seconds(text: str) -> float:
    """A non-negative number of seconds."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds (0 or more)")
    return seconds


def _path(text: str) -> Path:
    """A path argument; an empty one (an unset "$VAR") is refused rather than read as the working directory,
    which `quarry index "$REPO"` would then index whole."""
    if not text.strip():
        raise argparse.ArgumentTypeError("the path is empty (an unset variable?); give the folder or file itself")
    return Path(text)


def _tolerate_narrow_output() -> None:
    """Text a terminal's encoding cannot show (a path in Cyrillic under PYTHONIOENCODING=ascii) is printed as
    backslash escapes instead of ending the command with a UnicodeEncodeError."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None) -> int:
    setup_logging()
    _tolerate_narrow_output()
    try:
        argv = sys.argv[1:] if argv is None else list(argv)
        _require_text(argv)
        args = build_parser().parse_args(_folder_as_root(argv))
        if args.install_desktop_entry:
            return install_for_current_user()
        if args.command is None:
            from .app import run_gui

            return run_gui(args)
        return _COMMANDS[args.command](args)
    except UsageError as exc:
        return _fail(str(exc), EXIT_USAGE)
    except (SearchError, IndexingError) as exc:
        return _fail(explain(exc), EXIT_USAGE)
    except BrokenPipeError:
        # The reader went away (`quarry search ... | head`): stop quietly, as other command-line tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (StoreError, ModelError, LookupError, OSError) as exc:
        return _fail(explain(exc), EXIT_FAILURE)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)


def _require_text(argv: Sequence[str]) -> None:
    """Arguments the system could not decode (bytes in another encoding, kept as surrogates) can be neither
    stored nor searched as text. A path that exists under such a name was not mistyped: its name must change."""
    for arg in argv:
        if is_utf8(arg):
            continue
        bad = first_non_utf8_name(arg)
        if bad is not None and os.path.lexists(arg):
            escaped = "".join(f"\\x{ord(c) - 0xDC00:02x}" if 0xDC80 <= ord(c) <= 0xDCFF else c for c in bad)
            raise UsageError(
                f"cannot index '{shown(arg)}': the name '{shown(bad)}' is not UTF-8 (its bytes are in another "
                f"encoding; in Latin-1 it reads '{as_latin1(bad)}') and Quarry keeps paths as UTF-8 text; rename "
                f"that folder or file, e.g. mv $'{escaped}' '{as_latin1(bad)}' in its parent folder"
            )
        raise UsageError(
            f"the argument '{shown(arg)}' is not valid UTF-8 text; set your terminal to UTF-8 and type it again"
        )


def _fail(message: str, code: int) -> int:
    _log.log(logging.WARNING if code == EXIT_USAGE else logging.ERROR, "exit %d: %s", code, message)
    print(f"quarry: {message}", file=sys.stderr)
    return code


def _folder_as_root(argv: list[str]) -> list[str]:
    """`quarry [OPTIONS] FOLDER...`, what a file manager's "Open with Quarry" runs, opens the first folder like
    --root."""
    start = first_word(argv)
    folders = []
    for arg in argv[start:]:
        if arg in COMMANDS or arg.startswith("-") or not Path(arg).is_dir():
            break
        folders.append(arg)
    if not folders:
        return argv
    if len(folders) > 1:
        print(f"quarry: opening {folders[0]}; Quarry opens one folder at a time", file=sys.stderr)
    return [*argv[:start], "--root", folders[0], *argv[start + len(folders) :]]


def _location(args: argparse.Namespace) -> StoreLocation:
    return StoreLocation.of(args.db) if args.db else default_location()


def _worker(
    args: argparse.Namespace,
    index_options: IndexOptions | None = None,
    on_change: Callable[[ChangeNotice], None] | None = None,
    reembed: _Reembed | None = None,
    switches_model: bool = False,
) -> Worker:
    """The engine for one command. A model named with --model or --model-dir must run. When it differs from
    the index's, a command that `switches_model` (index, mcp) queues a re-embed first (`reembed` follows it;
    searches meanwhile use the index's model); any other is refused: it would end before the re-embed does."""
    try:
        busy_timeout_ms()
    except StoreError as exc:  # a bad setting is bad input: exit 2, before anything is opened
        raise UsageError(str(exc)) from exc
    if args.model_dir is not None and not args.model_dir.expanduser().is_dir():
        raise UsageError(
            f"--model-dir {args.model_dir} is not a folder; give the folder holding model.onnx, "
            "tokenizer.json and quarry-model.json"
        )
    location = _location(args)
    if location.path is not None and location.path.is_dir():
        raise UsageError(f"{location} is a folder, not an index database; pass a file path with --db")
    ef_search = getattr(args, "ef_search", DEFAULT_EF_SEARCH)
    if not 1 <= ef_search <= 1000:
        raise UsageError(f"--ef-search must be between 1 and 1000 (got {ef_search})")
    config = EngineConfig(
        location,
        ef_search=ef_search,
        model=args.model,
        model_dir=args.model_dir,
        provider=args.provider,
        index_options=index_options or IndexOptions(),
    )
    worker = Worker(config, on_change, None if getattr(args, "quiet", False) else _print_page_check).start()
    try:
        if args.model_dir is not None or args.model is not None:
            worker.run(ops.load_model()).result()  # never a silent fallback to the index's model or to exact matching
        if worker.needs_reembed and not switches_model:
            raise UsageError(_switch_refused(args, worker.run(ops.status()).result()))
    except BaseException:
        worker.close()
        raise
    if worker.needs_reembed:
        write = ops.reembed(reembed)
        worker.run(write)
        if reembed is not None:
            reembed.write = write
    return worker


def _switch_refused(args: argparse.Namespace, status: dict) -> str:
    if args.model_dir is not None:
        option, value, verb = "--model-dir", shlex.quote(str(args.model_dir)), "holds"
    else:
        option, value, verb = "--model", args.model, "is"
    return (
        f"{option} {value} {verb} model {status['model']}, but this index's vectors are of "
        f"{status['active_model']}; only `quarry index` switches an index's model (it re-embeds every chunk): "
        f"run `quarry index FOLDER {option} {value}` first, or leave out {option}"
    )


class _Reembed:
    """A re-embed queued before an index run: its progress goes to the index's printer, and its last
    snapshot is what the run's stats report of it (it is work of this command too)."""

    def __init__(self, progress: Callable[[Progress], None] | None):
        self._progress = progress
        self.last: Progress | None = None
        self.write: Write[bool] | None = None

    def __call__(self, p: Progress) -> None:
        self.last = p
        if self._progress is not None:
            self._progress(p)

    def cancel(self) -> None:
        if self.write is not None:
            self.write.cancel()

    def summary(self) -> dict | None:
        """What the re-embed did (None if there was none): the model, chunks given its vectors, seconds."""
        p = self.last
        if p is None:
            return None
        return {
            "model": p.root,
            "chunks_embedded": p.chunks_embedded,
            "chunks_total": p.chunks_total,
            "seconds": round(p.elapsed_s, 3),
            "finished": p.phase == "completed",
        }


# --- index ------------------------------------------------------------------------------------


def _cmd_index(args: argparse.Namespace) -> int:
    if args.max_file_size <= 0:
        raise UsageError("--max-file-size must be a positive number of bytes")
    if args.publish and not args.watch:
        raise UsageError("--publish says what --watch's updates do; an index run brings the team base up already")
    options = IndexOptions(
        selection=SelectionOptions(max_file_size=args.max_file_size), until=args.until, publish_updates=args.publish
    )
    if args.rebuild:
        _move_aside_if_unusable(_location(args))
    progress = None if args.quiet else _ProgressPrinter()
    updates = _UpdatePrinter(args.json) if args.watch else None
    reembed = _Reembed(progress)
    worker = _worker(args, options, updates, reembed, switches_model=True)
    try:
        index = ops.index(args.path, progress)
        running = worker.run(index)
        try:
            stats = running.result()
        except KeyboardInterrupt:
            reembed.cancel()
            index.cancel()
            stats = running.result()
        if progress:
            progress.done()
        _print_stats(stats, args.json, reembed.summary())
        if stats.ignored_top is not None:
            print(f"quarry: {ignored_top_line(stats.files_indexed, stats.ignored_top)}", file=sys.stderr, flush=True)
        if args.watch and not stats.cancelled:
            assert updates is not None  # made for --watch
            if _watch(worker, Path(stats.root), updates.removed):
                return EXIT_FAILURE
    finally:
        worker.close()
    return 130 if stats.cancelled else 0


def _move_aside_if_unusable(db: StoreLocation) -> None:
    """--rebuild: a store that cannot be used is moved aside (never deleted); a healthy one is kept."""
    if db.is_team:
        raise UsageError(f"--rebuild moves a damaged index file aside; the team index {db} is repaired on its server")
    if not db.file.is_file():
        return
    try:
        check_store(db)
    except StoreUnusable as exc:
        moved = move_aside(db)
        print(
            f"quarry: {db} {exc.reason}: moved it aside to {moved} and building a fresh index "
            "(other folders indexed in it need `quarry index` again)",
            file=sys.stderr,
            flush=True,
        )
    else:
        print(f"quarry: {db} is a healthy index; nothing was moved aside", file=sys.stderr, flush=True)


class _UpdatePrinter:
    """`index --watch`: what each update of the watched folder changed, or why it failed; the folder moved
    away or deleted, and back."""

    def __init__(self, as_json: bool):
        self.as_json = as_json
        self.removed = threading.Event()  # another window or command removed the folder: the watch ends

    def __call__(self, notice: ChangeNotice) -> None:
        if notice.operation == FOLDER_GONE:
            print(
                f"quarry: {notice.roots[0]} was moved or deleted; its index is kept, waiting for it to come back",
                file=sys.stderr,
                flush=True,
            )
        elif notice.operation == FOLDER_BACK:
            print(f"quarry: {notice.roots[0]} is back; indexing it", file=sys.stderr, flush=True)
        if notice.operation != UPDATE:
            return
        result = notice.result
        if isinstance(result, ScopeRemoved):  # the worker no longer watches it
            print(
                f"quarry: {notice.roots[0]} was removed from the index by another window or command; stopped "
                "watching it",
                file=sys.stderr,
                flush=True,
            )
            self.removed.set()
        elif isinstance(result, BaseException):
            where = ", ".join(notice.roots)
            print(f"quarry: re-index of {where} failed: {explain(result)}", file=sys.stderr, flush=True)
        elif result.files_changed or result.files_deleted or result.files_copied:
            _print_stats(result, self.as_json)


def _watch(worker: Worker, root: Path, removed: threading.Event) -> bool:
    """Follow `root` until Ctrl+C, or until `removed` is set; True in that case."""
    worker.watch(root)
    print(f"watching {root} for changes; Ctrl+C to stop", file=sys.stderr, flush=True)
    try:
        while not removed.wait(1.0):  # in slices: on Windows a wait without a timeout ignores Ctrl+C
            pass
    except KeyboardInterrupt:
        print("stopped watching", file=sys.stderr)
        return False
    return True


_STAGE_LABELS = {"keyword": "keyword index", "fast": "fast vectors", "full": "model vectors"}


def progress_line(p: Progress) -> str:
    """e.g. "in_progress, keyword index: 120/638 files, 1.2/9.8 MB" or "in_progress, model vectors: 3000/25000
    chunks (61.0/s), about 360s left"."""
    what = f"re-embedding with {p.root}" if p.task == "reembed" else _STAGE_LABELS.get(p.stage, p.stage)
    if p.step == "text":  # after a stage's vectors, not more of them: "fast vectors: ... into the text index" misled
        what = "text index"
    if p.publishing:
        what = f"team base to commit {p.publishing[:12]}, {what}"
    line = f"{p.phase}, {what}: "
    if p.phase == "analyzing" and p.task == "index":
        line += f"looking for files, {p.files_found} found"
    elif p.stage == "keyword":
        line += f"{p.files_done}/{p.files_total} files, {p.bytes_done / 1e6:.1f}/{p.bytes_total / 1e6:.1f} MB"
    elif p.step == "outlines":  # the chunks are done: the files' outlines are the last step
        line += f"{p.chunks_embedded}/{p.chunks_total} chunks, {p.outlines_done}/{p.outlines_total} file outlines"
    else:
        what = {"names": "symbol names"}.get(p.step, "chunks")
        line += f"{p.chunks_embedded}/{p.chunks_total} {what} ({p.chunks_per_s:.1f}/s)"
    if p.awaiting is not None:
        line += f", {_awaiting_text(p.awaiting)}"
    elif p.phase == "in_progress" and p.eta_s:
        line += f", about {p.eta_s:.0f}s left"
    return line


def _awaiting_text(others: OthersClaims) -> str:
    """e.g. "waiting for 456 chunks claimed by another indexer (its claims expire in 1 m 52 s)"."""
    minutes, seconds = divmod(round(others.expire_in_s), 60)
    expiry = f"{minutes} m {seconds} s" if minutes else f"{seconds} s"
    whose = "another indexer (its" if others.indexers == 1 else f"{others.indexers} other indexers (their"
    return f"waiting for {others.chunks} chunks claimed by {whose} claims expire in {expiry})"


def _print_stats(stats, as_json: bool, reembedded: dict | None = None) -> None:
    if as_json:
        print(json.dumps({**stats.to_dict(), **({"reembedded": reembedded} if reembedded else {})}), flush=True)
    else:
        if reembedded:
            print(
                f"{'re-embedded' if reembedded['finished'] else 're-embed cancelled after'} "
                f"{reembedded['chunks_embedded']} of {reembedded['chunks_total']} chunks with {reembedded['model']} "
                f"in {reembedded['seconds']:.1f}s"
            )
        skipped = ", ".join(f"{n} {r}" for r, n in sorted(stats.skipped.items())) or "none"
        if stats.folders_skipped:
            folders = ", ".join(f"{n} {r}" for r, n in sorted(stats.folders_skipped.items()))
            skipped += f"; folders passed over: {folders}"
        kind = {
            "worktree": f"worktree scope of {stats.parent_root}",
            "overlay": "this checkout's overlay on the team index",
        }.get(stats.scope_type, "main scope")
        parent = "the base" if stats.scope_type == "overlay" else "the main scope"
        copied = f", {stats.files_copied} files shared with {parent}" if stats.files_copied else ""
        if stats.provider:
            ran = f"on {shown_provider(stats.provider)}"
        else:  # the contextual model embedded nothing: the fast one alone, or no model
            ran = "by the fast model alone" if stats.chunks_fast else "with nothing to embed"
        print(
            f"{'cancelled' if stats.cancelled else 'indexed'} {stats.root} ({kind}): {stats.files_indexed} files, "
            f"{stats.chunks_total} chunks ({stats.chunks_embedded} embedded, {stats.chunks_fast} fast{copied}) "
            f"in {stats.seconds:.1f}s {ran}; skipped: {skipped}"
        )
        if stats.base is not None:
            print(_base_line(stats.base))
        for wt in stats.worktrees:
            if not wt["indexed"]:
                print(f"  linked worktree not indexed yet: {wt['path']}  (quarry index {wt['path']})")
        sys.stdout.flush()


def _base_line(base: BaseReport) -> str:
    """What an index run did about its repository's shared base on a team index, e.g. "team base: moved from
    3f2a9c1e07aa to main 9b1c0de4f2a1 (3 files changed, 0 deleted)"."""
    tip = f"{base.tip.branch} {base.tip.commit[:12]}" if base.tip else ""
    before = base.published.commit[:12] if base.published else None
    if base.action == PUBLISH:
        moved = f"from {before} " if before else ""
        if base.cancelled:
            return f"  team base: cancelled while moving {moved}to {tip}; the next index carries on"
        return f"  team base: moved {moved}to {tip} ({base.files_changed} files changed, {base.files_deleted} deleted)"
    return {
        "current": f"  team base: already at {tip}",
        "newer": f"  team base: stays at {before}, newer than this clone's {tip}; pull to follow it",
        "unknown": f"  team base: stays at {before}, a commit this clone lacks; fetch to compare",
        "no-tip": "  team base: left as it is (git names no default branch here)",
    }[base.action]


def _print_page_check(check: PageCheck) -> None:
    """The index read whole for damage before a command uses it, on stderr each second: in a terminal one line
    redrawn (the index's own progress, when it follows, redraws it in turn), in a log the reason once."""
    tty = sys.stderr.isatty()
    print(
        ("\r\033[K" if tty else "") + "quarry: " + page_check_line(check, why=tty or check.seconds == 0),
        end="\n" if check.done or not tty else "",
        file=sys.stderr,
        flush=True,
    )


class _ProgressPrinter:
    """Progress on stderr: one line redrawn in a terminal; otherwise (a log, a pipe) at most one line a
    second, plus each stage's start and end (the worker paces reports to one per 500 ms)."""

    LOG_INTERVAL_S = 1.0

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._tty = sys.stderr.isatty()
        self._clock = clock
        self._last: tuple[float, str, str] | None = None  # (time, phase, stage) of the last line written

    def __call__(self, p: Progress) -> None:
        now = self._clock()
        if not self._tty and self._last is not None:
            time_, phase, stage = self._last
            if (phase, stage) == (p.phase, p.stage) and now - time_ < self.LOG_INTERVAL_S:
                return
        self._last = (now, p.phase, p.stage)
        print(
            ("\r\033[K" if self._tty else "") + progress_line(p),
            end="" if self._tty else "\n",
            file=sys.stderr,
            flush=True,
        )

    def done(self) -> None:
        if self._tty:
            print(file=sys.stderr)


# --- search -----------------------------------------------------------------------------------


def _cmd_search(args: argparse.Namespace) -> int:
    queries = _queries(args)
    if args.root and args.all_scopes:
        raise UsageError("give either --root PATH or --all-scopes, not both")
    if (args.regex or args.case_sensitive or args.word) and args.mode != "text":
        raise UsageError("--regex, --case-sensitive and --word apply to --mode text")
    filters = SearchFilters(
        languages=tuple(args.lang),
        chunk_types=tuple(args.chunk_type),
        symbol_types=tuple(args.symbol_type),
        symbol_names=tuple(args.symbol),
        globs=tuple(args.glob),
        min_score=args.min_score,
        changed_only=args.changed,
        hide_tests=args.no_tests,
        hide_docs=args.no_docs,
    )
    rerank = _weights(CODE_SEARCH_PRESET if args.rerank == "code" else NO_RERANK, args.weights)
    worker = _worker(args)
    try:
        roots = tuple(str(r) for r in args.root)
        if not roots and not args.all_scopes:
            roots = (_root_holding_working_directory(worker),)
        for query in queries:
            request = SearchRequest(
                query=query,
                roots=roots,
                all_scopes=args.all_scopes,
                k=args.k,
                mode=args.mode,
                filters=filters,
                context=args.context,
                overlap_threshold=args.overlap,
                rerank=rerank,
                text=TextOptions(args.regex, args.case_sensitive, args.word),
                relative_cutoff=args.cutoff,
            )
            response = worker.run(ops.search(request)).result()
            if args.json:
                print(json.dumps(response.to_dict(with_context=args.context > 0)), flush=True)
            else:
                # Results of several folders name theirs: each path is given whole, from its scope's root.
                _print_response(response, args.context > 0, whole_paths=args.all_scopes or len(roots) > 1)
    finally:
        worker.close()
    return 0


def _root_holding_working_directory(worker: Worker) -> str:
    """The indexed folder a search without --root means: the innermost one holding the working directory (a
    worktree inside its repository's folder is its own), as git finds its repository."""
    scope = worker.run(ops.scope_containing(Path.cwd())).result()
    if scope is None:
        raise UsageError(
            f"the working directory {Path.cwd()} is not inside an indexed folder; say which one to search with "
            "--root PATH (or --all-scopes), or index this one first with `quarry index .`"
        )
    return scope.root


_WEIGHT_FIELDS = {
    "similarity": "similarity_weight",
    "symbol": "symbol_boost",
    "chunk_type": "chunk_type_boost",
    "recency": "recency_boost",
    "private": "private_penalty",
}


def _weights(preset: RerankOptions, spec: str) -> RerankOptions:
    """The preset with `name=value,...` weights replaced."""
    # Field name -> float; Any because replace() checks ** arguments against every field, the tuple one too.
    changes: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in spec.split(","))):
        name, _, value = item.partition("=")
        if name.strip() not in _WEIGHT_FIELDS:
            raise UsageError(f"unknown weight {name.strip()!r} in --weights; use {', '.join(_WEIGHT_FIELDS)}")
        try:
            number = float(value)
        except ValueError:
            raise UsageError(f"--weights: {name.strip()} needs a number, got {value!r}") from None
        if not 0 <= number <= 10:
            raise UsageError(f"--weights: {name.strip()} must be between 0 and 10")
        changes[_WEIGHT_FIELDS[name.strip()]] = number
    return replace(preset, **changes)


def _queries(args: argparse.Namespace) -> list[str]:
    if args.queries_file and args.query:
        raise UsageError("give either a QUERY or --queries-file, not both")
    if args.queries_file:
        try:
            lines = args.queries_file.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError as exc:
            raise UsageError(f"cannot read --queries-file {args.queries_file}: {exc.strerror}") from exc
        queries = [line for line in lines if line.strip()]
        if not queries:
            raise UsageError(f"{args.queries_file} holds no queries (one per line)")
        return queries
    if not args.query:
        raise UsageError("give a QUERY to search for (or --queries-file FILE)")
    return [" ".join(args.query)]


def _print_response(response, with_context: bool, whole_paths: bool = False) -> None:
    if response.notice:
        print(f"note: {response.notice}")
    if not response.results:
        print(f"no results for {response.query!r}")
    if response.mode == "text":
        _print_text_matches(response, whole_paths)
        return
    for r in response.results:
        symbol = f"  {r.symbol_type} {r.symbol_name}" if r.symbol_name else ""
        print(f"{r.score:.3f} {r.relevance:8} {_shown_path(r, whole_paths)}:{r.start_line}-{r.end_line}{symbol}")
        if with_context:
            if r.stale:
                print("    (file changed since it was indexed; re-index to see current lines)")
            elif r.context is not None:
                for n, line in enumerate(r.context.split("\n"), start=r.context_start_line):
                    mark = ">" if r.start_line <= n <= r.end_line else " "
                    print(f"  {mark}{n:5} {line}")
    weaker = f"; {response.below_cutoff} weaker left out" if response.below_cutoff else ""
    results = counted(len(response.results), "result")
    print(f"({results} in {response.elapsed_ms:.1f} ms, {response.effective_mode}{weaker})")


def _shown_path(result, whole: bool) -> str:
    """The result's path in its scope, or from the scope's root when several scopes answer."""
    return str(Path(result.scope_root) / result.path) if whole and result.scope_root else result.path


def _print_text_matches(response, whole_paths: bool = False) -> None:
    """grep's form: PATH:LINE:COLUMN:LINE TEXT for each match (columns from 1), then the totals."""
    for r in response.results:
        path = _shown_path(r, whole_paths)
        for m in r.matches:
            print(f"{path}:{m['line']}:{m['start_col'] + 1}:{m['text']}")
        if r.match_count > len(r.matches):
            print(f"{path}: {counted(r.match_count - len(r.matches), 'more match', 'more matches')}")
    listed = counted(sum(r.match_count for r in response.results), "match", "matches")
    files = counted(len(response.results), "file")
    if response.text_complete:
        more = response.files_matched - len(response.results)
        tail = f", {counted(more, 'more file')} not listed (raise -k)" if more else ""
        total = counted(response.matches_total, "match", "matches")
        print(f"({total} in {counted(response.files_matched, 'file')}{tail}; {response.elapsed_ms:.1f} ms)")
    elif response.text_stopped_after_s is not None:  # the note above says why
        print(f"({listed} in {files} before it stopped; {response.elapsed_ms:.1f} ms)")
    else:
        print(f"({listed} in the first {files}, more files match (raise -k); {response.elapsed_ms:.1f} ms)")


# --- scopes and history ----------------------------------------------------------------------------


def _cmd_scopes(args: argparse.Namespace) -> int:
    if args.action == "remove" and args.path is None:
        raise UsageError("say which scope to remove: quarry scopes remove PATH")
    if args.action == "list" and args.path is not None:
        raise UsageError(
            f"`quarry scopes` lists every scope and takes no PATH; to drop {args.path} use `quarry scopes remove PATH`"
        )
    worker = _worker(args)
    try:
        if args.action == "remove":
            collected = worker.run(ops.remove_scope(args.path)).result()
            print(f"removed {args.path.expanduser().resolve()} ({collected} unused chunks collected)")
            return 0
        scopes = worker.run(ops.scopes()).result()
    finally:
        worker.close()
    roots = {s.scope.id: s.scope.root for s in scopes}
    rows: list[dict[str, Any]] = [
        {
            "id": s.scope.id,
            "type": s.scope.type,
            "root": s.scope.root,
            "parent": s.scope.parent_id,
            "files": s.files,
            "chunks": s.chunks,
            "last_indexed_at": _iso(s.scope.last_indexed_at),
            "stale": s.scope.type == "worktree"
            and s.scope.parent_id is not None
            and not is_known_worktree(Path(s.scope.root), Path(roots[s.scope.parent_id])),
            # A team index's base: the commit it holds, of which branch, put there by which machine when.
            "base": None
            if s.scope.published is None
            else {**s.scope.published.__dict__, "at": _iso(s.scope.published.at)},
            "differing": s.differing,  # an overlay's files that differ from its base
        }
        for s in scopes
    ]
    location = _location(args)
    if args.json:
        print(json.dumps(rows))
        return 0
    if location.is_team:
        print(f"team index {location}: each repository's base is its committed content, shared; a checkout's own")
        print("changes stay in its overlay, which only that checkout searches")
    if not rows:
        print("no scopes indexed yet; run `quarry index PATH`")
    for r in rows:
        print(
            f"{r['type']:8} {r['root']}  {r['files']} files, {r['chunks']} chunks, "
            f"indexed {r['last_indexed_at'] or 'never (incomplete)'}"
        )
        base = r["base"]
        if base is not None:
            at = f"{base['branch']} at commit {base['commit'][:12]}"
            print(f"         {at}, published by {base['host']} {base['at']}")
        elif r["type"] == "base":
            print("         no commit yet (the next `quarry index` of a checkout brings it to its default branch)")
        if r["differing"] is not None:
            n = r["differing"]
            differs = f"{n} file{'s differ' if n != 1 else ' differs'} from the base" if n else "same as its base"
            print(f"         {differs}")
        if r["stale"]:
            print(f"         git no longer knows this worktree; remove it with: quarry scopes remove {r['root']}")
    return 0


def _cmd_history(args: argparse.Namespace) -> int:
    if not 1 <= args.n <= MAX_HISTORY:
        raise UsageError(f"-n must be between 1 and {MAX_HISTORY:,}")
    worker = _worker(args)
    try:
        entries = worker.run(ops.history(args.n)).result()
    finally:
        worker.close()
    if args.json:
        print(json.dumps([{**e.__dict__, "at": _iso(e.at)} for e in entries]))
    else:
        for e in entries:
            top = f"{e.top_score:.3f}" if e.top_score is not None else "-"
            print(
                f"{_iso(e.at)}  {e.mode:8} {e.result_count:3} results  top {top}  {e.duration_ms:7.1f} ms  "
                f"{e.query}  [{e.scope_root}]"
            )
    return 0


def _iso(ts: float | None) -> str | None:
    return None if ts is None else time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(ts))


# --- agents and editors ----------------------------------------------------------------------------


def _cmd_mcp(args: argparse.Namespace) -> int:
    if args.print_config:
        command = [*_quarry_command(), "mcp", *_store_arguments(args)]
        print(client_config(args.print_config, command))
        print(f"quarry: {WHERE[args.print_config]}", file=sys.stderr)
        if args.print_config == "claude":
            print(f"quarry:   {claude_add_line(command)}", file=sys.stderr)
        if args.db and has_password(args.db):
            print(
                "quarry: the password is left out of the URL above, as a config file is no place for it; put it "
                "in ~/.pgpass (or set PGPASSWORD for the server)",
                file=sys.stderr,
            )
        return 0
    folder = (args.root or Path.cwd()).expanduser()
    if not folder.is_dir():
        raise UsageError(f"--root {folder} is not a folder")
    from .agent.server import serve  # the MCP SDK loads only for this command

    worker = _worker(args, switches_model=True)  # it serves on while the re-embed runs
    try:
        serve(worker, folder, args.load_wait)
    finally:
        worker.close()
    return 0


def _quarry_command() -> list[str]:
    """How an MCP client should start this Quarry: the `quarry` script beside this Python, else the module."""
    script = Path(sys.executable).parent / ("quarry.exe" if os.name == "nt" else "quarry")
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-m", "desktop_app"]


def _store_arguments(args: argparse.Namespace) -> list[str]:
    """The options that make the server use this command's index and model (never a password)."""
    out = []
    if args.db:
        location = StoreLocation.of(args.db)
        if location.url is not None:
            check_url(location.url)  # a config that cannot work is not printed
            out += ["--db", display_url(location.url)]
        else:
            out += ["--db", str(location.file.expanduser().resolve())]
    if args.model_dir is not None:
        out += ["--model-dir", str(args.model_dir.expanduser().resolve())]
    elif args.model is not None:
        out += ["--model", args.model]
    return out


def _cmd_open(args: argparse.Namespace) -> int:
    path, line = _file_and_line(args.target)
    argv = editor_command(path, line, chosen=shared_settings.editor())
    if argv is None:
        opener = {"darwin": ["open"], "win32": []}.get(sys.platform, ["xdg-open"])
        if not opener:
            os.startfile(path)  # type: ignore[attr-defined]  # Windows only
        else:
            subprocess.Popen([*opener, str(path)], start_new_session=True)
        print(
            f"quarry: opened {path} with the system's application; choose an editor in Settings (or set $EDITOR) "
            f"to land on line {line}",
            file=sys.stderr,
        )
        return 0
    if runs_in_terminal(argv[0]):  # it takes over this terminal until the user quits it
        return subprocess.call(argv)
    subprocess.Popen(argv, start_new_session=True)
    return 0


def _file_and_line(target: str) -> tuple[Path, int]:
    """PATH, PATH:LINE or PATH:LINE:COLUMN (also PATH:START-END, as `quarry search` prints results)."""
    path, line = target, 1
    parts = target.split(":")
    numbers: list[str] = []
    while len(parts) > 1 and re.fullmatch(r"\d+(-\d+)?", parts[-1]):
        numbers.insert(0, parts.pop())
    if numbers and Path(":".join(parts)).is_file():
        path, line = ":".join(parts), int(numbers[0].split("-")[0])
    file = Path(path).expanduser()
    if not file.is_file():
        raise UsageError(f"{path} is not a file")
    return file.resolve(), max(1, line)


_COMMANDS = {
    "index": _cmd_index,
    "search": _cmd_search,
    "scopes": _cmd_scopes,
    "history": _cmd_history,
    "mcp": _cmd_mcp,
    "open": _cmd_open,
}

if __name__ == "__main__":
    sys.exit(main())
