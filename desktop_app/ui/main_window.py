"""The main window: search bar, result tree, code preview, progress, menus, shortcuts and drops.

Every engine call goes through the bridge and is awaited on the qasync loop; the window itself
never reads files, the index or the model.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import sys
import traceback
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QModelIndex, QObject, Qt, QUrl, Signal
from PySide6.QtGui import (
    QAction,
    QActionGroup,
    QCloseEvent,
    QDesktopServices,
    QDragEnterEvent,
    QDragMoveEvent,
    QDropEvent,
    QKeyEvent,
    QKeySequence,
)
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMenu,
    QMessageBox,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from .. import shared_settings
from ..bridge import DroppedPath, EngineBridge, LiveSearch
from ..editor_command import installed_editors
from ..identifiers import qualified
from ..indexing.file_selection import IgnoredTop, SelectionOptions
from ..indexing.indexer import IndexStats
from ..indexing.languages import classify
from ..indexing.progress import Progress
from ..logs import log_dir
from ..search.request import MODES, Mode, SearchFilters, SearchRequest, TextOptions
from ..search.results import SearchResponse, SearchResult
from ..search.term_spans import term_spans
from ..session.model import SessionModel
from ..session.search_session import Enter, SearchSession
from ..store.errors import Remedy, ScopeRemoved, StoreError, StoreUnusable
from ..store.location import StoreLocation, default_location, display_url, move_aside
from ..store.rows import HistoryEntry, PageCheck, ScopeSummary
from ..wording import counted, file_size
from ..worker import ops
from ..worker.engine import EngineConfig
from ..worker.operations import FOLDER_BACK, FOLDER_GONE, UPDATE, Change, ChangeNotice
from . import editor_launcher
from .app_settings import AppSettings
from .engine_status import EngineStatus
from .error_text import describe_error, search_failure
from .filter_bar import FilterBar, describe
from .notice_banner import NoticeBanner, Owner
from .preview_pane import IDLE_MESSAGE, PreviewPane, PreviewTarget
from .progress_panel import ProgressPanel
from .quick_open import QuickOpen
from .result_model import hit_label
from .result_tree import ResultTree
from .search_bar import SearchBar
from .settings_dialog import Preferences, SettingsDialog
from .shortcuts_dialog import ShortcutsDialog
from .skipped_dialog import SkippedDialog
from .team_text import team_text, team_tooltip
from .toggle_button import OptionToggle

_log = logging.getLogger(__name__)
RESULT_LIMIT = 30  # hits in the tree; more rarely helps and makes each keystroke's search slower
# Hits scoring under this share of the best are left out of the tree rather than padding it. Measured on the
# standard-library set (500 queries, -k 30): at 0.4 one query in 500 loses its relevant result (its text names
# another function, whose definition scores 0.98), nl lists keep 27 results on average and identifier lists
# 2.8 (the definition and little else); at 0.5 five queries lose it, at 0.6 eight; 0.2 and 0.3 lose none but
# keep 28 and 25 (the noise this is for).
RELATIVE_CUTOFF = 0.4
HISTORY_READ = 500  # recent searches read (all projects) to find this project's
MIN_SIZE = (1100, 700)
NO_FOLDER_NOTICE = "Open a folder to search: File → Open Folder… (Ctrl+Shift+O) or drop one here."
# The preview before any folder is open: "Type to search" asked for what cannot work yet (issue 32 item 9).
NO_FOLDER_MESSAGE = (
    "Open a folder to search it: File → Open Folder… (Ctrl+Shift+O), or drop a folder on this window.\n\n"
    "Quarry indexes it (keywords at once, meaning in the background) and searches it as you type."
)
_MODE_LABELS = {"hybrid": "&Hybrid", "semantic": "&Semantic", "exact": "N&ames", "text": "&Text"}
# "exact" (the command line's name) matched names and keywords, not exact text: users read "Exact" as a
# literal search. Hybrid is as good on identifiers (standard-library set: R@1 1.0 in both) and better on
# questions (nl MRR@10 0.562 against 0.446, R@1 0.427 against 0.330), so it stays the default and this mode
# is what it is: names, for a machine without the model or a search that must not guess.
_MODE_TIPS = {
    "hybrid": "Meaning and names together (the best for most searches)",
    "semantic": "Meaning only",
    "exact": "Names and keywords only, without the model",
    "text": "Every line holding the text as typed, like grep",
}


class MainWindow(QMainWindow):
    results_shown = Signal(int)  # sequence number of the response now in the tree
    index_finished = Signal(object)  # IndexStats, or None when the run failed
    message_shown = Signal(str, str)  # kind ("info" | "warning" | "error"), text
    files_updated = Signal(str)  # root of a watched project whose changed files were re-indexed
    watch_started = Signal(str)  # root of a project whose file changes the engine now follows

    def __init__(
        self, bridge: EngineBridge, settings: AppSettings, persist: bool = True, parent: QWidget | None = None
    ):
        super().__init__(parent)
        self.bridge = bridge
        self.settings = settings
        self._persist = persist  # False for the headless screenshot: leave the user's settings alone
        self.live = LiveSearch(bridge, parent=self)
        # Project, indexed folders, mode and filters live in a Qt-free model; the window draws what it says.
        self.session = SessionModel(settings.mode)
        # The search rules (the selection kept across answers, Enter, re-runs while indexing, handed-over
        # queries, history) live in a Qt-free object too; the window tells it what happened and does as it says.
        self.search_session = SearchSession()
        self.last_response: SearchResponse | None = None
        self._placing = False  # the window itself is moving the selection (an answer arrived): not the user's pick
        self._previewed: PreviewTarget | None = None  # what the preview was last asked for (it may still be reading)
        self._rerun_seq = -1  # the sequence number of the last search the window re-ran by itself
        self._listing = False  # the project list is being read again while the project is indexed
        self._listed_at: tuple[str, str] | None = None  # (root, stage) of the run when it was last read
        self._tasks: set[asyncio.Task] = set()
        self._applying: set[asyncio.Task] = set()  # change notices being applied (project list, search)
        # The index file used when Settings names no team index; the app sets it from --db or QUARRY_DB.
        self.local_location = default_location()
        self._attempted: EngineConfig | None = None  # the configuration start() was last given
        self.question_dialog: QMessageBox | None = None  # open while the window asks (move an index aside?)
        # The editor chosen in Settings (shared with `quarry open` and agents); read off the UI thread by start().
        self.editor = ""
        self.installed_editors: list[tuple[str, str]] = []  # Settings' presets, found at start (see _load_editor)

        self.setWindowTitle("Quarry")
        self.setMinimumSize(*MIN_SIZE)
        self.setAcceptDrops(True)
        self._build_widgets()
        self._build_actions()
        self._build_menus()
        self._connect()
        self._restore_state()
        self._preview_message(self._idle_message())
        self.session.observe(self._on_session_changed)

    # The session's state, as tests and the rest of the window read it.
    @property
    def project(self) -> str | None:
        return self.session.project

    @property
    def scopes(self) -> dict[str, ScopeSummary]:
        return self.session.scopes

    @property
    def filters(self) -> SearchFilters:
        return self.session.filters

    @property
    def mode(self) -> Mode:
        return self.session.mode

    @property
    def rerun_clock(self) -> Callable[[], float]:
        return self.search_session.clock

    @rerun_clock.setter
    def rerun_clock(self, clock: Callable[[], float]) -> None:
        self.search_session.clock = clock

    # --- construction ---------------------------------------------------------------------------

    def _build_widgets(self) -> None:
        self.projects = QComboBox()
        self.projects.setMinimumWidth(200)
        self.projects.setToolTip("Project to search (Ctrl+P)")
        self.search_bar = SearchBar()
        self.mode_buttons = QHBoxLayout()
        self.mode_buttons.setSpacing(0)
        self.filters_button = QToolButton()
        self.filters_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        top = QHBoxLayout()
        top.addWidget(self.projects)
        top.addWidget(self.search_bar, 1)
        top.addLayout(self.mode_buttons)
        top.addWidget(self.filters_button)
        self.filter_bar = FilterBar()
        self.filter_bar.setVisible(False)
        self.filter_bar.changed.connect(self.apply_filters)
        self.filter_bar.globs.installEventFilter(self)
        self.banner = NoticeBanner()
        self.tree = ResultTree()
        self.preview = PreviewPane(self.bridge, self.settings.context_lines)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.tree)
        self.splitter.addWidget(self.preview)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setChildrenCollapsible(False)
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(8, 8, 8, 4)
        layout.addLayout(top)
        layout.addWidget(self.filter_bar)
        layout.addWidget(self.banner)
        layout.addWidget(self.splitter, 1)
        self.progress = ProgressPanel()
        layout.addWidget(self.progress)
        self.setCentralWidget(central)
        self.engine_status = EngineStatus(self.statusBar())
        self.engine_status.skipped.linkActivated.connect(lambda _link: self.show_skipped())
        # Which index the window is on, when it is a team's: the server (never a password) and the commit of the
        # project's base (team_text.py); the project's files that are the user's own follow its counts.
        self.team_label = QLabel()
        self._index_location = StoreLocation()  # where the engine's index is (_show_index)
        self.team_label.setContentsMargins(6, 0, 6, 0)
        self.team_label.hide()
        self.statusBar().insertPermanentWidget(0, self.team_label)
        self.last_stats: IndexStats | None = None  # of the last index run of the open project

    def _action(
        self, text: str, slot: Any, *keys: QKeySequence | QKeySequence.StandardKey | str, tip: str = ""
    ) -> QAction:
        action = QAction(text, self)
        if keys:
            action.setShortcuts([QKeySequence(k) for k in keys])
        if tip:
            action.setStatusTip(tip)
        action.triggered.connect(slot)
        self.addAction(action)  # shortcuts work even while the menu bar is hidden or closed
        return action

    def _build_actions(self) -> None:
        a = self._action
        self.act_open_folder = a(
            "&Open Folder…", self.choose_folder, "Ctrl+Shift+O", tip="Add a folder as a project and index it"
        )
        # Ctrl+P and Ctrl+T as in VS Code; switching projects moved to Ctrl+R (VS Code's "open recent").
        self.act_quick_open = a("&Quick Open File…", lambda _=False: self.quick_open(), "Ctrl+P")
        self.act_go_to_symbol = a("Go to S&ymbol…", lambda _=False: self.go_to_symbol(), "Ctrl+T")
        self.act_switch_project = a("Switch &Project", self._focus_projects, "Ctrl+R")
        self.act_reindex = a("&Re-index Project", lambda _=False: self.reindex(), "F5")
        self.act_remove_project = a(
            "Re&move Project from Index…",
            lambda: self.spawn(self.remove_project()),
            tip="Delete the open project's index (its files are not touched)",
        )
        self.act_cancel_index = a("&Cancel Indexing", self.cancel_index)
        self.act_cancel_index.setEnabled(False)
        self.act_settings = a("&Settings…", self.open_settings, "Ctrl+,")
        self.act_quit = a("&Quit", self.close, QKeySequence.StandardKey.Quit)
        self.act_focus_search = a("&Focus Search", self.focus_search, "Ctrl+K", "Ctrl+F", "/")
        self.act_search_now = a("Search &Now", self.search_now)
        self.act_clear = a("C&lear Search", self.clear_search, "Esc")
        self.act_next = a("&Next Result", lambda: self.tree.move_hits(1, wrap=True), "F4")
        self.act_prev = a("&Previous Result", lambda: self.tree.move_hits(-1, wrap=True), "Shift+F4")
        self.act_preview = a("Show in Pre&view", lambda: self.show_result(self.tree.current_result()))
        self.act_open_editor = a("Open in &Editor", self.open_in_editor, "Ctrl+Return", "Ctrl+Enter", "Ctrl+O")
        self.act_more_context = a("&More Context", self.preview.more_context, "Ctrl+M")
        self.act_filters = a("F&ilters", lambda _=False: self.toggle_filter_bar(), "Ctrl+Shift+F")
        self.act_filters.setCheckable(True)
        self.mode_group = QActionGroup(self)
        self.mode_actions: dict[str, QAction] = {}
        for n, mode in enumerate(MODES, start=1):
            act = a(
                _MODE_LABELS[mode],
                lambda _=False, m=mode: self.set_mode(m),
                f"Alt+{n}",
                tip=_MODE_TIPS[mode],
            )
            act.setCheckable(True)
            self.mode_group.addAction(act)
            self.mode_actions[mode] = act
            button = QToolButton()
            button.setDefaultAction(act)
            button.setToolTip(f"{_MODE_TIPS[mode]} (Alt+{n})")
            self.mode_buttons.addWidget(button)
        self.mode_actions[self.mode].setChecked(True)
        # Text mode's switches, with VS Code's keys and faces.
        self.text_actions: dict[str, QAction] = {}
        for name, label, face, key in (
            ("case_sensitive", "Match &Case", "Aa", "Alt+C"),
            ("word", "Match &Whole Word", "ab", "Alt+W"),
            ("regex", "Use &Regular Expression", ".*", "Alt+R"),
        ):
            tip = f"Text search: {label.replace('&', '').lower()}"
            act = a(label, lambda _=False: self._apply_text_options(), key, tip=tip)
            act.setCheckable(True)
            act.setIconText(face)
            self.text_actions[name] = act
            button = OptionToggle()  # drawn switched off while disabled (issue 32 item 9)
            button.setDefaultAction(act)
            button.setToolTip(f"{label.replace('&', '')} in text search ({key})")
            self.mode_buttons.addWidget(button)
        self._enable_text_actions()
        # Tests and documentation out of the way in one key each (they are sometimes the answer, so kept by
        # default, at a discount in the ranking).
        self.act_hide_tests = a(
            "Hide Tes&ts", lambda _=False: self._toggle_hidden(), "Ctrl+Shift+T", tip="Leave out test files and folders"
        )
        self.act_hide_docs = a(
            "Hide &Docs", lambda _=False: self._toggle_hidden(), "Ctrl+Shift+D", tip="Leave out documentation files"
        )
        for act in (self.act_hide_tests, self.act_hide_docs):
            act.setCheckable(True)
            button = QToolButton()
            button.setDefaultAction(act)
            self.mode_buttons.addWidget(button)
        self.act_wrap = a("&Wrap Lines in Preview", lambda _=False: self._toggle_wrapping(), "Alt+Z")
        self.act_wrap.setCheckable(True)
        self.act_wrap.setChecked(self.settings.wrap_lines if self._persist else False)
        self.preview.code.set_wrapping(self.act_wrap.isChecked())
        self.act_group = a("&Group Results by File", lambda _=False: self._toggle_grouping(), "Ctrl+G")
        self.act_group.setCheckable(True)
        self.act_group.setChecked(self.settings.group_by_file if self._persist else False)
        self.act_shortcuts = a("&Keyboard Shortcuts", self.show_shortcuts, "F1")
        self.act_about = a("&About Quarry", self.show_about)
        self.act_open_logs = a("Open &Log Folder", self.open_log_folder)
        self.filters_button.setDefaultAction(self.act_filters)
        self._show_filters_summary()

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        file_menu.addAction(self.act_open_folder)
        self.recent_menu = QMenu("Recent &Projects", self)
        file_menu.addMenu(self.recent_menu)
        file_menu.addActions([self.act_quick_open, self.act_go_to_symbol, self.act_switch_project])
        file_menu.addSeparator()
        file_menu.addActions([self.act_reindex, self.act_cancel_index, self.act_remove_project])
        file_menu.addSeparator()
        file_menu.addActions([self.act_settings, self.act_quit])
        search_menu = bar.addMenu("&Search")
        search_menu.addActions([self.act_focus_search, self.act_search_now, self.act_clear])
        search_menu.addSeparator()
        search_menu.addActions(
            [self.act_next, self.act_prev, self.act_preview, self.act_open_editor, self.act_more_context]
        )
        search_menu.addSeparator()
        search_menu.addAction(self.act_filters)
        search_menu.addActions(list(self.mode_actions.values()))
        search_menu.addSeparator()
        search_menu.addActions(list(self.text_actions.values()))
        search_menu.addSeparator()
        search_menu.addActions([self.act_hide_tests, self.act_hide_docs, self.act_group, self.act_wrap])
        help_menu = bar.addMenu("&Help")
        help_menu.addActions([self.act_shortcuts, self.act_open_logs, self.act_about])
        self._fill_recent_menu()

    def _connect(self) -> None:
        self.search_bar.textEdited.connect(self._on_text_edited)
        self.search_bar.submitted.connect(self._on_submitted)
        self.search_bar.move_requested.connect(self.tree.move_hits)
        self.search_bar.open_requested.connect(self.open_in_editor)
        self.search_bar.clear_requested.connect(self.clear_search)
        self.search_bar.history_requested.connect(lambda: self.spawn(self.show_history()))
        self.live.answered.connect(self._on_answered)
        self.live.failed.connect(self._on_search_failed)
        self.tree.result_changed.connect(self._on_result_changed)
        self.tree.result_activated.connect(self.show_result)
        self.tree.open_requested.connect(self.open_in_editor)
        self.projects.activated.connect(self._on_project_chosen)
        self.progress.cancel_requested.connect(self.cancel_index)
        self.bridge.progressed.connect(self._on_progress)
        self.bridge.changed.connect(self._on_change)
        self.bridge.indexing_changed.connect(self._on_indexing_changed)
        self.bridge.checking.connect(self._on_checking)

    # --- engine lifecycle -----------------------------------------------------------------------

    async def _load_editor(self) -> None:
        self.editor = await asyncio.to_thread(shared_settings.editor)
        self.installed_editors = await asyncio.to_thread(installed_editors)  # looks on PATH: not on this thread

    async def start(self, config: EngineConfig, interactive: bool = True) -> bool:
        """Start the engine, list the projects and load the model in the background. An index file that
        cannot be used is explained in a dialog, which (when `interactive`) offers to move it aside and
        start a fresh one; False when the engine could not start."""
        self.statusBar().showMessage("Opening the index…")
        # The last project is known before the index opens, so a query typed at once searches it (the
        # bridge holds the search until the engine is up) instead of asking for a folder.
        assumed = self.settings.last_project if self.project is None else None
        if assumed:
            self.set_project(assumed)
        self._attempted = config
        self.spawn(self._load_editor())
        try:
            await self.bridge.start(config)
        except StoreUnusable as exc:
            if (
                Remedy.REBUILD not in exc.remedies
                or not interactive
                or not await self._ask(
                    "The index cannot be used",
                    f"{describe_error(exc)}\n\nMove it aside (nothing is deleted) and build a fresh index?",
                    QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
                )
            ):
                self.show_message(describe_error(exc), "error")
                return False
            moved = await asyncio.get_running_loop().run_in_executor(None, move_aside, exc.path)
            self.show_message(f"The old index was moved to {moved}; folders are indexed again as you open them.")
            await self.bridge.start(config)
        except StoreError as exc:
            self.show_message(describe_error(exc), "error")
            if interactive:
                await self._ask("The index cannot be opened", describe_error(exc), QMessageBox.StandardButton.Close)
            return False
        self.statusBar().showMessage(f"Index: {config.location}", 5000)
        self._show_index(config.location)
        await self.refresh_projects()
        if assumed and self.project == assumed and assumed not in self.scopes:
            self.forget_project()  # it is no longer in this index
        self.focus_search()
        self.spawn(self._load_model())
        return True

    async def _ask(self, title: str, text: str, buttons: QMessageBox.StandardButton) -> bool:
        """A window-modal message box that does not block the event loop; True when Yes was chosen."""
        box = QMessageBox(QMessageBox.Icon.Warning, title, text, buttons, self)
        box.setWindowModality(Qt.WindowModality.WindowModal)
        answer: asyncio.Future = asyncio.get_running_loop().create_future()
        box.finished.connect(lambda _: None if answer.done() else answer.set_result(box.clickedButton()))
        self.question_dialog = box
        box.open()
        try:
            clicked = await answer
        finally:
            self.question_dialog = None
        return clicked is box.button(QMessageBox.StandardButton.Yes)

    async def _load_model(self) -> None:
        try:
            model, provider = await self.bridge.run(ops.warm_up())
        except Exception as exc:  # semantic search falls back to exact; say why
            self.engine_status.show_engine(None, None, str(exc))
            self.show_message(f"The embedding model did not load ({exc}); searches use exact matching.", "warning")
        else:
            self.engine_status.show_engine(model, provider)
            loading = self.last_response is not None and self.last_response.vectors_loaded < 1
            if loading and self.search_bar.text().strip():
                self.search_now()  # answered while the vectors loaded: now with all of them

    async def refresh_projects(self) -> None:
        scopes: list[ScopeSummary] = await self.bridge.run(ops.scopes())
        self.session.set_scopes(scopes)

    async def _watch(self, root: str) -> None:
        await self.bridge.watch(root)
        self.watch_started.emit(root)

    def _on_session_changed(self, aspect: str) -> None:
        """Draw what changed in the session (and search again where the answer depends on it)."""
        if aspect == "project":
            self._forget_project_state()
            if self.banner.owner == "search":
                self.banner.clear_notice()  # said of a search in no project or another one ("Open a folder")
            if not self.tree.hit_count:
                self._preview_message(self._idle_message())
            self.setWindowTitle(f"{Path(self.project).name} — Quarry" if self.project else "Quarry")
        if aspect in ("project", "scopes"):
            self._fill_projects()
            self._show_scope()
        if aspect == "scopes":
            for root in self.session.roots_to_watch():  # every indexed folder follows its files while open
                self.spawn(self._watch(root))
        if aspect == "mode":
            self.mode_actions[self.mode].setChecked(True)
            self._enable_text_actions()
            if self._persist:
                self.settings.mode = self.mode
        if aspect in ("project", "scopes") and self.bridge.config is not None:
            self.spawn(self._load_languages())
        if aspect == "filters":
            self.filter_bar.set_filters(self.filters)
            self._show_filters_summary()
            self.act_hide_tests.setChecked(self.filters.hide_tests)
            self.act_hide_docs.setChecked(self.filters.hide_docs)
        if aspect in ("project", "mode", "filters") and self.search_bar.text().strip():
            self.search_now()

    # --- change notices -------------------------------------------------------------------------

    def _on_change(self, notice: ChangeNotice) -> None:
        """The engine finished a write: an index run, a watched folder's update, a removal, a re-embed."""
        task = self.spawn(self._apply_change(notice))
        self._applying.add(task)
        task.add_done_callback(self._applying.discard)

    async def _apply_change(self, notice: ChangeNotice) -> None:
        if notice.operation == FOLDER_GONE:
            self.show_message(
                f"{Path(notice.roots[0]).name} was moved or deleted ({notice.roots[0]}). Its index is kept and "
                "searches still work; it is updated again when the folder is back.",
                "warning",
            )
        elif notice.operation == FOLDER_BACK:
            self.show_message(f"{Path(notice.roots[0]).name} is back; updating its index.")
        if notice.operation == UPDATE and not self._report_update(notice):
            return
        if notice.changes & (Change.SCOPES | Change.CONTENT):
            await self.refresh_projects()
        if self.search_session.touches(notice, self.project) and self.search_bar.text().strip():
            self.rerun_search()  # show the new content
        if notice.operation == UPDATE:
            self.files_updated.emit(notice.roots[0])

    def _report_update(self, notice: ChangeNotice) -> bool:
        """Say what a watched folder's update did; False when it changed nothing."""
        root, result = notice.roots[0], notice.result
        if isinstance(result, ScopeRemoved):  # the engine no longer watches it
            self.show_message(
                f"{Path(root).name} was removed from the index by another window or command ({root}); its changes "
                "are no longer followed. Open it again to index it.",
                "warning",
            )
            return True
        if isinstance(result, BaseException):
            self.show_message(f"Updating the index of {Path(root).name} failed: {describe_error(result)}", "error")
            return True
        if not (result.files_changed or result.files_deleted or result.files_copied):
            return False
        self.statusBar().showMessage(
            f"Updated {Path(root).name}: {result.files_changed + result.files_copied} "
            f"changed, {result.files_deleted} deleted",
            5000,
        )
        return True

    async def changes_applied(self) -> None:
        """Wait until every change notice received so far has been drawn."""
        while self._applying:
            await asyncio.gather(*list(self._applying), return_exceptions=True)

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task:
        """Run `coro` on the loop; a failure becomes a message in the window, not a dead slot."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        if task.cancelled() or task.exception() is None:
            return
        exc = task.exception()
        assert exc is not None  # checked above
        traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
        _log.error("a window task failed", exc_info=exc)
        self.show_message(f"Something went wrong: {type(exc).__name__}: {exc}", "error")

    # --- projects and indexing ------------------------------------------------------------------

    def set_project(self, root: str) -> None:
        if self._persist:
            self.settings.last_project = root
            self.settings.add_recent_project(root)
        self._fill_recent_menu()
        self.session.set_project(root)

    def _forget_project_state(self) -> None:
        self.last_stats = None
        self.engine_status.show_skipped(0)
        self.engine_status.show_coverage(None)

    def forget_project(self) -> None:
        self.session.set_project(None)

    async def open_project(self, path: str | Path, index: bool = True) -> IndexStats | None:
        """Make the folder at `path` the project and (incrementally) index it."""
        if not await self._make_project(path):
            return None
        return await self.index_project() if index else None

    async def _make_project(self, path: str | Path) -> bool:
        found = await self.bridge.run(ops.inspect_path(path))
        if found.kind != "folder":
            self.show_message(found.message or f"{path} is not a folder", "error")
            return False
        self.set_project(str(found.path))
        return True

    def take_over(self, message: dict) -> None:
        """A later `quarry FOLDER` handed its folder (and query) to this window: open it and come forward."""
        if self.isMinimized():
            self.showNormal()
        self.raise_()
        self.activateWindow()
        root, query = message.get("root"), message.get("query")
        query = query if isinstance(query, str) else None
        if isinstance(root, str) and root:
            self.open_with_query(root, query)
        elif query:
            self.search_session.hand_over(query)
            self._apply_handed()

    def open_with_query(self, root: str | Path, query: str | None) -> asyncio.Task:
        """`quarry FOLDER --query Q`: open FOLDER and search for Q at once, while FOLDER is indexed (results
        fill in as it goes); Q is dropped if the user types before the folder is open. It used to wait for the
        whole index run (110 s seen) and then replace whatever the user had typed meanwhile. The task gives
        the index run's IndexStats."""
        if query:
            self.search_session.hand_over(query)  # now: a key typed from here on wins
        return self.spawn(self._open_handed(root))

    async def _open_handed(self, root: str | Path) -> IndexStats | None:
        if not await self._make_project(root):
            return None
        self._apply_handed()
        return await self.index_project()

    def _apply_handed(self) -> None:
        query = self.search_session.take_handed()
        if query is not None:
            self.search_bar.setText(query)
            self.search_now()

    def reindex(self) -> None:
        """F5: said at once, before the run (which may take a moment to start behind a search) is under way."""
        if self.project is not None:
            # Brief: the progress strip takes over from here.
            self.statusBar().showMessage(f"Re-indexing {Path(self.project).name}: looking for changed files…", 3000)
        self.spawn(self.index_project())

    async def index_project(self, root: str | None = None) -> IndexStats | None:
        root = root or self.project
        if root is None:
            self.show_message("Open a folder first: File → Open Folder… (Ctrl+Shift+O) or drop one here.", "warning")
            return None
        self.progress.show_progress(Progress("analyzing", root))
        try:
            stats = await self.bridge.run(ops.index(root, self.bridge.report_progress))
        except Exception as exc:  # a failed run is reported; the window carries on
            self.show_message(f"Indexing {root} failed: {describe_error(exc)}", "error")
            await self.changes_applied()
            self.index_finished.emit(None)
            return None
        if root == self.project:
            self.last_stats = stats
            self.engine_status.show_skipped(len(stats.skipped_paths))
        if stats.cancelled:
            self.show_message(
                f"Indexing {Path(root).name} was cancelled; {stats.files_indexed} files are "
                "searchable. Press F5 to continue.",
                "warning",
            )
        elif not (stats.files_changed or stats.files_deleted or stats.chunks_embedded or stats.chunks_fast):
            # A quick run that changed nothing still answers the key press (F5 used to look like it did nothing).
            self.statusBar().showMessage(
                f"{Path(root).name} is up to date: none of its {stats.files_indexed:,} files changed "
                f"(checked in {stats.seconds:.1f} s)",
                8000,
            )
        else:
            self.statusBar().showMessage(
                f"Indexed {Path(root).name}: {stats.files_indexed:,} files, {stats.chunks_total:,} chunks "
                f"({stats.chunks_embedded:,} new) in {stats.seconds:.1f} s",
                8000,
            )
            if self.banner.owner == "window":
                self.banner.clear_notice()  # an earlier failure or cancel is over once a run has gone through
        if stats.ignored_top is not None and not stats.cancelled:
            # Debian's kernel tree ships a .gitignore ending in `/*`: 0 files, and a run that said "completed".
            self.show_message(_ignored_top_text(Path(root).name, stats.files_indexed, stats.ignored_top), "warning")
        await self.changes_applied()  # the project list and the open search show the new content
        self.index_finished.emit(stats)
        return stats

    async def remove_project(self) -> int | None:
        """Delete the open project's index after the user confirms (its files stay); the chunks dropped."""
        root = self.project
        if root is None or root not in self.scopes:
            self.show_message("Open an indexed project first; its index is what would be removed.", "warning")
            return None
        if not await self._ask(
            "Remove the project from the index?",
            f"Quarry forgets everything it indexed in {root}. The folder and its files are not touched; "
            "opening the folder again indexes it again.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
        ):
            return None
        try:
            dropped = await self.bridge.run(ops.remove_scope(root))
        except Exception as exc:  # reported; the project stays as it was
            self.show_message(f"Removing {Path(root).name} from the index failed: {describe_error(exc)}", "error")
            return None
        await self.changes_applied()
        self.tree.clear_results()
        self.show_message(f"Removed {Path(root).name} from the index.")
        return dropped

    def show_skipped(self) -> SkippedDialog | None:
        """List the paths the last index run of the open project passed over, with the reasons."""
        if self.last_stats is None:
            return None
        dialog = SkippedDialog(self.last_stats.root, self.last_stats.skipped_paths, self)
        self._open_dialog(dialog)
        return dialog

    def cancel_index(self) -> None:
        if self.bridge.indexing:
            self.bridge.cancel_index()
            self.progress.mark_cancelling()

    def _on_progress(self, p: Progress) -> None:
        if self.bridge.indexing:  # a report delivered after the run ended must not bring the panel back
            self.progress.show_progress(p)
        if p.phase != "in_progress" or p.root != self.project:
            return
        if (p.root, p.stage) != self._listed_at and not self._listing:
            # The run's files are in the index as each stage begins: list the folder with its counts now, not at
            # the run's end (it was "not indexed" beside a search's coverage of it, or kept stage 1's first count).
            self._listing, self._listed_at = True, (p.root, p.stage)
            self.spawn(self._list_project())
        if self.search_session.search_on_progress:
            self.search_session.search_on_progress = False
            self.search_now()
        elif self.search_bar.text().strip() and self.search_session.rerun_due():
            self.rerun_search()

    async def _list_project(self) -> None:
        try:
            await self.refresh_projects()
        finally:
            self._listing = False

    def rerun_search(self) -> None:
        """Run the open query again for what the index has gained, keeping the result the user picked."""
        if self.live.busy:
            # The user's own search is about to run or under way: it answers with the new content too (a re-run
            # would take its place, and its answer would come without the result count the user expects).
            return
        if self.search_now() is not None:
            self._rerun_seq = self.live.seq

    def _on_checking(self, check: PageCheck) -> None:
        """The index is being read whole for damage before it is used (as it opens, or before a write): said as
        it goes, since a big one takes seconds to minutes."""
        size = file_size(check.size_bytes)
        if check.done:
            self.statusBar().showMessage(f"Checked the whole index ({size}) for damage in {check.seconds:.0f} s", 5000)
        else:
            self.statusBar().showMessage(
                f"Checking the whole index ({size}) for damage, as it is not as Quarry last left it (copied, "
                f"changed by another program, or a run cut off) · {check.seconds:.0f} s"
            )

    def _on_indexing_changed(self, running: bool) -> None:
        self.act_cancel_index.setEnabled(running)
        if not running:
            self.progress.finish()
        self._fill_projects()
        self._show_scope()

    def choose_folder(self) -> None:
        dialog = QFileDialog(self, "Open a folder to search")
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
        dialog.fileSelected.connect(lambda folder: self.spawn(self.open_project(folder)))
        self._open_dialog(dialog)

    def _fill_projects(self) -> None:
        roots = self.session.project_roots()
        self.projects.blockSignals(True)
        self.projects.clear()
        for root in roots:
            self.projects.addItem(Path(root).name + self._index_state(root), root)
            self.projects.setItemData(self.projects.count() - 1, root, Qt.ItemDataRole.ToolTipRole)
        if self.project:
            self.projects.setCurrentIndex(roots.index(self.project))
        self.projects.blockSignals(False)

    def _index_state(self, root: str) -> str:
        """What the project list says after a folder's name: nothing once it is indexed."""
        if root in self.scopes:
            return ""
        # A first index run has not been listed yet: it was called "not indexed" beside its search coverage.
        return "  (indexing…)" if root in self.bridge.indexing_roots else "  (not indexed)"

    def _show_scope(self) -> None:
        self.engine_status.show_scope(self.project, self.session.project_scope)
        self._show_team()
        if self.project is not None and self.session.project_scope is None:
            self.engine_status.chunks.setText(self._index_state(self.project).strip(" ()"))

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        recent = self.settings.recent_projects
        for n, root in enumerate(recent, start=1):
            act = self.recent_menu.addAction(f"&{n % 10} {root}" if n <= 10 else root)
            act.triggered.connect(lambda _=False, r=root: self.spawn(self.open_project(r)))
        self.recent_menu.setEnabled(bool(recent))

    def _on_project_chosen(self, index: int) -> None:
        root = self.projects.itemData(index)
        if root and root != self.project:
            self.set_project(root)
            if root not in self.scopes:
                self.show_message(f"{Path(root).name} is not indexed yet; press F5 to index it.", "warning")

    def _focus_projects(self) -> None:
        self.projects.setFocus()
        self.projects.showPopup()

    # --- drag and drop --------------------------------------------------------------------------

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 (Qt override)
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:  # noqa: N802 (Qt override)
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 (Qt override)
        urls = event.mimeData().urls()
        local = [Path(u.toLocalFile()) for u in urls if u.isLocalFile() and u.toLocalFile()]
        event.acceptProposedAction()
        if not local:
            self.show_message("Only folders and files on this computer can be dropped here.", "error")
            return
        self.spawn(self.handle_drop(local))

    async def handle_drop(self, paths: list[Path]) -> None:
        """Folders become projects and are indexed (one after another); a file shows in its project."""
        for path in paths:
            found = await self.bridge.run(ops.inspect_path(path))
            if found.kind == "problem":
                self.show_message(found.message, "error")
            elif found.kind == "folder":
                self.set_project(str(found.path))
                await self.index_project()
            else:
                self._show_dropped_file(found)

    def _show_dropped_file(self, found: DroppedPath) -> None:
        assert found.project is not None and found.rel_path is not None
        if found.project != self.project:
            self.set_project(found.project)
        if found.sha256 is None:
            self.show_message(found.message, "warning")
            return
        kind = classify(found.rel_path)
        self._preview_outside(
            PreviewTarget(
                found.project, found.rel_path, found.sha256, 1, 0, kind.language if kind else "", "whole file"
            )
        )

    def _preview_outside(self, target: PreviewTarget) -> None:
        """Preview a file the user chose outside the result list (Quick Open, a dropped file): no result stays
        selected beside it (the old one did), and re-runs of the open query leave the preview alone."""
        self.search_session.look_elsewhere()
        self._placing = True
        try:
            self.tree.setCurrentIndex(QModelIndex())
            self.tree.clearSelection()
        finally:
            self._placing = False
        self._previewed = target
        self.preview.preview(target)

    # --- searching ------------------------------------------------------------------------------

    def request(self, query: str | None = None, record_history: bool = True) -> SearchRequest | None:
        query = self.search_bar.text() if query is None else query
        return self.session.request(query, RESULT_LIMIT, record_history, RELATIVE_CUTOFF)

    async def show_history(self) -> None:
        """The project's recent searches (those run with Enter, and the command line's), newest first."""
        entries: list[HistoryEntry] = await self.bridge.run(ops.history(HISTORY_READ))
        queries = self.search_session.history(entries, self.project)
        if queries:
            self.search_bar.show_history(queries)
        else:
            self.statusBar().showMessage("No searches in this project yet: Enter records the query in the bar.", 4000)

    def _on_text_edited(self, text: str) -> None:
        self.search_session.edited()
        if self.banner.owner == "window":
            self.banner.clear_notice()  # the user has moved on from what the window last said
        # Half-typed queries stay out of the search history; Enter (search now) records the query.
        request = self.request(text, record_history=False)
        if request is not None:
            self.live.schedule(request)
        elif not text.strip():
            self.live.clear()
            if self.banner.owner == "search":
                self.banner.clear_notice()  # said of a query no longer there
        elif self.banner.text() != NO_FOLDER_NOTICE:
            # Once, as a notice, not logged: each keystroke wrote a WARNING to the log (issue 32 item 9).
            self.banner.show_notice(NO_FOLDER_NOTICE, "warning", owner="search")
            self.message_shown.emit("warning", NO_FOLDER_NOTICE)

    def search_now(self) -> asyncio.Task | None:
        """Search for the bar's text right away; the task gives the response (None if superseded)."""
        request = self.request()
        return self.live.run_now(request) if request is not None else None

    def _on_answered(self, seq: int, response: SearchResponse) -> None:
        self.last_response = response
        self._place(response)
        self._show_response_notes(response)
        if response.files_matched is not None:  # text mode
            if response.text_stopped_after_s is not None:
                more = " before the pattern was stopped"  # the banner says why
            else:
                more = "" if response.text_complete else " (more files match)"
            matches, files = response.matches_total or 0, response.files_matched
            found = f"{counted(matches, 'match', 'matches')} in {counted(files, 'file')}{more}"
            found += f" in {response.elapsed_ms:.0f} ms (text)"
        else:
            weaker = f"; {response.below_cutoff} weaker left out" if response.below_cutoff else ""
            found = (
                f"{counted(len(response.results), 'result')} in {response.elapsed_ms:.0f} ms "
                f"({response.effective_mode}){weaker}"
            )
        if seq != self._rerun_seq:
            # Said for the user's own searches only: a re-run's count would replace what an index run just said
            # (F5's "up to date") every second while indexing.
            self.statusBar().showMessage(found, 4000)
        self.engine_status.show_coverage(response.coverage)
        if not response.results:
            self._preview_message(f"No results for “{response.query}”.")
        self.results_shown.emit(seq)

    def _place(self, response: SearchResponse) -> None:
        """Draw `response` in the tree and select what the session says: the result the user picked, found by
        what it is, or the top one. The rows the tree passes through meanwhile are neither the user's pick nor
        previewed (they made the selection and the preview jump to rows nobody chose while indexing re-ran
        the query)."""
        self._placing = True
        try:
            self.tree.show_response(response, self.act_group.isChecked())
            position = self.search_session.answered(response.query, self.tree.results.hits)
            if position is not None:
                self.tree.select_hit(position)
            else:
                self.tree.setCurrentIndex(QModelIndex())
        finally:
            self._placing = False
        current = self.tree.current_result()
        if current is not None and self._target(current) != self._previewed:
            self.show_result(current)  # a re-run that kept the pick leaves its preview (and scroll) as it is

    def _on_result_changed(self, result: SearchResult | None) -> None:
        if self._placing:
            return
        self.search_session.choose(result)  # a click, arrow keys or F4: the user's pick
        self.show_result(result)

    def _on_submitted(self) -> None:
        """Enter in the search bar: opens the result the user picked in this query's answer (it used to search
        again and put the selection back on the first row), else searches now."""
        current = self.tree.current_result()
        if self.search_session.enter(self.search_bar.text(), current is not None) is Enter.OPEN:
            self.show_result(current)
            self.tree.setFocus(Qt.FocusReason.OtherFocusReason)
        else:
            self.search_now()

    def _show_response_notes(self, response: SearchResponse) -> None:
        notes = []
        if response.partial:
            notes.append("Indexing is still running, so these results are partial.")
        if response.notice:
            notes.append(response.notice[0].upper() + response.notice[1:] + ".")
        if notes:
            self.show_message(" ".join(notes), "warning" if response.partial else "info", owner="search")
        elif self.banner.owner == "search":
            # Only the search's own notes: a search re-run by an index's end must not wipe what that index said.
            self.banner.clear_notice()

    def _on_search_failed(self, _seq: int, error: Exception) -> None:
        self.tree.clear_results()
        if self.project in self.bridge.indexing_roots:
            # The first index run has not created the project's scope yet; try again once files are in.
            self.search_session.search_on_progress = True
            self.show_message(
                f"Indexing {Path(self.project).name} has just started; results appear as soon "
                "as the first files are indexed.",
                "warning",
                owner="search",
            )
        else:
            self.show_message(search_failure(error), "error", owner="search")

    def clear_search(self) -> None:
        self.live.clear()
        self.search_session.cleared()
        self.search_bar.clear()
        self.tree.clear_results()
        self.banner.clear_notice()
        self._preview_message(self._idle_message())
        self.focus_search()

    def _idle_message(self) -> str:
        return IDLE_MESSAGE if self.project is not None else NO_FOLDER_MESSAGE

    def focus_search(self) -> None:
        self.search_bar.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search_bar.selectAll()

    def set_mode(self, mode: Mode) -> None:
        self.session.set_mode(mode)

    def _toggle_hidden(self) -> None:
        self.apply_filters(
            dataclasses.replace(
                self.filters, hide_tests=self.act_hide_tests.isChecked(), hide_docs=self.act_hide_docs.isChecked()
            )
        )

    def _toggle_wrapping(self) -> None:
        self.preview.code.set_wrapping(self.act_wrap.isChecked())
        if self._persist:
            self.settings.wrap_lines = self.act_wrap.isChecked()

    def _toggle_grouping(self) -> None:
        if self._persist:
            self.settings.group_by_file = self.act_group.isChecked()
        if self.last_response is not None:
            self._place(self.last_response)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        """Esc in the filter bar's path field clears that field, or leaves it for the search bar when empty; the
        window's Esc (clear the search) took it and wiped the query instead (issue 32 item 9)."""
        if watched is self.filter_bar.globs and isinstance(event, QKeyEvent) and event.key() == Qt.Key.Key_Escape:
            if event.type() == QEvent.Type.ShortcutOverride:
                event.accept()  # the field gets the key press, not the window's shortcut
                return True
            if event.type() == QEvent.Type.KeyPress:
                if self.filter_bar.globs.text():
                    self.filter_bar.globs.clear()
                    self.filter_bar.globs.editingFinished.emit()  # applied as Enter applies a pattern
                else:
                    self.search_bar.setFocus(Qt.FocusReason.ShortcutFocusReason)
                return True
        return super().eventFilter(watched, event)

    def _apply_text_options(self) -> None:
        self.session.set_text_options(TextOptions(**{n: act.isChecked() for n, act in self.text_actions.items()}))

    def _enable_text_actions(self) -> None:
        for act in self.text_actions.values():
            act.setEnabled(self.mode == "text")

    def toggle_filter_bar(self) -> None:
        """Ctrl+Shift+F: the filter bar, shown under the search field (focus on its paths) or hidden."""
        shown = not self.filter_bar.isVisible()
        self.filter_bar.setVisible(shown)
        self.act_filters.setChecked(shown)
        if shown:
            self.filter_bar.globs.setFocus()
        else:
            self.search_bar.setFocus()

    async def _load_languages(self) -> None:
        scope = self.session.project_scope
        self.filter_bar.set_languages(await self.bridge.run(ops.languages(scope.scope)) if scope is not None else [])

    def _open_dialog(self, dialog: QDialog) -> None:
        """Show `dialog` window-modal without a nested event loop; focus returns to the search bar."""
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.finished.connect(self._return_focus)
        dialog.open()  # not exec(): a nested event loop would stall the asyncio loop

    def _return_focus(self) -> None:
        self.activateWindow()
        self.focus_search()

    def apply_filters(self, filters: SearchFilters) -> None:
        self.session.set_filters(filters)

    def _show_filters_summary(self) -> None:
        summary = describe(self.filters)
        self.filters_button.setText(f"Filters: {summary}" if summary else "Filters")

    # --- preview --------------------------------------------------------------------------------

    def show_result(self, result: SearchResult | None) -> None:
        if result is not None:
            self._previewed = self._target(result)
        self.preview.preview(self._previewed if result is not None else None)

    def _preview_message(self, text: str) -> None:
        self._previewed = None  # the next answer previews its result, even the one shown before this message
        self.preview.show_message(text)

    def _target(self, result: SearchResult) -> PreviewTarget:
        return PreviewTarget(
            result.scope_root,
            result.path,
            result.file_sha256,
            result.start_line,
            result.end_line,
            result.language,
            hit_label(result),
            result.snippet,
            self._highlights(result),
        )

    def _highlights(self, result: SearchResult) -> tuple[tuple[int, int, int], ...]:
        """(line, start, end) to mark in the preview: in text mode every match of the line's file (the preview
        shows the whole file), else the query's words inside the hit."""
        if result.matches is None:
            query = self.last_response.query if self.last_response is not None else ""
            return tuple(term_spans(query, result.snippet, result.start_line))
        matches = next(
            (
                r.matches
                for r in (self.last_response.results if self.last_response is not None else ())
                if (r.scope_root, r.path) == (result.scope_root, result.path) and r.matches is not None
            ),
            result.matches,
        )
        return tuple((m["line"], m["start_col"], m["end_col"]) for m in matches)

    def open_in_editor(self) -> None:
        """Open the current result (or the previewed file) in the user's editor at its first line."""
        target = self.preview.target
        result = self.tree.current_result()
        if result is not None and (target is None or target.path != result.path):
            path, line = f"{result.scope_root.rstrip('/')}/{result.path}", result.start_line
        elif target is not None:
            path, line = target.abs_path, max(1, target.start_line)
        else:
            self.show_message("Select a result first (Up/Down from the search bar).", "warning")
            return
        problem = editor_launcher.open_in_editor(path, line, self.editor)
        if problem:
            self.show_message(problem, "error")

    # --- quick open -----------------------------------------------------------------------------

    def quick_open(self) -> QuickOpen | None:
        """Ctrl+P: a file of the project by a fuzzy part of its path."""
        return self._quick_open("Quick Open", "File name, fuzzily: mwin finds main_window.py", self._find_files)

    def go_to_symbol(self) -> QuickOpen | None:
        """Ctrl+T: a definition of the project by a fuzzy part of its name (Class.method)."""
        return self._quick_open("Go to Symbol", "Symbol name, fuzzily: lru put finds LRUCache.put", self._find_symbols)

    def _quick_open(self, title: str, hint: str, find: Callable[[str], Awaitable[list]]) -> QuickOpen | None:
        if self.session.project_scope is None:
            self.show_message("Open an indexed folder first: Quick Open and Go to Symbol look in its index.", "warning")
            return None
        dialog = QuickOpen(title, hint, find, self._open_choice, self)
        self._open_dialog(dialog)
        dialog.field.setFocus()
        return dialog

    async def _find_files(self, text: str) -> list[tuple[str, PreviewTarget]]:
        scope = self.session.project_scope
        if scope is None:
            return []
        files = await self.bridge.run(ops.find_files(scope.scope, text))
        out = []
        for f in files:
            kind = classify(f.path)
            language = kind.language if kind else ""
            target = PreviewTarget(scope.scope.root, f.path, f.sha256 or "", 1, 0, language, "whole file")
            out.append((f.path, target))
        return out

    async def _find_symbols(self, text: str) -> list[tuple[str, PreviewTarget]]:
        scope = self.session.project_scope
        if scope is None:
            return []
        out = []
        for h in await self.bridge.run(ops.find_symbols(scope.scope, text)):
            name = qualified(h.symbol_name or "", h.parent_symbol)
            label = f"{h.symbol_type or ''} {name}   {h.path}:{h.start_line}".strip()
            target = PreviewTarget(
                scope.scope.root, h.path, h.file_sha256, h.start_line, h.end_line, h.language, label, h.text
            )
            out.append((label, target))
        return out

    def _open_choice(self, target: PreviewTarget, in_editor: bool) -> None:
        self._preview_outside(target)
        if in_editor:
            problem = editor_launcher.open_in_editor(target.abs_path, max(1, target.start_line), self.editor)
            if problem:
                self.show_message(problem, "error")

    # --- dialogs --------------------------------------------------------------------------------

    def open_settings(self) -> None:
        config = self.bridge.config or self._attempted
        prefs = Preferences(
            self.preview.context_lines,
            self.settings.max_file_size,
            config.model_dir if config else self.settings.model_dir,
            config.provider if config else self.settings.provider,
            config.model if config else self.settings.model,
            str(config.location) if config and config.location.is_team else self.settings.team_index,
            self.editor,
        )
        dialog = SettingsDialog(prefs, self, self.installed_editors)
        dialog.accepted.connect(lambda: self.spawn(self.apply_preferences(dialog.preferences())))
        self._open_dialog(dialog)

    async def apply_preferences(self, prefs: Preferences) -> None:
        self.preview.context_lines = prefs.context_lines
        if self._persist and prefs.editor != self.editor:
            await asyncio.to_thread(shared_settings.set_editor, prefs.editor)
        self.editor = prefs.editor
        if self._persist:
            self.settings.context_lines = prefs.context_lines
            self.settings.max_file_size = prefs.max_file_size
            self.settings.model_dir = prefs.model_dir
            self.settings.model = prefs.model
            self.settings.provider = prefs.provider
            self.settings.team_index = prefs.team_index  # without its password, if one was typed
        self.show_result(self.tree.current_result())
        config = self.bridge.config or self._attempted  # settings may be what kept the engine from starting
        if config is None:
            return
        new = dataclasses.replace(
            config,
            store=self._location_for(prefs.team_index, config.location),
            model=prefs.model,
            model_dir=prefs.model_dir,
            provider=prefs.provider,
            index_options=dataclasses.replace(
                config.index_options,
                selection=SelectionOptions(
                    max_file_size=prefs.max_file_size, max_line_length=config.index_options.selection.max_line_length
                ),
            ),
        )
        if self.bridge.config is None:
            await self.start(new)
        elif new != config:
            self.statusBar().showMessage("Restarting the engine with the new settings…")
            await self.bridge.restart(new)
            self._show_index(new.location)
            self.session.forget_watches()  # the new worker watches nothing yet
            await self.refresh_projects()
            self.spawn(self._load_model())
            self.statusBar().showMessage("Engine restarted with the new settings.", 5000)

    def _show_index(self, location: StoreLocation) -> None:
        self._index_location = location
        self.team_label.setVisible(location.is_team)
        self.team_label.setToolTip(team_tooltip(location))
        self._show_team()

    def _show_team(self) -> None:
        """A team index's server and the project's base commit ("" on the local index)."""
        self.team_label.setText(team_text(self._index_location, self.session.project_base))

    def _location_for(self, team_index: str, current: StoreLocation) -> StoreLocation:
        """Where the engine's index should be: the team index named in Settings (the one in use when only its
        password, which Settings never shows, differs), or this computer's index file."""
        if not team_index:
            return self.local_location if current.is_team else current
        if current.is_team and str(current) == display_url(team_index):
            return current
        return StoreLocation.of(team_index)

    def open_log_folder(self) -> None:
        """Show the folder of Quarry's log files in the file manager (created if nothing was logged yet)."""
        folder = log_dir()
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self.show_message(f"The log folder {folder} cannot be created: {exc.strerror or exc}.", "error")
            return
        if not QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder))):
            self.show_message(f"No file manager opened; Quarry's logs are in {folder}.", "info")

    def show_shortcuts(self) -> None:
        self._open_dialog(ShortcutsDialog(self.actions(), self))

    def show_about(self) -> None:
        box = QMessageBox(
            QMessageBox.Icon.Information,
            "About Quarry",
            "Quarry searches a codebase by meaning and by name, offline.\n\n"
            "Drop a folder on the window to index it, then type what you are looking for. "
            "F1 lists the keyboard shortcuts.",
            QMessageBox.StandardButton.Close,
            self,
        )
        self._open_dialog(box)

    def show_message(self, text: str, kind: str = "info", owner: Owner = "window") -> None:
        if kind in ("warning", "error"):  # a banner goes away; the log keeps what it said
            _log.log(logging.WARNING if kind == "warning" else logging.ERROR, "shown: %s", text)
        self.banner.show_notice(text, kind, owner)
        self.message_shown.emit(kind, text)

    # --- state ----------------------------------------------------------------------------------

    def _restore_state(self) -> None:
        if self._persist and self.settings.geometry is not None:
            self.restoreGeometry(self.settings.geometry)
        else:
            self.resize(1280, 800)
        if self._persist and self.settings.splitter_state is not None:
            self.splitter.restoreState(self.settings.splitter_state)
        else:
            self.splitter.setSizes([520, 760])  # the list: two-line rows name the result and its file (issue 32 item 7)

    def save_state(self) -> None:
        if not self._persist:
            return
        self.settings.geometry = self.saveGeometry()
        self.settings.splitter_state = self.splitter.saveState()
        self.settings.mode = self.mode
        self.settings.context_lines = self.preview.context_lines
        if self.project:
            self.settings.last_project = self.project
        self.settings.sync()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 (Qt override)
        self.save_state()
        self.live.clear()
        for task in list(self._tasks):
            task.cancel()
        super().closeEvent(event)


def _ignored_top_text(name: str, files_indexed: int, ignored: IgnoredTop) -> str:
    """Why a folder gave (almost) nothing to index: the ignore rule that passed over its top."""
    rule = ignored.rule
    remedy = (
        "Edit it to index them."
        if rule.source == ".quarryignore"
        else f"To index them anyway, add a .quarryignore beside it that re-includes them, such as {'!' + rule.pattern}."
    )
    return (
        f"Indexed {counted(files_indexed, 'file')} of {name}: its {rule.source} excludes {rule.pattern} "
        f"({ignored.entries_ignored:,} of the {ignored.entries:,} entries at its top). {remedy}"
    )
