"""The engine's errors worded for a coding agent: what is wrong, and which tool call or setting fixes it."""

from __future__ import annotations

from ..search.request import SearchError, SearchRemedy
from ..store.errors import Remedy, StoreError
from ..worker.ops import ScopeNotFound

_STORE_REMEDIES = {
    Remedy.UPGRADE: "the user needs a newer Quarry",
    Remedy.REBUILD: "the user can rebuild it with `quarry index FOLDER --rebuild`",
    Remedy.OTHER_STORE: "the server can be started with another index (--db)",
}


def explain(exc: BaseException) -> str:
    if isinstance(exc, StoreError) and exc.remedies:
        return f"{exc}; " + ", or ".join(_STORE_REMEDIES[r] for r in exc.remedies)
    if isinstance(exc, SearchError) and exc.remedy is SearchRemedy.INDEX_FIRST:
        return f"{exc}; call reindex(root={exc.subject!r}) first" if exc.subject else f"{exc}; call reindex first"
    if isinstance(exc, SearchError) and exc.remedy is SearchRemedy.PASS_FOLDER:
        return f"{exc}; pass the folder that holds it as root"
    if isinstance(exc, ScopeNotFound):
        return f"{exc}; index_status shows what is indexed"
    return str(exc)
