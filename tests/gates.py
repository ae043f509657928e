"""Gated fakes of the slow part: hold document embedding at a gate that tests open by an event.

A test that needs an index run to be "still running" while it checks something must not rely on the run
being slow enough; on a loaded CI machine it may be fast, on a quiet one slow. The gate wraps the real
model's `embed_documents`: the first `pass_calls` calls go through, the next one waits until `release()`.
"""

from __future__ import annotations

import threading

from desktop_app.embedding.embedder import Embedder


class EmbeddingGate:
    def __init__(self, pass_calls: int = 0):
        self._pass = pass_calls
        self._calls = 0
        self._lock = threading.Lock()
        self.waiting = threading.Event()  # a call is held at the gate: the run cannot finish before release()
        self._open = threading.Event()
        self._embed = Embedder.embed_documents

    def embed_documents(self, embedder: Embedder, texts):
        with self._lock:
            self._calls += 1
            held = self._calls > self._pass
        if held and not self._open.is_set():
            self.waiting.set()
            self._open.wait()
        return self._embed(embedder, texts)

    def release(self) -> None:
        self._open.set()
