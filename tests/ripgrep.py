"""ripgrep's own matches, the yardstick of text mode (tests/test_text_search.py, tests/benchmarks/bench_text.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

needs_rg = pytest.mark.skipif(shutil.which("rg") is None, reason="needs ripgrep (Debian package ripgrep)")


def rg_matches(
    root: Path, pattern: str, *flags: str, paths: tuple[str, ...] = (".",)
) -> set[tuple[str, int, int, int]]:
    """(path relative to `root`, line, start column, end column) of every match `rg` finds under `paths`,
    columns counted in characters (rg reports bytes)."""
    proc = subprocess.run(
        ["rg", "--json", *flags, "-e", pattern, "--", *paths], cwd=root, capture_output=True, text=True, check=False
    )
    assert proc.returncode in (0, 1), proc.stderr  # 1: no match
    found = set()
    for line in proc.stdout.splitlines():
        event = json.loads(line)
        if event["type"] != "match":
            continue
        data = event["data"]
        raw = data["lines"]["text"].encode()
        path = data["path"]["text"].removeprefix("./")
        for sub in data["submatches"]:
            start, end = (len(raw[: sub[key]].decode(errors="replace")) for key in ("start", "end"))
            found.add((path, data["line_number"], start, end))
    return found
