"""Linux desktop integration: install Quarry's desktop entry and icons for the current user.

`quarry --install-desktop-entry` copies resources/quarry.desktop to $XDG_DATA_HOME/applications, with
Exec pointing at the Quarry that is running (a bundle, a pip install or `python -m desktop_app`), and
the icons to $XDG_DATA_HOME/icons/hicolor/<size>/apps, as the freedesktop.org specifications lay out.
Desktops then list Quarry in their menus and offer "Open with Quarry" on folders (MimeType=inode/directory).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from .assets import resource_path

# The desktop file's name without .desktop: the window announces it (QGuiApplication.setDesktopFileName),
# which is how a Wayland compositor matches the window to the entry and its icon.
APP_ID = "quarry"
DESKTOP_FILE = f"{APP_ID}.desktop"

# Characters that make an Exec argument need double quotes (Desktop Entry Specification, "The Exec key").
_RESERVED = frozenset(" \t\n\"'\\><~|&;$*?#()`")


def data_home(environ: Mapping[str, str] = os.environ) -> Path:
    """$XDG_DATA_HOME, or ~/.local/share when it is unset or relative (the spec says to ignore a relative one)."""
    value = environ.get("XDG_DATA_HOME", "")
    return Path(value) if os.path.isabs(value) else Path.home() / ".local" / "share"


def launch_command() -> list[str]:
    """The command that starts this same Quarry again, whichever way it was installed."""
    if getattr(sys, "frozen", False):  # a PyInstaller bundle: its executable is the program
        return [sys.executable]
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if script is not None and script.name != "__main__.py" and script.is_file():
        return [str(script.absolute())]  # the `quarry` script pip installed
    return [sys.executable, "-m", "desktop_app"]


def exec_value(command: Sequence[str]) -> str:
    """The Exec value that runs `command` with the selected folders appended (%F)."""
    return " ".join(_exec_arg(arg) for arg in command) + " %F"


def _exec_arg(arg: str) -> str:
    arg = arg.replace("%", "%%")  # a lone % would be read as a field code
    # Quote empty and unprintable arguments too: unquoted, a desktop would drop them or split on them.
    if not arg or any(char in _RESERVED or not char.isprintable() for char in arg):
        arg = '"' + re.sub(r'(["`$\\])', r"\\\1", arg) + '"'
    # The Exec value is also an escaped string, so each backslash is written twice.
    return arg.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")


def desktop_entry(command: Sequence[str]) -> str:
    """resources/quarry.desktop with its Exec line set to run `command`."""
    template = resource_path(DESKTOP_FILE).read_text(encoding="utf-8")
    entry, count = re.subn(r"(?m)^Exec=.*$", lambda _: f"Exec={exec_value(command)}", template)
    if count != 1:
        raise ValueError(f"{resource_path(DESKTOP_FILE)} must have exactly one Exec line, not {count}")
    return entry


def icon_files() -> list[Path]:
    """Quarry's icons in the hicolor theme's layout: <size>/apps/quarry.png and scalable/apps/quarry.svg."""
    return sorted(resource_path("icons", "hicolor").glob(f"*/apps/{APP_ID}.*"))


def install(data_dir: Path, command: Sequence[str]) -> list[Path]:
    """Write the desktop entry and icons under `data_dir`; returns the files written. Safe to run again."""
    written = [_write(data_dir / "applications" / DESKTOP_FILE, desktop_entry(command).encode("utf-8"))]
    hicolor = resource_path("icons", "hicolor")
    for icon in icon_files():
        written.append(_write(data_dir / "icons" / "hicolor" / icon.relative_to(hicolor), icon.read_bytes()))
    _refresh_mime_cache(data_dir / "applications")
    return written


def install_for_current_user() -> int:
    """`quarry --install-desktop-entry`: install, say what was written, return the exit status."""
    if sys.platform in ("darwin", "win32"):
        print(
            "quarry: --install-desktop-entry is for Linux desktops; on macOS drag Quarry.app to Applications, "
            "on Windows run QuarrySetup",
            file=sys.stderr,
        )
        return 2
    command = launch_command()
    for path in install(data_home(), command):
        print(f"wrote {path}")
    print(f'Quarry is in the applications menu and in "Open with" for folders; it starts with: {exec_value(command)}')
    return 0


def _write(path: Path, data: bytes) -> Path:
    # Write beside the target, then rename: a desktop watching the folder never reads half a file.
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    partial.write_bytes(data)
    os.replace(partial, path)
    return path


def _refresh_mime_cache(applications: Path) -> None:
    # Some desktops build "Open with" from mimeinfo.cache rather than by reading every entry; refresh it
    # when the tool is there. Without it the entry still works, so a failure here is not an error.
    tool = shutil.which("update-desktop-database")
    if tool is not None:
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            subprocess.run([tool, "-q", str(applications)], capture_output=True, timeout=30, check=False)
