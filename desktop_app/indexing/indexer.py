"""Indexing one scope: select files, find what changed, chunk, embed what is new, write in batches.

Reading and chunking run on a helper thread one batch ahead of the model; the model runs on
its own thread so the calling (worker) thread can serve searches while it waits (`idle`).
Each batch is written in one transaction, so an interrupted run keeps every finished file and
the next run carries on from there.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..embedding import Embedder, model_source
from ..store.store import ChunkRef, FileState, FileWrite, NewChunk, Scope, SkippedFile, Store
from .chunk import Chunk
from .chunking import chunk_file
from .documents import chunk_of, document_hash, document_header, document_text, keyword_fields, name_text
from .file_selection import Candidate, SelectionOptions, select_files
from .git_worktrees import main_of_linked_worktree, worktrees
from .model_runner import ModelRunner, PendingVectors
from .progress import Progress, ProgressReporter
from .source_reader import UNREADABLE, VANISHED, SkipFile, encodes_as_utf8, read_source

# Room in the model's window for the document header (path, symbol line) and special tokens.
HEADER_TOKEN_RESERVE = 40
# Chunks stay small enough to point at code even when a model accepts thousands of tokens.
MAX_CHUNK_TOKENS = 480
# New chunks per write transaction.
BATCH_CHUNKS = 256

# Skip reason for a file whose name holds bytes the file system encoding cannot decode (Linux allows any):
# such a name can be neither stored nor tokenized as text.
UNDECODABLE_NAME = "undecodable_name"


class IndexingError(Exception):
    """A problem with what the user asked to index; the message says what to do."""


@dataclass(frozen=True)
class IndexOptions:
    selection: SelectionOptions = field(default_factory=SelectionOptions)
    chunk_tokens: int | None = None  # None: fit the model's window
    overlap_tokens: int = 32


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
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> count (pruned folders included)
    chunks_total: int = 0
    chunks_embedded: int = 0
    tokens_embedded: int = 0
    bytes: int = 0
    seconds: float = 0.0
    provider: str = ""
    model: str = ""
    cancelled: bool = False
    parent_scope_id: str | None = None
    parent_root: str | None = None
    worktrees: list[dict] = field(default_factory=list)  # a main scope's linked worktrees: path, indexed

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class _Document:
    text: str  # what the model embeds: header + chunk lines
    lines: str  # the chunk's lines as stored
    tokens: int
    name: str | None  # symbol-name text embedded alongside, if the chunk defines a symbol
    name_tokens: int


@dataclass
class _InFlight:
    """A batch whose new chunks are with the model."""

    batch: list[_Prepared]
    missing: list[tuple[str, _Document]]  # (hash, document) not yet in the store
    tokens: list[int]  # token counts of what was submitted: documents, then name texts
    vectors: PendingVectors


@dataclass
class _Prepared:
    """One candidate after reading and chunking on the prep thread."""

    cand: Candidate
    skip_reason: str | None = None
    unchanged: bool = False  # same content as indexed, only size/mtime moved
    copy: tuple[int, str] | None = None  # (size, sha256) of a worktree file identical to its main scope's copy
    write: FileWrite | None = None
    documents: dict[str, _Document] = field(default_factory=dict)  # by document hash


class Indexer:
    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        options: IndexOptions | None = None,
        idle: Callable[[], None] | None = None,
    ):
        self.store = store
        self.embedder = embedder
        self.options = options or IndexOptions()
        self._idle = idle or (lambda: None)
        self._runner = ModelRunner(embedder, idle)
        self._parent_id: str | None = None
        self._parent_states: dict[str, FileState] = {}

    def close(self) -> None:
        self._runner.close()

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
    ) -> IndexStats:
        started = time.monotonic()
        root = Path(root).expanduser()
        if not root.exists():
            raise IndexingError(f"{root} does not exist; pass the folder you want to index")
        if not root.is_dir():
            raise IndexingError(f"{root} is a file, not a folder; pass the folder that contains it")
        root = root.resolve()
        if not encodes_as_utf8(str(root)):
            raise IndexingError(
                f"the folder name {str(root)!r} is not valid text in this system's encoding; "
                "rename it, or index a folder inside it"
            )
        stop = should_stop or (lambda: False)
        self.store.register_model(self.embedder.model_id, self.embedder.dims, model_source(self.embedder.spec))
        scope = self.store.scope_for_root(root) or self._new_scope(root)
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

        selection = select_files(root, self.options.selection, stop)
        candidates = [c for c in selection.candidates if encodes_as_utf8(c.rel_path)]
        misnamed = len(selection.candidates) - len(candidates)
        states = self.store.file_states(scope.id)
        self._parent_states = self.store.file_states(scope.parent_id) if scope.parent_id else {}
        self._parent_id = scope.parent_id
        todo, unchanged = self._plan(candidates, states)
        stats.files_total = len(selection.candidates) + sum(1 for p, _ in selection.skipped if not p.endswith("/"))
        stats.files_unchanged = unchanged
        if stop():
            return self._finish(stats, reporter, started, cancelled=True)

        present = {c.rel_path for c in candidates}
        # A folder that could not be listed this time may be back next time: keep what it held.
        unlisted = tuple(p for p, reason in selection.skipped if p.endswith("/") and reason in (UNREADABLE, VANISHED))
        deleted = [p for p in states if p not in present and not p.startswith(unlisted)]
        if deleted:
            self.store.write_batch(scope.id, self.embedder.model_id, [], deleted=deleted)
        stats.files_deleted = len(deleted)
        stats.skipped.update(selection.skip_counts())
        if misnamed:
            stats.skipped[UNDECODABLE_NAME] = misnamed
        stats.files_skipped = misnamed + sum(1 for p, _ in selection.skipped if not p.endswith("/"))
        reporter.update(phase="started", files_total=len(todo), bytes_total=sum(c.size for c in todo))

        if todo:
            self.embedder.load()
        stats.provider = self.embedder.provider if todo else ""
        cancelled = self._run_batches(scope.id, todo, states, stats, reporter, stop)
        return self._finish(stats, reporter, started, cancelled=cancelled)

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
            if st is not None and st.size == cand.size and st.mtime_ns == cand.mtime_ns:
                unchanged += 1
            else:
                todo.append(cand)
        return todo, unchanged

    def _finish(self, stats: IndexStats, reporter: ProgressReporter, started: float, cancelled: bool) -> IndexStats:
        if not cancelled:
            self.store.collect_garbage()
            self.store.mark_indexed(stats.scope_id)
        if stats.scope_type == "main":
            info = worktrees(Path(stats.root))
            if info is not None and info.main == Path(stats.root):
                stats.worktrees = [
                    {"path": str(p), "indexed": self.store.scope_for_root(p) is not None} for p in info.linked
                ]
        stats.files_indexed, stats.chunks_total, stats.bytes = self.store.scope_counts(stats.scope_id)
        stats.seconds = round(time.monotonic() - started, 3)
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
    ) -> bool:
        """Returns True when stopped before the end."""
        batches: queue.Queue = queue.Queue(maxsize=2)
        halt = threading.Event()
        prep = threading.Thread(
            target=self._prepare_batches, args=(todo, states, batches, halt), name="quarry-prepare", daemon=True
        )
        prep.start()
        # One batch in flight: the next batch's vectors are computing while this one is written.
        in_flight: _InFlight | None = None
        try:
            while True:
                batch = self._next_batch(batches, reporter)
                if isinstance(batch, BaseException):
                    raise batch
                started = self._start_batch(batch) if batch is not None else None
                if in_flight is not None and (
                    stop() or not self._finish_batch(scope_id, in_flight, stats, reporter, stop)
                ):
                    if started is not None:
                        started.vectors.cancel()
                    return True
                if started is None:
                    return False
                in_flight = started
        finally:
            halt.set()
            while prep.is_alive():
                try:
                    batches.get_nowait()
                except queue.Empty:
                    prep.join(0.05)

    def _next_batch(self, batches: queue.Queue, reporter: ProgressReporter):
        while True:
            try:
                return batches.get(timeout=0.05)
            except queue.Empty:
                self._idle()
                reporter.tick()

    def _prepare_batches(
        self, todo: list[Candidate], states: dict[str, FileState], out: queue.Queue, halt: threading.Event
    ) -> None:
        try:
            for batch in self._batches(todo, states, halt):
                out.put(batch)
                if halt.is_set():
                    return
            out.put(None)
        except BaseException as exc:  # handed to the consuming thread, which re-raises it
            out.put(exc)

    def _batches(
        self, todo: list[Candidate], states: dict[str, FileState], halt: threading.Event
    ) -> Iterator[list[_Prepared]]:
        batch: list[_Prepared] = []
        pending = 0
        for cand in todo:
            if halt.is_set():
                return
            item = self._prepare(cand, states.get(cand.rel_path))
            batch.append(item)
            pending += len(item.documents)
            if pending >= BATCH_CHUNKS or len(batch) >= 256:
                yield batch
                batch, pending = [], 0
        if batch:
            yield batch

    def _prepare(self, cand: Candidate, state: FileState | None) -> _Prepared:
        try:
            source = read_source(cand.abs_path, self.options.selection)
        except SkipFile as skip:
            return _Prepared(cand, skip_reason=skip.reason)
        if state is not None and state.status == "indexed" and state.sha256 == source.sha256:
            return _Prepared(cand, unchanged=True)
        parent = self._parent_states.get(cand.rel_path)
        if parent is not None and parent.status == "indexed" and parent.sha256 == source.sha256:
            return _Prepared(cand, copy=(source.size, source.sha256))
        chunks = chunk_file(
            source.text,
            cand.language,
            cand.rel_path,
            self.embedder.count_tokens,
            max_tokens=self.chunk_tokens,
            overlap_tokens=self.options.overlap_tokens,
        )
        headers = [document_header(ch, cand.rel_path) for ch in chunks]
        names = [name_text(ch, cand.rel_path) for ch in chunks]
        counts = self.embedder.count_tokens(headers + [n or "" for n in names]) if chunks else []
        refs: list[ChunkRef] = []
        documents: dict[str, _Document] = {}
        for ordinal, (ch, header, name) in enumerate(zip(chunks, headers, names, strict=True)):
            doc = document_text(ch, cand.rel_path, header)
            digest = document_hash(doc)
            documents.setdefault(
                digest, _Document(doc, ch.text, ch.token_count + counts[ordinal], name, counts[len(chunks) + ordinal])
            )
            refs.append(_ref(ch, digest, ordinal, cand.rel_path))
        write = FileWrite(cand.rel_path, source.size, cand.mtime_ns, source.sha256, cand.language, refs)
        return _Prepared(cand, write=write, documents=documents)

    def _start_batch(self, batch: list[_Prepared]) -> _InFlight:
        """Find the batch's chunks that are new to the store and queue them (and their symbol-name texts)
        for the model, sorted by length into slices."""
        documents: dict[str, _Document] = {}
        for item in batch:
            documents.update(item.documents)
        known = self.store.known_chunks(documents, self.embedder.model_id)
        missing = [(h, documents[h]) for h in documents if h not in known]
        named = [(d.name, d.name_tokens) for _, d in missing if d.name]
        tokens = [d.tokens for _, d in missing] + [count for _, count in named]
        vectors = self._runner.submit([d.text for _, d in missing] + [name for name, _ in named], tokens)
        return _InFlight(batch, missing, tokens, vectors)

    def _finish_batch(
        self, scope_id: str, flight: _InFlight, stats: IndexStats, reporter: ProgressReporter, stop: Callable[[], bool]
    ) -> bool:
        """Wait for the batch's vectors and write it; False when stopped first (nothing written)."""
        batch, missing, tokens = flight.batch, flight.missing, flight.tokens
        vectors = self._runner.collect(flight.vectors, stop, reporter.tick)
        if vectors is None:
            return False
        name_vectors = iter(vectors[len(missing) :])
        new_chunks = [
            NewChunk(h, d.lines, d.tokens, vec, next(name_vectors) if d.name else None)
            for (h, d), vec in zip(missing, vectors[: len(missing)], strict=True)
        ]
        skipped = [
            SkippedFile(i.cand.rel_path, i.cand.size, i.cand.mtime_ns, i.skip_reason) for i in batch if i.skip_reason
        ]
        touched = [(i.cand.rel_path, i.cand.size, i.cand.mtime_ns) for i in batch if i.unchanged]
        copies = self._copies_from_parent([i for i in batch if i.copy])
        writes = [i.write for i in batch if i.write is not None] + copies
        self.store.write_batch(
            scope_id, self.embedder.model_id, new_chunks, files=writes, skipped=skipped, touched=touched
        )
        for item in batch:
            if item.skip_reason:
                stats.skipped[item.skip_reason] = stats.skipped.get(item.skip_reason, 0) + 1
                stats.files_skipped += 1
        stats.files_changed += len(writes) - len(copies)
        stats.files_copied += len(copies)
        stats.files_unchanged += len(touched)
        stats.chunks_embedded += len(new_chunks)
        stats.tokens_embedded += sum(min(t + 2, self.embedder.max_tokens) for t in tokens)
        p = reporter.current
        reporter.update(
            phase="in_progress",
            files_done=p.files_done + len(batch),
            bytes_done=p.bytes_done + sum(i.cand.size for i in batch),
            chunks_embedded=stats.chunks_embedded,
            tokens_embedded=stats.tokens_embedded,
        )
        return True

    def _copies_from_parent(self, items: list[_Prepared]) -> list[FileWrite]:
        """File writes that reuse the parent scope's chunks for files identical to its copy."""
        if not items:
            return []
        assert self._parent_id is not None  # a copy is made only from a parent scope's file
        rows = self.store.file_chunk_rows(self._parent_id, [i.cand.rel_path for i in items])
        writes = []
        for item in items:
            assert item.copy is not None  # the items are those with a copy
            size, sha256 = item.copy
            refs = [_ref(chunk_of(r), r.chunk_hash, r.ordinal, item.cand.rel_path) for r in rows[item.cand.rel_path]]
            writes.append(FileWrite(item.cand.rel_path, size, item.cand.mtime_ns, sha256, item.cand.language, refs))
        return writes


def _ref(chunk: Chunk, digest: str, ordinal: int, rel_path: str) -> ChunkRef:
    """The chunk's place in the file at `rel_path`, with that place's keyword-index text."""
    return ChunkRef(
        digest,
        ordinal,
        chunk.start_line,
        chunk.end_line,
        chunk.chunk_type,
        chunk.symbol_name,
        chunk.symbol_type,
        chunk.parent_symbol,
        *keyword_fields(chunk, rel_path),
    )
