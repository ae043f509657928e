"""The texts a static model is trained on: what the index embeds for code, cut by Quarry's own chunker.

For each source file of the corpus: every chunk's document (its path and symbol header, then its lines,
exactly as indexing/documents.py builds it), each defining chunk's name text, and the file's outline. The
student then learns to reproduce the teacher on the very kinds of text it will embed at index time. Files
are sampled evenly across languages (a language with more files does not crowd out the others) and the
sample is fixed by a seed, so the same corpus gives the same texts.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from tokenizers import Tokenizer

from ..indexing.chunking import chunk_file
from ..indexing.documents import document_text, name_text, outline_text
from ..indexing.languages import classify

# The chunker's token counts use the model's tokenizer without special tokens, as indexing does.
MAX_CHUNK_TOKENS = 256
MAX_FILE_BYTES = 512 * 1024  # the index's default size limit


@dataclass(frozen=True)
class SourceFile:
    path: Path  # where the file's bytes are
    rel_path: str  # its path inside its package, as the index would show it
    language: str
    package: str = ""  # the registry's name of the package it came from


def training_texts(files: Iterable[SourceFile], tokenizer_path: Path, per_language: int, seed: int) -> list[dict]:
    """Up to `per_language` texts of each language: {"text", "kind" (document|name|outline), "language"}."""
    tokenizer = Tokenizer.from_file(str(tokenizer_path))
    # tokenizer.json files often carry fixed padding (to 128 here): every line would count 128 tokens and
    # every chunk be a line or two.
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return sample_by_language(files, per_language, seed, lambda source: _file_texts(source, tokenizer))


def sample_by_language(
    files: Iterable[SourceFile], per_language: int, seed: int, items: Callable[[SourceFile], Iterable[dict]]
) -> list[dict]:
    """Up to `per_language` of the `items` each language's files give, the files taken in a seeded order and
    the whole list shuffled: a language with more files does not crowd out the others, and the same corpus
    gives the same list."""
    by_language: dict[str, list[SourceFile]] = defaultdict(list)
    for source in files:
        by_language[source.language].append(source)
    rnd = random.Random(seed)
    out: list[dict] = []
    for language in sorted(by_language):
        group = sorted(by_language[language], key=lambda f: f.rel_path)
        rnd.shuffle(group)
        taken: list[dict] = []
        for source in group:
            if len(taken) >= per_language:
                break
            taken.extend(items(source))
        out.extend(taken[:per_language])
    rnd.shuffle(out)
    return out


def read_text(source: SourceFile) -> str | None:
    """A corpus file's text with its line ends as the index reads them; None where it is not UTF-8 (the corpus is
    UTF-8 source: anything else is left out rather than guessed at)."""
    try:
        data = source.path.read_bytes()[:MAX_FILE_BYTES]
        return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except (OSError, UnicodeDecodeError):
        return None


def _file_texts(source: SourceFile, tokenizer: Tokenizer) -> Iterator[dict]:
    text = read_text(source)
    if text is None:
        return

    def count(lines: Sequence[str]) -> list[int]:
        return [len(e.ids) for e in tokenizer.encode_batch(list(lines), add_special_tokens=False)]

    chunks = chunk_file(text, source.language, source.rel_path, count, MAX_CHUNK_TOKENS)
    names = []
    for chunk in chunks:
        yield {"text": document_text(chunk, source.rel_path), "kind": "document", "language": source.language}
        name = name_text(chunk, source.rel_path)
        if name:
            names.append(chunk.symbol_name or name)
            yield {"text": name, "kind": "name", "language": source.language}
    if names:
        yield {"text": outline_text(source.rel_path, names), "kind": "outline", "language": source.language}


def source_files(corpus_index: Path) -> Iterator[SourceFile]:
    """The corpus's code files, from its JSONL index (corpus.py: one {"path", "rel_path", ...} object per line,
    `path` relative to the index's folder, `rel_path` inside its package), each with the language Quarry's own
    classifier gives it (None for what the index would not treat as code)."""
    root = corpus_index.parent
    with open(corpus_index, encoding="utf-8") as lines:
        for line in lines:
            entry = json.loads(line)
            kind = classify(entry["rel_path"])
            if kind is not None and kind.kind == "code":
                yield SourceFile(root / entry["path"], entry["rel_path"], kind.language, entry["package"])
