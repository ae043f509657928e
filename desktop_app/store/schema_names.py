"""What the two stores' schemas share: how ids are made, how a model's vector table is named, and the column
lists that become row types (both schemas name their tables and columns alike)."""

from __future__ import annotations

import re
import secrets
import time

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def stored_columns(text: str = "c.text", chunk_hash: str = "c.hash") -> str:
    """-> rows.StoredChunk; `text` and `chunk_hash` are how the store reads a chunk's text and hash (SQLite's text
    may be compressed, its hash is kept as bytes)."""
    return (
        f"c.id, {chunk_hash}, f.path, fc.ordinal, fc.start_line, fc.end_line, fc.chunk_type, fc.symbol_name, "
        f"fc.symbol_type, fc.parent_symbol, {text}, c.token_count"
    )


def hit_columns(text: str = "c.text") -> str:
    """-> rows.Hit; `text` as in stored_columns."""
    return (
        "fc.id, fc.chunk_id, fc.scope_id, f.path, f.language, fc.start_line, fc.end_line, fc.chunk_type, "
        f"fc.symbol_name, fc.symbol_type, fc.parent_symbol, {text}, f.sha256, f.mtime_ns, f.indexed_at"
    )


# The search filter changed_only over `f` (file): the file's content differs from its main scope's copy.
CHANGED_FROM_PARENT = (
    "NOT EXISTS (SELECT 1 FROM scope s JOIN file m ON m.scope_id = s.parent_id "
    "WHERE s.id = f.scope_id AND m.path = f.path AND m.sha256 = f.sha256)"
)
NAME_SUFFIX = "_name"  # a model's symbol-name vectors live in <its vector table>_name


def new_ulid() -> str:
    """A ULID: 48 bits of milliseconds then 80 random bits, Crockford base32, sortable by time."""
    value = (int(time.time() * 1000) << 80) | secrets.randbits(80)
    return "".join(_CROCKFORD[(value >> shift) & 31] for shift in range(125, -1, -5))


def vector_table_name(model_id: str) -> str:
    return "vec_" + re.sub(r"[^0-9A-Za-z]+", "_", model_id).strip("_").lower()


def chunking_meta_key(scope_id: str) -> str:
    """The meta key under which a store records which chunker version cut a scope's files."""
    return f"chunking:{scope_id}"
