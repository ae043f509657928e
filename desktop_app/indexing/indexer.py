"""Indexing one scope in three stages, each searchable as soon as it lands.

Stage 1 selects files, finds what changed, chunks it and writes every file's chunks, symbols and
keyword index (no model involved: exact and keyword search cover the tree within seconds).
Stage 2 gives every chunk a vector of the fast static model; stage 3 one of the contextual model,
which searches prefer chunk by chunk as it lands (see vector_fill.py for the order).

Reading and chunking run on a helper thread one batch ahead of the writes; the models run on
their own thread. An index run is a sequence of steps (steps.py): it yields after each batch it
writes and while it waits for those threads, so the worker serves searches meanwhile.
Each batch is written in one transaction, so an interrupted run keeps every finished file and
vector, and the next run carries on from there.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from collections.abc import Callable, Collection, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..embedding.text_embedder import TextEmbedder
from ..store.errors import ScopeRemoved
from ..store.identity import repository_key
from ..store.protocols import Bases, Store
from ..store.rows import FileState, FileWrite, NewChunk, Scope, SkippedFile
from .chunking import CHUNKING_VERSION
from .documents import chunk_of
from .file_prep import Document, FilePrep, Prepared, PrepSettings, chunk_ref
from .file_selection import Candidate, IgnoredTop, Selection, SelectionOptions, select_files, select_paths
from .git_commits import write_commit
from .git_worktrees import main_of_linked_worktree, worktrees
from .indexing_error import IndexingError
from .parse_pool import ParsePool, parse_processes
from .path_text import as_latin1, first_non_utf8_name, is_utf8, shown
from .progress import STAGES, Progress, ProgressReporter
from .source_reader import UNREADABLE, VANISHED
from .step_times import StepTimes
from .steps import Handoff, Steps, Wait, run_to_end
from .team_base import PUBLISH, BaseReport, base_report
from .vector_fill import VectorFiller, WantedChunks, record_model

# Room in the model's window for the document header (path, symbol line) and special tokens.
HEADER_TOKEN_RESERVE = 40
# Chunks stay small enough to point at code even when a model accepts thousands of tokens.
MAX_CHUNK_TOKENS = 480
# New chunks per write transaction, and the first batches' (small, so the first files are searchable
# and the first progress shows within a second even when the first files are large). Each transaction writes
# every page it touched, and a batch's new chunks land on random pages of the chunk-hash and symbol indexes:
# 2048 rather than 256 took a 240 MB part of the Linux kernel's keyword stage from 97-98 to 86 s (~0.2 s a
# write; 1024: 94 s). With the 64 MB page cache (connection.py) 8192 wrote less again: on that part the writer's
# time 47-51 -> 41 s and 7.9 -> 6.2 GB written (WAL and checkpoints) for an 857 MB index; on the whole kernel
# (3.0M chunks, one run each) the keyword stage took 348 s twice with 2048 and 342 s with 8192, 50.1 -> 44.7 GB
# written (the keyword index's merges: schema 7, migrations.py). The writer's batch peaks ~100 MB higher (kernel:
# 398 -> 496 MB).
BATCH_CHUNKS = 8192
FIRST_BATCH_CHUNKS = 16

# How often, at most, a run asks the store whether its folder is still in the index: a removal ends the run
# within about this long, and a team server far away is not asked between every slice of the model's work.
SCOPE_CHECK_S = 1.0

# Chunks moved into the text index per write (index_pending_text): ~1 s of work on a 2-core laptop, so a
# search waits at most that long for it.
TEXT_INDEX_BATCH = 5000
# A watched folder's update looks at the files its changes name, up to this many; more (a checkout of another
# branch), and it walks the whole folder, as it does for a folder or an ignore file among them.
NAMED_PATHS_MAX = 1000

# Skip reason for a file whose name holds bytes the file system encoding cannot decode (Linux allows any):
# such a name can be neither stored nor tokenized as text.
UNDECODABLE_NAME = "undecodable_name"


@dataclass(frozen=True)
class IndexOptions:
    selection: SelectionOptions = field(default_factory=SelectionOptions)
    chunk_tokens: int | None = None  # None: fit the model's window
    overlap_tokens: int = 32
    until: str = "full"  # the last stage to build (see progress.STAGES); a later run goes on from there
    # A team index: a watched folder's updates also bring the repository's base to its default branch's tip (an
    # index run always does); otherwise they change only the checkout's own overlay.
    publish_updates: bool = False


@dataclass
class IndexStats:
    root: str
    scope_id: str
    scope_type: str
    files_total: int = 0  # files seen: indexable candidates plus skipped files
    files_indexed: int = 0  # files in the scope's index after this run
    files_changed: int = 0  # files read and chunked again in this run
    files_unchanged: int = 0
    files_deleted: int = 0
    files_copied: int = 0  # worktree files identical to the main scope's, mapped without chunking or embedding
    files_skipped: int = 0
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> files; the counts add up to files_skipped
    folders_skipped: dict[str, int] = field(default_factory=dict)  # reason -> folders passed over whole
    skipped_paths: list[tuple[str, str]] = field(default_factory=list)  # (path, reason); folders end in "/"
    # Set when ignore rules left (nearly) nothing of the folder to index: the rule, for each front end to say.
    ignored_top: IgnoredTop | None = None
    chunks_total: int = 0
    chunks_fast: int = 0  # chunks given a fast-model vector (stage 2)
    names_embedded: int = 0  # symbol names given a vector of the configured model (stage 3's first step)
    chunks_embedded: int = 0  # chunks given a vector of the configured model (stage 3)
    tokens_embedded: int = 0
    stages: dict[str, float] = field(default_factory=dict)  # seconds from the start until each stage was done
    step_seconds: dict[str, float] = field(default_factory=dict)  # seconds each step kept its thread busy (step_times)
    bytes: int = 0
    seconds: float = 0.0
    provider: str = ""
    model: str = ""
    cancelled: bool = False
    parent_scope_id: str | None = None
    parent_root: str | None = None
    worktrees: list[dict] = field(default_factory=list)  # a main scope's linked worktrees: path, indexed
    base: BaseReport | None = None  # a team index's checkout: what became of its repository's base

    def to_dict(self) -> dict:
        return {
            **self.__dict__,
            "ignored_top": asdict(self.ignored_top) if self.ignored_top else None,
            "base": self.base.to_dict() if self.base else None,
        }


class Indexer:
    def __init__(
        self,
        store: Store,
        embedder: TextEmbedder,
        options: IndexOptions | None = None,
        fast: TextEmbedder | None = None,
        wanted: WantedChunks | None = None,
    ):
        """`embedder` is the configured model (stage 3); `fast` the static model of stage 2, None to skip
        that stage (when the configured model is the fast one itself). `wanted` takes the chunks a search
        asked for, to embed them first."""
        self.store = store
        self.embedder = embedder
        self.fast = fast if fast is not None and fast.model_id != embedder.model_id else None
        self.options = options or IndexOptions()
        self.wanted = wanted or WantedChunks()
        self._parent_id: str | None = None
        self._parent_states: dict[str, FileState] = {}
        self._recut = False  # the scope's files were cut by another chunker version: cut them all again
        self._times = StepTimes()
        # Stage 1's parse processes, kept for stage 2: they embed its texts with the fast model too, started
        # already (a pool of its own took ~0.4 s to start, the time the fast stage of a tree of a few megabytes
        # takes on one core).
        self._parse_pool: ParsePool | None = None

    @property
    def chunk_tokens(self) -> int:
        if self.options.chunk_tokens:
            return self.options.chunk_tokens
        return min(MAX_CHUNK_TOKENS, self.embedder.max_tokens - HEADER_TOKEN_RESERVE)

    def index(
        self,
        root: Path | str,
        progress: Callable[[Progress], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
        add: bool = True,
    ) -> IndexStats:
        """Index the folder at `root` here and now (see index_steps)."""
        return run_to_end(self.index_steps(root, progress, should_stop, add))

    def index_steps(
        self,
        root: Path | str,
        progress: Callable[[Progress], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
        add: bool = True,
        changed: Collection[str] = (),
    ) -> Steps[IndexStats]:
        """Index the folder at `root`, adding it to the index unless `add` is False (a watched folder's update:
        a folder removed from the index since is not added back). Raises ScopeRemoved when the folder is not in
        the index by the end of the run (another window or command removed it): the removal wins.

        `changed`: the absolute paths under `root` that a watcher saw change; the run then looks at those files
        alone where it can tell what a walk would (select_paths), and walks the whole folder otherwise. On the
        Linux kernel the walk is 3-4 s of a 10-file change's 7-9 s."""
        started = time.monotonic()
        self._times = StepTimes()
        root = Path(root).expanduser()
        if not root.exists():
            raise IndexingError(f"{root} does not exist")
        if not root.is_dir():
            raise IndexingError(f"{root} is a file, not a folder: index the folder that contains it")
        root = root.resolve()
        bad = first_non_utf8_name(str(root))
        if bad is not None:
            # Every path under it holds the same name, so no folder inside it can be indexed either.
            raise IndexingError(
                f"{shown(str(root))} cannot be indexed: the name '{shown(bad)}' is not UTF-8 (its bytes are in "
                f"another encoding; in Latin-1 it reads '{as_latin1(bad)}') and the index keeps paths as UTF-8 "
                "text; rename that folder"
            )
        for model in filter(None, (self.embedder, self.fast)):  # the configured one first: it becomes active
            record_model(self.store, model)
        # On a team index, a checkout of a repository: its base, and the repository's key.
        team: tuple[Bases, str, Scope] | None = None
        bases = self.store.bases
        if bases is not None and (repository := repository_key(root)) is not None:
            team = (bases, repository, bases.base_scope(repository) or bases.create_base(repository))
        scope = self.store.scope_for_root(root)
        if scope is None:
            if not add:
                raise _removed(root)
            scope = self.store.create_scope(root, "overlay", team[2].id) if team else self._new_scope(root)
        removed = _RemovalCheck(self.store, scope.id)

        def stop() -> bool:
            # A removal of the folder stops the run at its next check, as a cancel would; _finish then says why.
            return (should_stop is not None and should_stop()) or removed()

        parent = self.store.scope_by_id(scope.parent_id) if scope.parent_id else None
        stats = IndexStats(
            str(root),
            scope.id,
            scope.type,
            model=self.embedder.model_id,
            parent_scope_id=scope.parent_id,
            parent_root=parent.root if parent else None,
        )
        reporter = ProgressReporter(progress, str(root))
        reporter.update(phase="analyzing")
        if team is not None and (add or self.options.publish_updates):
            stats.base = yield from self._publish(*team, root, reporter, stop)
            if stats.base.cancelled:
                return self._finish(stats, reporter, started, cancelled=True)
        named = None if team is not None else _named_paths(root, changed)
        try:
            cancelled = yield from self._stage_one(scope, root, stats, reporter, stop, named)
            if not cancelled:
                self._after_stage(stats, reporter, started)
                cancelled = not (yield from self._fill_vectors(stats, reporter, started, stop))
        finally:
            self._close_parse_pool()
        return self._finish(stats, reporter, started, cancelled=cancelled)

    def _publish(
        self,
        bases: Bases,
        repository: str,
        base: Scope,
        root: Path,
        reporter: ProgressReporter,
        stop: Callable[[], bool],
    ) -> Steps[BaseReport]:
        """Bring the team index's base of the checkout at `root` to its default branch's tip when that is ahead
        of the commit the base holds (team_base.py says when); stage 1 over the commit's files, whose vectors
        come with the overlay's."""
        report = base_report(root, repository, base)
        if report.action != PUBLISH:
            return report
        assert report.tip is not None  # a base is brought to a tip only
        reporter.update(publishing=report.tip.commit)
        with tempfile.TemporaryDirectory(prefix="quarry-base-") as folder:
            files = write_commit(root, report.tip.commit, Path(folder))
            published = IndexStats(str(files), base.id, base.type)
            report.cancelled = yield from self._stage_one(base, files, published, reporter, stop)
        reporter.update(publishing=None)
        report.files_changed, report.files_deleted = published.files_changed, published.files_deleted
        if not report.cancelled:
            bases.publish(base.id, report.tip.commit, report.tip.branch)
            self.store.mark_indexed(base.id)
        return report

    def _stage_one(
        self,
        scope: Scope,
        root: Path,
        stats: IndexStats,
        reporter: ProgressReporter,
        stop: Callable[[], bool],
        named: list[str] | None = None,
    ) -> Steps[bool]:
        """Stage 1 of the folder at `root` into `scope`: every file's chunks, symbols and keyword index (of the
        `named` files alone, paths relative to `root`, where that can be told without a walk); True when stopped
        before the end."""
        states = self.store.file_states(scope.id)
        self._parent_states = self.store.file_states(scope.parent_id) if scope.parent_id else {}
        self._parent_id = scope.parent_id
        # Cut every file again if this scope's files were cut by another version of the chunker; a scope with no
        # files yet is cut by this one, whether or not this index finishes.
        self._recut = bool(states) and self.store.chunking_of(scope.id) != CHUNKING_VERSION
        if not states:
            self.store.record_chunking(scope.id, CHUNKING_VERSION)
        selection = None if named is None or self._recut else self._select_named(root, named, states)
        if selection is None:
            named = None
            with self._times.step("walk"):
                selection = select_files(
                    root, self.options.selection, stop, lambda found: reporter.update(files_found=found)
                )
        candidates = [c for c in selection.candidates if is_utf8(c.rel_path)]
        misnamed = len(selection.candidates) - len(candidates)
        todo, unchanged = self._plan(candidates, states)
        stats.files_total = len(selection.candidates) + sum(1 for p, _ in selection.skipped if not p.endswith("/"))
        stats.files_unchanged = unchanged
        if stop():
            return True

        present = {c.rel_path for c in candidates}
        # A folder that could not be listed this time may be back next time: keep what it held.
        unlisted = tuple(p for p, reason in selection.skipped if p.endswith("/") and reason in (UNREADABLE, VANISHED))
        looked_at = states if named is None else [p for p in named if p in states]
        deleted = [p for p in looked_at if p not in present and not p.startswith(unlisted)]
        if deleted:
            self.store.write_batch(scope.id, self.embedder.model_id, [], deleted=deleted)
        stats.files_deleted = len(deleted)
        for path, reason in selection.skipped:
            counts = stats.folders_skipped if path.endswith("/") else stats.skipped
            counts[reason] = counts.get(reason, 0) + 1
        stats.skipped_paths = list(selection.skipped)
        stats.ignored_top = selection.ignored_top()
        if misnamed:
            stats.skipped[UNDECODABLE_NAME] = misnamed
            # The name cannot be written as text: shown with the undecodable bytes escaped.
            stats.skipped_paths += [
                (shown(c.rel_path), UNDECODABLE_NAME) for c in selection.candidates if not is_utf8(c.rel_path)
            ]
        stats.files_skipped = sum(stats.skipped.values())
        reporter.update(phase="started", files_total=len(todo), bytes_total=sum(c.size for c in todo))
        return (yield from self._run_batches(scope.id, todo, states, stats, reporter, stop))

    def _select_named(self, root: Path, named: list[str], states: dict[str, FileState]) -> Selection | None:
        """select_paths of the named files; None when a walk of the whole folder is needed (see select_paths),
        and when a named path that is gone held files of the index (a folder deleted or moved away)."""
        # A folder holding indexed files that is named too changed its entries, which are named on their own (a
        # watcher names a file's folder with it); any other folder may be new, and is walked.
        holding = {p.rsplit("/", 1)[0] for p in states if "/" in p}
        named = [p for p in named if not (p in holding and os.path.isdir(root / p) and not os.path.islink(root / p))]
        selection = select_paths(root, named, self.options.selection)
        if selection is None:
            return None
        judged = {c.rel_path for c in selection.candidates} | {p for p, _ in selection.skipped}
        gone = [p + "/" for p in named if p not in judged and p not in states]
        if gone and any(p.startswith(tuple(gone)) for p in states):
            return None
        return selection

    def _after_stage(self, stats: IndexStats, reporter: ProgressReporter, started: float) -> None:
        """Stage 1 is done: the scope's files are all in (collect chunks no file uses any more)."""
        self.store.collect_garbage()
        stats.stages[reporter.current.stage] = round(time.monotonic() - started, 3)

    def _fill_vectors(
        self, stats: IndexStats, reporter: ProgressReporter, started: float, stop: Callable[[], bool]
    ) -> Steps[bool]:
        """Stages 2 and 3 over every chunk in the store lacking their vectors; False when stopped."""
        last = STAGES.index(self.options.until)
        # Stage 2 is the fast model's vectors alone. Stage 3 starts with the configured model's vectors of the
        # symbol names (short texts: 14,400 names of the standard library take ~35 s where its 20,000 chunks take
        # 11 minutes), then the chunks. The names used to end stage 2, and they were 80-90 % of its time (gson 42
        # of 48 s; the Linux kernel's 1.7M names ~53 minutes) for little at that point, since the trained static
        # model came: hybrid at the end of stage 2 with them / without, semble-dev NDCG@10 over 17 repositories
        # 0.845 / 0.843, stdlib dev nl MRR@10 0.489 / 0.475, stdlib held-out 0.464 / 0.449 (identifier R@1 1.0
        # either way). Searches get that back a few minutes later, when stage 3's names are in.
        names = self.embedder if self.fast is not None else None
        steps = (("fast", self.fast, False), ("full", names, True), ("full", self.embedder, False))
        text_indexed = False  # filled after the first vectors, or after stage 1 when no vector stage runs
        for i, (stage, model, names_only) in enumerate(steps):
            if model is None or STAGES.index(stage) > last:
                continue
            label = "names" if names_only else stage
            if model is not self.fast:
                self._close_parse_pool()  # ~150-190 MB a process, idle through stage 3's minutes or hours
            filler = VectorFiller(self.store, model, self.wanted, names_only, self._times, label, self._parse_pool)
            try:
                result = yield from filler.fill(reporter, stop, stage)
            finally:
                filler.close()
            if names_only:
                stats.names_embedded = result.embedded
            elif stage == "fast":
                stats.chunks_fast = result.embedded
            else:
                stats.chunks_embedded, stats.tokens_embedded = result.embedded, result.tokens
                stats.provider = model.provider if result.embedded else ""
            if not result.finished:
                return False
            if i + 1 == len(steps) or steps[i + 1][0] != stage:  # the stage's last step
                stats.stages[stage] = round(time.monotonic() - started, 3)
            if not text_indexed:
                text_indexed = True
                if not (yield from self._fill_text_index(reporter, stop)):
                    return False
        return text_indexed or (yield from self._fill_text_index(reporter, stop))

    def _fill_text_index(self, reporter: ProgressReporter, stop: Callable[[], bool]) -> Steps[bool]:
        """Move the chunks written since into the text index (literal and regex search), a batch a step; False
        when stopped first (the rest waits for the next run, and text search finds them meanwhile)."""
        total = self.store.text_pending()
        if not total:
            return True
        reporter.update(phase="in_progress", step="text", chunks_total=total, chunks_embedded=0)
        done = 0
        while not stop():
            with self._times.step("text_index"):
                moved = self.store.index_pending_text(TEXT_INDEX_BATCH)
            if not moved:
                return True
            done += moved
            reporter.update(chunks_embedded=min(done, total))
            yield None
        return False

    def _new_scope(self, root: Path) -> Scope:
        """A worktree scope under its main scope when `root` is a linked git worktree of an indexed
        repository; otherwise a main scope."""
        main = main_of_linked_worktree(root)
        parent = self.store.scope_for_root(main) if main else None
        if parent is not None and parent.type == "main":
            return self.store.create_scope(root, "worktree", parent.id)
        return self.store.create_scope(root, "main")

    def _plan(self, candidates: list[Candidate], states: dict[str, FileState]) -> tuple[list[Candidate], int]:
        """Split candidates into those to read again and the count unchanged by size and mtime."""
        todo: list[Candidate] = []
        unchanged = 0
        for cand in candidates:
            st = states.get(cand.rel_path)
            if st is not None and st.size == cand.size and st.mtime_ns == cand.mtime_ns and not self._recut:
                unchanged += 1
            else:
                todo.append(cand)
        return todo, unchanged

    def _finish(self, stats: IndexStats, reporter: ProgressReporter, started: float, cancelled: bool) -> IndexStats:
        if self.store.scope_by_id(stats.scope_id) is None:
            # Removed while it was indexed, in whichever stage: its chunks went with it (a vector the model was
            # making for them meanwhile is not written), and reporting "0 files" would hide that.
            raise _removed(Path(stats.root))
        if not cancelled:
            self.store.mark_indexed(stats.scope_id)
            if self._recut:
                self.store.record_chunking(stats.scope_id, CHUNKING_VERSION)
        self._recut = False
        if stats.scope_type == "main":
            info = worktrees(Path(stats.root))
            if info is not None and info.main == Path(stats.root):
                stats.worktrees = [
                    {"path": str(p), "indexed": self.store.scope_for_root(p) is not None} for p in info.linked
                ]
        stats.files_indexed, stats.chunks_total, stats.bytes = self.store.scope_counts(stats.scope_id)
        stats.seconds = round(time.monotonic() - started, 3)
        stats.step_seconds = self._times.as_dict()
        stats.cancelled = cancelled
        reporter.update(phase="cancelled" if cancelled else "completed")
        return stats

    # --- the pipeline ---------------------------------------------------------------------------

    def _run_batches(
        self,
        scope_id: str,
        todo: list[Candidate],
        states: dict[str, FileState],
        stats: IndexStats,
        reporter: ProgressReporter,
        stop: Callable[[], bool],
    ) -> Steps[bool]:
        """Stage 1: write every prepared batch; True when stopped before the end."""
        processes = parse_processes(sum(c.size for c in todo))  # a wrong QUARRY_PARSE_PROCESSES raises here
        settings = PrepSettings(
            self.options.selection, self.chunk_tokens, self.options.overlap_tokens, self._recut, self._parent_states
        )
        self._close_parse_pool()  # a team index's base's, whose settings were not this scope's
        if processes:
            self._parse_pool = ParsePool(processes, settings, self.embedder.counting_tokenizer())
        handoff: Handoff[list[Prepared] | None] = Handoff(ahead=2)
        prep = threading.Thread(
            target=self._prepare_batches,
            args=(todo, states, settings, self._parse_pool, handoff),
            name="quarry-prepare",
            daemon=True,
        )
        prep.start()
        try:
            while True:
                next_batch = handoff.take()
                if not next_batch.done():
                    yield Wait(next_batch, reporter.tick)
                if stop():
                    return True
                batch = next_batch.result()  # raises what preparing it raised
                if batch is None:
                    return False
                self._write(scope_id, batch, stats, reporter)
                yield None  # a search typed meanwhile sees this batch at once
        finally:
            handoff.close()
            prep.join()  # it stops after the file it is reading

    def _prepare_batches(
        self,
        todo: list[Candidate],
        states: dict[str, FileState],
        settings: PrepSettings,
        pool: ParsePool | None,
        handoff: Handoff[list[Prepared] | None],
    ) -> None:
        """The prep thread: every file of `todo` prepared (in the parse processes of `pool`, and here until they
        have started, or here alone without one) and handed over in batches."""
        try:
            items = ((c, states.get(c.rel_path)) for c in todo)
            prep = FilePrep(settings, self.embedder.count_tokens, self._times)
            if pool is not None:
                prepared = pool.prepare_all(items, self._times, handoff.closed, here=prep)
            else:
                prepared = (prep.prepare(cand, state) for cand, state in items)
            for batch in self._batches(prepared, handoff.closed):
                if not handoff.put(batch):
                    return
            handoff.put(None)
        except BaseException as exc:  # handed to the consuming thread, which re-raises it
            handoff.fail(exc)

    def _close_parse_pool(self) -> None:
        if self._parse_pool is not None:
            self._parse_pool.close()
            self._parse_pool = None

    def _batches(self, prepared: Iterator[Prepared], halt: threading.Event) -> Iterator[list[Prepared]]:
        batch: list[Prepared] = []
        pending = 0
        size = FIRST_BATCH_CHUNKS
        for item in prepared:
            if halt.is_set():
                return
            batch.append(item)
            pending += len(item.documents)
            if pending >= size or len(batch) >= 256:
                yield batch
                batch, pending = [], 0
                size = min(BATCH_CHUNKS, size * 2)
        if batch:
            yield batch

    def _write(self, scope_id: str, batch: list[Prepared], stats: IndexStats, reporter: ProgressReporter) -> None:
        """Write one batch's files with their chunks (those not stored yet), in one transaction."""
        documents: dict[str, Document] = {}
        for item in batch:
            documents.update(item.documents)
        skipped = [
            SkippedFile(i.cand.rel_path, i.cand.size, i.cand.mtime_ns, i.skip_reason) for i in batch if i.skip_reason
        ]
        touched = [(i.cand.rel_path, i.cand.size, i.cand.mtime_ns) for i in batch if i.unchanged]
        with self._times.step("write"):
            known = self.store.known_chunks(documents)
            new_chunks = [NewChunk(h, d.lines, d.tokens) for h, d in documents.items() if h not in known]
            copies = self._copies_from_parent([i for i in batch if i.copy])
            writes = [i.write for i in batch if i.write is not None] + copies
            self.store.write_batch(
                scope_id, self.embedder.model_id, new_chunks, files=writes, skipped=skipped, touched=touched
            )
        for item in batch:
            if item.skip_reason:
                stats.skipped[item.skip_reason] = stats.skipped.get(item.skip_reason, 0) + 1
                stats.skipped_paths.append((item.cand.rel_path, item.skip_reason))
                stats.files_skipped += 1
        stats.files_changed += len(writes) - len(copies)
        stats.files_copied += len(copies)
        stats.files_unchanged += len(touched)
        p = reporter.current
        reporter.update(
            phase="in_progress",
            files_done=p.files_done + len(batch),
            bytes_done=p.bytes_done + sum(i.cand.size for i in batch),
        )

    def _copies_from_parent(self, items: list[Prepared]) -> list[FileWrite]:
        """File writes that reuse the parent scope's chunks for files identical to its copy: on a team index
        copied in the server, otherwise given place by place (the local index's keyword index keeps no text to
        copy from)."""
        if not items:
            return []
        assert self._parent_id is not None  # a copy is made only from a parent scope's file
        if self.store.bases is not None:
            return [
                FileWrite(i.cand.rel_path, i.copy[0], i.cand.mtime_ns, i.copy[1], i.cand.language, [], self._parent_id)
                for i in items
                if i.copy is not None
            ]
        rows = self.store.file_chunk_rows(self._parent_id, [i.cand.rel_path for i in items])
        writes = []
        for item in items:
            assert item.copy is not None  # the items are those with a copy
            size, sha256 = item.copy
            path = item.cand.rel_path
            refs = [chunk_ref(chunk_of(r), r.chunk_hash, r.ordinal, path) for r in rows[path]]
            writes.append(FileWrite(item.cand.rel_path, size, item.cand.mtime_ns, sha256, item.cand.language, refs))
        return writes


def _named_paths(root: Path, changed: Collection[str]) -> list[str] | None:
    """The changed paths relative to `root`, in POSIX form; None when the whole folder is to be walked: none named,
    too many, or the folder itself among them (a watcher's sign that changes may have been lost)."""
    if not changed or len(changed) > NAMED_PATHS_MAX:
        return None
    named = []
    for path in changed:
        rel = os.path.relpath(path, root)
        if rel == "." or rel == ".." or rel.startswith(".." + os.sep):
            return None
        named.append(rel.replace(os.sep, "/"))
    return sorted(set(named))


def _removed(root: Path) -> ScopeRemoved:
    return ScopeRemoved(
        f"the folder {root} was removed from the index meanwhile (by another window or command); index it again "
        "to add it back"
    )


class _RemovalCheck:
    """Whether the scope being indexed was removed from the index (by another window or command), asked of the
    store at most every SCOPE_CHECK_S: a run asks whether to stop between every slice of the model's work."""

    def __init__(self, store: Store, scope_id: str, clock: Callable[[], float] = time.monotonic):
        self._store = store
        self._scope_id = scope_id
        self._clock = clock
        self._next = clock() + SCOPE_CHECK_S
        self._removed = False

    def __call__(self) -> bool:
        if not self._removed and self._clock() >= self._next:
            self._removed = self._store.scope_by_id(self._scope_id) is None
            self._next = self._clock() + SCOPE_CHECK_S
        return self._removed
