"""Filling in one model's vectors for every chunk that lacks them: stages 2 and 3 of an index run,
and a re-embed with a newly chosen model (a contextual model's fill ends with the files' outline vectors:
outline_fill.py). With `names_only`, only the vectors of the chunks' symbol names
(short texts, so a fraction of the cost): the first thing stage 2 asks of the contextual model.

Chunks go to the model in priority order: those a search or the preview asked for (`wanted`, fed
by the searches the worker runs between steps), then those of the most recently modified files, then the rest.
Each batch's vectors are written in one transaction as soon as they are ready, so an interrupted
fill keeps every finished batch and a huge file's chunks are searchable by meaning piece by piece.
One batch is with the model while the previous one is written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..embedding.model_spec import DEFAULT_SOURCE
from ..embedding.text_embedder import TextEmbedder
from ..store.protocols import Store, VectorRow
from ..store.rows import ChunkId, StoredChunk
from .documents import chunk_of, document_text, name_text
from .fast_model_pool import ModelProcesses, fast_model_processes
from .model_runner import ModelRunner, PendingVectors
from .outline_fill import fill_outlines
from .progress import ProgressReporter
from .step_times import StepTimes
from .steps import Steps, pause

# Chunks per batch (one write transaction each). Big enough that sorting a batch by length keeps padding
# low: stage 3's throughput against the raw model's on 845 stdlib chunks was 0.82 at 128 and 0.97 at 512
# (bench_first_index.py); small enough that a huge file's chunks become searchable piece by piece.
BATCH = 512
# On a team index a batch is also a claim: no more than this share of what is left, so that an indexer joining a
# few seconds later still finds work (two indexers started apart on 1,109 chunks split them 1,024 / 85 when the
# first claimed two full batches at once), and no fewer than CLAIM_FLOOR (throughput 0.82 of 512's at 128).
CLAIM_SHARE = 8
CLAIM_FLOOR = 128
IDLE_PASSES = 3  # passes in a row that claim nothing, with no claims held elsewhere, before a fill gives up
# How often an indexer that has run out of unclaimed chunks looks again while others hold the rest.
OTHERS_POLL_S = 1.0


class WantedChunks:
    """Chunk ids to embed before the rest, most recent request first; fed from the worker thread."""

    def __init__(self) -> None:
        self._ids: dict[ChunkId, None] = {}

    def add(self, chunk_ids: Sequence[ChunkId]) -> None:
        for cid in chunk_ids:
            self._ids.pop(cid, None)
            self._ids[cid] = None

    def take(self, pending: set[ChunkId], limit: int) -> list[ChunkId]:
        """Up to `limit` of the wanted ids still in `pending`, newest requests first."""
        out: list[ChunkId] = []
        for cid in reversed(list(self._ids)):
            del self._ids[cid]
            if cid in pending:
                out.append(cid)
                if len(out) == limit:
                    break
        return out


@dataclass
class FillResult:
    embedded: int = 0  # chunks given a vector
    tokens: int = 0  # tokens the model ran over
    finished: bool = False  # every chunk has a vector now


@dataclass
class _Batch:
    chunks: list[StoredChunk]
    with_code: bool  # the vectors start with one per chunk's document
    named: list[bool]  # which chunks have a name vector in the vectors (after the documents')
    tokens: int
    vectors: PendingVectors


def record_model(store: Store, model: TextEmbedder) -> None:
    """Record `model` in the store (its vector tables) if it is not yet, once it has loaded and shown the size of
    its vectors: recorded first, a wrong quarry-model.json left its tables behind and its size stuck. The sizes
    of the static model and of the bundled one (its file checked by its sha256 when it loads) are known: they are
    recorded without loading them. Loading the bundled model here was 0.4 s of silence before a first index's
    first progress line, for a model an index run up to its fast stage never uses."""
    if not model.static and model.source != DEFAULT_SOURCE and store.model_source(model.model_id) is None:
        model.load()
    store.register_model(model.model_id, model.dims, model.source)


class VectorFiller:
    """Gives every chunk in the store a vector of `embedder`'s model."""

    def __init__(
        self,
        store: Store,
        embedder: TextEmbedder,
        wanted: WantedChunks | None = None,
        names_only: bool = False,
        times: StepTimes | None = None,
        step: str = "vectors",
        warm: ModelProcesses | None = None,
    ):
        """`times` gets this fill's model seconds as `<step>_embed` and its writes as `<step>_write`; `warm`, the
        fast model's processes an index run started already (its parse processes), embed whatever the fill's
        size."""
        self.store = store
        self.embedder = embedder
        self.wanted = wanted or WantedChunks()
        self.names_only = names_only
        self._times = times or StepTimes()
        self._step = step
        self._runner = ModelRunner(embedder, self._times, f"{step}_embed")
        self._named: set[ChunkId] = set()  # chunks whose name vector exists already (not embedded again)
        self._warm = warm

    def close(self) -> None:
        self._runner.close()

    def fill(self, reporter: ProgressReporter, stop: Callable[[], bool], stage: str = "full") -> Steps[FillResult]:
        """Fill in the vectors, reporting them as `stage` (one report once the count to do is known), then
        (for a contextual model's chunk vectors) the files' outline vectors.

        On a shared store other indexers may be filling in the same model: each batch is claimed first
        (Store.claim_chunks), so a chunk another indexer is embedding is left to it, and at the end this one
        waits for the chunks others still hold, taking over those whose claims run out (a killed indexer's)."""
        result = yield from self._fill_chunks(reporter, stop, stage)
        if reporter.current.awaiting is not None:
            reporter.update(awaiting=None)  # the wait is over, however the fill ended
        if result.finished and not self.names_only and not self.embedder.static:
            reporter.update(step="outlines")  # its own rate and ETA, from its own start
            result.finished = yield from fill_outlines(
                self.store,
                self.embedder,
                self._runner,
                stop,
                reporter.tick,
                lambda done, total: reporter.update(outlines_done=done, outlines_total=total),
            )
        return result

    def _fill_chunks(self, reporter: ProgressReporter, stop: Callable[[], bool], stage: str) -> Steps[FillResult]:
        record_model(self.store, self.embedder)
        model = self.embedder.model_id
        order = self.store.chunks_without_vectors(model, names=self.names_only)
        if self.embedder.static:
            self._runner.spread(fast_model_processes(len(order)), self._warm)
        if not self.names_only:
            self._named = set(self.store.vector_ids(model, names=True).tolist())
        reporter.update(
            # A run whose files were all written before (a resumed or a model's first run) has no stage 1 to say
            # it is under way: its progress read "started, fast vectors: 1060000/..." for minutes.
            phase="in_progress" if order else reporter.current.phase,
            stage=stage,
            step="names" if self.names_only else "chunks",
            chunks_total=len(order),
            chunks_embedded=0,
            tokens_embedded=0,
        )
        result = FillResult()
        if not order:
            result.finished = True
            return result
        idle_passes = 0
        while True:
            before = result.embedded
            if not (yield from self._fill_pass(order, result, reporter, stop)):
                return result
            order = self.store.chunks_without_vectors(model, names=self.names_only)
            if not order:
                result.finished = True
                return result
            others = self.store.claimed_elsewhere(model, self.names_only)
            if others is not None:
                idle_passes = 0
                reporter.update(awaiting=others)  # a silent wait of minutes looked like a hang
                yield pause(OTHERS_POLL_S)  # others hold what is left: wait for it, or for their leases to run out
                if stop():
                    return result
            elif result.embedded == before:
                # Nothing could be claimed, yet nobody holds a claim now: a killed indexer's leases ran out between
                # this pass's claims and that count (a loaded CI machine made the run end "cancelled" there). Try
                # again; only passes that keep finding nothing leave the rest to the next run.
                idle_passes += 1
                if idle_passes >= IDLE_PASSES:
                    return result
            else:
                idle_passes = 0

    def _fill_pass(
        self, order: list[ChunkId], result: FillResult, reporter: ProgressReporter, stop: Callable[[], bool]
    ) -> Steps[bool]:
        """Embed the chunks of `order` this indexer can claim, wanted ones first; False when stopped."""
        pending = set(order)
        position = 0
        in_flight: _Batch | None = None
        shared = self.store.bases is not None  # a team index, where other indexers may join
        while True:
            ids: list[ChunkId] = []
            while not ids and pending:
                size = min(BATCH, max(CLAIM_FLOOR, len(pending) // CLAIM_SHARE)) if shared else BATCH
                batch = self.wanted.take(pending, size)
                pending.difference_update(batch)  # before the scan below, which must not take them again
                while len(batch) < size and position < len(order):
                    if order[position] in pending:
                        batch.append(order[position])
                        pending.discard(order[position])
                    position += 1
                ids = self.store.claim_chunks(self.embedder.model_id, self.names_only, batch)
            if ids and reporter.current.awaiting is not None:
                reporter.update(awaiting=None)  # claims ran out or were let go: this one embeds them now
            started = self._start(ids) if ids else None
            if in_flight is not None and (stop() or not (yield from self._finish(in_flight, result, reporter, stop))):
                if started is not None:
                    started.vectors.cancel()
                return False
            if started is None:
                return not stop()
            in_flight = started

    def _start(self, ids: list[ChunkId]) -> _Batch:
        # A chunk may have been collected (its file deleted) since the order was read: skip it.
        chunks = self.store.stored_chunks(ids)
        documents = [chunk_of(c) for c in chunks]
        docs = [] if self.names_only else [document_text(ch, c.path) for ch, c in zip(documents, chunks, strict=True)]
        names = [
            None if c.chunk_id in self._named else name_text(ch, c.path)
            for ch, c in zip(documents, chunks, strict=True)
        ]
        texts = docs + [n for n in names if n]
        # A static model needs no length-sorted slices: a size estimate does (counting tokens took a quarter
        # of stage 2's time on the standard library).
        tokens = [len(t) // 4 for t in texts] if self.embedder.static else self.embedder.count_tokens(texts)
        vectors = self._runner.submit(texts, tokens)
        limit = self.embedder.max_tokens
        named = [n is not None for n in names]
        return _Batch(chunks, not self.names_only, named, sum(min(t + 2, limit) for t in tokens), vectors)

    def _finish(
        self, batch: _Batch, result: FillResult, reporter: ProgressReporter, stop: Callable[[], bool]
    ) -> Steps[bool]:
        count = len(batch.chunks)

        def done(texts: int) -> None:  # a chunk's share of the texts done so far; written at the batch's end
            reporter.update(chunks_embedded=result.embedded + count * texts // max(1, batch.vectors.count))

        vectors = yield from self._runner.collect(batch.vectors, stop, reporter.tick, done)
        if vectors is None:
            reporter.update(chunks_embedded=result.embedded)  # what was written, not what was under way
            return False
        code = iter(vectors[:count]) if batch.with_code else None
        name_vectors = iter(vectors[count if batch.with_code else 0 :])
        rows: list[VectorRow] = [
            (c.chunk_id, next(code) if code else None, next(name_vectors) if batch.named[i] else None)
            for i, c in enumerate(batch.chunks)
        ]
        # Until its first batch is written this model has no vector, and another process's index run drops such a
        # model as an abandoned switch (Store.drop_models_without_vectors): record it again if it went.
        with self._times.step(f"{self._step}_write"):
            record_model(self.store, self.embedder)
            self.store.add_vectors(self.embedder.model_id, rows)
        result.embedded += count
        result.tokens += batch.tokens
        reporter.update(chunks_embedded=result.embedded, tokens_embedded=result.tokens)
        yield None  # a batch is written: a search waiting meanwhile runs now and finds its vectors
        return True
