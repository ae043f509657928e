"""Typed access to what Quarry remembers between runs (QSettings: window state, project, preferences)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings

from ..embedding.choice import MODEL_CHOICES
from ..embedding.providers import PREFERENCES as PROVIDERS
from ..indexing.file_selection import SelectionOptions
from ..search.request import MAX_CONTEXT, Mode, as_mode
from ..store.location import display_url

DEFAULT_CONTEXT_LINES = 5
DEFAULT_MAX_FILE_SIZE = SelectionOptions().max_file_size
MAX_RECENT = 10


class AppSettings:
    def __init__(self, qsettings: QSettings | None = None):
        self.q = qsettings if qsettings is not None else QSettings()

    # --- preferences ----------------------------------------------------------------------------

    @property
    def context_lines(self) -> int:
        return _clamp(self._int("preview/context_lines", DEFAULT_CONTEXT_LINES), 0, MAX_CONTEXT)

    @context_lines.setter
    def context_lines(self, value: int) -> None:
        self.q.setValue("preview/context_lines", _clamp(int(value), 0, MAX_CONTEXT))

    @property
    def max_file_size(self) -> int:
        return max(1, self._int("index/max_file_size", DEFAULT_MAX_FILE_SIZE))

    @max_file_size.setter
    def max_file_size(self, value: int) -> None:
        self.q.setValue("index/max_file_size", max(1, int(value)))

    @property
    def model_dir(self) -> Path | None:
        value = str(self.q.value("engine/model_dir", "") or "")
        return Path(value) if value else None

    @model_dir.setter
    def model_dir(self, value: Path | None) -> None:
        self.q.setValue("engine/model_dir", str(value) if value else "")

    @property
    def model(self) -> str | None:
        """The model the user switched indexes to, or None to keep each index's own (see EngineConfig.model)."""
        value = str(self.q.value("engine/model", "") or "")
        return value if value in MODEL_CHOICES else None

    @model.setter
    def model(self, value: str | None) -> None:
        self.q.setValue("engine/model", value if value in MODEL_CHOICES else "")

    @property
    def provider(self) -> str:
        value = str(self.q.value("engine/provider", "auto"))
        return value if value in PROVIDERS else "auto"

    @provider.setter
    def provider(self, value: str) -> None:
        self.q.setValue("engine/provider", value if value in PROVIDERS else "auto")

    @property
    def team_index(self) -> str:
        """A team index's postgresql:// URL ("" for this computer's own index file); never with a password."""
        return str(self.q.value("engine/team_index", "") or "")

    @team_index.setter
    def team_index(self, value: str) -> None:
        self.q.setValue("engine/team_index", display_url(value) if value else "")

    @property
    def mode(self) -> Mode:
        return as_mode(str(self.q.value("search/mode", "hybrid"))) or "hybrid"

    @mode.setter
    def mode(self, value: Mode) -> None:
        self.q.setValue("search/mode", value)

    @property
    def wrap_lines(self) -> bool:
        """The preview wraps long lines at its width, rather than scrolling sideways."""
        return self._bool("preview/wrap_lines")

    @wrap_lines.setter
    def wrap_lines(self, value: bool) -> None:
        self.q.setValue("preview/wrap_lines", _flag(value))

    @property
    def group_by_file(self) -> bool:
        """Results grouped under their files, rather than one ranked list (the default)."""
        return self._bool("search/group_by_file")

    @group_by_file.setter
    def group_by_file(self, value: bool) -> None:
        self.q.setValue("search/group_by_file", _flag(value))

    # --- projects -------------------------------------------------------------------------------

    @property
    def last_project(self) -> str | None:
        return str(self.q.value("projects/last", "") or "") or None

    @last_project.setter
    def last_project(self, root: str | None) -> None:
        self.q.setValue("projects/last", root or "")

    @property
    def recent_projects(self) -> list[str]:
        value = self.q.value("projects/recent", [])
        if isinstance(value, str):  # QSettings hands back a lone string for a one-item list
            value = [value]
        return [str(v) for v in value if v] if isinstance(value, list) else []  # None when nothing is stored

    def add_recent_project(self, root: str) -> None:
        recent = [root] + [r for r in self.recent_projects if r != root]
        self.q.setValue("projects/recent", recent[:MAX_RECENT])

    # --- window state ---------------------------------------------------------------------------

    @property
    def geometry(self) -> QByteArray | None:
        return _bytes(self.q.value("window/geometry"))

    @geometry.setter
    def geometry(self, value: QByteArray) -> None:
        self.q.setValue("window/geometry", value)

    @property
    def splitter_state(self) -> QByteArray | None:
        return _bytes(self.q.value("window/splitter"))

    @splitter_state.setter
    def splitter_state(self, value: QByteArray) -> None:
        self.q.setValue("window/splitter", value)

    def sync(self) -> None:
        self.q.sync()

    def _bool(self, key: str) -> bool:
        """A switch, off unless written on (QSettings' INI files read every value back as text)."""
        return str(self.q.value(key, "false")).lower() == "true"

    def _int(self, key: str, default: int) -> int:
        value = self.q.value(key, default)  # the int written, or its text when read back from the settings file
        if not isinstance(value, (int, float, str)):  # None, or something that is no number
            return default
        try:
            return int(value)
        except ValueError:
            return default


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))


def _bytes(value: object) -> QByteArray | None:
    return value if isinstance(value, QByteArray) and not value.isEmpty() else None


def _flag(value: bool) -> str:
    return "true" if value else "false"
