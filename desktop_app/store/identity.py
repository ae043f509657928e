"""A folder's identity in a shared index: something every clone of its repository has, not a machine's path.

A team index must find a teammate's checkout at /home/ana/src/shop and one at /Users/bo/work/shop to be the
same project, so scopes there are keyed by

* `git:<root commit>[/<path inside the repository>]` for a main checkout (the repository's first commit is
  the same in every clone, whatever the remote is called or where it lives);
* that key plus `@<branch>` for a linked worktree (or `@<commit>` when its HEAD is detached), so a
  teammate's worktree of the same branch is the same scope, inheriting from the main one as on one machine;
* `dir:<host>:<absolute path>` for a folder outside git (or in a repository with no commit yet), which only
  that machine can share.

Keys are cached per folder for the process: a search looks its scope up each time (three git calls,
~10 ms, would double a search's time).
"""

from __future__ import annotations

import functools
import socket
import subprocess
from pathlib import Path


def scope_key(root: Path | str) -> str:
    return _key(str(Path(root).expanduser().resolve()))


@functools.lru_cache(maxsize=256)
def _key(root: str) -> str:
    git = _git_facts(root)
    if git is None:
        return f"dir:{socket.gethostname()}:{root}"
    toplevel, linked, head = git
    first = _root_commit(root)
    if first is None:
        return f"dir:{socket.gethostname()}:{root}"
    inside = Path(root).relative_to(toplevel).as_posix() if Path(root) != Path(toplevel) else ""
    key = f"git:{first}" + (f"/{inside}" if inside else "")
    return f"{key}@{head}" if linked else key


def _run(root: str, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", root, *args], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _git_facts(root: str) -> tuple[str, bool, str] | None:
    """(the working tree's top folder, whether it is a linked worktree, its branch or commit) or None."""
    out = _run(root, "rev-parse", "--show-toplevel", "--absolute-git-dir", "--path-format=absolute", "--git-common-dir")
    if out is None:
        return None
    lines = out.splitlines()
    if len(lines) != 3:
        return None
    toplevel, git_dir, common_dir = lines
    linked = Path(git_dir).resolve() != Path(common_dir).resolve()
    head = _run(root, "symbolic-ref", "--short", "-q", "HEAD") or _run(root, "rev-parse", "HEAD") or "unborn"
    return str(Path(toplevel).resolve()), linked, head


def _root_commit(root: str) -> str | None:
    out = _run(root, "rev-list", "--max-parents=0", "HEAD")
    return min(out.split()) if out else None
