"""The desktop window driven as a user would: real engine, real index, keys, drops and a screenshot."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QMimeData, QPoint, QPointF, QSettings, Qt, QThread, QUrl  # noqa: E402
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QImage  # noqa: E402
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QLabel, QMessageBox  # noqa: E402

from desktop_app import shared_settings  # noqa: E402
from desktop_app.app import engine_config  # noqa: E402
from desktop_app.bridge import EngineBridge  # noqa: E402
from desktop_app.indexing.progress import Progress  # noqa: E402
from desktop_app.search.request import (
    SearchFilters,  # noqa: E402
    SearchRequest,  # noqa: E402
)
from desktop_app.store.location import StoreLocation  # noqa: E402
from desktop_app.store.postgres.urls import display_url  # noqa: E402
from desktop_app.ui.app_settings import AppSettings  # noqa: E402
from desktop_app.ui.main_window import MainWindow  # noqa: E402
from desktop_app.ui.quick_open import QuickOpen  # noqa: E402
from desktop_app.ui.result_model import EVIDENCE_LABELS, EVIDENCE_ROLE  # noqa: E402
from desktop_app.ui.result_tree import BADGE_GAP, BADGE_PAD  # noqa: E402
from desktop_app.ui.settings_dialog import Preferences, SettingsDialog  # noqa: E402
from desktop_app.ui.shortcuts_dialog import ShortcutsDialog  # noqa: E402
from desktop_app.ui.single_instance import InstanceChannel, channel_name  # noqa: E402
from desktop_app.ui.skipped_dialog import SkippedDialog  # noqa: E402
from desktop_app.wording import file_size  # noqa: E402
from desktop_app.worker import ops  # noqa: E402
from desktop_app.worker.operations import REEMBED  # noqa: E402
from desktop_app.worker.worker import EngineConfig  # noqa: E402

from .gitrepo import git, init_repo  # noqa: E402
from .model_dirs import other_model_dir  # noqa: E402
from .reliability import damage_middle, grow_past_the_open_check, quarry  # noqa: E402
from .team_server import database_of  # noqa: E402

EMAIL_PACKAGE = Path(sys.base_prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "email"


def run(qtbot, coro, timeout: int = 30_000):
    """Drive `coro` on the qasync loop by spinning Qt until it finishes."""
    task = asyncio.ensure_future(coro)
    qtbot.waitUntil(task.done, timeout=timeout)
    return task.result()


def open_window(qtbot, settings: AppSettings, db: Path, project: Path | None) -> MainWindow:
    win = MainWindow(EngineBridge(), settings)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    win.activateWindow()
    run(qtbot, win.start(EngineConfig(db)))
    if project is not None:
        win.set_project(str(project.resolve()))
    return win


@pytest.fixture
def window(qtbot, qasync_loop, gui_settings, index_copy, mixed_root):
    win = open_window(qtbot, gui_settings, index_copy, mixed_root)
    yield win
    win.close()
    win.bridge.shutdown()


def test_a_query_typed_before_the_index_opens_is_answered(qtbot, qasync_loop, gui_settings, index_copy, mixed_root):
    # A double-click user types the moment the window appears: the last project is searched once the engine
    # is up, and nothing asks them to open a folder meanwhile.
    gui_settings.last_project = str(mixed_root.resolve())
    win = MainWindow(EngineBridge(), gui_settings)
    qtbot.addWidget(win)
    win.show()
    starting = asyncio.ensure_future(win.start(EngineConfig(index_copy)))
    try:
        with qtbot.waitSignal(win.results_shown, timeout=20_000):
            qtbot.keyClicks(win.search_bar, "retry with exponential backoff")
            qtbot.keyClick(win.search_bar, Qt.Key.Key_Return)
        qtbot.waitUntil(starting.done, timeout=20_000)
        assert starting.result() is True
        assert win.last_response.results[0].path == "src/http_client.py"
        assert "Open a folder" not in win.banner.text()
    finally:
        win.close()
        win.bridge.shutdown()


def test_the_bridge_holds_a_search_until_the_engine_has_started(qtbot, qasync_loop, index_copy, mixed_root):
    bridge = EngineBridge()
    starting = asyncio.ensure_future(bridge.start(EngineConfig(index_copy)))
    # Scheduled in the same turn of the loop: start() is still waiting on the worker when this one runs.
    answer = asyncio.ensure_future(bridge.run(ops.search(SearchRequest("matrix", roots=(str(mixed_root),)))))
    try:
        response = run(qtbot, answer)
        assert starting.done() and response.results
    finally:
        bridge.shutdown()


def test_a_search_answered_while_vectors_loaded_runs_again_once_they_are_in(qtbot, window):
    first = search(qtbot, window, "multiply two matrices")
    first.vectors_loaded = 0.4  # as if answered during the warm-up of a large index
    with qtbot.waitSignal(window.results_shown, timeout=10_000):
        run(qtbot, window._load_model())  # the warm-up finishing
    assert window.last_response is not first and window.last_response.vectors_loaded == 1


def test_a_last_project_no_longer_indexed_is_forgotten_at_start(qtbot, qasync_loop, gui_settings, index_copy, tmp_path):
    gui_settings.last_project = str(tmp_path / "gone")
    win = open_window(qtbot, gui_settings, index_copy, None)
    try:
        assert win.project is None and win.windowTitle() == "Quarry"
    finally:
        win.close()
        win.bridge.shutdown()


def type_query(qtbot, win: MainWindow, text: str) -> None:
    win.search_bar.setFocus()
    win.search_bar.clear()
    qtbot.keyClicks(win.search_bar, text)


def search(qtbot, win: MainWindow, text: str):
    with qtbot.waitSignal(win.results_shown, timeout=10_000):
        type_query(qtbot, win, text)
    return win.last_response


def wait_preview(qtbot, win: MainWindow) -> None:
    qtbot.waitUntil(lambda: win.preview.task is not None and win.preview.task.done(), timeout=5_000)


def drop(win: MainWindow, urls: list[QUrl]) -> None:
    mime = QMimeData()
    mime.setUrls(urls)
    centre = QPoint(win.width() // 2, win.height() // 2)
    enter = QDragEnterEvent(
        QPointF(centre), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    )
    QApplication.sendEvent(win, enter)
    assert enter.isAccepted()
    QApplication.sendEvent(
        win,
        QDropEvent(
            QPointF(centre), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
        ),
    )


# --- searching ------------------------------------------------------------------------------------


def test_typing_fills_the_tree_once_typing_pauses(qtbot, window):
    started = []
    window.live.started.connect(started.append)
    with qtbot.waitSignal(window.results_shown, timeout=10_000):
        type_query(qtbot, window, "where do we retry failed http requests")
        assert window.tree.hit_count == 0 and started == []  # nothing until the debounce timer fires
    assert len(started) == 1  # one search for the whole burst of keystrokes
    tree = window.tree
    assert tree.results.hits[0].path == "src/http_client.py"
    first = tree.results.item(0, 0).text()  # one ranked list: rank, the definition, where it is
    assert first.startswith("1.  ") and f"src/http_client.py:{tree.results.hits[0].start_line}" in first
    assert tree.results.item(0, 2).data(EVIDENCE_ROLE)[0] in ("name", "words", "meaning")
    assert "results in" in window.statusBar().currentMessage()


def test_the_status_bar_counts_one_result_in_the_singular(qtbot, window):
    search(qtbot, window, "calculer_moyenne")
    with qtbot.waitSignal(window.results_shown, timeout=10_000):
        qtbot.keyClick(window.search_bar, Qt.Key.Key_3, Qt.KeyboardModifier.AltModifier)  # exact words
    assert window.tree.hit_count == 1
    assert window.statusBar().currentMessage().startswith("1 result in ")


def test_results_are_one_ranked_list_or_grouped_by_file_with_their_rank_and_why(qtbot, window):
    """Issue 14, item 2: the ranking stays visible (a group sat at position 18 for its second-best hit),
    definitions are named with their parent, and the badges and score say why a row is there."""
    response = search(qtbot, window, "evict least recently used entry")
    tree = window.tree
    labels = [tree.results.item(row, 0).text() for row in range(tree.results.rowCount())]
    assert len(labels) == len(response.results) and labels[0].startswith("1.  fn LRUCache.put   src/cache.py:")
    assert any("src/cache.py:" in label and "fn LRUCache." in label for label in labels)  # qualified by class
    best = response.results[0]
    assert "meaning similarity" in tree.results.item(0, 1).toolTip() and f"{best.score:.2f}" in (
        tree.results.item(0, 1).toolTip()
    )
    assert [EVIDENCE_LABELS[e] for e in best.evidence] == tree.results.item(0, 2).data(EVIDENCE_ROLE)
    # the column holds all three badges a row can have (150 px cut "meaning" to "meanin")
    widths = sum(tree.fontMetrics().horizontalAdvance(t) + BADGE_PAD + BADGE_GAP for t in ("name", "words", "meaning"))
    assert tree.header().sectionSize(2) >= widths

    second = tree.results.hits[1]
    tree.select_hit(1)
    qtbot.keyClick(window.search_bar, Qt.Key.Key_G, Qt.KeyboardModifier.ControlModifier)
    assert window.act_group.isChecked() and window.settings.group_by_file
    assert window.tree.current_result() is second  # the same hit stays current
    first_file = tree.results.item(0, 0)
    assert first_file.text().startswith(response.results[0].path) and first_file.child(0, 0).text().startswith("1.  L")
    qtbot.keyClick(window.search_bar, Qt.Key.Key_G, Qt.KeyboardModifier.ControlModifier)
    assert not window.act_group.isChecked() and tree.results.item(0, 0).text() == labels[0]


def test_a_newer_query_supersedes_an_older_one(qtbot, window):
    shown = []
    window.results_shown.connect(shown.append)
    window.search_bar.setText("evict the least recently used entry")
    older = window.search_now()  # on its way to the worker...
    with qtbot.waitSignal(window.results_shown, timeout=10_000):
        type_query(qtbot, window, "multiply two matrices")  # ...when the user types something else
    qtbot.waitUntil(older.done)
    assert older.cancelled() or older.result() is None
    assert shown == [window.live.seq]  # only the newest answer reached the tree
    assert window.last_response.query == "multiply two matrices"
    assert window.tree.results.hits[0].path == "cli/src/matrix.rs"


def test_enter_searches_now_without_waiting_for_the_debounce(qtbot, window):
    window.live.debounce_ms = 60_000
    window.search_bar.setFocus()
    qtbot.keyClicks(window.search_bar, "parse command line arguments")
    with qtbot.waitSignal(window.results_shown, timeout=5_000):
        qtbot.keyClick(window.search_bar, Qt.Key.Key_Return)
    assert window.tree.results.hits[0].path == "cli/src/main.rs"


def test_notice_and_errors_are_shown_in_the_window(qtbot, window):
    search(qtbot, window, "ab")
    assert window.banner.isVisible() and "exact matching" in window.banner.text()
    search(qtbot, window, "refresh the access token")
    assert not window.banner.isVisible()
    window.search_bar.clear()
    window.session.set_project(str(Path("/nonexistent/project")))
    with qtbot.waitSignal(window.message_shown, timeout=5_000) as blocker:
        type_query(qtbot, window, "anything at all")
    kind, text = blocker.args
    assert kind == "error" and "not indexed" in text and text.endswith("Open the folder to index it.")
    assert "quarry index" not in text  # the command line's wording stays on the command line


# --- keyboard and preview -------------------------------------------------------------------------


def test_arrow_keys_and_enter_move_the_preview_from_the_search_bar(qtbot, window):
    response = search(qtbot, window, "cache capacity evict")
    wait_preview(qtbot, window)
    hits = window.tree.results.hits
    assert len(hits) >= 3 and window.tree.current_hit_position() == 0
    assert window.preview.target.path == hits[0].path

    qtbot.keyClick(window.search_bar, Qt.Key.Key_Down)
    wait_preview(qtbot, window)
    assert window.tree.current_hit_position() == 1
    assert (window.preview.target.path, window.preview.target.start_line) == (hits[1].path, hits[1].start_line)
    assert QApplication.focusWidget() is window.search_bar  # moving did not leave the search bar

    qtbot.keyClick(window.search_bar, Qt.Key.Key_PageDown)
    assert window.tree.current_hit_position() == min(len(hits) - 1, 11)
    qtbot.keyClick(window.search_bar, Qt.Key.Key_PageUp)
    qtbot.keyClick(window.search_bar, Qt.Key.Key_Up)
    wait_preview(qtbot, window)
    assert window.tree.current_hit_position() == 0
    assert window.preview.target.start_line == hits[0].start_line

    # Enter on a result opens it in the preview (here: after the preview showed something else).
    window.tree.setFocus()
    window.tree.select_hit(2)
    wait_preview(qtbot, window)
    window.preview.show_message("something else")
    qtbot.keyClick(window.tree, Qt.Key.Key_Return)
    wait_preview(qtbot, window)
    assert window.preview.target.start_line == hits[2].start_line
    assert response.results


def test_preview_shows_the_hit_with_context_and_highlighted_lines(qtbot, window, mixed_root):
    search(qtbot, window, "exponential backoff with jitter")
    wait_preview(qtbot, window)
    hit = window.tree.current_result()
    file_lines = (mixed_root / hit.path).read_text().split("\n")
    n = window.preview.context_lines
    assert n == 5
    code = window.preview.code
    first, last = window.preview.shown_lines  # the whole file (issue 14, item 3), scrolled to the hit
    assert first == 1 and code.first_line == 1 and last == len(file_lines) - (file_lines[-1] == "")
    assert code.toPlainText() == "\n".join(file_lines[first - 1 : last])
    scroll = code.verticalScrollBar()
    assert scroll.value() == min(scroll.maximum(), max(0, hit.start_line - 1 - n))  # n lines above the hit
    marked = [first + sel.cursor.blockNumber() for sel in code.extraSelections() if not sel.cursor.hasSelection()]
    assert marked == list(range(hit.start_line, hit.end_line + 1))
    # The query's words are marked inside the hit (issue 14, item 3).
    words = {sel.cursor.selectedText().lower() for sel in code.extraSelections() if sel.cursor.hasSelection()}
    assert {"backoff", "jitter"} <= words
    # Pygments colours: at least one fragment carries a non-default foreground.
    block, coloured = code.document().begin(), False
    while block.isValid() and not coloured:
        it = block.begin()
        while not it.atEnd():
            coloured |= it.fragment().charFormat().foreground().style() != Qt.BrushStyle.NoBrush
            it += 1
        block = block.next()
    assert coloured

    assert code.lineWrapMode() == code.LineWrapMode.NoWrap
    qtbot.keyClick(window.search_bar, Qt.Key.Key_Z, Qt.KeyboardModifier.AltModifier)  # wrap long lines
    assert code.lineWrapMode() == code.LineWrapMode.WidgetWidth and window.settings.wrap_lines


def test_text_mode_lists_each_matching_line_and_highlights_the_match_in_the_preview(qtbot, window):
    """Issue 14, item 1: Alt+4 is text mode; a row per line that holds the text, under its file with a count;
    the preview marks the match itself; Alt+C / Alt+R switch to case-sensitive and regex matching."""
    assert not window.text_actions["regex"].isEnabled()  # only text mode reads them
    with qtbot.waitSignal(window.results_shown, timeout=10_000):
        qtbot.keyClick(window.search_bar, Qt.Key.Key_4, Qt.KeyboardModifier.AltModifier)
        type_query(qtbot, window, "policy.attempts")
    assert window.mode == "text" and window.last_response.mode == "text"
    file_row = window.tree.model().item(0, 0)
    assert file_row.text() == "src/http_client.py   (2 matches)"
    lines = [file_row.child(i, 0).text() for i in range(file_row.rowCount())]
    assert lines == [
        "L24   for attempt in range(policy.attempts):",
        'L33   raise RuntimeError(f"giving up on {url} after {policy.attempts} attempts") from last_error',
    ]
    wait_preview(qtbot, window)
    code = window.preview.code
    marked = [sel.cursor.selectedText() for sel in code.extraSelections() if sel.cursor.hasSelection()]
    assert marked == ["policy.attempts", "policy.attempts"]  # every match of the file the preview shows
    assert window.statusBar().currentMessage().startswith("2 matches in 1 file in")

    with qtbot.waitSignal(window.results_shown, timeout=10_000):
        qtbot.keyClick(window.search_bar, Qt.Key.Key_C, Qt.KeyboardModifier.AltModifier)  # match case
    with qtbot.waitSignal(window.results_shown, timeout=10_000):
        type_query(qtbot, window, "POLICY.attempts")
    assert not window.last_response.results
    with qtbot.waitSignal(window.results_shown, timeout=10_000):
        qtbot.keyClick(window.search_bar, Qt.Key.Key_R, Qt.KeyboardModifier.AltModifier)  # regex
    with qtbot.waitSignal(window.results_shown, timeout=10_000):
        type_query(qtbot, window, r"policy\.\w+")
    assert window.last_response.matches_total == 3  # policy.attempts twice, and policy.delay_for


def test_shortcuts_switch_modes_move_clear_and_focus(qtbot, window):
    search(qtbot, window, "matrix")
    for key, mode in ((Qt.Key.Key_2, "semantic"), (Qt.Key.Key_3, "exact"), (Qt.Key.Key_1, "hybrid")):
        with qtbot.waitSignal(window.results_shown, timeout=10_000):
            qtbot.keyClick(window.search_bar, key, Qt.KeyboardModifier.AltModifier)
        assert window.mode == mode and window.last_response.mode == mode
        assert window.mode_actions[mode].isChecked()

    count = window.tree.hit_count
    assert count >= 2 and window.tree.current_hit_position() == 0
    qtbot.keyClick(window.search_bar, Qt.Key.Key_F4)
    assert window.tree.current_hit_position() == 1
    qtbot.keyClick(window.search_bar, Qt.Key.Key_F4, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClick(window.search_bar, Qt.Key.Key_F4, Qt.KeyboardModifier.ShiftModifier)
    assert window.tree.current_hit_position() == count - 1  # wraps around

    for key, mods in (
        (Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier),
        (Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier),
        (Qt.Key.Key_Slash, Qt.KeyboardModifier.NoModifier),
    ):
        window.tree.setFocus()
        qtbot.waitUntil(lambda: QApplication.focusWidget() is window.tree)
        qtbot.keyClick(window.tree, key, mods)
        assert QApplication.focusWidget() is window.search_bar, key
    assert window.search_bar.text() == "matrix"  # "/" focused the bar instead of typing

    qtbot.keyClick(window.search_bar, Qt.Key.Key_Escape)
    assert window.search_bar.text() == "" and window.tree.hit_count == 0


def test_dialogs_open_from_the_keyboard_and_filters_apply(qtbot, window):
    qtbot.keyClick(window.search_bar, Qt.Key.Key_F1)
    shortcuts = window.findChild(ShortcutsDialog)
    assert shortcuts is not None and shortcuts.isVisible()
    listed = {shortcuts.table.item(r, 0).text() for r in range(shortcuts.table.rowCount())}
    assert {"Ctrl+K or Ctrl+F or /", "F4", "Alt+1", "Ctrl+Shift+F", "F5", "Ctrl+,", "F1"} <= listed
    shortcuts.close()

    qtbot.keyClick(window.search_bar, Qt.Key.Key_Comma, Qt.KeyboardModifier.ControlModifier)
    settings = window.findChild(SettingsDialog)
    assert settings is not None and settings.isVisible()
    assert settings.model.currentData() == "index" and not settings.model_dir.isEnabled()
    assert settings.preferences().model is None  # no switch: the index keeps its own model (issue 15, item 1)
    settings.model.setCurrentIndex(settings.model.findData("folder"))
    assert settings.model_dir.isEnabled() and settings.browse.isEnabled()
    settings.model.setCurrentIndex(settings.model.findData("fast"))
    assert settings.preferences().model == "fast" and settings.preferences().model_dir is None
    settings.editor.setText("  subl -w ")
    assert settings.preferences().editor == "subl -w"
    settings.reject()
    window.installed_editors = [("VS Code", "code"), ("Neovim (in a terminal)", "nvim")]
    qtbot.keyClick(window.search_bar, Qt.Key.Key_Comma, Qt.KeyboardModifier.ControlModifier)
    settings = next(d for d in window.findChildren(SettingsDialog) if d.isVisible())
    settings.editor_presets.setCurrentIndex(2)
    settings.editor_presets.activated.emit(2)
    assert settings.preferences().editor == "nvim"
    folder_label = next(w for w in settings.findChildren(QLabel) if w.text() == "Model &folder")
    assert folder_label.buddy() is settings.model_dir  # a mnemonic, not a literal "&" on screen
    settings.reject()

    search(qtbot, window, "parse")
    assert {r.language for r in window.last_response.results} - {"python"}
    # Issue 14, item 5: the filters are a bar (no dialog), with the project's own languages and their files.
    bar = window.filter_bar
    qtbot.keyClick(
        window.search_bar, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    )
    assert bar.isVisible() and QApplication.focusWidget() is bar.globs
    qtbot.waitUntil(lambda: "python" in bar._buttons, timeout=10_000)
    offered = [button.text() for button in bar._buttons.values()]
    assert offered[0].startswith("python ") and all(not t.startswith("haskell") for t in offered)
    with qtbot.waitSignal(window.results_shown, timeout=10_000):
        bar._buttons["python"].click()  # applied at once
    assert window.filters.languages == ("python",)
    bar.globs.setText("src/**")
    with qtbot.waitSignal(window.results_shown, timeout=10_000):
        qtbot.keyClick(bar.globs, Qt.Key.Key_Return)
    assert window.filters.languages == ("python",) and window.filters.globs == ("src/**",)
    assert window.last_response.results
    assert all(r.language == "python" and r.path.startswith("src/") for r in window.last_response.results)
    assert "python" in window.filters_button.text()

    # Hide docs in one key; the bar keeps it when its languages change.
    search(qtbot, window, "billing tools deployment")
    with qtbot.waitSignal(window.results_shown, timeout=10_000):
        bar.clear.click()
    assert window.filters == SearchFilters() and not bar._buttons["python"].isChecked() and bar.globs.text() == ""
    assert "README.md" in {r.path for r in window.last_response.results}
    with qtbot.waitSignal(window.results_shown, timeout=10_000):
        qtbot.keyClick(
            window.search_bar, Qt.Key.Key_D, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
        )
    assert window.filters.hide_docs and window.act_hide_docs.isChecked() and "no docs" in window.filters_button.text()
    assert "README.md" not in {r.path for r in window.last_response.results}
    with qtbot.waitSignal(window.results_shown, timeout=10_000):
        bar._buttons["markdown"].click()
    assert window.filters.hide_docs and window.filters.languages == ("markdown",)


def test_up_in_an_empty_bar_offers_the_projects_recent_searches(qtbot, window):
    """Issue 14, item 5: the window had no search history; Enter records a query, Up in an empty bar lists the
    project's recent ones (newest first) and picking one searches for it."""
    for query in ("parse command line arguments", "multiply two matrices", "parse command line arguments"):
        window.search_bar.setText(query)
        with qtbot.waitSignal(window.results_shown, timeout=10_000):
            qtbot.keyClick(window.search_bar, Qt.Key.Key_Return)
    qtbot.keyClick(window.search_bar, Qt.Key.Key_Escape)
    qtbot.keyClick(window.search_bar, Qt.Key.Key_Up)
    popup = window.search_bar.history_popup.popup()
    qtbot.waitUntil(popup.isVisible, timeout=5_000)
    offered = window.search_bar.history.stringList()  # (other tests' searches of the shared index follow)
    assert offered[:2] == ["parse command line arguments", "multiply two matrices"]
    assert offered.count("parse command line arguments") == 1
    with qtbot.waitSignal(window.results_shown, timeout=10_000):
        window.search_bar.history_popup.activated.emit("multiply two matrices")
    assert window.search_bar.text() == "multiply two matrices" and window.last_response.query == "multiply two matrices"


def test_ctrl_p_opens_a_file_and_ctrl_t_a_definition_by_a_fuzzy_name(qtbot, window):
    """Issue 14, item 5: VS Code's Quick Open and Go to Symbol (project switching moved to Ctrl+R)."""
    qtbot.keyClick(window.search_bar, Qt.Key.Key_P, Qt.KeyboardModifier.ControlModifier)
    dialog = window.findChild(QuickOpen)
    qtbot.waitUntil(lambda: dialog is not None and dialog.isVisible(), timeout=5_000)
    with qtbot.waitSignal(dialog.answered, timeout=10_000):
        qtbot.keyClicks(dialog.field, "htcli")
    assert dialog.list.item(0).text() == "src/http_client.py"
    qtbot.keyClick(dialog.field, Qt.Key.Key_Return)
    wait_preview(qtbot, window)
    assert window.preview.target.path == "src/http_client.py"  # (the dialog closed itself on Enter)
    assert window.preview.shown_lines[0] == 1  # the whole file

    qtbot.keyClick(window.search_bar, Qt.Key.Key_T, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: any(d.isVisible() for d in window.findChildren(QuickOpen)), timeout=5_000)
    symbols = next(d for d in window.findChildren(QuickOpen) if d.isVisible())
    with qtbot.waitSignal(symbols.answered, timeout=10_000):
        qtbot.keyClicks(symbols.field, "lru put")
    assert symbols.list.item(0).text().startswith("method LRUCache.put   src/cache.py:")
    qtbot.keyClick(symbols.field, Qt.Key.Key_Return)
    wait_preview(qtbot, window)
    assert (window.preview.target.path, window.preview.target.start_line) == ("src/cache.py", 15)


def test_f5_reindexes_the_project(qtbot, window):
    with qtbot.waitSignal(window.index_finished, timeout=30_000) as blocker:
        qtbot.keyClick(window.search_bar, Qt.Key.Key_F5)
        assert "Re-indexing repo" in window.statusBar().currentMessage()  # said at once (issue 14)
    stats = blocker.args[0]
    assert stats is not None and not stats.cancelled and stats.chunks_embedded == 0
    assert window.statusBar().currentMessage().startswith("repo is up to date: none of its")
    # Progress has a strip of its own: a status message neither hides it nor is drawn over it (issue 32 item 6).
    window.progress.show_progress(Progress("analyzing", str(window.project)))
    assert window.statusBar().currentMessage().startswith("repo is up to date") and window.progress.isVisible()
    window.progress.finish()
    assert "chunks" in window.engine_status.chunks.text()
    # The run passed over lock files, node_modules/, a PNG...: a link lists them with the reasons.
    link = window.engine_status.skipped
    assert f"Skipped ({len(stats.skipped_paths)})" in link.text() and stats.skipped_paths
    link.linkActivated.emit("skipped")
    dialog = window.findChild(SkippedDialog)
    qtbot.waitUntil(lambda: dialog is not None and dialog.isVisible(), timeout=5_000)
    rows = {(dialog.table.item(i, 0).text(), dialog.table.item(i, 1).text()) for i in range(dialog.table.rowCount())}
    assert ("node_modules/", "a dependency, build or cache folder") in rows and len(rows) == len(stats.skipped_paths)
    dialog.reject()


# --- drag and drop, progress, partial results, cancel ------------------------------------------


def test_dropped_folder_indexes_with_progress_partial_search_and_cancel(qtbot, window, tmp_path, embedding_gate):
    """The run is held at a gate on its first embedding, so "still indexing" is a fact, not a race; the
    500 ms pacing of the reports is tested with an injected clock in test_engine.py."""
    folder = tmp_path / "email-copy"
    shutil.copytree(EMAIL_PACKAGE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    ui_thread = QApplication.instance().thread()
    arrived: list[tuple[str, bool]] = []  # (phase, delivered on the UI thread)
    window.bridge.progressed.connect(lambda p: arrived.append((p.phase, QThread.currentThread() is ui_thread)))
    gate = embedding_gate()

    drop(window, [QUrl.fromLocalFile(str(folder))])
    qtbot.waitUntil(lambda: window.project == str(folder.resolve()), timeout=5_000)
    qtbot.waitUntil(gate.waiting.is_set, timeout=60_000)
    qtbot.waitUntil(lambda: ("started", True) in arrived, timeout=10_000)
    # Held at the model's first run (stage 3's symbol names, since stage 2 is the static model alone): every file
    # is in, and the step's vectors are counted as symbol names.
    qtbot.waitUntil(lambda: "(meaning)" in window.progress.label.text(), timeout=10_000)
    assert window.progress.isVisible() and " symbol names" in window.progress.label.text()
    assert window.bridge.indexing

    response = search(qtbot, window, "parse an email message header")  # answered while indexing
    assert window.bridge.indexing and response.partial
    assert "partial" in window.banner.text()

    with qtbot.waitSignal(window.index_finished, timeout=30_000) as blocker:
        qtbot.mouseClick(window.progress.cancel, Qt.MouseButton.LeftButton)
        gate.release()
    assert blocker.args[0].cancelled
    qtbot.waitUntil(lambda: not window.progress.isVisible())
    assert "cancelled" in window.banner.text()
    assert all(on_ui for _, on_ui in arrived)

    # The run's end re-runs the open query; that answer, whenever it lands, leaves the run's notice up (on a
    # loaded machine it used to land after the notice and wipe it). The user's next query is what dismisses it.
    with qtbot.waitSignal(window.results_shown, timeout=10_000):
        window.rerun_search()
    assert "cancelled" in window.banner.text() and window.banner.isVisible()
    search(qtbot, window, "decode a quoted printable body")
    assert not window.banner.isVisible()


def test_the_open_query_reruns_as_the_index_fills_in_and_keeps_the_selection(qtbot, window, tmp_path, embedding_gate):
    folder = tmp_path / "email-copy"
    shutil.copytree(EMAIL_PACKAGE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    gate = embedding_gate()  # held at the model's first run (stage 3's names): the fast layer answers
    drop(window, [QUrl.fromLocalFile(str(folder))])
    qtbot.waitUntil(gate.waiting.is_set, timeout=60_000)
    response = search(qtbot, window, "parse an email message header")
    assert response.results and {r.stage for r in response.results} <= {"fast", "keyword"}
    assert "keyword 100% · meaning 0% (fast 100%)" in window.engine_status.coverage.text()
    window.tree.select_hit(2)
    chosen = window.tree.current_result()

    # The window's clock stands still unless the test moves it: real reports keep arriving meanwhile, and
    # whichever report comes first in a second re-runs the query; none after it in that second does.
    now = [time.monotonic() + 1000.0]
    window.rerun_clock = lambda: now[0]
    reruns: list[float] = []
    rerun = window.rerun_search
    window.rerun_search = lambda: (reruns.append(now[0]), rerun())
    shown: list[int] = []
    window.results_shown.connect(shown.append)
    report = Progress("in_progress", str(folder.resolve()), stage="full", chunks_total=10, chunks_embedded=1)
    window.bridge.progressed.emit(report)
    assert len(reruns) == 1
    for _ in range(3):
        window.bridge.progressed.emit(report)
    assert len(reruns) == 1  # not again within the second
    qtbot.waitUntil(lambda: len(shown) >= 1, timeout=10_000)
    current = window.tree.current_result()
    assert (current.path, current.start_line) == (chosen.path, chosen.start_line)  # the selection stays
    now[0] += 1.0
    window.bridge.progressed.emit(report)
    assert len(reruns) == 2

    with qtbot.waitSignal(window.index_finished, timeout=300_000):
        gate.release()
    qtbot.waitUntil(lambda: "meaning 100%" in window.engine_status.coverage.text(), timeout=10_000)
    assert {r.stage for r in window.last_response.results} <= {"full", "keyword"}


def test_dropped_paths_that_cannot_be_used_give_a_message(qtbot, window, tmp_path, mixed_root):
    def dropped(url: QUrl) -> tuple[str, str]:
        with qtbot.waitSignal(window.message_shown, timeout=5_000) as blocker:
            drop(window, [url])
        return blocker.args

    kind, text = dropped(QUrl("https://example.com/repo.git"))
    assert kind == "error" and "on this computer" in text
    kind, text = dropped(QUrl.fromLocalFile(str(tmp_path / "missing")))
    assert kind == "error" and "does not exist" in text
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    kind, text = dropped(QUrl.fromLocalFile(str(fifo)))
    assert kind == "error" and "neither a folder nor a regular file" in text
    stray = tmp_path / "notes.txt"
    stray.write_text("hello")
    kind, text = dropped(QUrl.fromLocalFile(str(stray)))
    assert kind == "error" and "not inside an indexed project" in text
    if os.geteuid() != 0:  # root reads anything
        locked = tmp_path / "locked"
        locked.mkdir(mode=0)
        kind, text = dropped(QUrl.fromLocalFile(str(locked)))
        assert kind == "error" and "permission denied" in text
    assert window.isVisible()

    # A file inside an indexed project selects that project and shows the file.
    window.forget_project()
    drop(window, [QUrl.fromLocalFile(str(mixed_root / "src" / "cache.py"))])
    qtbot.waitUntil(
        lambda: window.preview.target is not None and window.preview.target.path == "src/cache.py", timeout=5_000
    )
    assert window.project == str(mixed_root.resolve())
    assert window.preview.code.toPlainText().startswith("from collections import OrderedDict")
    assert window.preview.code.extraSelections() == []


# --- settings and the screenshot ------------------------------------------------------------------


def test_settings_persist_between_runs(qtbot, qasync_loop, tmp_path, index_copy, mixed_root):
    ini = str(tmp_path / "persist.ini")
    first = open_window(qtbot, AppSettings(QSettings(ini, QSettings.Format.IniFormat)), index_copy, mixed_root)
    with qtbot.waitSignal(first.results_shown, timeout=10_000):
        qtbot.keyClick(first.search_bar, Qt.Key.Key_2, Qt.KeyboardModifier.AltModifier)
        type_query(qtbot, first, "matrix")
    # Restarts the engine with the fast model (the index is re-embedded with it in the background).
    run(qtbot, first.apply_preferences(Preferences(8, 256 * 1024, None, "cpu", "fast", editor="code --wait")))
    assert shared_settings.editor() == "code --wait"  # where `quarry open` and agents read it too
    assert (first.bridge.config.provider, first.bridge.config.model) == ("cpu", "fast")
    assert first.bridge.config.index_options.selection.max_file_size == 256 * 1024
    first.resize(1180, 740)
    first.splitter.setSizes([330, 830])
    sizes = first.splitter.sizes()
    first.close()
    first.bridge.shutdown()

    settings = AppSettings(QSettings(ini, QSettings.Format.IniFormat))
    second = open_window(qtbot, settings, index_copy, None)
    try:
        assert second.project == str(mixed_root.resolve())  # the last project, reopened
        assert second.mode == "semantic" and second.mode_actions["semantic"].isChecked()
        assert second.preview.context_lines == 8
        qtbot.waitUntil(lambda: second.editor == "code --wait")  # read off the UI thread as the window starts
        assert second.height() == 740  # (the offscreen screen is 800 px wide, so only the height survives as is)
        assert second.splitter.sizes()[0] == sizes[0]  # the result list keeps its width; the preview takes the rest
        assert str(mixed_root.resolve()) in settings.recent_projects
        assert [a.text().split(" ", 1)[1] for a in second.recent_menu.actions()] == settings.recent_projects
        args = argparse.Namespace(db=None, model=None, model_dir=None, provider="auto")
        config = engine_config(args, settings)
        assert (config.provider, config.model, config.index_options.selection.max_file_size) == (
            "cpu",
            "fast",
            256 * 1024,
        )
    finally:
        second.close()
        second.bridge.shutdown()


def quarry_gui(tmp_path: Path, *args: object) -> subprocess.CompletedProcess:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_CONFIG_HOME": str(tmp_path / "config")}
    return subprocess.run(
        [sys.executable, "-m", "desktop_app", *map(str, args)], capture_output=True, text=True, env=env, timeout=180
    )


def test_a_second_quarry_folder_hands_the_folder_to_the_open_window(qtbot, window, index_copy, tmp_path):
    """Issue 14, item 5: a second `quarry FOLDER` opened a second window on the same index; now the running
    window takes the folder (and the query) and comes forward, and the new process exits at once."""
    channel = InstanceChannel(channel_name(str(StoreLocation.of(str(index_copy)))), window)
    assert channel.listening
    channel.received.connect(window.take_over)
    other = tmp_path / "other"
    other.mkdir()
    (other / "kestrel.py").write_text("def hover_over_the_field():\n    return 'kestrel'\n")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_CONFIG_HOME": str(tmp_path / "config")}
    command = [sys.executable, "-m", "desktop_app", "--db", str(index_copy), str(other), "--query", "kestrel"]
    second = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)
    try:
        with qtbot.waitSignal(window.results_shown, timeout=120_000):  # the event loop keeps serving meanwhile
            qtbot.waitUntil(lambda: window.project == str(other.resolve()), timeout=120_000)
        _, err = second.communicate(timeout=60)
    finally:
        if second.poll() is None:
            second.kill()
    assert second.returncode == 0 and "opens in the window already open" in err, err
    assert window.search_bar.text() == "kestrel"
    # Searched at once, while the folder indexes (issue 32 item 3): the first answers may come before its file.
    qtbot.waitUntil(lambda: bool(window.last_response.results), timeout=60_000)
    assert window.last_response.results[0].path == "kestrel.py"


def test_screenshot_flow_saves_a_png_of_the_window(tmp_path, index_copy, mixed_root):
    shot = tmp_path / "shot.png"
    proc = quarry_gui(
        tmp_path,
        "--root",
        mixed_root,
        "--query",
        "retry failed http requests",
        "--screenshot",
        shot,
        "--db",
        index_copy,
    )
    assert proc.returncode == 0, proc.stderr
    found = re.search(r"(\d+) results", proc.stdout)
    assert found and int(found.group(1)) > 0, proc.stdout
    image = QImage(str(shot))
    assert image.width() >= 1100 and image.height() >= 700
    assert not (tmp_path / "config").exists() or not any((tmp_path / "config").rglob("*.conf"))  # left alone


def test_screenshot_flow_fails_clearly(tmp_path, index_copy):
    proc = quarry_gui(
        tmp_path, "--root", tmp_path / "nope", "--query", "x", "--screenshot", tmp_path / "s.png", "--db", index_copy
    )
    assert proc.returncode == 1 and "does not exist" in proc.stderr and "Traceback" not in proc.stderr
    proc = quarry_gui(tmp_path, "--root", tmp_path, "--screenshot", tmp_path / "s.png", "--db", index_copy)
    assert proc.returncode == 2 and "--query" in proc.stderr


@pytest.mark.parametrize("accept", [True, False])
def test_an_unusable_index_is_explained_and_moved_aside_only_when_asked(
    qtbot, qasync_loop, gui_settings, tmp_path, accept
):
    db = tmp_path / "index.db"
    db.write_text("my notes, not an index\n" * 50)
    win = MainWindow(EngineBridge(), gui_settings)
    qtbot.addWidget(win)
    win.show()
    task = asyncio.ensure_future(win.start(EngineConfig(db)))
    qtbot.waitUntil(lambda: win.question_dialog is not None, timeout=10_000)
    assert "not a" in win.question_dialog.text() or "damaged" in win.question_dialog.text()
    button = QMessageBox.StandardButton.Yes if accept else QMessageBox.StandardButton.Cancel
    win.question_dialog.button(button).click()
    qtbot.waitUntil(task.done, timeout=30_000)
    moved = sorted(tmp_path.glob("index.db.broken-*"))
    if accept:
        assert task.result() is True
        assert [p.read_text() for p in moved] == ["my notes, not an index\n" * 50]
        assert run(qtbot, win.bridge.run(ops.scopes())) == []
    else:
        assert task.result() is False and moved == []
        assert db.read_text().startswith("my notes")
        assert "not a" in win.banner.text() or "damaged" in win.banner.text()
    win.close()
    win.bridge.shutdown()


def test_an_index_damaged_inside_is_explained_when_the_window_opens_it(qtbot, qasync_loop, gui_settings, index_copy):
    damage_middle(index_copy)
    win = MainWindow(EngineBridge(), gui_settings)
    qtbot.addWidget(win)
    win.show()
    task = asyncio.ensure_future(win.start(EngineConfig(index_copy)))
    qtbot.waitUntil(lambda: win.question_dialog is not None, timeout=10_000)
    assert "is damaged (" in win.question_dialog.text()
    win.question_dialog.button(QMessageBox.StandardButton.Cancel).click()
    qtbot.waitUntil(task.done, timeout=30_000)
    assert task.result() is False and "is damaged (" in win.banner.text()
    win.close()
    win.bridge.shutdown()


def test_a_big_index_read_whole_as_the_window_opens_it_is_said_in_the_status_bar(
    qtbot, qasync_loop, gui_settings, index_copy
):
    """A copied 4.1 GB index was read whole for 16 s under "Opening the index…" and nothing else. Now the status
    bar says that the whole index is being checked, why, and for how long so far, then that it was."""
    grow_past_the_open_check(index_copy)
    size = file_size(index_copy.stat().st_size)
    win = MainWindow(EngineBridge(), gui_settings)
    qtbot.addWidget(win)
    shown: list[str] = []
    win.bridge.checking.connect(lambda _check: shown.append(win.statusBar().currentMessage()))
    win.show()
    assert run(qtbot, win.start(EngineConfig(index_copy))) is True
    qtbot.waitUntil(lambda: shown and shown[-1].startswith("Checked"), timeout=30_000)
    assert shown[0] == (
        f"Checking the whole index ({size}) for damage, as it is not as Quarry last left it (copied, changed by "
        "another program, or a run cut off) · 0 s"
    )
    assert re.fullmatch(rf"Checked the whole index \({size}\) for damage in \d+ s", shown[-1]), shown
    win.close()
    win.bridge.shutdown()


def open_watched(qtbot, settings, db: Path, root: Path) -> MainWindow:
    """A window with `root` open and its changes on disk followed (the watch is in place)."""
    win = open_window(qtbot, settings, db, None)
    watching: list[str] = []
    win.watch_started.connect(watching.append)
    assert run(qtbot, win.open_project(root)) is not None
    qtbot.waitUntil(lambda: str(root.resolve()) in watching, timeout=30_000)
    return win


def test_an_open_project_follows_file_changes(qtbot, qasync_loop, gui_settings, mixed_copy):
    root, db = mixed_copy
    win = open_watched(qtbot, gui_settings, db, root)
    type_query(qtbot, win, "narwhal inventory")
    with qtbot.waitSignal(win.files_updated, timeout=30_000):
        (root / "src" / "zoo.py").write_text(
            "def count_narwhal_inventory(tanks):\n"
            "    # narwhals per tank, for the inventory report\n"
            "    return sum(t.narwhals for t in tanks)\n"
        )
    qtbot.waitUntil(
        lambda: (
            win.last_response is not None
            and win.last_response.results
            and win.last_response.results[0].symbol_name == "count_narwhal_inventory"
        ),
        timeout=10_000,
    )
    win.close()
    win.bridge.shutdown()


def test_an_open_project_moved_away_and_made_again_is_said_and_followed(qtbot, qasync_loop, gui_settings, mixed_copy):
    root, db = mixed_copy
    win = open_watched(qtbot, gui_settings, db, root)
    with qtbot.waitSignal(win.message_shown, timeout=30_000, check_params_cb=lambda kind, text: "moved" in text):
        root.rename(root.with_name("repo.old"))
    assert win.banner.kind == "warning" and "repo was moved or deleted" in win.banner.text()
    assert search(qtbot, win, "retry http").results  # its index is kept while it is away

    type_query(qtbot, win, "kestrel cages")
    with qtbot.waitSignal(win.message_shown, timeout=30_000, check_params_cb=lambda kind, text: "back" in text):
        root.mkdir()
        (root / "aviary.py").write_text("def count_kestrel_cages(cages):\n    return len(cages)\n")
    assert win.banner.kind == "info" and "repo is back" in win.banner.text()
    qtbot.waitUntil(  # the update of the folder now at its path answers the open search
        lambda: win.last_response is not None and [r.path for r in win.last_response.results] == ["aviary.py"],
        timeout=30_000,
    )
    win.close()
    win.bridge.shutdown()


# --- the log ------------------------------------------------------------------------------------


def test_help_opens_the_log_folder_where_failures_are_kept(qtbot, window, tmp_path, monkeypatch):
    import logging

    from PySide6.QtGui import QDesktopServices

    from desktop_app.logs import LOG_FILE_NAME, setup_logging

    monkeypatch.setenv("QUARRY_LOG_DIR", str(tmp_path / "logs"))
    logger = logging.getLogger("desktop_app")
    before = list(logger.handlers)
    try:
        log_file = setup_logging()

        async def fails() -> None:
            raise RuntimeError("index file vanished")

        with qtbot.waitSignal(window.message_shown, timeout=5_000):
            window.spawn(fails())
        for handler in logger.handlers:
            handler.flush()
        text = log_file.read_text(encoding="utf-8")
        assert log_file == tmp_path / "logs" / LOG_FILE_NAME
        assert "a window task failed" in text and "index file vanished" in text and "Traceback" in text

        opened: list[QUrl] = []  # the desktop's file manager cannot run here: record what it is asked to show
        monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url) or True)
        help_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Help")
        next(a for a in help_menu.actions() if a.text() == "Open &Log Folder").trigger()
        assert [u.toLocalFile() for u in opened] == [str(tmp_path / "logs")]
    finally:
        for handler in logger.handlers:
            if handler not in before:
                handler.close()
                logger.removeHandler(handler)


# --- writes and their change notices ------------------------------------------------------------


def test_a_new_model_reembeds_with_progress_and_cancel_in_the_window(
    qtbot, qasync_loop, gui_settings, index_copy, tmp_path, embedding_gate
):
    gate = embedding_gate()  # held in the re-embed's first batch: "still running" is a fact
    win = MainWindow(EngineBridge(), gui_settings)
    qtbot.addWidget(win)
    win.show()
    notices = []
    win.bridge.changed.connect(notices.append)
    run(qtbot, win.start(EngineConfig(index_copy, model_dir=other_model_dir(tmp_path))))
    qtbot.waitUntil(gate.waiting.is_set, timeout=60_000)
    qtbot.waitUntil(lambda: "Re-embedding with minilm-passages" in win.progress.label.text(), timeout=10_000)
    assert win.progress.isVisible() and win.act_cancel_index.isEnabled()
    qtbot.mouseClick(win.progress.cancel, Qt.MouseButton.LeftButton)
    gate.release()
    qtbot.waitUntil(lambda: bool(notices) and not win.progress.isVisible(), timeout=60_000)
    assert [(n.operation, n.result) for n in notices] == [(REEMBED, False)]
    win.close()
    win.bridge.shutdown()


def test_removing_the_project_from_the_index_updates_the_project_list(qtbot, window, mixed_root):
    root = str(mixed_root.resolve())
    assert root in window.scopes
    task = window.spawn(window.remove_project())
    qtbot.waitUntil(lambda: window.question_dialog is not None, timeout=10_000)
    assert "not touched" in window.question_dialog.text()
    window.question_dialog.button(QMessageBox.StandardButton.Yes).click()
    qtbot.waitUntil(task.done, timeout=30_000)
    assert task.result() is not None
    assert root not in window.scopes and window.projects.currentText().endswith("(not indexed)")
    assert "Removed" in window.banner.text()


def test_the_window_uses_a_team_index_from_settings_and_explains_one_it_cannot_reach(
    qtbot, qasync_loop, gui_settings, mixed_team_index, mixed_root, index_copy, monkeypatch
):
    monkeypatch.delenv("QUARRY_DB", raising=False)
    win = MainWindow(EngineBridge(), gui_settings)
    qtbot.addWidget(win)
    win.show()
    win.local_location = StoreLocation.of(index_copy)
    unreachable = EngineConfig("postgresql://ana:pw-77@127.0.0.1:1/team")
    task = asyncio.ensure_future(win.start(unreachable))
    qtbot.waitUntil(lambda: win.question_dialog is not None, timeout=30_000)
    text = win.question_dialog.text()
    assert "Cannot reach the team index server postgresql://ana@127.0.0.1:1/team" in text and "pw-77" not in text
    assert "Move it aside" not in text  # nothing to move: the server is the index
    win.question_dialog.button(QMessageBox.StandardButton.Close).click()
    qtbot.waitUntil(task.done, timeout=10_000)
    assert task.result() is False

    # Settings → Team index: the engine starts on it (it had not started at all) and searches it.
    prefs = Preferences(5, gui_settings.max_file_size, None, "auto", "default", mixed_team_index)
    run(qtbot, win.apply_preferences(prefs), timeout=60_000)
    assert win.bridge.config.location.is_team and gui_settings.team_index == display_url(mixed_team_index)
    win.set_project(str(mixed_root.resolve()))
    assert search(qtbot, win, "retry failed http requests").results[0].path == "src/http_client.py"

    # An empty field: back to this computer's index file.
    run(qtbot, win.apply_preferences(dataclasses.replace(prefs, team_index="")), timeout=60_000)
    assert win.bridge.config.location == StoreLocation.of(index_copy) and gui_settings.team_index == ""
    win.close()
    win.bridge.shutdown()


def test_on_a_team_index_the_status_bar_names_the_base_commit_and_the_users_own_changes(
    qtbot, qasync_loop, gui_settings, team_server, mixed_root, tmp_path, monkeypatch
):
    """Issue 33 item 5: the window said only which server; not what the team shares, nor what is the user's own."""
    monkeypatch.delenv("QUARRY_DB", raising=False)
    url = team_server.new_database()
    root = tmp_path / "shop"
    shutil.copytree(mixed_root, root)
    init_repo(root)
    (root / "NOTES.md").write_text("# Notes\n\nNot committed yet.\n")
    done = quarry("index", root, "--db", url, "--until", "keyword")
    assert done.returncode == 0, done.stderr
    win = MainWindow(EngineBridge(), gui_settings)
    qtbot.addWidget(win)
    win.show()
    run(qtbot, win.start(EngineConfig(url)), timeout=60_000)
    win.set_project(str(root.resolve()))
    commit = git(root, "rev-parse", "HEAD").strip()
    server = f"{team_server.folder.name}/{database_of(url)}"
    qtbot.waitUntil(lambda: win.team_label.text() == f"Team index {server} · base main {commit[:8]}", timeout=30_000)
    assert win.team_label.isVisible() and win.engine_status.chunks.text().endswith(" files · 1 file yours")
    assert display_url(url) in win.team_label.toolTip() and "overlay" in win.team_label.toolTip()
    # The whole of it shows at the default size, beside the scope and the model (once the bar has laid it out).
    labels = (win.team_label, win.engine_status.chunks)
    qtbot.waitUntil(lambda: all(label.width() >= label.sizeHint().width() for label in labels), timeout=10_000)
    win.close()
    win.bridge.shutdown()


def test_settings_refuses_a_team_url_the_engine_cannot_read_without_showing_its_password(qtbot):
    """The dialog took any text starting with postgres: as a URL, so 'postgresql:/db' (one slash) or a password
    with a literal % passed it and failed only when the window opened the index (issue 29, N10, N14)."""
    dialog = SettingsDialog(Preferences(5, 512 * 1024, None, "auto"))
    qtbot.addWidget(dialog)
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    for text in ("postgresql://qt:50%off@127.0.0.1/team1", "postgresql://qt:pw@[::1/team1", "/tmp/index.db"):
        dialog.team_index.setText(text)
        assert not ok.isEnabled() and dialog.team_problem.text().startswith("Not a team index URL"), text
        assert "50%off" not in dialog.team_problem.text()
    for text in ("postgresql:///team1?host=/tmp", "postgres://qt@db.example/team1", ""):
        dialog.team_index.setText(text)
        assert ok.isEnabled() and not dialog.team_problem.text(), text
