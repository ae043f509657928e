"""Where an index lives, and opening the store that serves it.

Today an index is one SQLite file; everything above `store/` holds a `StoreLocation` and opens it through
`open_store`, so a second kind of store is one more case here rather than a change across the engine.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .protocols import Store
from .sqlite import connection
from .sqlite.store import SqliteStore, check_sqlite_store


@dataclass(frozen=True)
class StoreLocation:
    path: Path  # the SQLite file

    @classmethod
    def of(cls, location: StoreLocation | Path | str) -> StoreLocation:
        return location if isinstance(location, StoreLocation) else cls(Path(location).expanduser())

    def local_files(self) -> list[Path]:
        """The files on this machine that hold the index (a folder watcher must not react to them)."""
        db = self.path.resolve()
        return [db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")]

    def __str__(self) -> str:
        return str(self.path)


def open_store(location: StoreLocation | Path | str) -> Store:
    """Open (creating and migrating as needed) the store at `location`; raises StoreError."""
    return SqliteStore(StoreLocation.of(location).path)


def check_store(location: StoreLocation | Path | str) -> None:
    """Raise StoreUnusable when the index cannot be used as it is (not an index, written by a newer Quarry,
    or damaged anywhere). Reads all of it, so it is for repairs, not for every open."""
    check_sqlite_store(StoreLocation.of(location).path)


def move_aside(location: StoreLocation | Path | str) -> Path:
    """Set an unusable index aside (renamed beside itself, nothing deleted); where it went."""
    return connection.move_aside(StoreLocation.of(location).path)


def default_location() -> StoreLocation:
    """QUARRY_DB if set, else one file in the per-user data directory."""
    env = os.environ.get("QUARRY_DB")
    if env:
        return StoreLocation.of(env)
    from platformdirs import user_data_path

    return StoreLocation(user_data_path("quarry", appauthor=False) / "index.db")
