"""Reading one source file into text Quarry can chunk, or saying why it is skipped."""

from __future__ import annotations

import codecs
import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:
    # Only for annotations: file_selection imports this module, so a runtime import would be circular.
    from desktop_app.indexing.file_selection import SelectionOptions

# Why a path was not indexed; shared by the directory walk and the reader.
IGNORED = "ignored"
EXCLUDED_DIR = "excluded_dir"
LOCK_FILE = "lock_file"
UNSUPPORTED_TYPE = "unsupported_type"  # a type of file Quarry does not index (languages.classify)
NOT_SOURCE = "not_source"  # an image, archive, compiled file... by its extension (languages.NOT_SOURCE_EXTENSIONS)
SPECIAL_FILE = "special_file"  # a FIFO, socket or device: not a regular file
TOO_LARGE = "too_large"
BINARY = "binary"
MINIFIED = "minified"
UNDECODABLE = "undecodable"
UNREADABLE = "unreadable"
VANISHED = "vanished"
SYMLINK_OUTSIDE_ROOT = "symlink_outside_root"
SYMLINK_LOOP = "symlink_loop"
DANGLING_SYMLINK = "dangling_symlink"

_LOCK_FILE_NAMES = frozenset(
    name.lower()
    for name in (
        "package-lock.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "npm-shrinkwrap.json",
        "Cargo.lock",
        "poetry.lock",
        "Pipfile.lock",
        "composer.lock",
        "Gemfile.lock",
        "go.sum",
        "uv.lock",
        "pdm.lock",
        "bun.lockb",
        "flake.lock",
        "packages.lock.json",
    )
)

_SNIFF_BYTES = 8192
_READ_CHUNK = 1 << 20
_MAX_CONTROL_RATIO = 0.10
# Control bytes that do occur in real text files (tab, newlines, form feed, backspace, ANSI escapes).
_TEXT_CONTROLS = b"\t\n\r\f\v\b\x1b"
_CONTROL_BYTES = bytes(b for b in [*range(0x20), 0x7F] if b not in _TEXT_CONTROLS)
_NON_CONTROL_BYTES = bytes(b for b in range(256) if b not in _CONTROL_BYTES)
# Codecs (as codecs.lookup names them) that charset-normalizer's choice is trusted for: Japanese, Chinese and
# Korean source, which decoded as Windows-1252 became mojibake that no search for its words could find.
_MULTI_BYTE_ENCODINGS = frozenset(
    codecs.lookup(name).name
    for name in (
        "shift_jis",
        "cp932",
        "euc_jp",
        "iso2022_jp",
        "gb2312",
        "gbk",
        "gb18030",
        "hz",
        "big5",
        "big5hkscs",
        "cp950",
        "euc_kr",
        "cp949",
        "johab",
        "iso2022_kr",
    )
)
# UTF-32 first: its little-endian BOM begins with the UTF-16 one.
_WIDE_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
# O_NONBLOCK keeps a FIFO that slipped in from blocking the open; neither flag exists everywhere.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0)


@dataclass(frozen=True)
class SourceText:
    text: str  # decoded; "\r\n" and lone "\r" normalised to "\n"
    sha256: str  # hex of the raw bytes on disk
    size: int
    encoding: str  # what the bytes were decoded from (a Python codec name)

    @property
    def lines(self) -> list[str]:
        """The lines as the index numbers them (line n is lines[n - 1]), for every reader of an indexed file:
        split at "\n" alone, as the chunker and tree-sitter count rows, with no empty line after a final
        newline. Never str.splitlines(): it also ends lines at \f, \v, \x1c-\x1e, \x85, U+2028 and U+2029,
        which shifted every later line number away from the search results'."""
        lines = self.text.split("\n")
        if lines[-1] == "":
            lines.pop()
        return lines


class SkipFile(Exception):
    """The file cannot be indexed; `reason` is one of this module's reason constants."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


def is_lock_file(name: str) -> bool:
    """Whether `name` is a dependency lock file: machine-written, often huge, never worth searching."""
    lowered = name.lower()
    return lowered in _LOCK_FILE_NAMES or lowered.endswith(".lock")


# A file is minified or generated when over-long lines hold more than this share of its characters, or when
# its lines are long on average and it has almost no whitespace. One long line (a URL, a JSDoc paragraph, a
# data table) in a hand-written file is not enough: such a file was once skipped and its classes unfindable.
MINIFIED_LONG_SHARE = 0.5
MINIFIED_MEAN_SHARE = 0.2  # of max_line_length: mean length of a non-empty line
MINIFIED_WHITESPACE = 0.08


def looks_minified(text: str, max_line_length: int) -> bool:
    """Whether `text` has the shape of a minified or generated file, judged over the whole file."""
    lines = text.split("\n")
    long_chars = sum(len(line) for line in lines if len(line) > max_line_length)
    if not long_chars:
        return False
    if long_chars > MINIFIED_LONG_SHARE * len(text):
        return True
    filled = sum(1 for line in lines if line.strip())
    whitespace = text.count(" ") + text.count("\t") + text.count("\n")
    return len(text) > MINIFIED_MEAN_SHARE * max_line_length * filled and whitespace < MINIFIED_WHITESPACE * len(text)


def read_source(path: Path, options: SelectionOptions) -> SourceText:
    """Read and decode the file at `path`; raises SkipFile when it should not be indexed."""
    data = _read_bytes(path, options.max_file_size)
    text, encoding = _decode(data)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if looks_minified(text, options.max_line_length):
        raise SkipFile(MINIFIED)
    return SourceText(text=text, sha256=hashlib.sha256(data).hexdigest(), size=len(data), encoding=encoding)


def _read_bytes(path: Path, max_size: int) -> bytes:
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError as exc:
        raise SkipFile(VANISHED, str(path)) from exc
    except OSError as exc:
        raise SkipFile(UNREADABLE, str(exc)) from exc
    try:
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(f.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise SkipFile(UNREADABLE, f"{path} is not a regular file")
            if info.st_size > max_size:
                raise SkipFile(TOO_LARGE, f"{info.st_size} bytes")
            data = _read_at_most(f, max_size + 1)
    except OSError as exc:
        raise SkipFile(UNREADABLE, str(exc)) from exc
    if len(data) > max_size:
        raise SkipFile(TOO_LARGE, f"grew past {max_size} bytes while being read")
    return data


def _read_at_most(f: BinaryIO, limit: int) -> bytes:
    # Chunked because read(n) allocates n bytes up front, and callers pass huge limits to mean "any size".
    data = bytearray()
    while len(data) < limit:
        chunk = f.read(min(_READ_CHUNK, limit - len(data)))
        if not chunk:
            break
        data += chunk
    return bytes(data)


def _decode(data: bytes) -> tuple[str, str]:
    """The text and the encoding it was read from; raises SkipFile for binary data and for text no encoding
    reads without loss (it would be indexed garbled, and searches for its words would find nothing)."""
    for bom, encoding in _WIDE_BOMS:
        if data.startswith(bom):
            return _decode_wide(data, encoding)
    if _looks_binary(data[:_SNIFF_BYTES]):
        raise SkipFile(BINARY)
    try:
        return data.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError:
        pass
    mixed = data.decode("utf-8-sig", errors=_STRAY_BYTES)
    stray = mixed.count(_STRAY_MARK)
    # Each stray byte gave two characters past ASCII: its mark and what Windows-1252 reads it as.
    if sum(1 for ch in mixed if ord(ch) > 0x7F) - 2 * stray >= stray:
        # UTF-8 with a few bytes of another encoding (a Latin-1 character pasted in): as many characters read
        # as UTF-8 as bytes that are not. Those bytes are read as Windows-1252; the rest stays as written.
        return mixed.replace(_STRAY_MARK, ""), "utf-8"
    # Only files that are not UTF-8 get here, so the detector costs nothing on the usual file.
    encoding = _legacy_encoding(data)
    try:
        return data.decode(encoding), encoding
    except UnicodeDecodeError as exc:
        raise SkipFile(UNDECODABLE, f"not UTF-8, and not {encoding} either ({exc.reason} at byte {exc.start})") from exc


def _legacy_encoding(data: bytes) -> str:
    """The encoding of source that is not UTF-8: a multi-byte East Asian one where charset-normalizer finds
    one, else Windows-1252. Its verdict on single-byte text is not taken: for Western text it chose cp1250
    ("naïve" read as "naďve") and for UTF-8 with one stray Latin-1 byte cp775, where Windows-1252 (a superset
    of Latin-1's printable characters) reads most such source as its authors wrote it."""
    import charset_normalizer  # here, not at the top: 11 ms of a parse process's start, for a rare file

    best = charset_normalizer.from_bytes(data).best()
    if best is not None and codecs.lookup(best.encoding).name in _MULTI_BYTE_ENCODINGS:
        return best.encoding
    return "cp1252"


def _stray_byte_as_cp1252(exc: UnicodeError) -> tuple[str, int]:
    """Codec error handler: a byte that is not UTF-8, as Windows-1252 reads it, marked to be counted."""
    assert isinstance(exc, UnicodeDecodeError)
    byte = exc.object[exc.start : exc.start + 1]
    return _STRAY_MARK + byte.decode("cp1252", errors="replace"), exc.start + 1


# A noncharacter, which no real text holds, marks each stray byte until they are counted.
_STRAY_MARK = "\ufdd0"
_STRAY_BYTES = "quarry-stray-bytes-as-cp1252"
codecs.register_error(_STRAY_BYTES, _stray_byte_as_cp1252)


def _decode_wide(data: bytes, encoding: str) -> tuple[str, str]:
    # A BOM-like prefix on binary data still decodes; NULs in the text give it away.
    if "\0" in data[: _SNIFF_BYTES * 4].decode(encoding, errors="replace")[:_SNIFF_BYTES]:
        raise SkipFile(BINARY)
    try:
        return data.decode(encoding), encoding
    except UnicodeDecodeError as exc:
        raise SkipFile(UNDECODABLE, f"broken {encoding} ({exc.reason} at byte {exc.start})") from exc


def _looks_binary(sample: bytes) -> bool:
    if b"\0" in sample:
        return True
    controls = len(sample.translate(None, _NON_CONTROL_BYTES))
    return controls > _MAX_CONTROL_RATIO * len(sample)
