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
REPEAT_RUN = 32  # characters of a repeated literal kept in a needle (`a{1000}`: its first and last 32)

try:  # the parser behind `re` (public as sre_parse before 3.11); without it, every chunk is read
    from re import _constants as _sre  # type: ignore[attr-defined]
    from re import _parser as _sre_parser  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - a Python that moved it again
    _sre = _sre_parser = None


# Syntax both accept with different meanings: `[[:alpha:]]` (a POSIX class to RE2), `{,3}` (a literal to RE2),
# `(?U)` (Unicode to `re`, lazy repeats to RE2).
_RE2_READS_OTHERWISE = re.compile(r"\[:|\{,|\(\?[a-zA-Z]*[Uu]")
# What `re.compile` raises for a pattern it cannot take: `a{99999999999}` raises OverflowError, 1,000 nested
# groups RecursionError.
_INVALID = (re.error, OverflowError, RecursionError)
# RE2 reads UTF-8 as `re` reads text, but its \w, \d and \b know ASCII letters and digits only and its \s five
# spaces, and ignoring case it folds as Unicode does, where `re` also takes İ and ı for i (the only difference
# over the 2,927 characters case changes). Where the pattern depends on one of these, a line holding a character
# they judge otherwise is matched by `re` (text_search.py): letters and digits beyond ASCII (é, 中, ٣), the spaces
# beyond \t\n\f\r and " " (\x0b, \x1c-\x1f, \xa0, U+2028...), or İ and ı.
_WORD_BEYOND_ASCII = r"[^\W\x00-\x7f]"
_SPACE_BEYOND_RE2 = r"[^\S\t\n\f\r ]"
_DOTTED_I = "[\u0130\u0131]"
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
# Word characters as RE2 reads them: on the lines RE2 matches, no letter or digit goes beyond ASCII. The
# pattern's class and text search's byte test (WORD_BYTES) are made from this one list.
_WORD_CLASS = "0-9A-Za-z_"
_NOT_WORD = f"[^{_WORD_CLASS}]"
WORD_BYTES = frozenset(b for b in range(128) if re.fullmatch(f"[{_WORD_CLASS}]", chr(b)))


@dataclass(frozen=True)
class Re2Pattern:
    """A pattern compiled by RE2 for UTF-8 text: it runs in linear time, and several times faster than `re`
    ([A-Z][a-zA-Z]+Exception\\b over 1 MB: 8 ms against 45)."""

    # Searched for. With `word`: the pattern (group 1) after a line start or a non-word character, and before a
    # non-word character or a line end.
    find: Any
    # With `word`: the pattern (group 1) before a non-word character or a line end, matched at a given place (whose
    # preceding character is checked apart). RE2 has no look-arounds; text_search.py explains how the two make
    # `re`'s (?<!\w)(?:pattern)(?!\w).
    at: Any | None
    # RE2 may match a line holding one of these otherwise than `re`: `re` matches such lines. None: no line.
    differs_on: re.Pattern[str] | None
    # Whether some of them are ASCII (\x0b and \x1c-\x1f, with \s): else text all ASCII needs no look.
    differs_in_ascii: bool


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
        except _INVALID as exc:
            raise SearchError(f"invalid regular expression {self.text!r}: {exc}") from None

    def compiled_re2(self) -> Re2Pattern | None:
        """The same pattern for RE2, or None where RE2 cannot match it as `re` does anywhere: it refuses
        look-arounds and back-references, reads a few things otherwise (_RE2_READS_OTHERWISE), or would fold an
        İ or ı in the pattern otherwise."""
        if self.regex and _RE2_READS_OTHERWISE.search(self.text):
            return None
        if not self.case_sensitive and self._mentions_dotted_i():
            return None
        source = self.text if self.regex else re2.escape(self.text)
        options = re2.Options()
        options.case_sensitive = self.case_sensitive
        options.log_errors = False
        try:
            if not self.word:
                return Re2Pattern(re2.compile(f"(?m){source}".encode(), options), None, *self._differs_on())
            return Re2Pattern(
                re2.compile(f"(?m)(?:^|{_NOT_WORD})({source})(?:{_NOT_WORD}|$)".encode(), options),
                re2.compile(f"(?m)({source})(?:{_NOT_WORD}|$)".encode(), options),
                *self._differs_on(),
            )
        except re2.error:  # refused, or over RE2's limits (a repeat over 1000, a program over its 8 MB)
            return None

    def _differs_on(self) -> tuple[re.Pattern[str] | None, bool]:
        """Re2Pattern.differs_on and differs_in_ascii for this pattern (see _WORD_BEYOND_ASCII)."""
        escapes = {m[1] for m in _ESCAPE.finditer(self.text)} if self.regex else set()
        word = self.word or bool(escapes & set("wWdDbB"))
        classes = [
            _WORD_BEYOND_ASCII if word else "",
            _SPACE_BEYOND_RE2 if escapes & set("sS") else "",
            "" if self.case_sensitive or word else _DOTTED_I,  # both are letters
        ]
        found = "|".join(c for c in classes if c)
        return (re.compile(found) if found else None), bool(escapes & set("sS"))

    def _mentions_dotted_i(self) -> bool:
        """Whether the pattern names İ or ı, alone or in a range."""
        if not self.regex:
            return any(c in "\u0130\u0131" for c in self.text)
        if _sre_parser is None:
            return not self.text.isascii()
        try:
            return _covers(list(_sre_parser.parse(self.text)), 0x130, 0x131)
        except _INVALID:
            return True

    def needles(self) -> list[list[str]]:
        """Alternatives of substrings every match contains: a match holds all the substrings of one of them
        (each at least TRIGRAM characters, the longest few). No alternatives: any chunk may match."""
        if not self.regex:
            return [[self.text]] if len(self.text) >= TRIGRAM else []
        if _sre_parser is None:
            return []
        try:
            items = list(_sre_parser.parse(self.text, 0 if self.case_sensitive else re.IGNORECASE))
        except _INVALID:
            return []
        # A pattern that is one alternation (`TODO|FIXME`, or the same in a group) needs one of its branches.
        while len(items) == 1 and items[0][0] is _sre.SUBPATTERN:
            items = list(items[0][1][-1])
        branches = [list(b) for b in items[0][1][1]] if len(items) == 1 and items[0][0] is _sre.BRANCH else [items]
        out = []
        for branch in branches:
            found = dict.fromkeys(r for r in _required_runs(branch) if len(r) >= TRIGRAM)
            runs = sorted(found, key=len, reverse=True)[:3]
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
            least, most, repeated = arg
            unit = _literal(list(repeated))
            if unit is None:
                cut()
                runs += _required_runs(list(repeated))  # at least once: what one repetition needs
                continue
            # A repeated literal (`x{4}`, `_{5,}`, `(ab){2}`) is `least` copies of it, run on from what comes before;
            # with more allowed, the last `least` copies still run on into what comes after (`x{4,}y` holds
            # "xxxxy"). Without this, `x{4}y` found no substring of 3 and read every chunk of the Linux kernel (4.6
            # s against ripgrep's 0.66). Past REPEAT_RUN characters only the ends are kept: a substring of a
            # certain run is certain too, and the trigram lookup needs no more.
            copies = unit * least
            if most == least and len(copies) <= REPEAT_RUN:
                current.append(copies)
                continue
            current.append(copies[:REPEAT_RUN])
            cut()
            current.append(copies[-REPEAT_RUN:])
        elif op is _sre.AT:
            pass  # an anchor (^, $, \b) takes no characters: the run goes on across it
        else:  # a class, an alternation, an optional part...: no literal is certain across it
            cut()
    cut()
    return runs


def _literal(items: list) -> str | None:
    """The text a sequence of parsed items always matches as it stands (literals, in groups or not), else None."""
    out = []
    for op, arg in items:
        if op is _sre.LITERAL:
            out.append(chr(arg))
        elif op is _sre.SUBPATTERN and (inner := _literal(list(arg[-1]))) is not None:
            out.append(inner)
        else:
            return None
    return "".join(out) or None


def _covers(node: Any, low: int, high: int) -> bool:
    """Whether a parsed pattern holds a literal or a range reaching into low..high."""
    if isinstance(node, tuple) and len(node) == 2 and (node[0] is _sre.LITERAL or node[0] is _sre.NOT_LITERAL):
        return low <= node[1] <= high
    if isinstance(node, tuple) and len(node) == 2 and node[0] is _sre.RANGE:  # (RANGE, (first, last))
        return node[1][0] <= high and node[1][1] >= low
    if isinstance(node, (list, tuple, _sre_parser.SubPattern)):
        return any(_covers(item, low, high) for item in node)
    return False
