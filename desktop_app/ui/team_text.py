"""What the status bar says of a team index: which server, the commit the project's repository base holds, and
how much of the project is the user's own (their overlay's files that differ from the base)."""

from __future__ import annotations

from ..store.location import StoreLocation
from ..store.rows import ScopeSummary


def team_text(location: StoreLocation, project: ScopeSummary | None, base: ScopeSummary | None) -> str:
    """e.g. "Team index: postgresql://ana@db/team · base main @ 3f2a9c1e07 · your changes: 3 files"; "" for the
    local index."""
    if not location.is_team:
        return ""
    parts = [f"Team index: {location}"]
    published = base.scope.published if base is not None else None
    if published is not None:
        parts.append(f"base {published.branch} @ {published.commit[:10]}")
    if project is not None and project.differing is not None:
        n = project.differing
        parts.append(f"your changes: {n:,} file{'s' if n != 1 else ''}" if n else "no changes of yours")
    return " · ".join(parts)


def team_tooltip(location: StoreLocation) -> str:
    if not location.is_team:
        return ""
    return (
        f"Searching the team index at {location}. Each repository's base is its committed content, shared with "
        "everyone who indexes there; your uncommitted changes stay in this checkout's own overlay, which nobody "
        "else searches."
    )
