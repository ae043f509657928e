"""Team index URLs: which locations are one, and what of them may be shown, logged or printed (never a password).

Passwords come from the URL (its user part or a `password=` parameter), PGPASSWORD or ~/.pgpass (libpq reads the
last two itself). The URL is handed to libpq as given and to nothing else: what is shown, logged or printed is
`display_url`, and whatever the server or libpq says passes through `redact`. Kept apart from connection.py so
that every command can read a location without importing psycopg, which is a third of a cold `quarry index`'s
start-up when the index is a local file (0.33 of 1.23 s, loaded).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import unquote

from ..errors import BadTeamUrl

if TYPE_CHECKING:
    import psycopg

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
    # libpq's own reading of the URL; imported here, so that only a team index URL pays for psycopg.
    from psycopg import ProgrammingError
    from psycopg.conninfo import conninfo_to_dict

    try:
        conninfo_to_dict(url)
    except ProgrammingError as exc:
        # libpq quotes the whole URL in some of these; once is enough.
        reason = redact(first_line(exc), url).replace(f': "{shown}"', "")
        if "percent-encoded" in reason:
            reason += "; a % in the URL is written %25"
        raise BadTeamUrl(shown, reason) from None


def first_line(exc: psycopg.Error) -> str:
    """The first line of what psycopg or the server said, or the error's type when it said nothing."""
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
