"""Stage 1's work on one file before it is written: read it, decide whether it changed, cut it into chunks and
count their tokens. The index run does it on a thread of its own for a small tree and in parse processes for a
big one (parse_pool.py): tree-sitter and the chunker hold the GIL, so threads would take turns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from ..store.rows import ChunkRef, FileState, FileWrite
from .chunk import Chunk
from .chunking import chunk_file
from .documents import document_hash, document_header, document_text, keyword_fields
from .file_selection import Candidate, SelectionOptions
from .languages import header_language
from .source_reader import SkipFile, read_source
from .step_times import StepTimes


@dataclass(frozen=True)
class Document:
    lines: str  # the chunk's lines as stored
    tokens: int  # of what the model embeds: header + lines


@dataclass
class Prepared:
    """One candidate after reading and chunking."""

    cand: Candidate
    skip_reason: str | None = None
    unchanged: bool = False  # same content as indexed, only size/mtime moved
    copy: tuple[int, str] | None = None  # (size, sha256) of a worktree file identical to its main scope's copy
    write: FileWrite | None = None
    documents: dict[str, Document] = field(default_factory=dict)  # by document hash


@dataclass(frozen=True)
class PrepSettings:
    """What preparing a file depends on besides the file: the same for every file of a run."""

    selection: SelectionOptions
    chunk_tokens: int
    overlap_tokens: int
    recut: bool  # the scope's files were cut by another chunker version: cut them all again
    parent_states: dict[str, FileState]  # a worktree scope's main scope's files, by path ({} for a main scope)


class FilePrep:
    def __init__(self, settings: PrepSettings, count_tokens: Callable[[Sequence[str]], list[int]], times: StepTimes):
        self.settings = settings
        self.count_tokens = count_tokens
        self.times = times

    def prepare(self, cand: Candidate, state: FileState | None) -> Prepared:
        settings = self.settings
        try:
            with self.times.step("read"):
                source = read_source(cand.abs_path, settings.selection)
        except SkipFile as skip:
            return Prepared(cand, skip_reason=skip.reason)
        language = header_language(cand.rel_path, cand.language, source.text)
        if language != cand.language:
            cand = replace(cand, language=language)  # as its content shows: every write of the file takes it
        if state is not None and state.status == "indexed" and state.sha256 == source.sha256 and not settings.recut:
            return Prepared(cand, unchanged=True)
        parent = settings.parent_states.get(cand.rel_path)
        if parent is not None and parent.status == "indexed" and parent.sha256 == source.sha256:
            return Prepared(cand, copy=(source.size, source.sha256))
        with self.times.step("chunk"):
            chunks = chunk_file(
                source.text,
                cand.language,
                cand.rel_path,
                self.count_tokens,
                max_tokens=settings.chunk_tokens,
                overlap_tokens=settings.overlap_tokens,
            )
        with self.times.step("tokenise"):
            headers = [document_header(ch, cand.rel_path) for ch in chunks]
            counts = self.count_tokens(headers) if chunks else []
            refs: list[ChunkRef] = []
            documents: dict[str, Document] = {}
            for ordinal, (ch, header) in enumerate(zip(chunks, headers, strict=True)):
                digest = document_hash(document_text(ch, cand.rel_path, header))
                documents.setdefault(digest, Document(ch.text, ch.token_count + counts[ordinal]))
                refs.append(chunk_ref(ch, digest, ordinal, cand.rel_path))
        write = FileWrite(cand.rel_path, source.size, cand.mtime_ns, source.sha256, cand.language, refs)
        return Prepared(cand, write=write, documents=documents)


def chunk_ref(chunk: Chunk, digest: str, ordinal: int, rel_path: str) -> ChunkRef:
    """The chunk's place in the file at `rel_path`, with that place's keyword-index text."""
    return ChunkRef(
        digest,
        ordinal,
        chunk.start_line,
        chunk.end_line,
        chunk.chunk_type,
        chunk.symbol_name,
        chunk.symbol_type,
        chunk.parent_symbol,
        *keyword_fields(chunk, rel_path),
    )
