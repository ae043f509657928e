"""Paths whose names are not UTF-8: how to show them, and what they would read as.

The index keeps paths as UTF-8 text. A name in another encoding (a folder made on a Latin-1 system, say)
reaches Python with its stray bytes kept as surrogates (PEP 383) and cannot be stored; these helpers let
each front end say exactly which name it is and what to rename it to.
"""

from __future__ import annotations

from pathlib import PurePath


def is_utf8(text: str) -> bool:
    """False for text holding bytes the system could not decode (kept as surrogates)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown(text: str) -> str:
    """`text` with each stray byte written as \\xNN: printable, and exact."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def as_latin1(text: str) -> str:
    """`text` with each stray byte read as Latin-1: the likeliest meaning of a European name, e.g. 'café'."""
    return "".join(chr(ord(c) - 0xDC00) if 0xDC80 <= ord(c) <= 0xDCFF else c for c in text)


def first_non_utf8_name(path: str) -> str | None:
    """The first component of `path` that is not UTF-8, or None when all of it is."""
    return next((part for part in PurePath(path).parts if not is_utf8(part)), None)
