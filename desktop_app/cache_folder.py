"""Quarry's folder for what can be made again (the distilled static table, verdicts on index files)."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs


def user_cache_folder() -> Path:
    """QUARRY_CACHE_DIR, or the user's cache folder for Quarry."""
    override = os.environ.get("QUARRY_CACHE_DIR")
    return Path(override).expanduser() if override else platformdirs.user_cache_path("quarry", appauthor=False)
