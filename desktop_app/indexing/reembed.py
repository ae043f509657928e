"""Re-embedding a store with a newly configured model, in the background.

The new model's vectors go into its own tables while searches keep using the old model's; when
every chunk has a new vector the new model becomes active and the old vectors are dropped (the
fast layer's excepted), in one transaction, so one ranking never mixes vectors of two models.
"""

from __future__ import annotations

from collections.abc import Callable

from ..embedding.static_model import STATIC_MODEL_ID
from ..embedding.text_embedder import TextEmbedder
from ..store.protocols import Store
from .progress import Progress, ProgressReporter
from .steps import Steps
from .vector_fill import VectorFiller, WantedChunks


def reembed(
    store: Store,
    embedder: TextEmbedder,
    progress: Callable[[Progress], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    wanted: WantedChunks | None = None,
) -> Steps[bool]:
    """Give every chunk a vector of `embedder`'s model, then activate it; False when stopped first."""
    stop = should_stop or (lambda: False)
    embedder.load()  # a model that cannot run fails here, before anything is reported or recorded
    reporter = ProgressReporter(progress, embedder.model_id, task="reembed")
    reporter.update(phase="started", stage="full")  # a re-embed is stage 3 over every chunk again
    filler = VectorFiller(store, embedder, wanted)
    try:
        reporter.update(phase="in_progress")
        if not (yield from filler.fill(reporter, stop, "full")).finished or stop():
            reporter.update(phase="cancelled")
            return False
    finally:
        filler.close()
    store.activate_model(embedder.model_id, keep=[STATIC_MODEL_ID])
    reporter.update(phase="completed")
    return True
