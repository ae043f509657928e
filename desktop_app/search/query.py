"""Turning a user's query into keyword-index (FTS5) expressions that can never be a syntax error.

Every term is quoted, so characters such as `*`, `"`, `(`, `-`, `:` or `NEAR` in a query are
searched for as text rather than read as FTS5 operators.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..indexing.identifiers import split_identifier

_TOKEN = re.compile(r"\w+")
_IDENTIFIER = re.compile(r"^[A-Za-z_$][\w$]*(?:(?:\.|::|->)[A-Za-z_$][\w$]*)*$")
# Words too common in natural-language questions to say anything about code.
STOPWORDS = frozenset((
    "a", "an", "the", "of", "to", "in", "on", "for", "and", "or", "is", "are", "be", "by", "with", "from", "as",
    "at", "it", "its", "this", "that", "these", "those", "into", "onto", "which", "what", "where", "when", "how",
    "why", "do", "does", "did", "can", "could", "should", "would", "will", "we", "our", "you", "your", "i", "me",
    "my", "any", "all", "some", "each", "every", "there", "their", "them", "they", "if", "then", "else", "not",
    "no", "yes", "than", "so", "such", "via", "using", "use", "used",
))


@dataclass(frozen=True)
class ParsedQuery:
    text: str
    words: tuple[str, ...]  # lower-case content words, identifiers split, stopwords dropped
    identifiers: tuple[str, ...]  # whole identifiers as typed (`read_file`, `JSONDecoder`, `a.b.c` -> c)
    looks_like_identifier: bool  # the whole query is one identifier or dotted path


def _looks_like_code(token: str) -> bool:
    """`read_file`, `parseHTTP`, `JSONDecoder`: shaped like an identifier, unlike a capitalised word."""
    return ("_" in token.strip("_") or any(c.isupper() for c in token[1:])) and not token.isupper() \
        or (token.isupper() and "_" in token)


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def parse(query: str) -> ParsedQuery:
    text = query.strip()
    tokens = _TOKEN.findall(text)
    words: list[str] = []
    identifiers: list[str] = []
    for tok in tokens:
        parts = split_identifier(tok)
        if _looks_like_code(tok):
            identifiers.append(tok)
        words.extend(p for p in parts if p not in STOPWORDS)
    single = bool(_IDENTIFIER.match(text)) and " " not in text
    if single:
        last = re.split(r"\.|::|->", text)[-1]
        if last not in identifiers:
            identifiers.append(last)
    return ParsedQuery(text, tuple(dict.fromkeys(words)), tuple(dict.fromkeys(identifiers)), single)


def fts_all(parsed: ParsedQuery) -> str | None:
    """Every content word must appear (in any column)."""
    return " AND ".join(_quote(w) for w in parsed.words) if parsed.words else None


def fts_any(parsed: ParsedQuery) -> str | None:
    """Any content word or whole identifier may appear; BM25 orders by how many and how rare."""
    terms = list(dict.fromkeys([*parsed.words, *(i.lower() for i in parsed.identifiers)]))
    return " OR ".join(_quote(t) for t in terms) if terms else None
