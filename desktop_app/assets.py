"""Locating Quarry's data files (tokenizer, icons, desktop entry).

Installed, resources/ ships inside the package as desktop_app/resources (see pyproject.toml);
in a source checkout it sits beside the package at the top of the repository.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def resource_path(*parts: str) -> Path:
    for base in (_PACKAGE / "resources", _PACKAGE.parent / "resources"):
        if base.is_dir():
            return base.joinpath(*parts)
    raise FileNotFoundError(f"Quarry's resources folder is missing next to {_PACKAGE}; reinstall Quarry")
