"""What Quarry embeds and keyword-indexes for a chunk, beyond its raw lines.

The model sees a short header (file path, and the symbol with its name split into words)
before the code: a docstring-less function is found by what its path and name say.
"""

from __future__ import annotations

import hashlib

from .chunk import Chunk
from .identifiers import expand_identifiers, split_identifier


def qualified_name(chunk: Chunk) -> str | None:
    if not chunk.symbol_name:
        return None
    return f"{chunk.parent_symbol}.{chunk.symbol_name}" if chunk.parent_symbol else chunk.symbol_name


def document_header(chunk: Chunk, rel_path: str) -> str:
    lines = [rel_path]
    qual = qualified_name(chunk)
    if qual:
        lines.append(f"{chunk.symbol_type or 'symbol'} {qual}: {' '.join(split_identifier(chunk.symbol_name))}")
    return "\n".join(lines)


def document_text(chunk: Chunk, rel_path: str) -> str:
    return document_header(chunk, rel_path) + "\n" + chunk.text


def document_hash(document: str) -> str:
    return hashlib.sha256(document.encode("utf-8", "surrogatepass")).hexdigest()


def keyword_fields(chunk: Chunk, rel_path: str) -> tuple[str, str, str]:
    """(symbol, path, body) columns of the keyword index for this chunk in this file."""
    symbol = expand_identifiers(chunk.symbol_name) if chunk.symbol_name else ""
    context = expand_identifiers(rel_path.replace("/", " ").replace(".", " "))
    if chunk.parent_symbol:
        context += " " + expand_identifiers(chunk.parent_symbol)
    return symbol, context, expand_identifiers(chunk.text)
