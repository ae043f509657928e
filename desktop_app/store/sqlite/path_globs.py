"""Gitignore-style path globs as an SQL function, so a glob filter narrows a search inside SQL like the
language and symbol filters do, instead of being applied to the results with a much larger fetch."""

from __future__ import annotations

import apsw

from ..path_globs import path_matches, patterns_argument

FUNCTION = "quarry_path_matches"

__all__ = ["FUNCTION", "patterns_argument", "register"]


def register(conn: apsw.Connection) -> None:
    # apsw's stubs type a scalar function as taking any number of SQLite values; it is called with numargs (2).
    conn.create_scalar_function(FUNCTION, path_matches, 2, deterministic=True)  # type: ignore[arg-type]
