"""What the window shows at its default size is readable (issue 32 items 7, 8 and 9): result rows, the preview
of a long definition, Settings, F1, text mode's columns, disabled toggles and the preview's empty state.
A real engine and index, a real window (offscreen), driven through pytest-qt."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QPoint, Qt  # noqa: E402
from PySide6.QtWidgets import QToolButton  # noqa: E402

from desktop_app.ui.preview_pane import IDLE_MESSAGE, PreviewTarget  # noqa: E402
from desktop_app.ui.result_model import COL_MATCH, COL_SCORE  # noqa: E402
from desktop_app.ui.settings_dialog import Preferences, SettingsDialog  # noqa: E402
from desktop_app.ui.shortcuts_dialog import ShortcutsDialog  # noqa: E402
from desktop_app.worker import ops  # noqa: E402
from desktop_app.worker.worker import EngineConfig, Worker  # noqa: E402

from .test_gui import open_window, search, wait_preview  # noqa: E402

# A project named as real ones are: a long method name under its class, in a file some folders down.
DEEP_PATH = "packages/rich_ui/renderables/layout/columns/table_layout.py"


def _long_method() -> str:
    """A method of about 150 lines, cut into several chunks; the query below finds one near its end."""
    body = []
    for n in range(60):
        body.append(f"        width_{n} = self._measure_column(console, options, columns[{n % 7}]) + {n}")
        body.append(f"        widths.append(max(width_{n}, minimum_widths[{n % 5}]))")
    body += [
        "        table_width = sum(widths)",
        "        if table_width > max_width:",
        "            # last resort: shrink every column evenly until the table fits the console",
        "            excess_width = table_width - max_width",
        "            widths = ratio_reduce(excess_width, [1] * len(widths), widths, widths)",
        "        return widths",
    ]
    return (
        "    def _calculate_column_widths(\n"
        "        self, console: Console, options: ConsoleOptions\n"
        "    ) -> list[int]:\n"
        '        """Work out the widths of every column of the table."""\n'
        "        widths = []\n"
        "        minimum_widths = [self.min_width] * 5\n" + "\n".join(body) + "\n"
    )


TABLE = (
    "from .console import Console, ConsoleOptions\n\n\n"
    "def ratio_reduce(total, ratios, maximums, values):\n"
    "    return [v - total // len(values) for v in values]\n\n\n"
    "class Table:\n"
    '    """A console table with columns that fit the width of the terminal."""\n\n'
    "    def __init__(self, min_width: int = 1):\n"
    "        self.min_width = min_width\n\n"
    "    def _measure_column(self, console, options, column):\n"
    "        return column.width\n\n" + _long_method()
)


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("readable") / "rich"
    for rel in ("rich/table.py", DEEP_PATH):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(TABLE)
    return root


@pytest.fixture(scope="module")
def project_index(tmp_path_factory, project) -> Path:
    db = tmp_path_factory.mktemp("readable-db") / "index.db"
    worker = Worker(EngineConfig(db)).start()
    try:
        worker.run(ops.index(project)).result()
    finally:
        worker.close()
    return db


@pytest.fixture
def window(qtbot, qasync_loop, gui_settings, tmp_path, project, project_index):
    db = tmp_path / "index.db"
    shutil.copy(project_index, db)
    win = open_window(qtbot, gui_settings, db, project)
    yield win
    win.close()
    win.bridge.shutdown()


# --- item 7: result rows --------------------------------------------------------------------------


def test_each_ranked_row_shows_its_definition_and_its_path_at_the_default_size(qtbot, window):
    assert (window.width(), window.height()) == (1280, 800)  # the default window, as a first start opens it
    response = search(qtbot, window, "calculate column widths")
    tree = window.tree
    hits = response.results
    assert any(r.symbol_name == "_calculate_column_widths" for r in hits[:2])
    line = tree.fontMetrics().height()
    for row, hit in enumerate(hits[:5]):
        index = tree.results.index(row, 0)
        assert tree.visualRect(index).height() >= 2 * line  # the definition over where it is
        what = tree.results.item(row, 0).text().split("   ")[0]  # "1.  fn Table._calculate_column_widths"
        lines = f"{hit.start_line}" if hit.start_line == hit.end_line else f"{hit.start_line}–{hit.end_line}"
        title, place = tree.shown_row(row)
        assert title == what  # nothing of the name cut
        if hit.path == "rich/table.py":
            assert place == f"rich/table.py:{lines}"
        else:  # a long path gives way in its folders' middle: the file name and lines stay whole
            assert hit.path == DEEP_PATH and place.startswith("pack") and "…" in place
            assert place.endswith(f"/table_layout.py:{lines}")


# --- item 8: the preview of a long definition -----------------------------------------------------


def _file_line(root: Path, rel: str, text: str) -> int:
    return next(n for n, line in enumerate((root / rel).read_text().split("\n"), start=1) if text in line)


def on_screen(code) -> range:
    """The file lines in the code view's viewport (pinned lines cover the first of them)."""
    top = code.first_line + code.firstVisibleBlock().blockNumber()
    return range(top, top + code.viewport().height() // code.fontMetrics().height())


def test_a_hit_deep_in_a_long_function_shows_the_function_s_signature(qtbot, window, project):
    search(qtbot, window, "shrink every column evenly until the table fits the console")
    wait_preview(qtbot, window)
    hit = window.tree.current_result()
    signature = _file_line(project, hit.path, "def _calculate_column_widths(")
    code = window.preview.code
    assert hit.symbol_name == "_calculate_column_widths" and hit.start_line - signature > len(on_screen(code))
    assert signature not in on_screen(code)
    # The signature (and the class it is in) sit above the code; the hit is below them, not behind them.
    pinned = code.pinned_lines()
    assert pinned == [_file_line(project, hit.path, "class Table:"), signature]
    assert hit.start_line in on_screen(code)[len(pinned) :]
    # A click on the pinned signature scrolls to it: it is in the code then, under its class's pinned line.
    sticky = code.sticky
    qtbot.mouseClick(sticky, Qt.MouseButton.LeftButton, pos=QPoint(40, sticky.height() * 3 // 4))
    assert code.pinned_lines() == pinned[:1] and on_screen(code)[1] == signature
    code.scroll_to_line(1)
    assert code.pinned_lines() == [] and not sticky.isVisible()


def test_a_hit_a_few_lines_below_its_signature_scrolls_the_signature_into_view(qtbot, window, project):
    hit = search(qtbot, window, "calculate column widths").results[0]
    signature = _file_line(project, hit.path, "def _calculate_column_widths(")
    start = signature + 12  # a window of the function that begins a dozen lines into it
    window.preview.preview(
        PreviewTarget(hit.scope_root, hit.path, hit.file_sha256, start, start + 20, "python", "a window of it")
    )
    wait_preview(qtbot, window)
    code = window.preview.code
    assert start - window.preview.context_lines > signature  # scrolled as before, the signature was off screen
    shown = on_screen(code)
    assert signature in shown and start in shown
    assert signature in shown[len(code.pinned_lines()) :]  # not behind a pinned line


# --- item 9: smaller things -----------------------------------------------------------------------


def test_the_preview_says_what_it_waits_for_in_a_placeholder_not_as_a_line_of_code(qtbot, window):
    preview = window.preview
    assert not preview.code.isVisible() and preview.code.toPlainText() == ""  # no "1" beside the hint
    assert preview.placeholder.isVisible() and preview.placeholder.text() == IDLE_MESSAGE
    search(qtbot, window, "calculate column widths")
    wait_preview(qtbot, window)
    assert preview.code.isVisible() and not preview.placeholder.isVisible()
    window.set_mode("text")
    assert not search(qtbot, window, "zzqx").results
    assert not preview.code.isVisible() and preview.placeholder.text() == "No results for “zzqx”."
    assert preview.code.toPlainText() == "" and preview.code.pinned_lines() == []


def test_text_mode_shows_no_score_or_badge_columns_the_ranked_modes_do(qtbot, window):
    tree = window.tree
    search(qtbot, window, "column_widths")
    assert not tree.isColumnHidden(COL_SCORE) and not tree.isColumnHidden(COL_MATCH)
    with qtbot.waitSignal(window.results_shown, timeout=10_000):
        qtbot.keyClick(window.search_bar, Qt.Key.Key_4, Qt.KeyboardModifier.AltModifier)
    assert window.last_response.mode == "text" and window.last_response.results
    assert tree.isColumnHidden(COL_SCORE) and tree.isColumnHidden(COL_MATCH)  # every row said "text", no score
    with qtbot.waitSignal(window.results_shown, timeout=10_000):
        qtbot.keyClick(window.search_bar, Qt.Key.Key_1, Qt.KeyboardModifier.AltModifier)
    assert not tree.isColumnHidden(COL_SCORE) and not tree.isColumnHidden(COL_MATCH)


def _toggle(window, name: str) -> QToolButton:
    action = window.text_actions[name]
    return next(b for b in window.findChildren(QToolButton) if b.defaultAction() is action)


def test_a_text_option_switched_on_does_not_look_pressed_while_it_does_not_apply(qtbot, window):
    regex = window.text_actions["regex"]
    button = _toggle(window, "regex")
    window.set_mode("text")
    qtbot.keyClick(window.search_bar, Qt.Key.Key_R, Qt.KeyboardModifier.AltModifier)
    assert regex.isChecked() and regex.isEnabled()
    pressed = button.grab().toImage()
    window.set_mode("hybrid")  # regular expressions are text mode's alone
    assert regex.isChecked() and not regex.isEnabled()
    disabled_on = button.grab().toImage()
    regex.setChecked(False)
    assert disabled_on == button.grab().toImage()  # as if it were off
    regex.setChecked(True)
    window.set_mode("text")
    assert button.grab().toImage() == pressed  # the choice was kept, and shows again where it applies


def test_settings_shows_every_field_s_placeholder_whole(qtbot, qasync_loop, monkeypatch):
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    dialog = SettingsDialog(Preferences(5, 512 * 1024, None, "auto"), None, [("VS Code", "code")])
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    for field in (dialog.model_dir, dialog.editor, dialog.team_index):
        needed = field.fontMetrics().horizontalAdvance(field.placeholderText())
        assert field.placeholderText() and needed + 10 <= field.width(), field.placeholderText()


def test_f1_lists_the_shortcuts_as_a_read_only_list(qtbot, window):
    qtbot.keyClick(window.search_bar, Qt.Key.Key_F1)
    dialog = window.findChild(ShortcutsDialog)
    table = dialog.table
    assert not table.showGrid() and table.selectionMode() == table.SelectionMode.NoSelection
    assert table.focusPolicy() == Qt.FocusPolicy.NoFocus
    for row in range(table.rowCount()):
        keys, what = table.item(row, 0), table.item(row, 1)
        assert keys.text() and what.text()  # no row without its keys (Quit had none on this platform)
        for item in (keys, what):
            assert not item.flags() & (Qt.ItemFlag.ItemIsEditable | Qt.ItemFlag.ItemIsSelectable)
        assert table.fontMetrics().horizontalAdvance(keys.text()) <= table.columnWidth(0)
    dialog.close()


def test_the_language_filters_are_there_while_a_folder_is_indexed(
    qtbot, qasync_loop, gui_settings, tmp_path, project, embedding_gate
):
    gate = embedding_gate()  # the run is held at the model (its last stage): it is still indexing
    win = open_window(qtbot, gui_settings, tmp_path / "index.db", None)
    try:
        indexing = asyncio.ensure_future(win.open_project(project))
        qtbot.waitUntil(gate.waiting.is_set, timeout=60_000)
        assert win.bridge.indexing and not indexing.done()
        win.toggle_filter_bar()
        qtbot.waitUntil(lambda: win.filter_bar.language_counts() == {"python": 2}, timeout=10_000)
        gate.release()
        qtbot.waitUntil(indexing.done, timeout=60_000)
    finally:
        gate.release()
        win.close()
        win.bridge.shutdown()
