"""Connecting to a team index on PostgreSQL, and saying what went wrong without ever showing a password.

Passwords come from the URL (its user part or a `password=` parameter), PGPASSWORD or ~/.pgpass (libpq
reads the last two itself). The URL is handed to libpq as given and to nothing else: what is shown, logged
or printed is `display_url`, and whatever the server or libpq says passes through `redact`.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from urllib.parse import unquote

import psycopg
from pgvector.psycopg import register_vector
from psycopg.conninfo import conninfo_to_dict

from ..errors import BadTeamUrl, Remedy, StoreError
from .migrations import migrate, setup_lock

# pgvector 0.5 brought HNSW indexes; PostgreSQL 13 is the oldest pgvector 0.5 builds on.
MIN_SERVER_VERSION = 130000
MIN_PGVECTOR = (0, 5)
CONNECT_TIMEOUT_S = 10
_URL_PREFIXES = ("postgresql://", "postgres://")  # what libpq reads as a URL (anything else as key=value pairs)
# Any spelling, so that a mistyped URL ("postgresql:/db", one slash) is refused rather than taken for a file.
_NAMES_POSTGRES = re.compile(r"postgres(?:ql)?:", re.IGNORECASE)
# The user part as libpq reads it after the '//': everything up to the first '@' before any '/', so a password
# may hold ':' or '?'. Read after fewer slashes too, so that a malformed URL loses its password as well.
_USER_PART = re.compile(r"(postgres(?:ql)?:(?://|/?))([^@/]*)@", re.IGNORECASE)
_URL_IN_TEXT = re.compile(r'postgres(?:ql)?:[^\s"]*', re.IGNORECASE)  # libpq quotes what it shows in "..."
_PASSWORD_PAIR = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)  # key=value form


def is_postgres_url(location: str) -> bool:
    """Whether `location` names a team index (maybe malformed: `open_store` then says what is wrong)."""
    return _NAMES_POSTGRES.match(location) is not None


def display_url(url: str) -> str:
    """The URL as shown, logged and printed into configurations: exactly as given, less its password (from
    the user part and any `password=` parameter), so that it still works where the password comes from
    PGPASSWORD or ~/.pgpass. Never fails, whatever the URL holds."""
    return _take_passwords(url)[0]


def redact(text: str, url: str = "") -> str:
    """`text` (a message from the server or libpq) without a password: none of any URL in it, of a
    `password=` pair, or of `url` wherever it appears on its own (libpq quotes a bad token as it is)."""
    text = _PASSWORD_PAIR.sub(r"\1***", _URL_IN_TEXT.sub(lambda m: display_url(m.group()), text))
    secrets = {form for secret in _take_passwords(url)[1] for form in (secret, unquote(secret)) if form}
    for secret in sorted(secrets, key=len, reverse=True):  # a longer form may hold a shorter one
        text = text.replace(secret, "***")
    return text


def has_password(location: str) -> bool:
    """Whether `location` is a team index URL that holds a password."""
    return is_postgres_url(location) and bool(_take_passwords(location)[1])


def _take_passwords(url: str) -> tuple[str, list[str]]:
    """`url` without its passwords, and those passwords as written."""
    head, rest, taken = "", url, []
    user_part = _USER_PART.match(url)
    if user_part is not None:
        user, colon, password = user_part.group(2).partition(":")
        if colon:
            taken.append(password)
        head, rest = f"{user_part.group(1)}{user}@", url[user_part.end() :]
    base, mark, query = rest.partition("?")
    if not mark:
        return head + rest, taken
    kept = []
    for pair in query.split("&"):
        key, _, value = pair.partition("=")
        if unquote(key).strip().lower() == "password":  # libpq decodes the names too
            taken.append(value)
        else:
            kept.append(pair)
    return head + base + (f"?{'&'.join(kept)}" if kept else ""), taken


def check_url(url: str) -> None:
    """Raise BadTeamUrl unless libpq can read `url` as a connection URL; contacts nothing."""
    shown = display_url(url)
    if not url.startswith(_URL_PREFIXES):
        raise BadTeamUrl(shown, f"a team index URL begins with {' or '.join(_URL_PREFIXES)}")
    try:
        conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        # libpq quotes the whole URL in some of these; once is enough.
        reason = redact(_first_line(exc), url).replace(f': "{shown}"', "")
        if "percent-encoded" in reason:
            reason += "; a % in the URL is written %25"
        raise BadTeamUrl(shown, reason) from None


def connect(url: str) -> psycopg.Connection:
    """A connection to a team index with pgvector and Quarry's schema in place (created or migrated under a
    lock, so that indexers starting together do it once), pgvector's types registered; raises StoreError
    with a message fit to show."""
    check_url(url)
    shown = display_url(url)
    try:
        conn = psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S, autocommit=True)
    except psycopg.OperationalError as exc:
        raise _connect_error(shown, redact(_first_line(exc), url)) from None  # it may quote the password
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
    row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    if row is None:
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
        row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    assert row is not None
    version = tuple(int(p) for p in re.findall(r"\d+", str(row[0]))[:2])
    if version < MIN_PGVECTOR:
        raise StoreError(
            f"the team index database {shown} has pgvector {row[0]}; Quarry needs "
            f"{'.'.join(map(str, MIN_PGVECTOR))} or newer (HNSW indexes): ALTER EXTENSION vector UPDATE"
        )


def _first_line(exc: psycopg.Error) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


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
    text = redact(_first_line(exc))
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
