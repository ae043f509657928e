"""A literal or a regular expression to find in the indexed text, and the substrings every match contains.

The substrings ("needles") let the store narrow the chunks to read with its trigram index before the real
pattern runs over them; a pattern that guarantees no substring of 3 characters reads every chunk.
Alternations at the top (`TODO|FIXME`) give one set of needles per branch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import re2

from .request import SearchError

TRIGRAM = 3  # a trigram index can look up substrings of at least this many characters

try:  # the parser behind `re` (public as sre_parse before 3.11); without it, every chunk is read
    from re import _constants as _sre  # type: ignore[attr-defined]
    from re import _parser as _sre_parser  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - a Python that moved it again
    _sre = _sre_parser = None


# Syntax both accept with different meanings: `[[:alpha:]]` (a POSIX class to RE2), `{,3}` (a literal to RE2),
# `(?U)` (Unicode to `re`, lazy repeats to RE2).
_RE2_READS_OTHERWISE = re.compile(r"\[:|\{,|\(\?[a-zA-Z]*[Uu]")


@dataclass(frozen=True)
class TextPattern:
    text: str  # what the user typed
    regex: bool = False
    case_sensitive: bool = False
    word: bool = False  # whole words only: the match neither starts nor ends inside a word

    def compiled(self) -> re.Pattern[str]:
        """The pattern as `re` runs it, line by line: `.` and `\\s` never cross a line end."""
        source = self.text if self.regex else re.escape(self.text)
        if self.word:
            source = rf"(?<!\w)(?:{source})(?!\w)"
        flags = re.MULTILINE | (0 if self.case_sensitive else re.IGNORECASE)
        try:
            return re.compile(source, flags)
        except re.error as exc:
            raise SearchError(f"invalid regular expression {self.text!r}: {exc}") from None

    def compiled_re2(self) -> Any | None:
        """The same pattern for RE2, or None where RE2 would not match alike: it runs in linear time, several
        times faster than `re` ([A-Z][a-zA-Z]+Exception\\b over 1 MB: 8 ms against 45), but its `\\w`, `\\d`,
        `\\b` and `\\s` know ASCII only, so it is used on ASCII text only (text_search.py), where they agree
        with `re`'s except `\\s`, which leaves out \\x0b and \\x1c-\\x1f (checked there). No look-arounds or
        back-references (so not with `word`): RE2 refuses them, and `re` runs those."""
        if self.word or (self.regex and _RE2_READS_OTHERWISE.search(self.text)):
            return None
        source = self.text if self.regex else re.escape(self.text)
        options = re2.Options()
        options.case_sensitive = self.case_sensitive
        options.log_errors = False
        try:
            # Compiled for bytes: on ASCII text a byte offset is a character offset, and RE2's wrapper spends
            # more converting offsets of a str than finding the match.
            return re2.compile(f"(?m){source}".encode(), options)
        except re2.error:
            return None

    def needles(self) -> list[list[str]]:
        """Alternatives of substrings every match contains: a match holds all the substrings of one of them
        (each at least TRIGRAM characters, the longest few). No alternatives: any chunk may match."""
        if not self.regex:
            return [[self.text]] if len(self.text) >= TRIGRAM else []
        if _sre_parser is None:
            return []
        try:
            items = list(_sre_parser.parse(self.text, 0 if self.case_sensitive else re.IGNORECASE))
        except re.error:
            return []
        # A pattern that is one alternation (`TODO|FIXME`, or the same in a group) needs one of its branches.
        while len(items) == 1 and items[0][0] is _sre.SUBPATTERN:
            items = list(items[0][1][-1])
        branches = [list(b) for b in items[0][1][1]] if len(items) == 1 and items[0][0] is _sre.BRANCH else [items]
        out = []
        for branch in branches:
            runs = sorted((r for r in _required_runs(branch) if len(r) >= TRIGRAM), key=len, reverse=True)[:3]
            if not runs:
                return []  # this branch can match without any: every chunk may match
            out.append(runs)
        return out


def _required_runs(items: list) -> list[str]:
    """Literal runs that any match of this sequence of parsed items must contain."""
    runs: list[str] = []
    current: list[str] = []

    def cut() -> None:
        if current:
            runs.append("".join(current))
            current.clear()

    for op, arg in items:
        if op is _sre.LITERAL:
            current.append(chr(arg))
        elif op is _sre.SUBPATTERN:
            cut()
            runs += _required_runs(list(arg[-1]))
        elif op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT) and arg[0] >= 1:
            cut()
            runs += _required_runs(list(arg[2]))  # at least once: what one repetition needs
        elif op is _sre.AT:
            pass  # an anchor (^, $, \b) takes no characters: the run goes on across it
        else:  # a class, an alternation, an optional part...: no literal is certain across it
            cut()
    cut()
    return runs
