"""Connecting to a team index on PostgreSQL, and saying what went wrong without ever showing a password
(urls.py: what of a URL may be shown)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import psycopg
from pgvector.psycopg import register_vector

from ..errors import Remedy, StoreError
from .migrations import migrate, setup_lock
from .pgvector_features import installed_version
from .urls import check_url, display_url, first_line, redact

# pgvector 0.5 brought HNSW indexes; PostgreSQL 13 is the oldest pgvector 0.5 builds on.
MIN_SERVER_VERSION = 130000
MIN_PGVECTOR = (0, 5)
CONNECT_TIMEOUT_S = 10


def connect(url: str) -> psycopg.Connection:
    """A connection to a team index with pgvector and Quarry's schema in place (created or migrated under a
    lock, so that indexers starting together do it once), pgvector's types registered; raises StoreError
    with a message fit to show."""
    check_url(url)
    shown = display_url(url)
    try:
        # No statement is prepared in the server (psycopg prepares one run 5 times): the server then plans a
        # prepared one for any values, and a keyword statement under a glob planned so took 390-570 ms at 1M
        # places against 20-30 planned for its own values (bench_team.py's store; the searches otherwise as fast).
        conn = psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S, autocommit=True, prepare_threshold=None)
    except psycopg.OperationalError as exc:
        raise _connect_error(shown, redact(first_line(exc), url)) from None  # it may quote the password
    try:
        if conn.info.server_version < MIN_SERVER_VERSION:
            raise StoreError(
                f"the team index server {shown} runs PostgreSQL {conn.info.server_version // 10000}; "
                f"Quarry needs {MIN_SERVER_VERSION // 10000} or newer with pgvector"
            )
        with setup_lock(conn):
            _ensure_pgvector(conn, shown)
            register_vector(conn)
            with _errors(shown):
                migrate(conn, shown)
    except BaseException:
        conn.close()
        raise
    return conn


def _ensure_pgvector(conn: psycopg.Connection, shown: str) -> None:
    version = installed_version(conn)
    if not version:
        available = conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone()
        if available is None:
            raise StoreError(
                f"the team index server {shown} has no pgvector extension; install pgvector on the server "
                "(https://github.com/pgvector/pgvector) and run the command again"
            )
        try:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except psycopg.errors.InsufficientPrivilege:
            # pgvector is not a trusted extension: the database's owner may not create it either.
            raise StoreError(
                f"the team index database {shown} lacks the pgvector extension and this role may not create "
                "it; ask a superuser (for example the server's administrator) to run CREATE EXTENSION vector "
                f"in the database {conn.info.dbname}"
            ) from None
        version = installed_version(conn)
    if version < MIN_PGVECTOR:
        raise StoreError(
            f"the team index database {shown} has pgvector {'.'.join(map(str, version))}; Quarry needs "
            f"{'.'.join(map(str, MIN_PGVECTOR))} or newer (HNSW indexes): ALTER EXTENSION vector UPDATE"
        )


def _connect_error(shown: str, text: str) -> StoreError:
    lowered = text.lower()
    if "password authentication failed" in lowered or "no password supplied" in lowered:
        return StoreError(
            f"the team index server {shown} refused the login ({text}); check the user and the password "
            "(in the URL, PGPASSWORD or ~/.pgpass)"
        )
    if "does not exist" in lowered and "database" in lowered:
        return StoreError(f"the team index database {shown} does not exist ({text})", (Remedy.OTHER_STORE,))
    return StoreError(
        f"cannot reach the team index server {shown} ({text}); check that it runs and that the host and port are right",
        (Remedy.OTHER_STORE,),
    )


@contextlib.contextmanager
def _errors(shown: str) -> Iterator[None]:
    try:
        yield
    except psycopg.Error as exc:
        raise store_error(exc, shown) from None


def store_error(exc: psycopg.Error, shown: str) -> StoreError:
    """A server error during use, as a StoreError that says what to do."""
    text = redact(first_line(exc))
    if isinstance(exc, (psycopg.errors.InsufficientPrivilege, psycopg.errors.ReadOnlySqlTransaction)):
        return ReadOnlyStore(
            f"the team index {shown} cannot be written with this role ({text}); searching works, and "
            "indexing needs a role that may write"
        )
    if isinstance(exc, psycopg.OperationalError):
        return StoreError(f"the connection to the team index {shown} failed ({text}); run the command again")
    return StoreError(f"the team index {shown} gave an error ({text})")


class ReadOnlyStore(StoreError):
    """The role may read the team index but not write it."""
