"""Preferences: preview context, the index's file size limit, the model (default, fast or a folder), the
execution provider, and a team index to use instead of this computer's own."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ..search.request import MAX_CONTEXT
from ..store.errors import BadTeamUrl
from ..store.location import check_url
from .app_settings import PROVIDERS

_PROVIDER_LABELS = {
    "auto": "Automatic (best available)",
    "cpu": "CPU",
    "cuda": "CUDA (NVIDIA GPU)",
    "coreml": "Core ML (Apple)",
}


@dataclass(frozen=True)
class Preferences:
    context_lines: int
    max_file_size: int  # bytes
    model_dir: Path | None  # a model folder; used when set, whatever `model` says
    provider: str
    model: str | None = None  # "default" or "fast" (see embedding.choice); None keeps the index's own model
    team_index: str = ""  # a postgresql:// URL, or "" for this computer's index file
    editor: str = ""  # the command that opens a file at a line ("" for $VISUAL/$EDITOR or the system's)


_MODEL_LABELS = {
    "index": "The index's own model (Default for a new index)",
    "default": "Default: all-MiniLM-L6-v2 (best results)",
    "fast": "Fast: Quarry's static code model (for slow machines)",
    "folder": "From a folder…",
}


def _model_choice(prefs: Preferences) -> str:
    if prefs.model_dir:
        return "folder"
    return prefs.model if prefs.model in _MODEL_LABELS else "index"


def _editor_placeholder() -> str:
    env = os.environ.get("VISUAL", "").strip() or os.environ.get("EDITOR", "").strip()
    return f"empty: {env} (from the environment)" if env else "empty: the system's application for each file"


# A line edit's text sits inside its frame and Qt's own margins (about 10 px in all on Fusion); 24 leaves room
# for the cursor and for styles with wider frames.
_FIELD_PADDING = 24


def _fit_placeholder(field: QLineEdit) -> None:
    """Wide enough for its whole placeholder: the dialog cut every one of them ("empty: the system's …",
    "postgresql://user@host:5432/database (empty: this c…", issue 32 item 9), and they say what an empty field
    does."""
    field.setMinimumWidth(field.fontMetrics().horizontalAdvance(field.placeholderText()) + _FIELD_PADDING)


class SettingsDialog(QDialog):
    def __init__(self, prefs: Preferences, parent: QWidget | None = None, editors: Sequence[tuple[str, str]] = ()):
        """`editors`: (name, command) of the editors found on this computer (editor_command.installed_editors)."""
        super().__init__(parent)
        self.setWindowTitle("Quarry settings")
        self.context = QSpinBox()
        self.context.setRange(0, MAX_CONTEXT)
        self.context.setValue(prefs.context_lines)
        self.context.setSuffix(" lines")
        self.max_size = QSpinBox()
        self.max_size.setRange(1, 100 * 1024)
        self.max_size.setValue(max(1, prefs.max_file_size // 1024))
        self.max_size.setSuffix(" KB")
        self.model = QComboBox()
        for key, label in _MODEL_LABELS.items():
            self.model.addItem(label, key)
        self.model.setCurrentIndex(list(_MODEL_LABELS).index(_model_choice(prefs)))
        self.model_dir = QLineEdit(str(prefs.model_dir) if prefs.model_dir else "")
        self.model_dir.setPlaceholderText("a folder with model.onnx, tokenizer.json and quarry-model.json")
        self.browse = QPushButton("Browse…")
        self.browse.clicked.connect(self._browse)
        model_row = QHBoxLayout()
        model_row.addWidget(self.model_dir, 1)
        model_row.addWidget(self.browse)
        self.model.currentIndexChanged.connect(self._enable_folder)
        self._enable_folder()
        self.provider = QComboBox()
        for key in PROVIDERS:
            self.provider.addItem(_PROVIDER_LABELS[key], key)
        self.provider.setCurrentIndex(PROVIDERS.index(prefs.provider) if prefs.provider in PROVIDERS else 0)
        form = QFormLayout()
        form.addRow("&Lines above a hit in the preview", self.context)
        form.addRow("Skip files &larger than", self.max_size)
        form.addRow("&Model", self.model)
        folder_label = QLabel("Model &folder")  # a row holding a layout gets no buddy (nor a mnemonic) by itself
        folder_label.setBuddy(self.model_dir)
        form.addRow(folder_label, model_row)
        form.addRow("&Execution provider", self.provider)
        self.editor = QLineEdit(prefs.editor)
        self.editor.setPlaceholderText(_editor_placeholder())
        self.editor.setToolTip(
            "The command that opens a result (Ctrl+Enter), e.g. code, subl, idea or vim. Quarry adds the file "
            "and line the way that editor takes them. `quarry open PATH:LINE` uses it too."
        )
        self.editor_presets = QComboBox()
        self.editor_presets.addItem("Editors on this computer…", "")
        for name, command in editors:
            self.editor_presets.addItem(f"{name}: {command}", command)
        self.editor_presets.setEnabled(bool(editors))
        self.editor_presets.activated.connect(self._take_preset)
        editor_row = QHBoxLayout()
        editor_row.addWidget(self.editor, 1)
        editor_row.addWidget(self.editor_presets)
        editor_label = QLabel("E&ditor")
        editor_label.setBuddy(self.editor)
        form.addRow(editor_label, editor_row)
        self.team_index = QLineEdit(prefs.team_index)
        self.team_index.setPlaceholderText("postgresql://user@host:5432/database (empty: this computer's index)")
        self.team_index.textChanged.connect(self._check_team_index)
        form.addRow("&Team index", self.team_index)
        self.team_problem = QLabel()
        self.team_problem.setStyleSheet("color: #b00020")
        form.addRow("", self.team_problem)
        note = QLabel(
            "Changing the size limit, model, provider or team index restarts the engine; the model folder needs "
            "model.onnx, tokenizer.json and quarry-model.json. A team index's password is never saved: Quarry "
            "reads it from PGPASSWORD or ~/.pgpass, or uses one typed in the URL for this session only."
        )
        note.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(note)
        layout.addWidget(self.buttons)
        for field in (self.model_dir, self.editor, self.team_index):
            _fit_placeholder(field)
        self._check_team_index()

    def preferences(self) -> Preferences:
        choice = self.model.currentData()
        folder = self.model_dir.text().strip() if choice == "folder" else ""
        return Preferences(
            self.context.value(),
            self.max_size.value() * 1024,
            Path(folder).expanduser() if folder else None,
            self.provider.currentData(),
            None if choice in ("folder", "index") else choice,
            self.team_index.text().strip(),
            self.editor.text().strip(),
        )

    def _take_preset(self, index: int) -> None:
        command = self.editor_presets.itemData(index)
        if command:
            self.editor.setText(command)

    def _check_team_index(self) -> None:
        text = self.team_index.text().strip()
        problem = ""
        if text:
            # Read as the engine will read it (nothing is contacted): a URL it would refuse is not accepted here.
            try:
                check_url(text)
            except BadTeamUrl as exc:
                problem = f"Not a team index URL Quarry can read: {exc.reason}."
        self.team_problem.setText(problem)
        self.team_problem.setVisible(bool(problem))
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(not problem)

    def _enable_folder(self) -> None:
        folder = self.model.currentData() == "folder"
        self.model_dir.setEnabled(folder)
        self.browse.setEnabled(folder)

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Model folder", self.model_dir.text())
        if folder:
            self.model_dir.setText(folder)
