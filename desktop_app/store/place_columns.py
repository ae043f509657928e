"""The places of some scopes held as columns, from which a filter's allowed chunks are a mask.

A filtered search by meaning asks for the chunks the filter allows, and a store finds them with one statement over
every place of the scopes. On bench_team.py's team store of 1M chunks that took 145-290 ms a filter (an index-only
scan of the 1M places, 75 ms; the file rows joined for a language; the ids gathered, sent and sorted), paid on each
filter's first use until the next write, and the first uses set a pass's p95. The columns (each place's chunk, file
and kind, each file's language) are one read of 270-480 ms there, after which a filter costs a mask of the places
(4-6 ms). A search keeps to the statement for the first filter of a write's lifetime, since a busy team server's
writes (anyone's) end the columns' life as often as a set's: a window that searches under one filter pays what it
did; a second filter reads the columns, and every filter after is a mask.

A filter on symbol names, or on a worktree's changed files, is not held here: those stay statements.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .id_arrays import among, distinct_of_sorted, distinct_sorted, positions
from .rows import HitFilter


@dataclass(frozen=True)
class PlaceColumns:
    chunk_ids: np.ndarray  # each place's chunk, ascending (places sharing a chunk adjacent)
    file_at: np.ndarray  # each place's file, as its position in file_ids; len(file_ids) for a file not read
    kind_at: np.ndarray  # each place's (chunk type, symbol type), as its position in kinds
    kinds: tuple[tuple[str, str | None], ...]
    file_ids: np.ndarray  # ascending
    language_at: np.ndarray  # each file's language, as its position in languages
    languages: tuple[str | None, ...]

    @staticmethod
    def answers(where: HitFilter) -> bool:
        """Whether these columns can apply the filter."""
        return not where.symbol_names and not where.changed_only

    @classmethod
    def of(
        cls,
        places: Sequence[tuple[str, str | None, np.ndarray, np.ndarray]],
        files: Sequence[tuple[str | None, np.ndarray]],
    ) -> PlaceColumns:
        """From the places grouped by kind, (chunk type, symbol type, chunk ids, file ids), and the files grouped by
        language, (language, file ids). Read the places first: a file written after both reads has no place here,
        and a place whose file went between them is never allowed (the next write's reader reads both again)."""
        chunk_ids = np.concatenate([p[2] for p in places]) if places else np.zeros(0, dtype=np.int64)
        place_files = np.concatenate([p[3] for p in places]) if places else np.zeros(0, dtype=np.int64)
        kind_at = np.repeat(np.arange(len(places), dtype=np.int16), [len(p[2]) for p in places])
        order = np.argsort(chunk_ids, kind="stable")
        file_ids = np.concatenate([f[1] for f in files]) if files else np.zeros(0, dtype=np.int64)
        language_at = np.repeat(np.arange(len(files), dtype=np.int16), [len(f[1]) for f in files])
        by_id = np.argsort(file_ids, kind="stable")
        file_ids, language_at = file_ids[by_id], language_at[by_id]
        place_files = place_files[order]
        file_at = positions(place_files, file_ids).astype(np.int32)
        return cls(
            chunk_ids=chunk_ids[order],
            file_at=file_at,
            kind_at=kind_at[order],
            kinds=tuple((p[0], p[1]) for p in places),
            file_ids=file_ids,
            language_at=language_at,
            languages=tuple(f[0] for f in files),
        )

    def allowed(self, where: HitFilter, glob_files: Sequence[int] = ()) -> np.ndarray:
        """The distinct chunks, ascending, of the places passing `where` (answers(where) must hold); `glob_files`
        are the files its globs match, where it has globs."""
        files = np.ones(len(self.file_ids) + 1, dtype=bool)
        files[-1] = False  # a place whose file was not read
        if where.languages:
            wanted = set(where.languages)
            files[:-1] &= np.array([language in wanted for language in self.languages], dtype=bool)[self.language_at]
        if where.globs:
            files[:-1] &= among(self.file_ids, distinct_sorted(np.asarray(glob_files, dtype=np.int64)))
        kinds = np.array(
            [
                (not where.chunk_types or chunk_type in where.chunk_types)
                and (not where.symbol_types or symbol_type in where.symbol_types)
                for chunk_type, symbol_type in self.kinds
            ],
            dtype=bool,
        )
        return distinct_of_sorted(self.chunk_ids[files[self.file_at] & kinds[self.kind_at]])
