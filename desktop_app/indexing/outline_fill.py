"""Filling in each file's outline vector: the model's reading of the file's path and the names it defines,
which ranking compares with a question about what a file does as a whole (search/fusion.py).

Run after a model's chunk vectors are all in (stage 3 of an index run, and a re-embed): one short text per
file, about a tenth of the chunks' cost. Each batch is written as soon as it is embedded, so a stopped fill
keeps what it did and the next run does the rest; a file edited since gets a new outline with its new row.
"""

from __future__ import annotations

from collections.abc import Callable

from ..embedding.text_embedder import TextEmbedder
from ..store.protocols import Store
from .documents import outline_text
from .model_runner import ModelRunner
from .steps import Steps

BATCH = 256  # files per write transaction
# Files asked of the store at a time: each ask ranks every file lacking an outline, so not once per batch.
FETCH = 16 * BATCH


def fill_outlines(
    store: Store,
    embedder: TextEmbedder,
    runner: ModelRunner,
    stop: Callable[[], bool],
    tick: Callable[[], None] = lambda: None,
    progress: Callable[[int, int], None] = lambda done, total: None,
) -> Steps[bool]:
    """Give every indexed file an outline vector of `embedder`'s model, telling `progress` (files done, files
    to do) after each batch; False when stopped first."""
    model = embedder.model_id
    tried: set[tuple[str, str, str]] = set()
    total = store.count_files_without_outline(model)
    done = 0
    if total:
        progress(done, total)
    while True:
        sources = [s for s in store.files_without_outline(model, FETCH) if (s.scope_id, s.path, s.sha256) not in tried]
        if not sources:
            # Nothing left; or only files this fill has embedded already and whose vector did not stick (not
            # expected: a file edited meanwhile comes back as a new row, with its new content): stop, not loop.
            return True
        tried.update((s.scope_id, s.path, s.sha256) for s in sources)
        for start in range(0, len(sources), BATCH):
            batch = sources[start : start + BATCH]
            texts = [outline_text(s.path, s.names) for s in batch]
            tokens = [min(t, embedder.max_tokens) for t in embedder.count_tokens(texts)]
            vectors = yield from runner.embed(texts, tokens, stop, tick)
            if vectors is None:
                return False
            store.add_outlines(model, list(zip(batch, vectors, strict=True)))
            done += len(batch)
            total = max(total, done)  # files indexed meanwhile (another indexer, on a team index)
            progress(done, total)
