"""Preferences: preview context, the index's file size limit, the model folder and execution provider."""

from __future__ import annotations

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
    model_dir: Path | None
    provider: str


class SettingsDialog(QDialog):
    def __init__(self, prefs: Preferences, parent: QWidget | None = None):
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
        self.model_dir = QLineEdit(str(prefs.model_dir) if prefs.model_dir else "")
        self.model_dir.setPlaceholderText("bundled all-MiniLM-L6-v2")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        model_row = QHBoxLayout()
        model_row.addWidget(self.model_dir, 1)
        model_row.addWidget(browse)
        self.provider = QComboBox()
        for key in PROVIDERS:
            self.provider.addItem(_PROVIDER_LABELS[key], key)
        self.provider.setCurrentIndex(PROVIDERS.index(prefs.provider) if prefs.provider in PROVIDERS else 0)
        form = QFormLayout()
        form.addRow("&Context lines in preview", self.context)
        form.addRow("Skip files &larger than", self.max_size)
        form.addRow("&Model folder", model_row)
        form.addRow("&Execution provider", self.provider)
        note = QLabel(
            "Changing the size limit, model or provider restarts the engine; the model folder needs "
            "model.onnx, tokenizer.json and quarry-model.json."
        )
        note.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(note)
        layout.addWidget(buttons)

    def preferences(self) -> Preferences:
        folder = self.model_dir.text().strip()
        return Preferences(
            self.context.value(),
            self.max_size.value() * 1024,
            Path(folder).expanduser() if folder else None,
            self.provider.currentData(),
        )

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Model folder", self.model_dir.text())
        if folder:
            self.model_dir.setText(folder)
