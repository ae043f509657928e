"""Splitting code identifiers into words, for the keyword index and for queries.

`parseHTTPHeader` -> parse, http, header; `read_file` -> read, file; `HTTP2Server` -> http2, server.
The keyword index stores each identifier whole *and* split, so a search for the exact name
and a search for its words both match.
"""

from __future__ import annotations

import re
from functools import lru_cache

_WORD = re.compile(r"\w+")
_QUALIFIER = re.compile(r"\.|::|->")  # what joins a qualified name's parts in the languages indexed
# Boundaries inside an identifier: lower->Upper, ACRONYMWord, and underscores / digits runs.
_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+[0-9]*|[A-Z]+[0-9]*|[0-9]+")


def qualified(name: str, parent: str | None, joint: str = ".") -> str:
    """A symbol's name qualified by its parent (`LRUCache.put`), or alone at the top of its file."""
    return f"{parent}{joint}{name}" if parent else name


def last_name(name: str) -> str:
    """The last part of a qualified name (`Tree.Clear`, `ns::fn`, `obj->method` -> `Clear`, `fn`, `method`)."""
    return _QUALIFIER.split(name)[-1]


def split_identifier(name: str) -> list[str]:
    """Lower-case word parts of one identifier; a plain word gives itself."""
    return list(_split(name))


# Code repeats its words, so splits are cached: expand_identifiers took 5.0 s of a first index of the standard
# library's 20,000 chunks uncached (profiled); with this and the parser's rarer yields, stage 1 went from
# 26 s to 11 s.
@lru_cache(maxsize=1 << 16)
def _split(name: str) -> tuple[str, ...]:
    parts = [p.lower() for piece in name.split("_") if piece for p in _PARTS.findall(piece)]
    return tuple(parts or ([name.lower()] if name.strip("_") else []))


@lru_cache(maxsize=1 << 16)
def expansion(word: str) -> str:
    """`word` followed by its parts, when they differ from it."""
    parts = _split(word)
    # also when one part remains: `__init__` -> init, `0_` -> 0 (the index keeps `_` inside tokens)
    return word + " " + " ".join(parts) if parts and parts != (word.lower(),) else word


def words_of(text: str) -> list[str]:
    """The words (runs of word characters) of a text, as expand_identifiers reads it."""
    return _WORD.findall(text)


def expand_identifiers(text: str) -> str:
    """Text for the keyword index: every word kept, identifiers followed by their parts."""
    return " ".join(map(expansion, _WORD.findall(text)))
