"""Real lines around a result, read from the file on disk, with a check that it has not changed."""

from __future__ import annotations

from pathlib import Path

from ..indexing.file_selection import SelectionOptions
from ..indexing.source_reader import SkipFile, read_source

# Context is shown for files that were indexed, so the size and line limits have already passed.
READ_ANY = SelectionOptions(max_file_size=1 << 40, max_line_length=1 << 40)


class FileLines:
    """Reads each file at most once per search and says whether it still matches the index."""

    def __init__(self) -> None:
        self._cache: dict[Path, list[str] | None] = {}

    def lines_if_current(self, path: Path, sha256: str) -> list[str] | None:
        """The file's lines, decoded as at indexing, or None when it is gone or has changed."""
        if path not in self._cache:
            try:
                source = read_source(path, READ_ANY)
            except SkipFile:
                self._cache[path] = None
            else:
                self._cache[path] = source.lines if source.sha256 == sha256 else None
        return self._cache[path]


def expand(lines: list[str], start_line: int, end_line: int, n: int) -> tuple[int, int, str]:
    """(first line, last line, text) of lines start-n .. end+n of a file's `lines` (SourceText.lines),
    clipped to the file."""
    first = max(1, start_line - n)
    last = min(len(lines), end_line + n)
    return first, last, "\n".join(lines[first - 1 : last])
