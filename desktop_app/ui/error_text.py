"""The window's wording of the engine's errors: what is wrong, and what to do in the window."""

from __future__ import annotations

from collections.abc import Sequence

from ..bridge.engine_bridge import EngineNotStarted
from ..search.request import SearchError, SearchRemedy
from ..store.errors import Remedy, StoreError, StoreUnusable

_STORE_REMEDIES = {
    Remedy.UPGRADE: "install a newer Quarry",
    # The window offers to move an unusable index aside when it starts (MainWindow.start).
    Remedy.REBUILD: "restart Quarry to move it aside and build a fresh index",
    Remedy.OTHER_STORE: "choose another index in Settings (Team index) or with QUARRY_DB",
}


def describe_error(exc: BaseException) -> str:
    """A sentence or two for a banner or a dialog."""
    if isinstance(exc, StoreUnusable):  # the dialog that shows it offers the rebuild itself
        remedies = [r for r in exc.remedies if r is not Remedy.REBUILD]
        return _with_remedies(str(exc), remedies)
    if isinstance(exc, StoreError):
        return _with_remedies(str(exc), list(exc.remedies))
    if isinstance(exc, SearchError) and exc.remedy is SearchRemedy.INDEX_FIRST:
        return f"{_capital(str(exc))}. Open the folder to index it."
    if isinstance(exc, SearchError) and exc.remedy is SearchRemedy.PASS_WORKTREE:
        return f"{_capital(str(exc))}. Choose a linked worktree in the project list."
    return _capital(str(exc))


def search_failure(error: Exception) -> str:
    """Why a search gave no answer: bad input or a stopped engine said plainly, anything else named."""
    if isinstance(error, (SearchError, StoreError, EngineNotStarted)):
        return describe_error(error)
    return f"Search failed: {type(error).__name__}: {error}"


def _with_remedies(problem: str, remedies: Sequence[Remedy]) -> str:
    text = _capital(problem) + "."
    if remedies:
        text += " To fix it, " + ", or ".join(_STORE_REMEDIES[r] for r in remedies) + "."
    return text


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]
