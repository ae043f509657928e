"""The files an index run passed over, and why: opened from the status bar's "Skipped (N)" link."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

# What each skip reason (indexing.source_reader, file_selection) means to a user.
REASONS = {
    "ignored": "ignored by .gitignore or .quarryignore",
    "excluded_dir": "a dependency, build or cache folder",
    "lock_file": "a lock file",
    "unsupported_type": "a file type Quarry does not index",
    "not_source": "an image, archive, compiled file or other non-source file",
    "special_file": "not a regular file (a pipe, socket or device)",
    "too_large": "larger than the size limit (Settings)",
    "binary": "binary content",
    "undecodable": "text in an encoding Quarry cannot read without loss",
    "minified": "minified or generated (mostly very long lines)",
    "unreadable": "could not be read (permissions)",
    "vanished": "deleted while indexing",
    "symlink_outside_root": "a link to outside the project",
    "symlink_loop": "a link loop",
    "dangling_symlink": "a link to nothing",
    "undecodable_name": "a name that is not valid text",
}


def reason_text(reason: str) -> str:
    return REASONS.get(reason, reason.replace("_", " "))


class SkippedDialog(QDialog):
    def __init__(self, root: str, skipped: list[tuple[str, str]], parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Skipped files")
        files = sum(1 for path, _ in skipped if not path.endswith("/"))
        summary = QLabel(
            f"Indexing {root} passed over {files:,} files and {len(skipped) - files:,} folders. "
            "Folders end in /; everything inside them was passed over too."
        )
        summary.setWordWrap(True)
        table = QTableWidget(len(skipped), 2)
        table.setHorizontalHeaderLabels(["Path", "Why"])
        table.verticalHeader().hide()
        table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        for i, (path, reason) in enumerate(sorted(skipped)):
            table.setItem(i, 0, QTableWidgetItem(path))
            table.setItem(i, 1, QTableWidgetItem(reason_text(reason)))
        table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.table = table
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(summary)
        layout.addWidget(table)
        layout.addWidget(buttons)
        self.resize(640, 480)
