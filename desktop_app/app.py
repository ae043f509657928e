"""The desktop app: Qt application, qasync loop and main window, plus the headless `--screenshot` run."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

# PySide6 before qasync, so qasync binds to PySide6 rather than whichever Qt binding it finds first.
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication  # isort: split

import qasync

from .bridge import EngineBridge
from .desktop_entry import APP_ID, icon_files
from .errors import UsageError
from .indexing.file_selection import SelectionOptions
from .indexing.indexer import IndexOptions
from .store.location import StoreLocation, default_location
from .ui.app_settings import AppSettings
from .ui.main_window import MIN_SIZE, MainWindow
from .ui.platform_check import checked_display
from .ui.refcount_guard import guard_singleton_refcounts
from .ui.single_instance import InstanceChannel, channel_name, hand_over
from .worker.engine import EngineConfig

SCREENSHOT_SIZE = (1280, 800)


class ScreenshotFailed(Exception):
    pass


def run_gui(args: argparse.Namespace) -> int:
    """Start the window (or take the screenshot) and return the process exit status."""
    if args.screenshot is not None and (args.root is None or not args.query):
        raise UsageError("--screenshot needs --root PATH and --query TEXT to have something to show")
    guard_singleton_refcounts()
    existing = QApplication.instance()
    if isinstance(existing, QApplication):
        app = existing
    else:
        # Asked before Qt loads its platform plugin, which aborts the process if it cannot.
        with checked_display() as problem:
            if problem is not None:
                print(f"quarry: {problem}", file=sys.stderr)
                return 1
            app = QApplication(sys.argv[:1])
    app.setApplicationName("Quarry")
    app.setOrganizationName("Quarry")
    app.setDesktopFileName(APP_ID)
    app.setWindowIcon(application_icon())
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    settings = AppSettings()
    bridge = EngineBridge()
    config = engine_config(args, settings)
    channel: InstanceChannel | None = None
    if args.screenshot is None:
        name = channel_name(str(config.location))
        root = str(Path(args.root).expanduser().resolve()) if args.root is not None else None
        if hand_over(name, {"root": root, "query": args.query}):
            print(f"quarry: {root or 'Quarry'} opens in the window already open", file=sys.stderr)
            bridge.shutdown()
            return 0
        channel = InstanceChannel(name)
    window = MainWindow(bridge, settings, persist=args.screenshot is None)
    window.local_location = local_location(args)
    if channel is not None:
        channel.received.connect(window.take_over)
    try:
        with loop:
            if args.screenshot is not None:
                return loop.run_until_complete(_screenshot_or_error(window, config, args))
            window.show()
            window.spawn(_open_at_start(window, config, args))
            loop.run_forever()
            _cancel_pending(loop)
            return 0
    finally:
        bridge.shutdown()


def application_icon() -> QIcon:
    """The icon at every size it is drawn in, so title bars, task switchers and docks get a sharp one."""
    icon = QIcon()
    for path in icon_files():
        if path.suffix == ".png":  # the SVG would need Qt's SVG plugin and adds nothing over 16..512 px PNGs
            icon.addFile(str(path))
    return icon


def local_location(args: argparse.Namespace) -> StoreLocation:
    """This computer's index: --db, QUARRY_DB, or the file in the per-user data directory."""
    return StoreLocation.of(args.db) if args.db else default_location()


def engine_config(args: argparse.Namespace, settings: AppSettings) -> EngineConfig:
    """The engine's configuration: command-line options first (--db, QUARRY_DB), then the user's saved
    settings (a team index), then this computer's own index."""
    provider = args.provider if args.provider != "auto" else settings.provider
    explicit = args.db or os.environ.get("QUARRY_DB")
    return EngineConfig(
        local_location(args) if explicit or not settings.team_index else StoreLocation.of(settings.team_index),
        model=args.model if args.model is not None else settings.model,
        model_dir=args.model_dir or settings.model_dir,
        provider=provider,
        index_options=IndexOptions(selection=SelectionOptions(max_file_size=settings.max_file_size)),
    )


async def _open_at_start(window: MainWindow, config: EngineConfig, args: argparse.Namespace) -> None:
    if not await window.start(config):
        return
    if args.root is not None:
        # The query is searched as soon as the folder is the project, while it indexes (a key typed first wins),
        # not once the whole first index is done.
        await window.open_with_query(args.root, args.query)
    elif args.query:
        window.search_bar.setText(args.query)
        window.search_now()


async def _screenshot_or_error(window: MainWindow, config: EngineConfig, args: argparse.Namespace) -> int:
    try:
        await take_screenshot(window, config, args.root, args.query, args.screenshot)
    except ScreenshotFailed as exc:
        print(f"quarry: {exc}", file=sys.stderr)
        return 1
    finally:
        window.close()
    return 0


async def take_screenshot(window: MainWindow, config: EngineConfig, root: Path, query: str, out: Path) -> None:
    """Open `root` (indexing what changed), search for `query`, preview the first hit and save a PNG."""
    window.resize(max(SCREENSHOT_SIZE[0], MIN_SIZE[0]), max(SCREENSHOT_SIZE[1], MIN_SIZE[1]))
    window.show()
    if not await window.start(config, interactive=False):
        raise ScreenshotFailed(window.banner.text() or f"cannot open the index {config.location}")
    stats = await window.open_project(root)
    if stats is None:
        raise ScreenshotFailed(window.banner.text() or f"could not index {root}")
    window.search_bar.setText(query)
    task = window.search_now()
    response = await task if task is not None else None
    if response is None:
        raise ScreenshotFailed(window.banner.text() or f"the search for {query!r} did not answer")
    if response.results and window.preview.task is not None:
        await window.preview.task
    else:
        print(f"quarry: no results for {query!r}; the screenshot shows an empty list", file=sys.stderr)
    QApplication.processEvents()  # settle layouts before grabbing
    pixmap = window.grab()
    if not pixmap.save(str(out), "PNG"):
        raise ScreenshotFailed(f"cannot write the PNG to {out}; check that its folder exists and is writable")
    print(f"saved {out} ({pixmap.width()}×{pixmap.height()}, {len(response.results)} results)")


def _cancel_pending(loop: asyncio.AbstractEventLoop) -> None:
    """Let tasks still waiting on the engine finish cancelling before the loop closes."""
    pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
