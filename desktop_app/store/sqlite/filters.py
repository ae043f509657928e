"""Search filters (HitFilter) as SQL conditions over the SQLite store's tables."""

from __future__ import annotations

from ..rows import HitFilter
from ..schema_names import CHANGED_FROM_PARENT
from . import path_globs


def filter_sql(where: HitFilter, bulk: bool = False) -> tuple[str, list]:
    """An SQL condition over `fc` (file_chunk) and `f` (file), and its arguments. `bulk`: the query
    visits every place of a scope, so path globs are matched once per file rather than once per row."""
    clauses: list[str] = []
    args: list = []
    if where.globs:
        test = f"{path_globs.FUNCTION}(%s, ?)"
        clauses.append(f"f.id IN (SELECT id FROM file WHERE {test % 'path'})" if bulk else test % "f.path")
        args.append(path_globs.patterns_argument(where.globs))
    if where.changed_only:
        clauses.append(CHANGED_FROM_PARENT)
    for column, values in (
        ("f.language", where.languages),
        ("fc.chunk_type", where.chunk_types),
        ("fc.symbol_type", where.symbol_types),
    ):
        if values:
            clauses.append(f"{column} IN ({','.join('?' * len(values))})")
            args += list(values)
    if where.symbol_names:
        clauses.append(f"fc.symbol_name COLLATE NOCASE IN ({','.join('?' * len(where.symbol_names))})")
        args += list(where.symbol_names)
    return (" AND ".join(clauses) or "1"), args
