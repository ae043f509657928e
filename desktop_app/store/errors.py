"""What can go wrong with a store, said in the engine's words.

A message says what is wrong and, where the remedy is the same for every user, what to do about it
("free some space"). Remedies that a front end offers in its own way (a command-line option, a Settings
field, a button) are named by `Remedy` instead, and each front end phrases them for its user.
"""

from __future__ import annotations

import enum
from pathlib import Path


class Remedy(enum.Enum):
    OTHER_STORE = "other_store"  # point Quarry at another index
    REBUILD = "rebuild"  # move the index aside and build a fresh one
    UPGRADE = "upgrade"  # a newer Quarry can read it


class StoreError(Exception):
    """A store problem the user can act on; `remedies` are what the front end should offer besides the
    message's own advice."""

    def __init__(self, problem: str, remedies: tuple[Remedy, ...] = ()):
        super().__init__(problem)
        self.problem = problem
        self.remedies = remedies


class StoreUnusable(StoreError):
    """The index at `location` cannot serve as this build's index (not a database, damaged, or written by a
    newer Quarry). Only the user may decide to move it aside and start a fresh one."""

    def __init__(self, location: Path | str, reason: str, remedies: tuple[Remedy, ...] = (Remedy.REBUILD,)):
        super().__init__(f"the index database {location} {reason}", (*remedies, Remedy.OTHER_STORE))
        self.location = location
        self.reason = reason  # e.g. "is damaged (...)"

    @property
    def path(self) -> Path:
        """The file to move aside (a SQLite store's location is its file)."""
        return Path(self.location)


class BadTeamUrl(StoreError):
    """The team index URL cannot be read (libpq's reason, without the password)."""

    def __init__(self, shown: str, reason: str):
        super().__init__(f"the team index URL {shown} is malformed ({reason})")
        self.reason = reason


class ScopeRemoved(StoreError):
    """The folder being indexed was removed from the index (by another window or command) before the run ended:
    the removal wins, so the run ends without adding the folder back. The index is sound; nothing needs
    rebuilding."""
