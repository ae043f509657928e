"""Gitignore-style path globs as an SQL function, so a glob filter narrows a search inside SQL like the
language and symbol filters do, instead of being applied to the results with a much larger fetch."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import apsw
import pathspec

FUNCTION = "quarry_path_matches"
_SEPARATOR = "\n"  # cannot occur inside one pattern: patterns are lines of a gitignore file


def patterns_argument(globs: Sequence[str]) -> str:
    """The SQL argument that stands for a list of patterns."""
    return _SEPARATOR.join(globs)


@lru_cache(maxsize=32)
def _spec(patterns: str) -> pathspec.GitIgnoreSpec:
    return pathspec.GitIgnoreSpec.from_lines(patterns.split(_SEPARATOR))


def path_matches(path: str, patterns: str) -> int:
    """1 when `path` (relative to its scope root) is matched by the patterns, with gitignore precedence."""
    return int(_spec(patterns).match_file(path))


def register(conn: apsw.Connection) -> None:
    # apsw's stubs type a scalar function as taking any number of SQLite values; it is called with numargs (2).
    conn.create_scalar_function(FUNCTION, path_matches, 2, deterministic=True)  # type: ignore[arg-type]
