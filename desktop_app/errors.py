"""Errors shared by the entry points (the command line and the window's start-up), kept apart from both so
neither imports the other for them."""

from __future__ import annotations


class UsageError(Exception):
    """Bad arguments or input from the user; the message is one line saying what to do instead."""
