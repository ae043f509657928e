"""Data files shipped with Quarry (tokenizer, icons, desktop entry)."""

from pathlib import Path


def resource_path(*parts: str) -> Path:
    """Absolute path of a file under resources/, installed or in a source checkout."""
    return Path(__file__).resolve().parent.joinpath(*parts)
