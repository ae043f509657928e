"""Keep CPython < 3.12 alive under PySide6 builds that drop references to None, True and False.

PySide6-Essentials 6.12.0 hands back None from void C++ methods, and True/False from
`Signal.emit`, without taking a reference (harmless on 3.12+, where these objects are immortal).
On 3.11 each such call lowers the object's count; after a few thousand calls (a repaint, a
highlighter pass, a stream of progress signals) CPython aborts with "none_dealloc: deallocating
None" or "bool_dealloc". This is what crashed the QSyntaxHighlighter.highlightBlock override.
The guard detects the leak and, only if it is present, gives these three objects a reference
count no run can exhaust, as 3.12 does.
"""

from __future__ import annotations

import ctypes
import sys

_HEADROOM = 1 << 48  # decrements a run would need to reach zero: about 9 years at a billion calls/s
_SINGLETONS = (None, True, False)
_applied = False


def singleton_refcounts_leak() -> bool:
    """Whether a void Qt call or a signal emission lowers None's or a bool's reference count."""
    from PySide6.QtCore import QObject, Signal

    class _Probe(QObject):
        fired = Signal()

    probe = _Probe()
    before = [sys.getrefcount(obj) for obj in _SINGLETONS]
    for _ in range(8):
        probe.setObjectName("probe")
        probe.fired.emit()
    return any(sys.getrefcount(obj) < count for obj, count in zip(_SINGLETONS, before, strict=True))


def guard_singleton_refcounts() -> bool:
    """Apply the guard (once per process) when the leak is present; returns whether it is in place."""
    global _applied
    if not _applied and sys.version_info < (3, 12) and singleton_refcounts_leak():
        for obj in _SINGLETONS:
            # ob_refcnt is the first field of every object in release builds of CPython.
            ctypes.c_ssize_t.from_address(id(obj)).value += _HEADROOM
        _applied = True
    return _applied
