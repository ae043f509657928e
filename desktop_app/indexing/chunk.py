"""The unit Quarry embeds and returns: a run of whole lines from one file."""

from __future__ import annotations

from dataclasses import dataclass

# chunk_type values, recorded per chunk and usable as a search filter.
CHUNK_TYPES = ("function", "type", "code", "comment", "config", "prose")


@dataclass(frozen=True)
class Chunk:
    text: str  # exactly the file's lines start_line..end_line joined with "\n"
    start_line: int  # 1-based, inclusive
    end_line: int  # 1-based, inclusive
    chunk_type: str  # one of CHUNK_TYPES
    symbol_name: str | None = None  # e.g. "decode"
    symbol_type: str | None = None  # e.g. "function", "method", "class", "struct", "heading"
    parent_symbol: str | None = None  # e.g. "JSONDecoder"
    token_count: int = 0  # model tokens of `text`, without special tokens
