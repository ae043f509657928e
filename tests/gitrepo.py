"""Real git repositories and worktrees for tests."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "Quarry Test",
    "GIT_AUTHOR_EMAIL": "test@quarry.invalid",
    "GIT_COMMITTER_NAME": "Quarry Test",
    "GIT_COMMITTER_EMAIL": "test@quarry.invalid",
}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=_ENV, check=True, capture_output=True, text=True).stdout


def init_repo(path: Path) -> Path:
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


def commit_all(path: Path, message: str) -> None:
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", message)
