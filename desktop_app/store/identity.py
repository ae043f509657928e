"""A folder's identity in a shared index: something every clone of its repository has, not a machine's path.

A team index must find a teammate's checkout at /home/ana/src/shop and one at /Users/bo/work/shop to be the
same project, yet never show one the other's uncommitted edits. So a repository is known by

* `git:<root commit>[/<path inside the repository>]` (the repository's first commit is the same in every
  clone, whatever the remote is called or where it lives): the key of its shared base, the committed content
  everyone sees (indexing/team_base.py);

and each checkout of it (a clone, or a linked worktree) by that key plus `#<host>:<absolute path>`: the key of
its own overlay, its working tree over the base, which only that checkout searches. A folder outside git (or in
a repository with no commit yet) is `dir:<host>:<absolute path>`, which only that machine can share.

Repository keys are cached per folder for the process: a search looks its scope up each time (two git calls,
several milliseconds, would double a search's time).
"""

from __future__ import annotations

import functools
import socket
import subprocess
from pathlib import Path


def scope_key(root: Path | str, host: str | None = None) -> str:
    """The key of the folder's own scope on `host` (this machine by default): its checkout's overlay in a
    repository, else its machine and path."""
    repository = _repository(_resolved(root))
    checkout = checkout_of(root, host)
    return f"{repository}#{checkout}" if repository else f"dir:{checkout}"


def repository_key(root: Path | str) -> str | None:
    """The key of the repository's shared base, the same in every clone; None outside git (or before the
    repository's first commit)."""
    return _repository(_resolved(root))


def checkout_of(root: Path | str, host: str | None = None) -> str:
    """`<host>:<absolute path>`: which machine's folder this is."""
    return f"{host or socket.gethostname()}:{_resolved(root)}"


def _resolved(root: Path | str) -> str:
    return str(Path(root).expanduser().resolve())


@functools.lru_cache(maxsize=256)
def _repository(root: str) -> str | None:
    toplevel = _run(root, "rev-parse", "--show-toplevel")
    first = _root_commit(root) if toplevel else None
    if toplevel is None or first is None:
        return None
    top = str(Path(toplevel).resolve())
    inside = Path(root).relative_to(top).as_posix() if Path(root) != Path(top) else ""
    return f"git:{first}" + (f"/{inside}" if inside else "")


def _run(root: str, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", root, *args], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _root_commit(root: str) -> str | None:
    out = _run(root, "rev-list", "--max-parents=0", "HEAD")
    return min(out.split()) if out else None
