"""Pygments token colours as Qt character formats, inserted with a QTextCursor.

Formats are applied while inserting text rather than from a QSyntaxHighlighter subclass: a Python
override of QSyntaxHighlighter.highlightBlock crashed PySide6 6.12.0 on CPython 3.11 (see refcount_guard.py),
and one Python call per block would cost more than inserting pre-coloured runs.
"""

from __future__ import annotations

from functools import lru_cache

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.lexers.special import TextLexer
from pygments.style import Style
from pygments.styles import get_style_by_name
from pygments.token import _TokenType
from pygments.util import ClassNotFound
from PySide6.QtGui import QColor, QFont, QTextCharFormat, QTextCursor

STYLE_NAME = "friendly"
# Quarry's language names that Pygments knows under another name (the rest match as they are).
_LEXER_ALIASES = {"svelte": "html", "asciidoc": "text"}
_MAX_TOKEN_RUN = 4000  # merge runs of same-format tokens up to this many characters


@lru_cache(maxsize=64)
def lexer_for(language: str) -> Lexer:
    """A lexer for one of Quarry's language names (they are Pygments aliases); plain text otherwise."""
    # By name only: a file-name lookup may scan every installed package's plugin entry points.
    # stripnl/ensurenl off: the preview must keep every line where it is, blank ones included.
    options = {"stripnl": False, "ensurenl": False}
    try:
        return get_lexer_by_name(_LEXER_ALIASES.get(language, language), **options)
    except ClassNotFound:
        return TextLexer(**options)


class TokenFormats:
    """QTextCharFormat per Pygments token type, from one Pygments style."""

    def __init__(self, style_name: str = STYLE_NAME):
        self.style: type[Style] = get_style_by_name(style_name)
        self._formats: dict[_TokenType, QTextCharFormat] = {}
        self.background = QColor(self.style.background_color or "#ffffff")

    def format_for(self, token: _TokenType) -> QTextCharFormat:
        fmt = self._formats.get(token)
        if fmt is None:
            fmt = self._formats[token] = self._build(token)
        return fmt

    def _build(self, token: _TokenType) -> QTextCharFormat:
        spec = self.style.style_for_token(token)
        fmt = QTextCharFormat()
        if spec["color"]:
            fmt.setForeground(QColor(f"#{spec['color']}"))
        if spec["bold"]:
            fmt.setFontWeight(QFont.Weight.Bold)
        if spec["italic"]:
            fmt.setFontItalic(True)
        return fmt


Run = tuple[_TokenType, str]  # a stretch of text of one token type


def lex_runs(text: str, language: str, lead: str = "") -> list[Run]:
    """`text` as runs of one token type each, lexed after `lead` (the lines before it in its file): an
    excerpt that starts inside a docstring or a comment is coloured as one, not read as code from its first
    line (which inverted the colours). Pure Pygments, so the window runs it off its own thread."""
    runs: list[Run] = []
    run_token: _TokenType | None = None
    run: list[str] = []
    run_len = 0
    skip = len(lead)
    for token, value in lexer_for(language).get_tokens(lead + text):
        if skip:
            if len(value) <= skip:
                skip -= len(value)
                continue
            value, skip = value[skip:], 0
        # Colours are styled on the token's closest styled ancestor; merging on the token type is enough.
        if token is not run_token or run_len > _MAX_TOKEN_RUN:
            if run_token is not None and run:
                runs.append((run_token, "".join(run)))
            run_token, run, run_len = token, [], 0
        run.append(value)
        run_len += len(value)
    if run_token is not None and run:
        runs.append((run_token, "".join(run)))
    return runs


def insert_runs(cursor: QTextCursor, runs: list[Run], formats: TokenFormats) -> None:
    """Insert lexed runs at `cursor`, each in its token's colours."""
    for token, value in runs:
        cursor.insertText(value, formats.format_for(token))
