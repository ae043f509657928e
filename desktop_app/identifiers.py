"""Splitting code identifiers into words, for the keyword index and for queries.

`parseHTTPHeader` -> parse, http, header; `read_file` -> read, file; `HTTP2Server` -> http2, server.
The keyword index stores each identifier whole *and* split, so a search for the exact name
and a search for its words both match.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+")
# Boundaries inside an identifier: lower->Upper, ACRONYMWord, and underscores / digits runs.
_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+[0-9]*|[A-Z]+[0-9]*|[0-9]+")


def split_identifier(name: str) -> list[str]:
    """Lower-case word parts of one identifier; a plain word gives itself."""
    parts = [p.lower() for piece in name.split("_") if piece for p in _PARTS.findall(piece)]
    return parts or ([name.lower()] if name.strip("_") else [])


def expand_identifiers(text: str) -> str:
    """Text for the keyword index: every word kept, identifiers followed by their parts."""
    out: list[str] = []
    for word in _WORD.findall(text):
        out.append(word)
        parts = split_identifier(word)
        # also when one part remains: `__init__` -> init, `0_` -> 0 (the index keeps `_` inside tokens)
        if parts and parts != [word.lower()]:
            out.extend(parts)
    return " ".join(out)
