"""Starting the user's editor at a line, or the system's opener when no editor is configured."""

from __future__ import annotations

from pathlib import PurePath

from PySide6.QtCore import QProcess, QUrl
from PySide6.QtGui import QDesktopServices

from .editor_command import editor_command


def open_in_editor(path: str, line: int) -> str | None:
    """Open `path` at `line`; returns a message for the user when that failed, else None."""
    argv = editor_command(path, line)
    if argv is None:
        if QDesktopServices.openUrl(QUrl.fromLocalFile(path)):
            return None
        return f"No application opens {PurePath(path).name}; set $VISUAL or $EDITOR to your editor."
    started, _pid = QProcess.startDetached(argv[0], argv[1:])
    if started:
        return None
    return f"Could not start the editor {argv[0]!r} (from $VISUAL or $EDITOR); check that it is installed."
