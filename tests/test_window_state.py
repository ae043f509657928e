"""The window's state as the user sees it (issue 32): the selection across refreshes, Enter, handed-over
queries, phases, progress and banners. A real engine on the shared index, driven through pytest-qt."""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import shutil
from urllib.parse import urlsplit

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import Qt, QUrl  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from desktop_app.app import _open_at_start  # noqa: E402
from desktop_app.bridge.engine_bridge import EngineBridge  # noqa: E402
from desktop_app.cli import progress_line  # noqa: E402
from desktop_app.indexing.progress import Progress  # noqa: E402
from desktop_app.store.postgres.urls import display_url  # noqa: E402
from desktop_app.ui.main_window import MainWindow  # noqa: E402
from desktop_app.ui.progress_panel import PHASE_LABELS, progress_text  # noqa: E402
from desktop_app.ui.quick_open import QuickOpen  # noqa: E402
from desktop_app.worker import ops  # noqa: E402
from desktop_app.worker.worker import EngineConfig  # noqa: E402

from .test_gui import EMAIL_PACKAGE, drop, open_window, run, search, wait_preview  # noqa: E402


@pytest.fixture
def window(qtbot, qasync_loop, gui_settings, index_copy, mixed_root):
    win = open_window(qtbot, gui_settings, index_copy, mixed_root)
    yield win
    win.close()
    win.bridge.shutdown()


def previews(win) -> list[tuple[str, int]]:
    """Every preview the window asks for from now on, as (path, first line)."""
    asked: list[tuple[str, int]] = []
    show = win.preview.preview

    def spy(target):
        if target is not None:
            asked.append((target.path, target.start_line))
        show(target)

    win.preview.preview = spy
    return asked


def refresh(win, reorder) -> None:
    """Re-run the open query as indexing does, answered first with its results in the order `reorder` gives
    (a refresh while indexing reorders them as vectors arrive); the real re-run's answer lands later."""
    win.rerun_search()
    response = win.last_response
    win.live.answered.emit(win.live.seq, dataclasses.replace(response, results=reorder(response.results)))


def settle(qtbot, win) -> None:
    """Let the real re-run's answer land."""
    qtbot.waitUntil(lambda: win.live._task is None or win.live._task.done(), timeout=10_000)


# --- item 2: the selection ------------------------------------------------------------------------


def test_a_refresh_selects_the_top_result_when_the_user_picked_none(qtbot, window):
    response = search(qtbot, window, "cache capacity evict")
    wait_preview(qtbot, window)
    assert len(response.results) >= 3 and window.tree.current_hit_position() == 0
    asked = previews(window)
    refresh(window, lambda results: list(reversed(results)))
    top = window.tree.results.hits[0]
    # The old top result moved to the last row; the selection did not follow it there.
    assert window.tree.current_hit_position() == 0
    assert asked == [(top.path, top.start_line)], asked
    settle(qtbot, window)
    assert window.tree.current_hit_position() == 0
    top = window.tree.results.hits[0]
    assert asked[-1] == (top.path, top.start_line)


def test_a_refresh_keeps_the_result_the_user_picked_and_previews_nothing_else(qtbot, window):
    search(qtbot, window, "cache capacity evict")
    qtbot.keyClick(window.search_bar, Qt.Key.Key_Down)
    qtbot.keyClick(window.search_bar, Qt.Key.Key_Down)
    wait_preview(qtbot, window)
    picked = window.tree.current_result()
    asked = previews(window)
    for _ in range(2):
        refresh(window, lambda results: list(reversed(results)))
        settle(qtbot, window)
        current = window.tree.current_result()
        assert (current.path, current.start_line) == (picked.path, picked.start_line)
    assert set(asked) <= {(picked.path, picked.start_line)}, asked  # no other row was shown meanwhile


def test_enter_on_a_picked_result_opens_it_instead_of_searching_again(qtbot, window):
    search(qtbot, window, "cache capacity evict")
    qtbot.keyClick(window.search_bar, Qt.Key.Key_Down)
    wait_preview(qtbot, window)
    picked = window.tree.current_result()
    started: list[int] = []
    window.live.started.connect(started.append)
    qtbot.keyClick(window.search_bar, Qt.Key.Key_Return)
    assert started == [] and window.tree.current_hit_position() == 1
    assert QApplication.focusWidget() is window.tree  # on the result, for Enter/Ctrl+Enter and more arrows
    assert (window.preview.target.path, window.preview.target.start_line) == (picked.path, picked.start_line)
    # Another query typed in the bar is searched for by Enter, as before.
    window.search_bar.setFocus()
    window.search_bar.setText("multiply two matrices")
    with qtbot.waitSignal(window.results_shown, timeout=10_000):
        qtbot.keyClick(window.search_bar, Qt.Key.Key_Return)
    assert window.last_response.query == "multiply two matrices" and window.tree.current_hit_position() == 0


def test_the_same_query_searched_again_after_esc_previews_its_top_result_again(qtbot, window):
    search(qtbot, window, "cache capacity evict")
    wait_preview(qtbot, window)
    qtbot.keyClick(window.search_bar, Qt.Key.Key_Escape)
    assert window.preview.target is None  # the idle message
    search(qtbot, window, "cache capacity evict")
    qtbot.waitUntil(lambda: window.preview.target is not None, timeout=5_000)
    assert window.preview.target.path == window.tree.results.hits[0].path


# --- item 3: a query handed over by another `quarry FOLDER --query Q` -----------------------------


def birds(tmp_path):
    folder = tmp_path / "birds"
    folder.mkdir()
    (folder / "kestrel.py").write_text("def hover_over_the_field():\n    return 'kestrel'\n")
    return folder


def test_a_handed_over_query_is_searched_at_once_while_its_folder_indexes(qtbot, window, tmp_path, embedding_gate):
    folder = birds(tmp_path)
    gate = embedding_gate()  # the run is held at its first embedding: it cannot end before the query shows
    window.take_over({"root": str(folder), "query": "kestrel"})
    qtbot.waitUntil(lambda: window.search_bar.text() == "kestrel", timeout=30_000)
    assert window.project == str(folder.resolve())
    qtbot.waitUntil(
        lambda: window.last_response is not None and [r.path for r in window.last_response.results] == ["kestrel.py"],
        timeout=60_000,
    )
    assert window.bridge.indexing  # answered while the folder is still indexed
    with qtbot.waitSignal(window.index_finished, timeout=60_000):
        gate.release()


def test_the_query_given_at_launch_is_searched_while_its_folder_first_indexes(
    qtbot, qasync_loop, gui_settings, tmp_path, embedding_gate
):
    """`quarry --root FOLDER --query Q` on a new index: Q is answered while FOLDER's first index runs, not
    once it has ended."""
    folder = birds(tmp_path)
    win = MainWindow(EngineBridge(), gui_settings)
    qtbot.addWidget(win)
    win.show()
    gate = embedding_gate()
    args = argparse.Namespace(root=str(folder), query="kestrel")
    opening = win.spawn(_open_at_start(win, EngineConfig(tmp_path / "launch.db"), args))
    qtbot.waitUntil(
        lambda: win.last_response is not None and [r.path for r in win.last_response.results] == ["kestrel.py"],
        timeout=60_000,
    )
    assert win.bridge.indexing and win.search_bar.text() == "kestrel"
    gate.release()
    qtbot.waitUntil(opening.done, timeout=60_000)
    win.close()
    win.bridge.shutdown()


def test_a_handed_over_query_never_replaces_what_the_user_typed(qtbot, window, tmp_path):
    folder = birds(tmp_path)
    window.search_bar.setFocus()
    with qtbot.waitSignal(window.index_finished, timeout=60_000):
        window.take_over({"root": str(folder), "query": "kestrel"})
        qtbot.keyClicks(window.search_bar, "hover")  # typed before the folder is open
    assert window.project == str(folder.resolve())
    assert window.search_bar.text() == "hover"


# --- item 5: nothing typed is lost, no phase is silent --------------------------------------------


def test_a_query_typed_before_a_folder_opens_runs_while_its_first_index_runs(
    qtbot, empty_window, tmp_path, embedding_gate
):
    """Guards issue 32 item 5 (a query typed before the folder opened never ran; the first index froze with
    no word of why): the query is answered from the folder's keywords while its first run is held at its
    first embedding, and every line the progress strip showed meanwhile names its phase and folder."""
    win = empty_window
    folder = birds(tmp_path)
    lines: list[str] = []
    win.bridge.progressed.connect(lambda _p: lines.append(win.progress.label.full_text))
    win.search_bar.setFocus()
    qtbot.keyClicks(win.search_bar, "kestrel")
    gate = embedding_gate()
    drop(win, [QUrl.fromLocalFile(str(folder))])
    qtbot.waitUntil(
        lambda: win.last_response is not None and [r.path for r in win.last_response.results] == ["kestrel.py"],
        timeout=60_000,
    )
    assert win.bridge.indexing and win.progress.isVisible() and win.search_bar.text() == "kestrel"
    named = {f"{phase} birds" for phase in PHASE_LABELS.values()}
    assert lines and all(line.split(" (")[0] in named for line in lines), lines
    with qtbot.waitSignal(win.index_finished, timeout=60_000):
        win.cancel_index()
        gate.release()


# --- item 6: one story about the state ------------------------------------------------------------


@pytest.fixture
def empty_window(qtbot, qasync_loop, gui_settings, tmp_path):
    """A window on a new index, no folder open: the first launch."""
    win = open_window(qtbot, gui_settings, tmp_path / "new-index.db", None)
    yield win
    win.close()
    win.bridge.shutdown()


def test_a_first_index_run_tells_one_story_while_the_user_searches(qtbot, empty_window, tmp_path, embedding_gate):
    win = empty_window
    folder = tmp_path / "email-copy"
    shutil.copytree(EMAIL_PACKAGE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    # A query typed and taken back before any folder is open leaves no "Open a folder" behind.
    win.search_bar.setFocus()
    qtbot.keyClicks(win.search_bar, "x")
    assert "Open a folder" in win.banner.text()
    qtbot.keyClick(win.search_bar, Qt.Key.Key_Backspace)
    gate = embedding_gate()
    drop(win, [QUrl.fromLocalFile(str(folder))])
    qtbot.waitUntil(gate.waiting.is_set, timeout=60_000)
    assert not win.banner.isVisible(), win.banner.text()
    # The folder being indexed is never called "not indexed" (beside a coverage of its keywords).
    # Its counts are those of every file stage 1 wrote, not of the first few (it said "27 chunks · 2 files").
    (summary,) = run(qtbot, win.bridge.run(ops.scopes()))
    counts = f"{summary.chunks:,} chunks · {summary.files:,} files"
    qtbot.waitUntil(lambda: win.engine_status.chunks.text() == counts, timeout=10_000)
    assert "not indexed" not in win.projects.currentText()

    search(qtbot, win, "parse an email message header")
    assert "results in" in win.statusBar().currentMessage()
    # The progress and its Cancel stay in sight through the user's searches and the re-runs.
    assert win.progress.isVisible() and win.progress.cancel.isVisible()
    with qtbot.waitSignal(win.results_shown, timeout=10_000):
        win.rerun_search()
    assert win.progress.isVisible() and win.progress.cancel.isVisible()
    # Its line is shortened to the room it has, never drawn under Cancel; the whole line is its tooltip.
    label = win.progress.label
    label.set_full_text("Indexing email-copy (meaning) · " + "300/561 chunks · " * 20)
    assert label.fontMetrics().horizontalAdvance(label.text()) <= label.width()
    assert label.geometry().right() < win.progress.cancel.geometry().left()
    assert label.toolTip() == label.full_text and label.text().endswith("…")
    with qtbot.waitSignal(win.index_finished, timeout=60_000):
        qtbot.mouseClick(win.progress.cancel, Qt.MouseButton.LeftButton)
        gate.release()
    qtbot.waitUntil(lambda: not win.progress.isVisible(), timeout=10_000)


def test_f5_on_an_up_to_date_project_says_so_while_a_query_is_open(qtbot, window):
    search(qtbot, window, "multiply two matrices")
    with qtbot.waitSignal(window.index_finished, timeout=60_000):
        qtbot.keyClick(window.search_bar, Qt.Key.Key_F5)
    run(qtbot, window.changes_applied())
    qtbot.waitUntil(lambda: window.live._task is None or window.live._task.done(), timeout=10_000)
    assert window.statusBar().currentMessage().startswith("repo is up to date: none of its")


def test_the_progress_line_says_which_step_of_the_meaning_stage_it_counts():
    names = Progress(
        "in_progress", "/w/repo", stage="full", step="names", chunks_total=880, chunks_embedded=300, stage_elapsed_s=3
    )
    assert progress_text(names).startswith("Indexing repo (meaning) · 300/880 symbol names · 100 names/s")
    chunks = dataclasses.replace(names, step="chunks")
    assert progress_text(chunks).startswith("Indexing repo (meaning) · 300/880 chunks · 100 chunks/s")
    # The text index comes after a stage's vectors: named as itself, not as more of them.
    text = dataclasses.replace(names, stage="fast", step="text")
    assert progress_text(text).startswith("Indexing repo (text index) · 300/880 chunks · 100 chunks/s")


def test_while_the_folder_is_walked_the_progress_line_counts_the_files_found():
    """A big tree's walk takes seconds (the Linux kernel's 3-4 s), which read "0/0 files" in the CLI before."""
    walking = Progress("analyzing", "/w/repo", files_found=41_200)
    assert progress_text(walking) == "Scanning files repo (keywords) · 41,200 files found"
    assert progress_line(walking) == "analyzing, keyword index: looking for files, 41200 found"
    assert progress_text(Progress("analyzing", "/w/repo")) == "Scanning files repo (keywords)"


# --- item 9: smaller things in the window ----------------------------------------------------------


def test_the_first_launch_asks_for_a_folder_and_typing_without_one_logs_nothing(qtbot, empty_window, caplog):
    win = empty_window
    shown = win.preview.placeholder.text()
    assert "Open a folder" in shown and "Type to search" not in shown
    win.search_bar.setFocus()
    with caplog.at_level(logging.WARNING, logger="desktop_app"):
        qtbot.keyClicks(win.search_bar, "retry")
    assert "Open a folder" in win.banner.text()
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_a_banner_closes_with_its_button(qtbot, window):
    window.show_message("Updating the index of repo failed: disk full", "error")
    assert window.banner.isVisible()
    qtbot.mouseClick(window.banner.close_button, Qt.MouseButton.LeftButton)
    assert not window.banner.isVisible() and window.banner.text() == ""


def test_esc_in_the_filter_paths_leaves_the_search_alone(qtbot, window):
    search(qtbot, window, "cache capacity evict")
    qtbot.keyClick(
        window.search_bar, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    )
    globs = window.filter_bar.globs
    qtbot.waitUntil(lambda: QApplication.focusWidget() is globs, timeout=5_000)
    qtbot.keyClicks(globs, "src/**")
    qtbot.keyClick(globs, Qt.Key.Key_Escape)
    assert globs.text() == "" and window.search_bar.text() == "cache capacity evict"
    assert window.tree.hit_count > 0
    qtbot.keyClick(globs, Qt.Key.Key_Escape)  # an empty field: back to the search bar
    assert QApplication.focusWidget() is window.search_bar
    assert window.search_bar.text() == "cache capacity evict"


def test_quick_open_leaves_no_result_selected_beside_the_file_it_shows(qtbot, window):
    search(qtbot, window, "cache capacity evict")
    wait_preview(qtbot, window)
    assert window.tree.current_result() is not None
    qtbot.keyClick(window.search_bar, Qt.Key.Key_P, Qt.KeyboardModifier.ControlModifier)
    dialog = window.findChild(QuickOpen)
    qtbot.waitUntil(lambda: dialog is not None and dialog.isVisible(), timeout=5_000)
    with qtbot.waitSignal(dialog.answered, timeout=10_000):
        qtbot.keyClicks(dialog.field, "htcli")
    qtbot.keyClick(dialog.field, Qt.Key.Key_Return)
    wait_preview(qtbot, window)
    assert window.preview.target.path == "src/http_client.py"
    assert window.tree.current_result() is None and not window.tree.selectionModel().hasSelection()
    with qtbot.waitSignal(window.results_shown, timeout=10_000):
        window.rerun_search()  # indexing re-runs the query: the file stays in the preview
    assert window.tree.current_result() is None and window.preview.target.path == "src/http_client.py"


def test_the_window_says_it_is_on_a_team_index_without_its_password(qtbot, qasync_loop, gui_settings, mixed_team_index):
    url = mixed_team_index.replace("postgresql://postgres@", "postgresql://postgres:secret-99@")
    win = open_window(qtbot, gui_settings, url, None)
    try:
        label = win.team_label
        server = urlsplit(url).path.lstrip("/")
        assert label.isVisible() and label.text().startswith("Team index qpg-") and label.text().endswith(server)
        assert display_url(url) in label.toolTip() and "secret-99" not in label.text() + label.toolTip()
    finally:
        win.close()
        win.bridge.shutdown()


def test_a_folder_its_gitignore_empties_says_which_rule_did(qtbot, window, tmp_path):
    """Debian's kernel tree ships a .gitignore ending in `/*`: the first run indexed 0 files and said nothing."""
    folder = birds(tmp_path)
    (folder / ".gitignore").write_text("# packaging\n/*\n")
    window.set_project(str(folder.resolve()))
    with qtbot.waitSignal(window.index_finished, timeout=60_000) as finished:
        window.reindex()
    assert finished.args[0].files_indexed == 0
    assert window.banner.isVisible() and "its .gitignore excludes /*" in window.banner.text()
    assert ".quarryignore" in window.banner.text()
