"""Words every front end shares when it counts things: "1 file", "3 files", "1,204 matches"."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str = "") -> str:
    """`n` with thousands separators and its noun, singular for one (`plural`: when it is not noun + "s")."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"
