"""Words every front end shares when it counts things: "1 file", "3 files", "1,204 matches", "4.1 GB"."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str = "") -> str:
    """`n` with thousands separators and its noun, singular for one (`plural`: when it is not noun + "s")."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def file_size(n: int) -> str:
    """A size in bytes as people read one: "820 KB", "37.2 MB", "4.1 GB" (powers of 1,000, as file managers show)."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{max(1, round(n / 1e3))} KB"
