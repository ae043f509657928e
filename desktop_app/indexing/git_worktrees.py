"""What git says about a folder's worktrees (`git worktree list --porcelain`)."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

GIT_TIMEOUT_S = 10


@dataclass(frozen=True)
class Worktrees:
    main: Path  # the repository's main working tree
    linked: tuple[Path, ...]  # its linked worktrees that still exist on disk


def worktrees(path: Path) -> Worktrees | None:
    """The worktrees of the repository `path` belongs to; None outside git (or without git)."""
    try:
        proc = subprocess.run(
            ["git", "-C", str(path), "worktree", "list", "--porcelain"],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    roots = [Path(line[len("worktree ") :]) for line in proc.stdout.splitlines() if line.startswith("worktree ")]
    bare = "bare" in proc.stdout.splitlines()
    if not roots or bare:
        return None
    return Worktrees(roots[0].resolve(), tuple(p.resolve() for p in roots[1:] if p.exists()))


def main_of_linked_worktree(root: Path) -> Path | None:
    """The main working tree when `root` is the top of a linked worktree, else None."""
    info = worktrees(root)
    if info is None:
        return None
    resolved = root.resolve()
    return info.main if resolved in info.linked else None


def is_known_worktree(root: Path, main_root: Path) -> bool:
    """Whether git still lists `root` as a worktree of the repository at `main_root`."""
    if not root.is_dir():
        return False
    info = worktrees(main_root)
    return info is not None and root.resolve() in info.linked
