"""Named operations on the engine, of two kinds (after Anki's QueryOp and CollectionOp).

* A `Read` looks at the store and the model and changes nothing a user could see: searches, listing
  scopes, reading a file's lines, loading the model. Reads may run between the slices of an index run.
* A `Write` changes the index: indexing a folder, removing a scope, re-embedding with another model. Writes
  run one at a time and never inside another write; when one ends (finished, cancelled or failed: a
  stopped run keeps the batches it wrote) the worker sends one `ChangeNotice` saying what changed, which
  every view of the index (project list, status bar, the open search) reacts to.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from .worker import Engine

T = TypeVar("T")


class Change(enum.Flag):
    SCOPES = enum.auto()  # folders added or removed, or their file and chunk counts
    CONTENT = enum.auto()  # files, chunks or vectors: a search may answer differently
    MODEL = enum.auto()  # the model searches use


@dataclass(frozen=True)
class Read(Generic[T]):
    name: str
    run: Callable[[Engine], T]
    urgent: bool = False  # a search: ahead of every other read


@dataclass(frozen=True)
class Write(Generic[T]):
    name: str
    run: Callable[[Engine], T]
    changes: Change
    roots: tuple[str, ...] = ()  # the folders it changes; () for the whole index


@dataclass(frozen=True)
class ChangeNotice:
    operation: str  # the Write's name, or the watcher's FOLDER_GONE / FOLDER_BACK (worker.py)
    changes: Change
    roots: tuple[str, ...]  # () for the whole index
    result: Any = None  # what the operation returned, or the exception it raised

    def concerns(self, root: str | None) -> bool:
        return root is not None and (not self.roots or root in self.roots)


Operation = Read[T] | Write[T]
