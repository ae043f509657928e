"""Settings that every front end reads (the window, `quarry open`, `quarry mcp`): a small JSON file in the
user's config folder, not the window's QSettings, so the command line and agents can read them without Qt.

Only the editor lives here today; the window's own state (geometry, recent projects) stays in QSettings.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from pathlib import Path

import platformdirs

_log = logging.getLogger(__name__)
FILE_NAME = "settings.json"


def settings_file() -> Path:
    """$QUARRY_CONFIG_DIR/settings.json, else the user config folder's (Linux: ~/.config/quarry/)."""
    override = os.environ.get("QUARRY_CONFIG_DIR")
    folder = Path(override).expanduser() if override else platformdirs.user_config_path("quarry", appauthor=False)
    return folder / FILE_NAME


def _load() -> dict:
    try:
        data = json.loads(settings_file().read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:  # unreadable or hand-edited into invalid JSON: defaults, and say so
        _log.warning("ignoring %s: %s", settings_file(), exc)
        return {}
    return data if isinstance(data, dict) else {}


def editor() -> str:
    """The editor command line chosen in Settings (e.g. "code", "subl -w"); "" when none was chosen."""
    value = _load().get("editor", "")
    return value.strip() if isinstance(value, str) else ""


def set_editor(command: str) -> None:
    data = _load()
    data["editor"] = command.strip()
    _save(data)


def _save(data: dict) -> None:
    """Replace the file atomically: a crash mid-write leaves the old settings, never half a file."""
    path = settings_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".settings-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=2)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
