"""Watching indexed folders and reporting each burst of changes once.

watchdog delivers one event per file; a `git checkout` touching thousands of files must become one
re-index, not thousands. Events are collected per root and flushed when the root has been quiet
for `quiet_s` (or after `max_delay_s` of continuous churn), as one call with every changed path.

A watched folder may be moved away or deleted, and a folder made again at its path. watchdog's inotify
observer (7.1, Linux) says nothing of a rename on the folder's own watch: that watch follows the moved
directory to its new name and reports its events under the old path, while a new folder at the path goes
unseen. A deleted folder gets one DirDeletedEvent for itself, after which its watch stops. The watch of its
parent directory reports both cases: a DirMovedEvent or DirDeletedEvent whose source is the folder when it
goes (DirDeletedEvent too when it is moved out of the parent), and a DirCreatedEvent, or a DirMovedEvent
whose destination is the folder, when a folder appears at the path. So each watched folder's parent is
watched too (not recursively), and the folder's own watch is replaced by one of the folder now at its path.

Only the events a change of content or of the tree can make are asked of the kernel (`_EVENTS`). By default
watchdog asks inotify for opens and closes-without-write too, so every file an indexer, an editor or a
build reads costs two events; reading a tree the size of the Linux kernel's overflows the kernel's queue
(fs.inotify.max_queued_events, 16,384 by default), and watchdog's answer to an overflow, dropping and
re-adding the watch of every directory, opens every directory, which overflowed the queue again: an idle
watcher spent a core. Measured with `quarry index TREE --watch` on 20,000 files in 5,000 folders after three
`grep -r` over TREE, its CPU time from /proc/PID/stat over the next 10 s (2 cores, load 6.7-7.6): 72 % of a
core and 39 overflows logged before; 0.0 % and none with `_EVENTS`. An overflow that does happen means
changes were lost: the watcher then reports the folder itself as changed, once, so one full update
follows (the worker re-walks a folder for any change anyway).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirModifiedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers.api import ObservedWatch

from .file_selection import EXCLUDED_DIR_NAMES
from .watch_observer import make_observer

_log = logging.getLogger(__name__)
QUIET_S = 0.5
MAX_DELAY_S = 3.0
# The events that can change what an index holds: no opens, no closes without a write (see the docstring).
# Every watch asks for the same ones: inotify keeps one mask per directory, set by whichever watch of it
# was added last, so a parent watch asking for less would narrow the recursive watch of an enclosing folder.
_EVENTS: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    DirCreatedEvent,
    FileDeletedEvent,
    DirDeletedEvent,
    FileMovedEvent,
    DirMovedEvent,
    FileModifiedEvent,
    DirModifiedEvent,
    FileClosedEvent,  # a close after a write: what a write through mmap leaves (it makes no modify event)
]


class _Handler(FileSystemEventHandler):
    def __init__(self, root: str, sink: Callable[[str, str], None]):
        self.root = root
        self.sink = sink

    def on_any_event(self, event: FileSystemEvent) -> None:
        for path in (event.src_path, getattr(event, "dest_path", "")):
            if path:
                self.sink(self.root, os.fsdecode(path))


class _EntryHandler(FileSystemEventHandler):
    """On a watched folder's parent: each entry that went away (True) or appeared (False) under a name."""

    def __init__(self, sink: Callable[[str, bool], None]):
        self.sink = sink

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("deleted", "moved"):
            self.sink(os.fsdecode(event.src_path), True)
        if event.event_type == "moved":
            self.sink(os.fsdecode(event.dest_path), False)
        elif event.event_type == "created":
            self.sink(os.fsdecode(event.src_path), False)


class ChangeWatcher:
    """`on_changes(root, paths)` hears each burst of changes under a watched folder; `on_presence(root, present)`
    hears that the folder went away (moved or deleted: False) or that a folder is at its path again (True),
    from then on followed in its place."""

    def __init__(
        self,
        on_changes: Callable[[str, set[str]], None],
        ignore: Iterable[Path] = (),
        quiet_s: float = QUIET_S,
        max_delay_s: float = MAX_DELAY_S,
        clock: Callable[[], float] = time.monotonic,
        on_presence: Callable[[str, bool], None] = lambda root, present: None,
    ):
        self._on_changes = on_changes
        self._on_presence = on_presence
        self._clock = clock  # injectable, so the debounce can be tested without waiting on real time
        self._ignore = {str(p) for p in ignore}
        self._quiet = quiet_s
        self._max_delay = max_delay_s
        self._lock = threading.Condition()
        self._pending: dict[str, tuple[float, float, set[str]]] = {}  # root -> (first, last event, paths)
        self._watches: dict[str, ObservedWatch | None] = {}  # root -> its recursive watch; None while it is away
        # Roots whose entry in their parent changed, to look at on the flush thread: True when it went away.
        self._entries: dict[str, bool] = {}
        # Scheduling and unscheduling (and `_parents`), one at a time; never taken on the observer's thread,
        # which holds the observer's lock while it calls the handlers (so `_lock` is never held around an
        # observer call).
        self._scheduling = threading.Lock()
        self._parents: dict[str, tuple[ObservedWatch, set[str]]] = {}  # parent folder -> (its watch, roots in it)
        self._observer = make_observer()
        self._observer.daemon = True
        self._observer.start()
        self._closed = False
        self._flusher = threading.Thread(target=self._flush_loop, name="quarry-watch-flush", daemon=True)
        self._flusher.start()

    def watch(self, root: Path) -> None:
        """Follow `root`; on return its watches are registered (inotify adds them before schedule returns).
        A folder not at its path is waited for, as one that went away is."""
        key = str(root.resolve())
        with self._scheduling:
            if key in self._watches:
                return
            with self._lock:
                self._watches[key] = None  # known before its watches exist, so no news of its entry is missed
            try:
                self._watch_parent(key)
                self._follow(key)
            except BaseException:
                self._forget(key)
                raise

    def unwatch(self, root: Path | str) -> None:
        """Stop following `root` (its index was removed) and drop the changes waiting for it."""
        with self._scheduling:
            self._forget(str(Path(root).resolve()))

    def _forget(self, root: str) -> None:
        with self._lock:
            watch = self._watches.pop(root, None)
            self._pending.pop(root, None)
        if watch is not None:
            self._observer.unschedule(watch)
        parent = self._parents.get(os.path.dirname(root))
        if parent is not None:
            parent[1].discard(root)
            if not parent[1]:
                del self._parents[os.path.dirname(root)]
                self._observer.unschedule(parent[0])

    def _watch_parent(self, root: str) -> None:
        """Watch the folder holding `root` for its entry going and coming back (one watch for its roots)."""
        parent = os.path.dirname(root)
        if parent in self._parents:
            self._parents[parent][1].add(root)
            return
        try:
            watch = self._observer.schedule(_EntryHandler(self._note_entry), parent, event_filter=_EVENTS)
        except OSError as exc:  # a parent this user may pass through but not list: changes are still followed
            _log.warning("%s being moved away or deleted will go unnoticed: %s", root, exc)
            return
        self._parents[parent] = (watch, {root})

    def _follow(self, root: str) -> bool:
        """Watch the folder now at `root`; False when there is none. `_scheduling` is held."""
        if not os.path.isdir(root):
            return False
        watch = self._observer.schedule(_Handler(root, self._record), root, recursive=True, event_filter=_EVENTS)
        with self._lock:
            self._watches[root] = watch
        return True

    def _note_entry(self, path: str, went: bool) -> None:
        """On the observer's thread: the entry `path` of a watched folder's parent went away or appeared."""
        with self._lock:
            if path in self._watches:
                self._entries[path] = self._entries.get(path, False) or went
                self._lock.notify_all()

    def _recheck(self, root: str, went: bool) -> None:
        """On the flush thread: replace the watch of a root that went away by one of the folder now at its path,
        if there is one yet; say what changed."""
        with self._scheduling:
            with self._lock:
                if root not in self._watches:
                    return  # unwatched meanwhile
                old = self._watches[root] if went else None
                if old is not None:
                    self._watches[root] = None
                    self._pending.pop(root, None)  # changes of the folder that left, not of the one to come
            if old is not None:
                self._observer.unschedule(old)
            try:
                back = self._watches[root] is None and self._follow(root)
            except OSError as exc:  # gone again meanwhile, or unreadable: the next entry event tries again
                _log.warning("cannot follow %s again: %s", root, exc)
                back = False
        if old is not None:
            self._on_presence(root, False)
        if back:
            self._on_presence(root, True)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._lock.notify_all()
        self._observer.stop()
        self._observer.join(timeout=5)
        self._flusher.join(timeout=5)

    def _record(self, root: str, path: str) -> None:
        if self._irrelevant(root, path):
            return
        now = self._clock()
        with self._lock:
            if root in self._watches and self._watches[root] is None:
                return  # a late event of the folder that went away
            first, _, paths = self._pending.get(root, (now, now, set()))
            paths.add(path)
            self._pending[root] = (first, now, paths)
            self._lock.notify_all()

    def _irrelevant(self, root: str, path: str) -> bool:
        # The index's own database (and its WAL) may live inside a watched folder: never react to it.
        base = path[:-4] if path.endswith(("-wal", "-shm")) else path
        if base in self._ignore or path in self._ignore:
            return True
        parts = Path(path).relative_to(root).parts if path.startswith(root) else ()
        return any(p in EXCLUDED_DIR_NAMES for p in parts[:-1]) or parts[-1:] == (".git",)

    def _flush_loop(self) -> None:
        while True:
            with self._lock:
                if self._closed:
                    return
                entries, self._entries = self._entries, {}
                # A root that went away takes its waiting changes with it: its entries are seen to first.
                batches = [] if entries else self._take_due(self._clock())
                if not entries and not batches:
                    self._lock.wait(timeout=self._quiet / 4 if self._pending else None)
                    continue
            for root, went in entries.items():
                self._recheck(root, went)
            for root, paths in batches:
                self._on_changes(root, paths)

    def _take_due(self, now: float) -> list[tuple[str, set[str]]]:
        """The roots quiet for `quiet_s` (or churning for `max_delay_s`) with their paths; the lock is held."""
        due = [
            r
            for r, (first, last, _) in self._pending.items()
            if now - last >= self._quiet or now - first >= self._max_delay
        ]
        return [(r, self._pending.pop(r)[2]) for r in due]
