"""What the status bar says of a team index: which server, the commit the project's repository base holds, and
how much of the project is the user's own (their overlay's files that differ from the base: changed, added or
deleted in their checkout)."""

from __future__ import annotations

from pathlib import PurePath
from urllib.parse import parse_qs, urlsplit

from ..store.location import StoreLocation
from ..store.rows import ScopeSummary
from ..wording import counted


def team_text(location: StoreLocation, base: ScopeSummary | None) -> str:
    """e.g. "Team index db.example/team · base main 3f2a9c1e": the server by host and database (its whole URL, now
    in the tooltip, pushed the rest out of a 1280-pixel status bar) and the commit of the project's base; "" for
    the local index."""
    if not location.is_team:
        return ""
    published = base.scope.published if base is not None else None
    base_commit = f" · base {published.branch} {published.commit[:8]}" if published is not None else ""
    return f"Team index {server_name(location)}{base_commit}"


def own_changes(project: ScopeSummary) -> str:
    """A team index project's files that are the user's own: " · 3 files yours", " · none yours"; "" elsewhere."""
    n = project.differing
    if n is None:
        return ""
    return f" · {counted(n, 'file')} yours" if n else " · none yours"


def server_name(location: StoreLocation) -> str:
    """The server's host (or its socket's folder) and the database: "db.example/team", "quarry-pg/postgres"."""
    parts = urlsplit(str(location))
    socket = parse_qs(parts.query).get("host", [""])[0]
    host = parts.hostname or PurePath(socket).name or "localhost"
    return f"{host}/{parts.path.lstrip('/')}"


def team_tooltip(location: StoreLocation) -> str:
    if not location.is_team:
        return ""
    return (
        f"Searching the team index at {location}. Each repository's base is its committed content, shared with "
        "everyone who indexes there; your uncommitted changes stay in this checkout's own overlay, which nobody "
        "else searches."
    )
