"""What a `quarry` command line says before it is parsed: which command it runs, and the window's options that take
a value. Read by the entry point before the rest of Quarry is imported (launch.py), and by cli.py."""

from __future__ import annotations

from collections.abc import Sequence

COMMANDS = frozenset(("index", "search", "scopes", "history", "mcp", "open"))

# The window's options that take a value: `quarry --db X FOLDER` has its folder after them.
VALUE_OPTIONS = frozenset(("--db", "--model", "--model-dir", "--provider", "--root", "--query", "--screenshot"))


def first_word(argv: Sequence[str]) -> int:
    """Where the words after the window's options begin (a command, or folders to open)."""
    start = 0
    while start < len(argv) and argv[start].startswith("-"):
        start += 2 if argv[start] in VALUE_OPTIONS else 1
    return start


def command_of(argv: Sequence[str]) -> str | None:
    """The command the line runs; None for the window (no command, or a folder to open)."""
    start = first_word(argv)
    if start < len(argv) and argv[start] in COMMANDS:
        return argv[start]
    return None


def option_value(argv: Sequence[str], name: str) -> str | None:
    """The last value given to option `name` (as `NAME VALUE` or `NAME=VALUE`), else None."""
    value = None
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            value = argv[i + 1]
        elif arg.startswith(name + "="):
            value = arg[len(name) + 1 :]
    return value
