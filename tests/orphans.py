"""Whether a process's children end when it is killed outright (SIGKILL, a crash)."""

from __future__ import annotations

import os
import select
import subprocess
import sys
from pathlib import Path


def assert_children_end_with_their_parent(script: Path, *args: str) -> None:
    """Run `script` (which starts its children, prints their pids on one line, then waits), kill it outright, and
    wait for each child to end: a child left behind sleeps on a queue no one will feed, holding memory."""
    holder = subprocess.Popen(
        [sys.executable, str(script), *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        children = [int(pid) for pid in holder.stdout.readline().split()]  # type: ignore[union-attr]
        assert children, "the pool started no process"
        ended = [os.pidfd_open(pid) for pid in children]  # readable once that process has ended
    finally:
        holder.kill()
        holder.wait()
    try:
        for fd in ended:
            ready, _, _ = select.select([fd], [], [], 120)
            assert ready, f"a child of {script.name} outlived the process that started it"
    finally:
        for fd in ended:
            os.close(fd)
