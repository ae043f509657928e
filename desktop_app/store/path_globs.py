"""Gitignore-style path globs (the search filter `globs`), matched the same way by every store."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import pathspec

_SEPARATOR = "\n"  # cannot occur inside one pattern: patterns are lines of a gitignore file


def patterns_argument(globs: Sequence[str]) -> str:
    """One string that stands for a list of patterns (an SQL argument, a cache key)."""
    return _SEPARATOR.join(globs)


@lru_cache(maxsize=32)
def _spec(patterns: str) -> pathspec.GitIgnoreSpec:
    lines = patterns.split(_SEPARATOR)
    if all(line.startswith("!") for line in lines):
        # Only exclusions ("!*_test.go"): everything but those, as ripgrep reads its globs, rather than
        # the nothing that gitignore rules give when no pattern takes a file in first.
        lines = ["*", *lines]
    return pathspec.GitIgnoreSpec.from_lines(lines)


def path_matches(path: str, patterns: str) -> int:
    """1 when `path` (relative to its scope root) is matched by the patterns, with gitignore precedence."""
    return int(_spec(patterns).match_file(path))
