"""The error an index run raises for what the user asked of it (front ends phrase it, see cli.py and worker.py)."""

from __future__ import annotations


class IndexingError(Exception):
    """A problem with what the user asked to index; the message says what to do."""
