"""Question -> code pairs mined from the training corpus for the contrastive step (contrastive.py).

For every function or method whose definition carries a doc comment (the comment lines right above it, or a
Python docstring right below its `def` line) the comment's first sentence is the question, and the
function's document without the comment is the answer: the text the index embeds for that function, as
Quarry's own parser and chunker find it. A search by meaning asks for code in words much as a doc comment
describes it, and nothing else in the static model's training pairs a sentence with the code it describes.

Questions of fewer than MIN_WORDS words, ones that only restate the name, and functions of more than
MAX_LINES lines (which the index cuts into several chunks) are left out.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator

from ..identifiers import split_identifier
from ..indexing.chunk import Chunk
from ..indexing.documents import document_text
from ..indexing.syntax import COMMENT, LEADING, Definition, outline
from .texts import SourceFile, read_text, sample_by_language

MIN_WORDS = 4
MAX_QUESTION_WORDS = 40
MAX_LINES = 80

# Comment markers and doc-tool tags around a comment's words.
_MARKERS = re.compile(r'^\s*(?:/\*\*?|\*/|\*|///?|//!|#+|--+|;+|"""|\'\'\'|\{-\||-\}|%+)\s?')
_HADDOCK = re.compile(r"^[|^]\s?")  # `-- |` and `-- ^` open a Haddock comment
_TAG = re.compile(r"^\s*[@\\](?:param|return|returns|throws|brief|details|note|see|since|deprecated)\b", re.I)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def question(comment_lines: list[str]) -> str | None:
    """The first sentence of a doc comment as plain words, or None when it says too little."""
    words: list[str] = []
    for line in comment_lines:
        text = _HADDOCK.sub("", _MARKERS.sub("", line).strip().rstrip("*/").strip().strip('"').strip("'"))
        if _TAG.match(text):
            break  # the tag block after the summary
        if not text:
            if words:
                break  # the summary paragraph ended
            continue
        words.append(text)
    sentence = _SENTENCE_END.split(" ".join(words), maxsplit=1)[0].strip()
    count = len(sentence.split())
    if (
        count < MIN_WORDS
        or count > MAX_QUESTION_WORDS
        or sentence.lower().startswith(("todo", "deprecated"))
        or ">>>" in sentence  # a doctest, not a description
    ):
        return None
    return sentence


def _python_docstrings(text: str) -> dict[int, range]:
    """The rows of each Python function's docstring, by the row of its `def` line (the outline does not mark
    docstrings inside functions as comments)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                found[node.lineno - 1] = range(first.lineno - 1, (first.end_lineno or first.lineno))
    return found


def _functions(definitions: Iterable[Definition]) -> Iterator[Definition]:
    for d in definitions:
        if d.is_function:
            yield d
        yield from _functions(d.members)


def documented_functions(text: str, source: SourceFile) -> Iterator[tuple[Definition, str, set[int]]]:
    """(function, its doc comment's first sentence, the comment's rows) for each documented function of a file."""
    found = outline(text, source.language, source.rel_path)
    if found is None:
        return
    lines = text.split("\n")
    flags = found.line_flags
    docstrings = _python_docstrings(text) if source.language == "python" else {}
    for d in _functions(found.definitions):
        rows = range(d.start, d.end + 1)
        doc = [r for r in rows if flags[r] & LEADING and flags[r] & COMMENT]
        if not doc:
            doc = next((list(span) for row, span in docstrings.items() if d.start <= row <= d.end), [])
        asked = question([lines[r] for r in doc])
        if asked is not None:
            yield d, asked, set(doc)


def file_pairs(source: SourceFile) -> Iterator[dict]:
    """{"question", "answer", "language"} for each documented function of one file."""
    text = read_text(source)
    if text is None:
        return
    lines = text.split("\n")
    for d, asked, skipped in documented_functions(text, source):
        if d.end - d.start + 1 > MAX_LINES or set(asked.lower().split()) <= set(split_identifier(d.name)):
            continue
        code = "\n".join(lines[r] for r in range(d.start, d.end + 1) if r not in skipped)
        chunk = Chunk(code, d.start + 1, d.end + 1, "function", d.name, d.symbol_type, d.parent, 0)
        yield {"question": asked, "answer": document_text(chunk, source.rel_path), "language": source.language}


def mine_pairs(files: Iterable[SourceFile], per_language: int, seed: int) -> list[dict]:
    """Up to `per_language` pairs of each language, files in a seeded order, the whole list shuffled."""
    return sample_by_language(files, per_language, seed, file_pairs)
