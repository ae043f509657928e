"""A model's inference session begun on a thread of its own before anything asks for it.

Building the default model's ONNX Runtime session was most of a fresh process's first search by meaning: 0.18 s
of the 0.30 s a `quarry search` spent in its engine on laravel-framework's index (10K chunks, stop 60), after the
interpreter had spent 0.28 s importing Quarry. ONNX Runtime builds a session without holding the GIL (a thread
counting in Python beside it lost nothing), so the entry point (launch.py) begins one before the rest of Quarry is
imported, and the first `Embedder.load()` whose model file, sha256, provider and threads are the ones begun
takes it instead of building another. bench_startup.py, the window: a query typed at its first paint answered
0.90 -> 0.72 s after the process started (the search 260 -> 73 ms; the first paint 0.57 -> 0.60 s).

One session is begun per process at most, and the first load to ask settles it: taken when it is what that load
wants, dropped otherwise as soon as the key is known, not once it is built (another model or provider than the
default's: the guess was wrong, and a session held unused would keep ~100 MB). Nothing here imports ONNX Runtime:
the function given to `begin` does, on its thread.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    import onnxruntime as ort

_log = logging.getLogger(__name__)

# What a session was made for: the model file's path, its sha256 (checked before it was built), the provider
# preference and the intra-op threads.
Key: TypeAlias = "tuple[str, str, str, int]"
Built: TypeAlias = "tuple[ort.InferenceSession, str | None]"  # the session and a note on its provider
# What `begin` runs on its thread: it gives the key first (cheap), then a function that builds the session.
Prepare: TypeAlias = "Callable[[], tuple[Key, Callable[[], Built]]]"


def session_key(model_path: Path, sha256: str | None, preference: str, threads: int) -> Key:
    return (str(model_path), sha256 or "", preference, threads)


class _Begun:
    def __init__(self) -> None:
        self.pid = os.getpid()  # the process that began it: a forked child has not its thread, so must not wait
        self.key: Future[Key | None] = Future()
        self.built: Future[Built | None] = Future()


_lock = threading.Lock()
_begun: _Begun | None = None


def begin(prepare: Prepare) -> None:
    """Run `prepare` and the build it gives on a thread; the session waits there for `take`. A second call while
    one is held does nothing."""
    global _begun
    begun = _Begun()
    with _lock:
        if _begun is not None:
            return
        _begun = begun

    def run() -> None:
        try:
            key, build = prepare()
            begun.key.set_result(key)
            begun.built.set_result(build())
        except Exception:  # the load that asks builds its own session, and says why it cannot
            _log.debug("the model's session begun early failed", exc_info=True)
        finally:  # whatever ended it, `take` must not wait for ever
            for future in (begun.key, begun.built):
                if not future.done():
                    future.set_result(None)

    # Not a daemon: the interpreter waits for it at exit. A daemon thread still inside ONNX Runtime's build while
    # the interpreter shut down (a usage error's exit 0.3 s after the start) aborted the process (std::bad_alloc,
    # "terminate called without an active exception", exit status -6 instead of 2).
    threading.Thread(target=run, name="quarry-model-prefetch").start()


def take(key: Key) -> Built | None:
    """The session begun for `key` (waiting for it to be built), with its provider note; None when none was begun
    in this process, it failed, or it was begun for another key (dropped then, without waiting for its build)."""
    global _begun
    with _lock:
        begun, _begun = _begun, None
    if begun is None or begun.pid != os.getpid() or begun.key.result() != key:
        return None
    return begun.built.result()
