"""Many rows in one statement: a batch's rows as one JSON array, which the statement reads with json_each.

Why not a statement (or executemany) a row: apsw releases the GIL around every step of a statement, and getting it
back waits for the interpreter's switch interval (5 ms) whenever another thread of the process is busy in Python,
as the indexer's preparing thread is while it takes in the parse processes' answers. Measured on the Linux
kernel's index (a busy thread beside the writes): 6 ms a row inserted into `file_chunk` a statement at a time,
4.4 ms with executemany, 63 us with the batch's rows in one JSON array. Without a busy thread all three cost
about 10 us a row. A kernel keyword stage made ~9 million such statements.

Reading is the same: apsw lets go of the GIL around each row a statement steps to, so a query's rows come back
as one JSON array, one step (`json_result`), where another thread may be busy. The fast stage's writer (its
model thread busy in Python beside it) spent a quarter of its time in two such reads of 512 rows a batch.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import apsw

from .connection import query_value


def json_rows(rows: Sequence[Sequence[object]] | Sequence[object]) -> str:
    """`rows` (lists of str, int, float or None; or single values) as one JSON array for json_each: compact, and
    text kept as UTF-8 (SQLite's JSON functions read it as such) rather than escaped."""
    return json.dumps(rows, ensure_ascii=False, separators=(",", ":"))


def columns(count: int) -> str:
    """`value->>0, ..., value->>count-1`: the columns of json_each's rows made by json_rows."""
    return ", ".join(f"value->>{i}" for i in range(count))


def json_result(conn: apsw.Connection, columns: str, rest: str, args: apsw.Bindings = ()) -> list[list[Any]]:
    """The rows of `SELECT {columns} {rest}`, as lists, read in one step: `rest` is the query's FROM and WHERE
    (no GROUP BY, ORDER BY or LIMIT: the rows are gathered by an aggregate). Text, integers and NULL come back
    as they are; a blob cannot (JSON has none), and a float keeps 15 significant digits."""
    return json.loads(query_value(conn, str, f"SELECT json_group_array(json_array({columns})) {rest}", args))
