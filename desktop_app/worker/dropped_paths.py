"""What a path dropped on the window (or opened from a menu) is, checked on the worker thread.

Touches the disk and the store, so the bridge runs it as a worker job; no Qt here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..store.protocols import Store
from .scope_lookup import scope_containing


@dataclass(frozen=True)
class DroppedPath:
    kind: str  # "folder" | "file" | "problem"
    path: Path
    message: str = ""  # for "problem" and for a file that cannot be shown: what is wrong and what to do
    project: str | None = None  # for a file: root of the indexed scope that holds it
    rel_path: str | None = None  # for a file: POSIX path relative to that root
    sha256: str | None = None  # for a file: its content hash in the index; None when it is not indexed


def inspect_dropped(store: Store, path: Path) -> DroppedPath:
    try:
        path = path.expanduser().resolve()
        if not path.exists():
            return DroppedPath("problem", path, f"{path} does not exist (was it moved or deleted?)")
        if path.is_dir():
            if not os.access(path, os.R_OK | os.X_OK):
                return DroppedPath("problem", path, f"cannot read the folder {path}: permission denied")
            return DroppedPath("folder", path)
        if not path.is_file():
            return DroppedPath(
                "problem",
                path,
                f"{path} is neither a folder nor a regular file; drop a folder "
                "to index it, or a file inside an indexed folder to show it",
            )
        if not os.access(path, os.R_OK):
            return DroppedPath("problem", path, f"cannot read {path}: permission denied")
    except OSError as exc:
        return DroppedPath("problem", path, f"cannot open {path}: {exc.strerror or exc}")
    return _locate_file(store, path)


def _locate_file(store: Store, path: Path) -> DroppedPath:
    """The innermost indexed scope holding `path`, and the file's index entry there."""
    scope = scope_containing(store, path)
    if scope is None:
        return DroppedPath(
            "problem", path, f"{path.name} is not inside an indexed project; drop its folder to index it first"
        )
    root = Path(scope.root)
    rel = path.relative_to(root).as_posix()
    state = store.file_row(scope.id, rel)
    if state is None or state.status != "indexed" or not state.sha256:
        return DroppedPath(
            "file",
            path,
            f"{rel} is not in the index of {root.name} (skipped, or added since "
            "the last index run; press F5 to re-index)",
            str(root),
            rel,
        )
    return DroppedPath("file", path, project=str(root), rel_path=rel, sha256=state.sha256)
