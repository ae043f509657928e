"""Where a ranked search's query words occur in a hit, for the preview to highlight them."""

from __future__ import annotations

import re

from .query import parse

MIN_TERM_CHARS = 3  # "a", "of", "to" marked everywhere would hide the words that matter


def term_spans(query: str, text: str, first_line: int) -> list[tuple[int, int, int]]:
    """(line, start column, end column) of each occurrence of the query's words and identifiers in `text`
    (whose first line is file line `first_line`), case ignored; columns count characters from 0."""
    parsed = parse(query)
    terms = sorted({t for t in (*parsed.identifiers, *parsed.words) if len(t) >= MIN_TERM_CHARS}, key=len, reverse=True)
    if not terms:
        return []
    # Longest first, so whole names win; each at the start of a word or of an identifier's part (after `_`):
    # "mime" marked inside "quoprimime" and "word" inside "unencoded" (seen on the email package) was noise.
    alternatives = "|".join(re.escape(t) for t in terms)
    pattern = re.compile(rf"(?<![^\W_])(?:{alternatives})", re.IGNORECASE)
    return [
        (first_line + row, m.start(), m.end())
        for row, line in enumerate(text.split("\n"))
        for m in pattern.finditer(line)
    ]
