"""Turning a user's query into the words and identifiers the keyword and symbol-name retrievers look for.

A pasted page of text keeps only its first MAX_TERMS distinct words and identifiers, so its keyword query
stays fast (the model reads only the first few hundred tokens of it anyway). Characters such as `*`, `"`
or `-` are never operators: the store searches for the terms as text.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from ..identifiers import last_name, split_identifier

_TOKEN = re.compile(r"\w+")
_TYPE_NAME = re.compile(r"[A-Z][A-Za-z0-9]*")
_AROUND_A_WORD = "\"'`.,;:!?()[]{}<>"
# Words besides identifiers that make a query prose rather than code (ParsedQuery.is_sentence).
SENTENCE_WORDS = 3
MAX_TERMS = 64
_IDENTIFIER = re.compile(r"^[A-Za-z_$][\w$]*(?:(?:\.|::|->)[A-Za-z_$][\w$]*)*$")
# Words too common in natural-language questions to say anything about code.
STOPWORDS = frozenset(
    (
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "for",
        "and",
        "or",
        "is",
        "are",
        "be",
        "by",
        "with",
        "from",
        "as",
        "at",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "into",
        "onto",
        "which",
        "what",
        "where",
        "when",
        "how",
        "why",
        "do",
        "does",
        "did",
        "can",
        "could",
        "should",
        "would",
        "will",
        "we",
        "our",
        "you",
        "your",
        "i",
        "me",
        "my",
        "any",
        "all",
        "some",
        "each",
        "every",
        "there",
        "their",
        "them",
        "they",
        "if",
        "then",
        "else",
        "not",
        "no",
        "yes",
        "than",
        "so",
        "such",
        "via",
        "using",
        "use",
        "used",
    )
)


@dataclass(frozen=True)
class ParsedQuery:
    text: str
    words: tuple[str, ...]  # content words, identifiers split, stopwords dropped (the store folds case)
    identifiers: tuple[str, ...]  # whole identifiers as typed (`read_file`, `JSONDecoder`, `a.b.c` -> c)
    looks_like_identifier: bool  # the whole query is one identifier or dotted path

    @property
    def is_sentence(self) -> bool:
        """The query is prose: SENTENCE_WORDS or more of its words are not identifiers ("Returns a DecodeHookFunc
        that converts strings", not `MapAccess and SeqAccess` or `def parse_args`)."""
        names = set(self.identifiers)
        return sum(1 for token in _TOKEN.findall(self.text) if token not in names) >= SENTENCE_WORDS

    @functools.cached_property
    def type_names(self) -> frozenset[str]:
        """The words written as a type's name: capitalised, not all capitals (an acronym such as HTTP or JSON
        names a protocol or format more often than a file's type), whole words (not `Header-encode`), the last
        part of a qualified one (`Rails::Engine` -> Engine). Snake-case names are left out: a file named after a
        function (`order_by.ex`, `from_json.hpp`) was less often the answer than the module using it."""
        names = set()
        for word in self.text.split():
            name = last_name(word.strip(_AROUND_A_WORD).removesuffix("'s"))
            if _TYPE_NAME.fullmatch(name) and not name.isupper():
                names.add(name)
        return frozenset(names)

    @functools.cached_property  # read per candidate while ranking (a type's chunk, the file evidence, names)
    def describes_an_action(self) -> bool:
        """The query says what some code does, as a doc comment's first sentence or a request does: it opens with
        an action verb, in the third person ("Returns the ...", "Converts a ..."), or followed by what it acts on
        ("parse a MIME header", "set the target handler") or by anything in a sentence ending in its period. Such a
        question asks for the function that does it, where a noun phrase ("immutable pair container for two related
        values") or a "how ..." question asks about a part of the code as a whole."""
        tokens = _TOKEN.findall(self.text)
        if len(tokens) < 2:
            return False
        first, second = tokens[0].lower(), tokens[1].lower()
        if first in ACTION_VERBS:
            # A sentence ending in its period is one written to say what code does ("Copy data and metadata.",
            # "Parse XML document from string."), where a bare object follows the verb. Hybrid nl MRR@10, at the end
            # of stage 2 / on the full index: stdlib dev 0.550 -> 0.562 / 0.606 -> 0.618, held-out 0.474 -> 0.475 /
            # 0.532 -> 0.540, the doc-comment sets' mean 0.5297 -> 0.5357 / 0.5523 -> 0.5565 (213 of their 1,873
            # questions told so; 62 up, 32 down at the end of stage 2); none of semble-dev's questions.
            return second in OBJECT_OPENERS or self.text.rstrip().endswith(".")
        return any(stem in ACTION_VERBS for stem in _third_person_stems(first))


def _third_person_stems(word: str) -> tuple[str, ...]:
    """The base forms `word` may be the third person of: returns -> return, matches -> match, applies -> apply."""
    if word.endswith("ies"):
        return (word[:-3] + "y",)
    if word.endswith("es"):
        return (word[:-1], word[:-2])
    if word.endswith("s") and not word.endswith("ss"):
        return (word[:-1],)
    return ()


# Verbs a description of what a function does opens with; in the base form they count only before a word that
# opens their object (OBJECT_OPENERS), since many are nouns as well ("log", "map", "record"). The second
# round of verbs (allow, assert, attempt, clamp, ... "Instantiates a new set", "Populates the cache") and the
# openers "whether", "if", "true", "false" ("Check whether ...", "Return true if ...") told 130 more of the
# function-level sets' 1,873 questions as such; hybrid, full index: the doc-comment sets' mean 0.515 -> 0.516
# (Go +0.008, C +0.008, TypeScript -0.009), stdlib dev 0.576 -> 0.577, held-out 0.517 -> 0.518; still none of
# semble-dev's 814 questions. The third round (acquire, arrange, choose, connect, ... "Passes each element",
# "Connect to the host", "Shutdown all active asynchronous generators.", the verbs opening the questions not told
# so): 77 more; at the end of stage 2 / on the full index, stdlib dev 0.562 -> 0.567 / 0.618 -> 0.623, held-out
# 0.475 -> 0.473 / 0.540 -> 0.544, the doc-comment sets' mean 0.5357 -> 0.5359 / 0.5565 -> 0.5567 (Go and
# TypeScript -0.003 at the end of stage 2, Rust +0.005); none of semble-dev's.
ACTION_VERBS = frozenset(
    [
        "access",
        "acquire",
        "add",
        "adjust",
        "allocate",
        "allow",
        "append",
        "apply",
        "arrange",
        "assert",
        "assign",
        "attach",
        "attempt",
        "build",
        "calculate",
        "call",
        "cancel",
        "change",
        "check",
        "choose",
        "clamp",
        "clean",
        "clear",
        "close",
        "collect",
        "combine",
        "compare",
        "compile",
        "compute",
        "configure",
        "connect",
        "construct",
        "convert",
        "copy",
        "count",
        "create",
        "decode",
        "decompose",
        "decrement",
        "delete",
        "deserialize",
        "destroy",
        "detect",
        "determine",
        "disable",
        "discard",
        "dispatch",
        "display",
        "download",
        "drop",
        "emit",
        "enable",
        "encode",
        "ensure",
        "escape",
        "evaluate",
        "execute",
        "expand",
        "extend",
        "extract",
        "fetch",
        "fill",
        "filter",
        "find",
        "flush",
        "format",
        "free",
        "generate",
        "get",
        "handle",
        "hash",
        "implement",
        "increment",
        "indent",
        "indicate",
        "init",
        "initialize",
        "insert",
        "install",
        "instantiate",
        "invoke",
        "iterate",
        "join",
        "keep",
        "list",
        "load",
        "lock",
        "log",
        "look",
        "lookup",
        "make",
        "mark",
        "match",
        "merge",
        "move",
        "multiply",
        "normalize",
        "notify",
        "open",
        "override",
        "parse",
        "pass",
        "perform",
        "pop",
        "populate",
        "prepare",
        "print",
        "process",
        "produce",
        "publish",
        "push",
        "put",
        "read",
        "receive",
        "register",
        "release",
        "reload",
        "remove",
        "rename",
        "render",
        "replace",
        "report",
        "reserve",
        "reset",
        "resize",
        "resolve",
        "restore",
        "retrieve",
        "return",
        "rotate",
        "run",
        "save",
        "scale",
        "scan",
        "schedule",
        "search",
        "select",
        "send",
        "serialize",
        "serve",
        "set",
        "setup",
        "show",
        "shutdown",
        "skip",
        "sort",
        "split",
        "start",
        "stop",
        "store",
        "strip",
        "submit",
        "subscribe",
        "subtract",
        "swap",
        "take",
        "test",
        "transform",
        "translate",
        "traverse",
        "treat",
        "trigger",
        "truncate",
        "try",
        "turn",
        "unlock",
        "unregister",
        "unwrap",
        "update",
        "upgrade",
        "upload",
        "use",
        "validate",
        "verify",
        "visit",
        "wait",
        "walk",
        "wrap",
        "write",
        "yield",
    ]
)
OBJECT_OPENERS = frozenset(
    [
        "whether",
        "if",
        "true",
        "false",
        "a",
        "an",
        "the",
        "all",
        "any",
        "each",
        "every",
        "this",
        "that",
        "these",
        "those",
        "its",
        "their",
        "his",
        "her",
        "my",
        "your",
        "our",
        "one",
        "two",
        "some",
        "given",
        "new",
    ]
)


def _looks_like_code(token: str) -> bool:
    """`read_file`, `parseHTTP`, `JSONDecoder`: shaped like an identifier, unlike a capitalised word."""
    return (
        ("_" in token.strip("_") or any(c.isupper() for c in token[1:]))
        and not token.isupper()
        or (token.isupper() and "_" in token)
    )


def parse(query: str) -> ParsedQuery:
    text = query.strip()
    tokens = _TOKEN.findall(text)
    words: list[str] = []
    identifiers: list[str] = []
    for tok in tokens:
        parts = split_identifier(tok)
        if _looks_like_code(tok):
            identifiers.append(tok)
        content = [p for p in parts if p not in STOPWORDS]
        words.extend(content)
        # The splitter knows ASCII letter cases only (`ñandú` keeps just "and", a stopword). The keyword index
        # holds every word whole as well, so look for the word whole when its parts lost letters or say nothing.
        if tok.lower() not in STOPWORDS and (
            not content or "".join(parts) != tok.replace("_", "").lower() or not tok.isascii()
        ):
            # as typed: the keyword index folds case with its own tables, which differ from str.lower() (e.g. Cherokee)
            words.append(tok)
    single = bool(_IDENTIFIER.match(text)) and " " not in text
    if single:
        last = last_name(text)
        if last not in identifiers:
            identifiers.append(last)
    return ParsedQuery(
        text, tuple(dict.fromkeys(words))[:MAX_TERMS], tuple(dict.fromkeys(identifiers))[:MAX_TERMS], single
    )


def any_terms(parsed: ParsedQuery) -> list[str]:
    """The terms of an "any word" keyword search: content words, then whole identifiers."""
    return list(dict.fromkeys([*parsed.words, *(i.lower() for i in parsed.identifiers)]))
