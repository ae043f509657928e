"""Where Quarry writes what went wrong: a rotating file in the user's log folder.

A window started from the desktop has no terminal, so an error shown in a banner and gone, or an exception
in the engine, would otherwise leave no trace. Both front ends call `setup_logging()` once at start;
engine modules log with `logging.getLogger(__name__)` and never configure handlers themselves.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
from pathlib import Path

import platformdirs

LOG_FILE_NAME = "quarry.log"
MAX_BYTES = 1_000_000  # per file; with BACKUPS that is at most ~4 MB of logs
BACKUPS = 3
_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(threadName)s] %(message)s"


def log_dir() -> Path:
    """The user log folder (Linux: $XDG_STATE_HOME/quarry/log); QUARRY_LOG_DIR overrides it."""
    override = os.environ.get("QUARRY_LOG_DIR")
    return Path(override).expanduser() if override else platformdirs.user_log_path("quarry", appauthor=False)


def setup_logging(level: int = logging.INFO) -> Path | None:
    """Send Quarry's log records to the rotating file; returns its path, or None when the folder cannot be
    written (logging must never stop the app: records then go nowhere, as before this was set up)."""
    logger = logging.getLogger("desktop_app")
    logger.setLevel(level)
    path = log_dir() / LOG_FILE_NAME
    for handler in logger.handlers:
        if isinstance(handler, logging.handlers.RotatingFileHandler) and Path(handler.baseFilename) == path:
            return path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # backslashreplace: a path whose name is not UTF-8 (kept as surrogates) is logged as \udcNN, not
        # turned into a "--- Logging error ---" traceback on stderr.
        handler = logging.handlers.RotatingFileHandler(
            path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8", errors="backslashreplace"
        )
    except OSError:
        return None  # the package's NullHandler keeps records off stderr
    handler.setFormatter(logging.Formatter(_FORMAT))
    logger.addHandler(handler)
    logger.propagate = False  # the CLI's stderr carries its own one-line messages
    return path
