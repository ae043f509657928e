"""The watchdog observer the folder watcher uses: on Linux, lost events reach the handler as a change of the
watched folder.

When inotify's queue overflows, watchdog 7.1 logs it and re-adds the watches of every directory, but its
handlers hear nothing, so changes made meanwhile were never indexed. Here each watch's group, told of the
overflow, queues one DirModifiedEvent of the watched folder itself after watchdog's own repair, which the
folder watcher turns into one update of the whole folder.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from watchdog.events import DirModifiedEvent
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver
from watchdog.utils import UnsupportedLibcError, platform


def make_observer() -> BaseObserver:
    if not platform.is_linux():
        return Observer()  # FSEvents, kqueue and Windows have no such queue to overflow
    try:
        from watchdog.observers.inotify import InotifyEmitter, InotifyObserver, InotifyWatchGroup
    except UnsupportedLibcError:  # a libc without inotify: watchdog's own choice of observer
        return Observer()

    @dataclass
    class _WatchGroup(InotifyWatchGroup):
        on_overflow: Callable[[], None] = field(default=lambda: None)

        def on_queue_overflow(self) -> None:
            super().on_queue_overflow()  # drops half-paired moves and re-adds the recursive watches
            if self.is_active:
                self.on_overflow()

    class _Emitter(InotifyEmitter):
        def on_thread_start(self) -> None:
            # InotifyEmitter.on_thread_start with the group above (watchdog 7.1).
            self._inotify = _WatchGroup(
                self._inotify_fd,
                os.fsencode(self.watch.path),
                is_recursive=self.watch.is_recursive,
                event_mask=self.get_event_mask_from_filter(),
                follow_symlink=self.watch.follow_symlink,
                on_overflow=lambda: self.queue_event(DirModifiedEvent(self.watch.path)),
            )

    observer = InotifyObserver()
    observer._emitter_class = _Emitter  # the class InotifyObserver.__init__ hands BaseObserver
    return observer
