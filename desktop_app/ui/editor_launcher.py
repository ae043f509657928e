"""Starting the user's editor at a line, or the system's opener when no editor is configured."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import PurePath

from PySide6.QtCore import QProcess, QUrl
from PySide6.QtGui import QDesktopServices

from ..editor_command import editor_command, runs_in_terminal

# Terminal emulators that run a command given after these arguments, most specific first; $TERMINAL wins.
_TERMINALS: tuple[tuple[str, list[str]], ...] = (
    ("x-terminal-emulator", ["-e"]),
    ("gnome-terminal", ["--"]),
    ("konsole", ["-e"]),
    ("xfce4-terminal", ["-x"]),
    ("kitty", []),
    ("alacritty", ["-e"]),
    ("wezterm", ["start", "--"]),
    ("foot", []),
    ("xterm", ["-e"]),
)


def open_in_editor(path: str, line: int, chosen: str = "") -> str | None:
    """Open `path` at `line` in the `chosen` editor (Settings) or the environment's; returns a message for the
    user when that failed, else None."""
    argv = editor_command(path, line, chosen=chosen)
    if argv is None:
        if QDesktopServices.openUrl(QUrl.fromLocalFile(path)):
            return None
        return f"No application opens {PurePath(path).name}; choose your editor in Settings."
    if runs_in_terminal(argv[0]):
        terminal = _terminal()
        if terminal is None:
            return (
                f"{argv[0]} runs in a terminal and no terminal program was found; set $TERMINAL, or choose a "
                "windowed editor in Settings."
            )
        argv = terminal + argv
    started, _pid = QProcess.startDetached(argv[0], argv[1:])
    if started:
        return None
    return f"Could not start the editor {argv[0]!r}; check the Editor field in Settings."


def _terminal() -> list[str] | None:
    """The argv prefix that runs a command in a new terminal window (Linux and BSD desktops)."""
    if sys.platform == "darwin" or os.name == "nt":
        return None
    chosen = os.environ.get("TERMINAL", "").strip()
    if chosen and shutil.which(shlex.split(chosen)[0]):
        return [*shlex.split(chosen), "-e"]
    for program, prefix in _TERMINALS:
        found = shutil.which(program)
        if found:
            return [found, *prefix]
    return None
