"""A synthetic but realistic-looking index of N chunks, written through the store API (no model).

Files sit in nested folders and several languages; chunks carry symbol names, types and parents,
chunk types, and bodies assembled from code- or prose-like lines whose identifiers follow a Zipf
law, so the keyword index sees common and rare terms as a real repository gives it. Vectors are
random unit vectors; about 70% of chunks also get a symbol-name vector.
"""

from __future__ import annotations

import functools
import hashlib
import keyword
import re
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from desktop_app.identifiers import expand_identifiers, split_identifier
from desktop_app.store.protocols import Store
from desktop_app.store.rows import ChunkRef, FileWrite, NewChunk
from desktop_app.store.sqlite.store import SqliteStore

MODEL_ID = "bench-random-unit"
ROOT = "/bench/repo"
FILES_PER_BATCH = 5000
NAMED_SHARE = 0.7
VOCABULARY_SEED = 11
STDLIB = Path(sys.base_prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

STOP = ["the", "a", "to", "of", "in", "for", "is", "and", "with", "from", "when", "if", "not", "this", "that"]
# Words the line templates spell out themselves; the vocabulary is what is left of the standard library's.
_KEYWORDS = (
    set(keyword.kwlist)
    | {w.lower() for w in keyword.kwlist}
    | set(STOP)
    | {"self", "def", "none", "true", "false", "cls", "args"}
)


@functools.cache
def word_frequencies() -> tuple[list[str], np.ndarray]:
    """Identifier parts of the standard library's top-level modules, most frequent first, and their shares:
    a real code vocabulary with a real Zipf tail, the same on every run of one Python version."""
    counts: Counter[str] = Counter()
    for path in sorted(STDLIB.glob("*.py")):
        for token in _TOKEN.findall(path.read_text(encoding="utf-8", errors="replace")):
            counts.update(p for p in split_identifier(token) if len(p) > 1 and not p.isdigit())
    ranked = [(w, n) for w, n in counts.most_common() if n >= 3 and w not in _KEYWORDS]
    freq = np.array([n for _, n in ranked], dtype=np.float64)
    return [w for w, _ in ranked], freq / freq.sum()


def draw_words(rng: np.random.Generator, n: int, flatten: float = 1.0) -> list[str]:
    """`n` words by frequency; flatten < 1 favours rarer words, as people's queries do."""
    words, _ = word_frequencies()
    return [words[i] for i in _draw(rng, _word_cdf(flatten), n)]


@functools.cache
def _word_cdf(flatten: float) -> np.ndarray:
    share = word_frequencies()[1] ** flatten
    return _cdf(share / share.sum())


def _cdf(p: np.ndarray) -> np.ndarray:
    cdf = np.cumsum(p)
    return cdf / cdf[-1]


def _draw(rng: np.random.Generator, cdf: np.ndarray, n: int) -> np.ndarray:
    """rng.choice(len(cdf), n, p=...) with the cumulative sum made once: the same draws, without O(len) a call."""
    return cdf.searchsorted(rng.random(n), side="right")


# (language, extension, share of files, line style)
LANGUAGES = [
    ("python", ".py", 0.30, "py"),
    ("typescript", ".ts", 0.17, "c"),
    ("javascript", ".js", 0.08, "c"),
    ("go", ".go", 0.12, "go"),
    ("rust", ".rs", 0.08, "rs"),
    ("java", ".java", 0.10, "c"),
    ("markdown", ".md", 0.09, "prose"),
    ("yaml", ".yaml", 0.03, "cfg"),
    ("json", ".json", 0.03, "cfg"),
]
TOP_FOLDERS = ["src", "lib", "pkg", "internal", "services", "tools", "docs", "tests", "web", "api"]
SYMBOL_TYPES = {
    "py": ["function", "method", "class"],
    "c": ["function", "method", "class", "interface"],
    "go": ["function", "method", "struct", "interface"],
    "rs": ["function", "method", "struct", "enum"],
    "prose": ["heading"],
    "cfg": ["key"],
}
CODE_CHUNK_TYPES = ["code", "comment"]


@dataclass(frozen=True)
class Vocabulary:
    """Identifiers made of 1-3 words, in the casings code uses, drawn with Zipf weights."""

    snake: list[str]
    camel: list[str]
    pascal: list[str]
    cdf: np.ndarray  # cumulative Zipf weights

    @classmethod
    def make(cls, seed: int = VOCABULARY_SEED, size: int = 20_000) -> Vocabulary:
        rng = np.random.default_rng(seed)
        parts = [draw_words(rng, int(rng.integers(1, 4))) for _ in range(size)]
        snake = ["_".join(p) for p in parts]
        camel = [p[0] + "".join(w.title() for w in p[1:]) for p in parts]
        pascal = ["".join(w.title() for w in p) for p in parts]
        weights = 1.0 / (np.arange(size) + 200.0)
        return cls(snake, camel, pascal, _cdf(weights / weights.sum()))

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return _draw(rng, self.cdf, n)


def _line_pool(rng: np.random.Generator, vocab: Vocabulary, style: str, size: int = 4000) -> list[str]:
    ids = vocab.draw(rng, size * 4).reshape(size, 4)
    words = np.array(draw_words(rng, size * 6)).reshape(size, 6)
    out = []
    for i in range(size):
        s, c, p = (vocab.snake[j] for j in ids[i]), (vocab.camel[j] for j in ids[i]), (vocab.pascal[j] for j in ids[i])
        a, b, d, e = list(s) if style in ("py", "rs", "cfg") else list(c)
        pa, pb = list(p)[:2]
        comment = " ".join(words[i])
        kind = i % 6
        if style == "py":
            line = [
                f"    {a} = {b}.{d}({e})",
                f"    if not {a}:\n        return {b}",
                f"    for {a} in {b}.{d}():",
                f"    # {comment}",
                f'    raise {pa}Error("{comment}")',
                f"    return {pb}({a}, {b})",
            ][kind]
        elif style == "c":
            line = [
                f"  const {a} = await {b}.{d}({e});",
                f"  if (!{a}) {{ return {b}; }}",
                f"  for (const {a} of {b}.{d}()) {{",
                f"  // {comment}",
                f'  throw new {pa}Error("{comment}");',
                f"  return new {pb}({a}, {b});",
            ][kind]
        elif style == "go":
            line = [
                f"\t{a} := {b}.{pa}({e})",
                "\tif err != nil {\n\t\treturn nil, err\n\t}",
                f"\tfor _, {a} := range {b}.{pb}() {{",
                f"\t// {comment}",
                f"\treturn {pa}{{{a}: {b}}}, nil",
                f"\t{a}.{pb}({d}, {e})",
            ][kind]
        elif style == "rs":
            line = [
                f"    let {a} = {b}.{d}(&{e})?;",
                f"    if {a}.is_empty() {{ return Ok({b}); }}",
                f"    for {a} in {b}.{d}() {{",
                f"    // {comment}",
                f'    Err({pa}Error::new("{comment}"))',
                f"    Ok({pb}::new({a}, {b}))",
            ][kind]
        elif style == "prose":
            line = f"The {a.replace('_', ' ')} {comment} uses `{vocab.camel[ids[i][0]]}` to {d.replace('_', ' ')}."
        else:
            line = f"{a}: {b}" if kind % 2 else f'  {a}: "{comment}"'
        out.append(line)
    return out


def _signature(style: str, symbol_type: str, name: str) -> str:
    is_type = symbol_type in ("class", "struct", "interface", "enum")
    if style == "py":
        return f"class {name}:" if is_type else f"def {name}(self, *args):"
    if style == "go":
        return f"type {name} struct {{" if is_type else f"func {name}(ctx Context) error {{"
    if style == "rs":
        return f"pub struct {name} {{" if is_type else f"pub fn {name}(&self) -> Result<()> {{"
    if style == "prose":
        return f"## {name}"
    if style == "cfg":
        return f"{name}:"
    return f"export class {name} {{" if is_type else f"export function {name}() {{"


class CorpusWriter:
    def __init__(self, dims: int, seed: int = 7):
        self.dims = dims
        self.rng = np.random.default_rng(seed)
        self.vocab = Vocabulary.make()
        styles = {lang[3] for lang in LANGUAGES}
        self.pools = {s: _line_pool(self.rng, self.vocab, s) for s in styles}
        self.expanded = {s: [expand_identifiers(line) for line in pool] for s, pool in self.pools.items()}
        self.folders = self._folders()

    def _folders(self, count: int = 3000) -> list[str]:
        out = []
        for _ in range(count):
            top = TOP_FOLDERS[int(self.rng.integers(len(TOP_FOLDERS)))]
            depth = int(self.rng.integers(1, 5))
            out.append("/".join([top, *draw_words(self.rng, depth, flatten=0.5)]))
        return out

    def _name(self, style: str, symbol_type: str) -> str:
        j = int(self.vocab.draw(self.rng, 1)[0])
        if style in ("py", "rs", "cfg") and symbol_type not in ("class", "struct", "enum"):
            return self.vocab.snake[j]
        if symbol_type in ("class", "struct", "interface", "enum") or style == "go":
            return self.vocab.pascal[j]
        if style == "prose":
            return self.vocab.snake[j].replace("_", " ").title()
        return self.vocab.camel[j]

    def files(self, n_chunks: int) -> Iterator[tuple[FileWrite, list[NewChunk]]]:
        shares = np.array([lang[2] for lang in LANGUAGES])
        written = 0
        serial = 0
        while written < n_chunks:
            language, ext, _, style = LANGUAGES[int(self.rng.choice(len(LANGUAGES), p=shares / shares.sum()))]
            count = min(int(self.rng.integers(1, 20)), n_chunks - written)
            stem = self.vocab.snake[int(self.vocab.draw(self.rng, 1)[0])]
            path = f"{self.folders[int(self.rng.integers(len(self.folders)))]}/{stem}_{serial}{ext}"
            serial += 1
            yield self._file(path, language, style, count)
            written += count

    def _file(self, path: str, language: str, style: str, count: int) -> tuple[FileWrite, list[NewChunk]]:
        pool, expanded = self.pools[style], self.expanded[style]
        fts_path = expand_identifiers(path.replace("/", " ").replace(".", " "))
        vectors = self.rng.standard_normal((count * 2, self.dims), dtype=np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        refs, chunks = [], []
        line = 1
        parent = None
        for ordinal in range(count):
            named = self.rng.random() < NAMED_SHARE
            if named:
                types = SYMBOL_TYPES[style]
                symbol_type = types[int(self.rng.integers(len(types)))]
                name = self._name(style, symbol_type)
                chunk_type = {
                    "heading": "prose",
                    "key": "config",
                    "class": "type",
                    "struct": "type",
                    "interface": "type",
                    "enum": "type",
                }.get(symbol_type, "function")
            else:
                symbol_type = name = None
                chunk_type = (
                    "prose"
                    if style == "prose"
                    else "config"
                    if style == "cfg"
                    else CODE_CHUNK_TYPES[int(self.rng.integers(2))]
                )
            picks = self.rng.integers(len(pool), size=int(self.rng.integers(4, 28)))
            header = _signature(style, symbol_type or "", name) if name else ""
            body = [header] if header else []
            body += [pool[i] for i in picks]
            text = "\n".join(body)
            end = line + text.count("\n")
            owner = parent if symbol_type == "method" else None
            chunk_hash = hashlib.sha256(f"{path}\n{ordinal}\n{text}".encode()).hexdigest()
            refs.append(
                ChunkRef(
                    chunk_hash,
                    ordinal,
                    line,
                    end,
                    chunk_type,
                    name,
                    symbol_type,
                    owner,
                    fts_symbol=expand_identifiers(name) if name else "",
                    fts_path=fts_path + (" " + expand_identifiers(owner) if owner else ""),
                    fts_body=" ".join([expand_identifiers(header)] + [expanded[i] for i in picks]),
                )
            )
            chunks.append(
                NewChunk(
                    chunk_hash, text, len(text) // 4, vectors[2 * ordinal], vectors[2 * ordinal + 1] if name else None
                )
            )
            if symbol_type in ("class", "struct", "interface"):
                parent = name
            line = end + 2
        size = sum(len(c.text) + 1 for c in chunks)
        return FileWrite(
            path, size, 1_700_000_000_000_000_000, hashlib.sha256(path.encode()).hexdigest(), language, refs
        ), chunks


def build(db: Path, n_chunks: int, dims: int) -> None:
    """Write a SQLite store of exactly `n_chunks` chunks at `db` (which must not exist yet)."""
    store = SqliteStore(db)
    try:
        write_corpus(store, n_chunks, dims)
    finally:
        store.close()


def write_corpus(
    store: Store,
    n_chunks: int,
    dims: int,
    files_per_batch: int = FILES_PER_BATCH,
    root: str = ROOT,
    seed: int = 7,
) -> None:
    """Write exactly `n_chunks` chunks into an empty store of any kind (the same ones, with the same ids, on
    every run: a SQLite and a team store built this way hold the same corpus). Another `root` and `seed`
    add another repository of other chunks to a store."""
    store.register_model(MODEL_ID, dims, "benchmark")
    scope = store.create_scope(root)
    writer = CorpusWriter(dims, seed)
    files: list[FileWrite] = []
    chunks: list[NewChunk] = []
    for fw, new in writer.files(n_chunks):
        files.append(fw)
        chunks += new
        if len(files) >= files_per_batch:
            store.write_batch(scope.id, MODEL_ID, chunks, files)
            files, chunks = [], []
    if files:
        store.write_batch(scope.id, MODEL_ID, chunks, files)
    store.mark_indexed(scope.id)
