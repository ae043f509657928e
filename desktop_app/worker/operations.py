"""The two kinds of engine operation (after Anki's QueryOp and CollectionOp); ops.py lists them all.

* A `Read` looks at the store and the model and changes nothing a search could see: searches, listing
  scopes, reading a file's lines, loading the model. Reads run between the steps of a long write.
* A `Write` changes the index: indexing a folder, removing a scope, re-embedding with another model. Writes
  run one at a time and never inside another write; when one ends (finished, cancelled or failed: a
  stopped run keeps the batches it wrote) the worker sends one `ChangeNotice` saying what changed, which
  every view of the index (project list, status bar, the open search) reacts to.

An operation's `run` returns its answer, or for a long one (an index run, a re-embed, a warm-up) its steps
(indexing/steps.py), which the worker's scheduler drives, serving reads between them.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeAlias, TypeVar, Union

if TYPE_CHECKING:
    from .engine import Engine

T = TypeVar("T")
# What an operation's `run` gives: its answer, or the steps that make it (a generator: indexing/steps.py).
Outcome: TypeAlias = Union[T, Generator[Any, None, T]]  # noqa: UP007 (a generic alias: py3.10 needs Union)

# The names of the writes the worker starts by itself.
UPDATE = "update"  # a watched folder changed on disk
REEMBED = "re-embed"  # the configured model differs from the one the index's vectors were made with
# The notices of a watched folder that no write sends (they change nothing in the index).
FOLDER_GONE = "folder gone"  # moved away or deleted: its index is kept, and no update runs until it is back
FOLDER_BACK = "folder back"  # a folder is at the watched path again: an update of it follows


class Change(enum.Flag):
    SCOPES = enum.auto()  # folders added or removed, or their file and chunk counts
    CONTENT = enum.auto()  # files, chunks or vectors: a search may answer differently
    MODEL = enum.auto()  # the model searches use


class StopFlag:
    """Asks a long write to stop at its next step. Whoever waits on the write's behalf (the worker's scheduler)
    hears of it at once through `listen`."""

    def __init__(self) -> None:
        self._set = threading.Event()
        self._lock = threading.Lock()
        self._listeners: list[Callable[[], None]] = []

    def __call__(self) -> bool:
        return self._set.is_set()

    def set(self) -> None:
        self._set.set()
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            listener()

    def listen(self, listener: Callable[[], None]) -> None:
        with self._lock:
            self._listeners.append(listener)


@dataclass(frozen=True)
class Read(Generic[T]):
    name: str
    run: Callable[[Engine], Outcome[T]]
    urgent: bool = False  # a search: ahead of every other read


@dataclass(frozen=True)
class Write(Generic[T]):
    name: str
    run: Callable[[Engine], Outcome[T]]
    changes: Change
    roots: tuple[str, ...] = ()  # the folders it changes; () for the whole index
    stop: StopFlag | None = None  # a long write's: set, the write stops at its next step

    def cancel(self) -> None:
        """Stop a long write at its next step (a queued one ends there at once); a short write runs anyway."""
        if self.stop is not None:
            self.stop.set()


@dataclass(frozen=True)
class ChangeNotice:
    operation: str  # the Write's name, or the watcher's FOLDER_GONE / FOLDER_BACK
    changes: Change
    roots: tuple[str, ...]  # () for the whole index
    result: Any = None  # what the operation returned, or the exception it raised

    def concerns(self, root: str | None) -> bool:
        return root is not None and (not self.roots or root in self.roots)
