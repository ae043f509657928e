"""The guard against PySide6 builds that drop references to None, True and False (see refcount_guard.py)."""

from __future__ import annotations

import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QObject, Signal  # noqa: E402

from desktop_app.ui.refcount_guard import guard_singleton_refcounts, singleton_refcounts_leak  # noqa: E402


class _Emitter(QObject):
    fired = Signal(bool)


def test_many_void_calls_and_emits_survive_once_guarded():
    guard_singleton_refcounts()
    if singleton_refcounts_leak() and sys.version_info < (3, 12):
        assert min(sys.getrefcount(None), sys.getrefcount(True), sys.getrefcount(False)) > 1 << 40
    emitter = _Emitter()
    emitter.fired.connect(lambda value: None)
    # Far more calls than None or a bool holds references to in a fresh interpreter (a few thousand).
    for _ in range(50_000):
        emitter.setObjectName("x")
        emitter.fired.emit(True)
    assert emitter.objectName() == "x"


def test_the_guard_is_applied_once():
    applied = guard_singleton_refcounts()
    before = sys.getrefcount(None)
    assert guard_singleton_refcounts() is applied
    assert abs(sys.getrefcount(None) - before) < 1000  # no second dose of headroom
