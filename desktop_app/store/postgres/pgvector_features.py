"""What the team server's pgvector can do, read from the installed extension's version."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import psycopg

# Half-precision vectors (`halfvec`) and HNSW indexes over them.
HALFVEC_SINCE = (0, 7, 0)
# Iterative index scans: a filtered walk that goes on until enough candidates pass.
ITERATIVE_SCAN_SINCE = (0, 8, 0)


def vector_type(version: tuple[int, ...]) -> str:
    """The column type a new vector table gets: half precision where the server has it. A search's walks read
    the HNSW index and the rows at random, so what does not fit the server's buffers is read again and again: at
    a million chunks (bench_team.py's store, 1.25M code and 0.88M name vectors of 384 dimensions, pgvector 0.8.2,
    shared_buffers 4 GB) the tables and their HNSW indexes took 7.5 GB as `vector` and 4.0 GB as `halfvec`; 200
    searches read 1.95M blocks from outside the buffers against 1.2M, p95 160-175 against 143-166 ms (filtered
    p95 199-225 against 170-202 ms). A cosine from float16 components is the float32 one within ~1e-3: the local
    store ranks by int8 codes. The query's vector (sent as `vector`) is cast to the column's type implicitly, so
    every statement reads either kind; a table made before keeps its type."""
    return "halfvec" if version >= HALFVEC_SINCE else "vector"


def installed_version(conn: psycopg.Connection) -> tuple[int, ...]:
    """The extension's version in the connection's database as numbers, () where it is not installed."""
    row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    return parse_version(str(row[0])) if row else ()


def parse_version(text: str) -> tuple[int, ...]:
    """'0.8.2' as (0, 8, 2); a part that is not a number ends it."""
    parts: list[int] = []
    for part in text.split("."):
        if not part.isdigit():
            break
        parts.append(int(part))
    return tuple(parts)
