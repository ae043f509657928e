"""Where an index lives, and opening the store that serves it.

An index is either one SQLite file on this machine (the default) or a team index on a PostgreSQL server with
pgvector, named by a `postgresql://` URL. Everything above `store/` holds a `StoreLocation` and opens it
through `open_store`, and shows, checks and configures locations through the names below: only `store/`
imports the two drivers (an import-linter contract in pyproject.toml).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .errors import StoreError
from .postgres.urls import check_url as check_url  # BadTeamUrl (errors.py) unless libpq reads it; no I/O
from .postgres.urls import display_url as display_url  # a team index URL as shown: never its password
from .postgres.urls import has_password as has_password  # whether a URL holds a password
from .postgres.urls import is_postgres_url, redact
from .postgres.vector_search import DEFAULT_EF_SEARCH as DEFAULT_EF_SEARCH  # a team index's HNSW walk
from .protocols import Store
from .rows import PageCheck
from .sqlite import connection
from .sqlite.connection import busy_timeout_ms as busy_timeout_ms  # QUARRY_BUSY_TIMEOUT_MS, checked (StoreError)
from .sqlite.store import SqliteStore, check_sqlite_store

# libpq's keyword/value form ("host=db dbname=team user=me"), which libpq takes but Quarry does not.
_CONNINFO = re.compile(r"\s*(host|hostaddr|port|dbname|user|password|service|sslmode)\s*=", re.IGNORECASE)


@dataclass(frozen=True)
class StoreLocation:
    path: Path | None = None  # a SQLite file
    url: str | None = None  # a team index: postgresql://USER@HOST:PORT/DB?sslmode=...

    @classmethod
    def of(cls, location: StoreLocation | Path | str) -> StoreLocation:
        if isinstance(location, StoreLocation):
            return location
        if isinstance(location, str) and is_postgres_url(location.strip()):
            return cls(url=location.strip())
        if isinstance(location, str) and _CONNINFO.match(location):
            # Read as a path, it became an empty index file named after the server, password and all.
            raise StoreError(
                f"{redact(location)} is a key=value connection string; give the team index as a URL, "
                "postgresql://USER@HOST:PORT/DATABASE (the password from PGPASSWORD or ~/.pgpass)"
            )
        return cls(path=Path(location).expanduser())

    @property
    def is_team(self) -> bool:
        return self.url is not None

    @property
    def file(self) -> Path:
        """The SQLite file; only for a location that is one."""
        if self.path is None:
            raise StoreError(f"{self} is a team index on a server, not a file")
        return self.path

    def local_files(self) -> list[Path]:
        """The files on this machine that hold the index (a folder watcher must not react to them)."""
        if self.path is None:
            return []
        db = self.path.resolve()
        return [db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")]

    def __str__(self) -> str:
        return display_url(self.url) if self.url is not None else str(self.path)


def open_store(
    location: StoreLocation | Path | str,
    ef_search: int = DEFAULT_EF_SEARCH,
    on_check: Callable[[PageCheck], None] | None = None,
) -> Store:
    """Open (creating and migrating as needed) the store at `location`; raises StoreError. `on_check` hears of an
    index file read whole for damage (a team index is the server's to keep sound: it never is)."""
    where = StoreLocation.of(location)
    if where.url is not None:
        # Imported for a team index only: psycopg is a third of a cold command's start-up (postgres/urls.py).
        from .postgres.store import PostgresStore

        return PostgresStore(where.url, ef_search=ef_search)
    return SqliteStore(where.file, on_check)


def check_store(location: StoreLocation | Path | str) -> None:
    """Raise StoreUnusable when the index file cannot be used as it is (not an index, written by a newer
    Quarry, or damaged anywhere). Reads all of it, so it is for repairs, not for every open."""
    check_sqlite_store(StoreLocation.of(location).file)


def move_aside(location: StoreLocation | Path | str) -> Path:
    """Set an unusable index file aside (renamed beside itself, nothing deleted); where it went."""
    return connection.move_aside(StoreLocation.of(location).file)


def default_location() -> StoreLocation:
    """QUARRY_DB if set (a file path or a postgresql:// URL), else one file in the per-user data directory."""
    env = os.environ.get("QUARRY_DB")
    if env:
        return StoreLocation.of(env)
    from platformdirs import user_data_path

    return StoreLocation(user_data_path("quarry", appauthor=False) / "index.db")
