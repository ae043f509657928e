"""Watching indexed folders and reporting each burst of changes once.

watchdog delivers one event per file; a `git checkout` touching thousands of files must become one
re-index, not thousands. Events are collected per root and flushed when the root has been quiet
for `quiet_s` (or after `max_delay_s` of continuous churn), as one call with every changed path.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import ObservedWatch

from .file_selection import EXCLUDED_DIR_NAMES

QUIET_S = 0.5
MAX_DELAY_S = 3.0


class _Handler(FileSystemEventHandler):
    def __init__(self, root: str, sink: Callable[[str, str], None]):
        self.root = root
        self.sink = sink

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        for path in (event.src_path, getattr(event, "dest_path", "")):
            if path:
                self.sink(self.root, os.fsdecode(path))


class ChangeWatcher:
    def __init__(
        self,
        on_changes: Callable[[str, set[str]], None],
        ignore: Iterable[Path] = (),
        quiet_s: float = QUIET_S,
        max_delay_s: float = MAX_DELAY_S,
        clock: Callable[[], float] = time.monotonic,
    ):
        self._on_changes = on_changes
        self._clock = clock  # injectable, so the debounce can be tested without waiting on real time
        self._ignore = {str(p) for p in ignore}
        self._quiet = quiet_s
        self._max_delay = max_delay_s
        self._lock = threading.Condition()
        self._pending: dict[str, tuple[float, float, set[str]]] = {}  # root -> (first, last event, paths)
        self._watches: dict[str, ObservedWatch] = {}
        self._observer = Observer()
        self._observer.daemon = True
        self._observer.start()
        self._closed = False
        self._flusher = threading.Thread(target=self._flush_loop, name="quarry-watch-flush", daemon=True)
        self._flusher.start()

    def watch(self, root: Path) -> None:
        """Follow `root`; on return its watches are registered (inotify adds them before schedule returns)."""
        key = str(root.resolve())
        with self._lock:
            if key not in self._watches:
                self._watches[key] = self._observer.schedule(_Handler(key, self._record), key, recursive=True)

    def unwatch(self, root: Path | str) -> None:
        """Stop following `root` (its index was removed) and drop the changes waiting for it."""
        key = str(Path(root).resolve())
        with self._lock:
            watch = self._watches.pop(key, None)
            self._pending.pop(key, None)
        if watch is not None:
            self._observer.unschedule(watch)

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
                batches = self._take_due(self._clock())
                if not batches:
                    self._lock.wait(timeout=self._quiet / 4 if self._pending else None)
                    continue
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
