"""The async seam: coroutines the UI awaits over the worker's futures, and Qt signals for progress."""

from ..worker.dropped_paths import DroppedPath
from .engine_bridge import EngineBridge, EngineNotStarted
from .live_search import DEBOUNCE_MS, LiveSearch

__all__ = ["DEBOUNCE_MS", "DroppedPath", "EngineBridge", "EngineNotStarted", "LiveSearch"]
