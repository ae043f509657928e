"""What Quarry embeds and keyword-indexes for a chunk, beyond its raw lines.

The model sees a short header (file path, and the symbol with its name split into words)
before the code. A chunk that defines a symbol also gets a second, short "name" embedding of
its name, class and module in plain words: a question such as "encode a string as base64" is
closer to `b64encode (base64)` than to the body of the function (measured on the eval set:
semantic MRR@10 0.455 -> 0.50).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from ..identifiers import expand_identifiers, qualified, split_identifier
from ..store.rows import StoredChunk
from .chunk import Chunk


def chunk_of(stored: StoredChunk) -> Chunk:
    """The Chunk a stored chunk was made from (its lines and symbol as indexed)."""
    return Chunk(
        stored.text,
        stored.start_line,
        stored.end_line,
        stored.chunk_type,
        stored.symbol_name,
        stored.symbol_type,
        stored.parent_symbol,
        stored.token_count,
    )


def qualified_name(chunk: Chunk) -> str | None:
    if not chunk.symbol_name:
        return None
    return qualified(chunk.symbol_name, chunk.parent_symbol)


def document_header(chunk: Chunk, rel_path: str) -> str:
    lines = [rel_path]
    name = chunk.symbol_name
    if name:  # exactly when the chunk has a qualified name
        lines.append(f"{chunk.symbol_type or 'symbol'} {qualified_name(chunk)}: {' '.join(split_identifier(name))}")
    return "\n".join(lines)


def document_text(chunk: Chunk, rel_path: str, header: str | None = None) -> str:
    """What the model embeds for a chunk: its header, then its lines. The indexer and the re-embed must build
    it the same way, or chunk hashes stop matching; `header` saves building it again."""
    return (document_header(chunk, rel_path) if header is None else header) + "\n" + chunk.text


def name_text(chunk: Chunk, rel_path: str) -> str | None:
    """The symbol's name, enclosing type and module as words, e.g. `decode of json decoder (json decoder)`."""
    if not chunk.symbol_name:
        return None
    text = " ".join(split_identifier(chunk.symbol_name)) or chunk.symbol_name
    if chunk.parent_symbol:
        text += " of " + " ".join(split_identifier(chunk.parent_symbol.rsplit(".", 1)[-1]))
    module = _module_words(rel_path)
    return f"{text} ({module})" if module else text


def outline_text(rel_path: str, names: Sequence[str]) -> str:
    """A file as a whole: its path, then the names it defines, as words, each once and in order, e.g.
    `email header registry\naddress, display name, group, ...` (the model reads the first max_tokens of it)."""
    words = dict.fromkeys(" ".join(split_identifier(n)) or n for n in names)
    return _module_words(rel_path) + "\n" + ", ".join(words)


def _module_words(rel_path: str) -> str:
    """The path without its extension, as words: `src/http_client.py` -> `src http client`."""
    stem = rel_path.rsplit(".", 1)[0] if "." in rel_path.rsplit("/", 1)[-1] else rel_path
    return " ".join(w for part in stem.split("/") for w in split_identifier(part))


def document_hash(document: str) -> str:
    return hashlib.sha256(document.encode("utf-8", "surrogatepass")).hexdigest()


def keyword_fields(chunk: Chunk, rel_path: str) -> tuple[str, str, str]:
    """(symbol, path, body) columns of the keyword index for this chunk in this file."""
    symbol = expand_identifiers(chunk.symbol_name) if chunk.symbol_name else ""
    context = expand_identifiers(rel_path.replace("/", " ").replace(".", " "))
    if chunk.parent_symbol:
        context += " " + expand_identifiers(chunk.parent_symbol)
    return symbol, context, expand_identifiers(chunk.text)
