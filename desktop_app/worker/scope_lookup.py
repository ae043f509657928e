"""Which indexed scope holds a path: one answer for the agent's tools, a dropped file and "embed this file's
chunks first", each of which once walked the folders its own way."""

from __future__ import annotations

from pathlib import Path

from ..store.protocols import Store
from ..store.rows import Scope


def scope_containing(store: Store, path: Path) -> Scope | None:
    """The innermost indexed scope whose folder holds `path` (absolute, symlinks already resolved: the
    caller judges a path by where it leads), so a worktree inside its repository's folder is its own scope.
    One indexed lookup per folder from `path` up: a path is a dozen folders deep, while listing the scopes
    counts every one's files and chunks."""
    for folder in (path, *path.parents):
        scope = store.scope_for_root(folder)
        if scope is not None:
            return scope
    return None
