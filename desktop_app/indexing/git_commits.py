"""What git says about a checkout's commits, and a commit's files written out as they were committed: what a
team index's shared base is built from (team_base.py)."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

# Modes `git ls-tree` gives: regular files, executables and symbolic links are written out; a submodule (160000)
# is another repository, not content of this one.
_FILE_MODES = {"100644": 0o644, "100755": 0o755}
_LINK_MODE = "120000"

Relation = Literal["same", "ahead", "behind", "diverged", "unknown"]


class GitFailed(Exception):
    """A git command failed; the message is git's own."""


@dataclass(frozen=True)
class Tip:
    """The commit a branch points at."""

    branch: str
    commit: str


def _git(root: Path, *args: str, check: bool = True) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitFailed(str(exc)) from None
    if done.returncode != 0:
        if check:
            raise GitFailed(done.stderr.strip() or f"git {args[0]} failed")
        return None
    return done.stdout.strip()


def default_tip(root: Path) -> Tip | None:
    """The default branch's tip as this clone knows it: the remote's HEAD branch (`origin/HEAD`), else the first
    of the configured default branch, `main` and `master` that exists here, else the checked-out commit (a clone
    with other branches only); None outside git or before the first commit."""
    remote_head = _git(root, "symbolic-ref", "-q", "refs/remotes/origin/HEAD", check=False)
    if remote_head:
        commit = _git(root, "rev-parse", "-q", "--verify", f"{remote_head}^{{commit}}", check=False)
        if commit:
            return Tip(remote_head.removeprefix("refs/remotes/origin/"), commit)
    configured = _git(root, "config", "init.defaultBranch", check=False)
    for name in filter(None, (configured, "main", "master")):
        commit = _git(root, "rev-parse", "-q", "--verify", f"refs/heads/{name}^{{commit}}", check=False)
        if commit:
            return Tip(name, commit)
    head = _git(root, "rev-parse", "-q", "--verify", "HEAD^{commit}", check=False)
    if not head:
        return None
    branch = _git(root, "symbolic-ref", "-q", "--short", "HEAD", check=False)
    return Tip(branch or head, head)


def relation(root: Path, published: str, tip: str) -> Relation:
    """How `tip` stands to the commit `published`: the same, ahead of it (a descendant), behind it, diverged
    from it (a rewritten history), or unknown (this clone lacks it: a teammate published a newer one)."""
    if published == tip:
        return "same"
    if _git(root, "cat-file", "-e", f"{published}^{{commit}}", check=False) is None:
        return "unknown"
    if _git(root, "merge-base", "--is-ancestor", published, tip, check=False) is not None:
        return "ahead"
    if _git(root, "merge-base", "--is-ancestor", tip, published, check=False) is not None:
        return "behind"
    return "diverged"


def write_commit(root: Path, commit: str, dest: Path) -> Path:
    """Write the files of `commit` under the checkout's folder `root` (itself, when `root` is a folder inside the
    repository) into `dest`, as they were committed; the folder that stands for `root` there.

    Each file's modification time is taken from its blob id, so a file has the same size and time in every
    export and on every machine exactly when its content is the same: an index of one export compared with
    another's re-reads only the files that changed (Indexer._plan compares size and time)."""
    where = (_git(root, "rev-parse", "--show-toplevel", "--show-prefix") or "").splitlines()
    top, prefix = Path(where[0]), where[1] if len(where) > 1 else ""  # the prefix is empty at the top
    listing = subprocess.run(
        ["git", "-C", str(top), "ls-tree", "-r", "-z", "--full-tree", commit, "--", prefix or "."],
        capture_output=True,
        stdin=subprocess.DEVNULL,
    )
    if listing.returncode != 0:
        raise GitFailed(listing.stderr.decode(errors="replace").strip())
    entries: list[tuple[str, str, str]] = []  # (mode, blob, path)
    for record in listing.stdout.split(b"\0"):
        if not record:
            continue
        meta, name = record.split(b"\t", 1)
        mode, kind, blob = meta.decode().split()
        if kind == "blob" and (mode in _FILE_MODES or mode == _LINK_MODE):
            entries.append((mode, blob, os.fsdecode(name)))
    with subprocess.Popen(
        ["git", "-C", str(top), "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    ) as cat:
        assert cat.stdin is not None and cat.stdout is not None
        for mode, blob, path in entries:
            cat.stdin.write(f"{blob}\n".encode())
            cat.stdin.flush()
            header = cat.stdout.readline().split()
            content = cat.stdout.read(int(header[2]))
            cat.stdout.read(1)  # the newline after each object
            _write_entry(dest, PurePosixPath(path), mode, blob, content)
        cat.stdin.close()
    return dest / prefix if prefix else dest


def _write_entry(dest: Path, path: PurePosixPath, mode: str, blob: str, content: bytes) -> None:
    if path.is_absolute() or ".." in path.parts:  # git never stores such a path; a crafted tree could
        return
    target = dest.joinpath(*path.parts)
    target.parent.mkdir(parents=True, exist_ok=True)
    if mode == _LINK_MODE:
        # The file selection follows a link only inside the folder indexed (file_selection.py), as in a checkout.
        os.symlink(os.fsdecode(content), target)
        return
    target.write_bytes(content)
    target.chmod(_FILE_MODES[mode])
    stamp = int(blob[:15], 16)  # 60 bits of the blob id, as nanoseconds
    os.utime(target, ns=(stamp, stamp))
