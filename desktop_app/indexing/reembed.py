"""Re-embedding a store with a newly configured model, in the background.

The new model's vectors go into its own tables while searches keep using the old model's; when
every chunk has a new vector the new model becomes active and the old vectors are dropped, in one
transaction, so one ranking never mixes vectors of two models.
"""

from __future__ import annotations

from collections.abc import Callable

from ..embedding import Embedder, model_source
from ..store.store import Store
from .documents import chunk_of, document_text, name_text
from .model_runner import ModelRunner
from .progress import Progress, ProgressReporter

BATCH = 256


def reembed(
    store: Store,
    embedder: Embedder,
    idle: Callable[[], None] | None = None,
    progress: Callable[[Progress], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> bool:
    """Give every chunk a vector of `embedder`'s model, then activate it; False when stopped first."""
    stop = should_stop or (lambda: False)
    store.register_model(embedder.model_id, embedder.dims, model_source(embedder.spec))
    total = store.count_chunks()
    reporter = ProgressReporter(progress, f"re-embedding with {embedder.model_id}")
    reporter.update(phase="started", files_total=total)
    runner = ModelRunner(embedder, idle)
    done = last_id = 0
    try:
        while batch := store.chunks_without_vectors(embedder.model_id, BATCH, last_id):
            last_id = batch[-1].chunk_id
            chunks = [chunk_of(m) for m in batch]
            docs = [document_text(ch, m.path) for ch, m in zip(chunks, batch, strict=True)]
            names = [name_text(ch, m.path) for ch, m in zip(chunks, batch, strict=True)]
            named = [n for n in names if n]
            texts = docs + named
            vectors = runner.embed(texts, embedder.count_tokens(texts), stop, reporter.tick)
            if vectors is None:
                return False
            name_vectors = iter(vectors[len(docs) :])
            store.add_vectors(
                embedder.model_id,
                [(m.chunk_id, vectors[i], next(name_vectors) if names[i] else None) for i, m in enumerate(batch)],
            )
            done += len(batch)
            reporter.update(phase="in_progress", files_done=done, chunks_embedded=done)
        if stop():
            return False
        store.activate_model(embedder.model_id)
        reporter.update(phase="completed", files_done=total)
        return True
    finally:
        runner.close()
