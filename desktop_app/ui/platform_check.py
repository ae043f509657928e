"""Whether Qt can open a window here, asked before it loads its platform plugin, and said in one line if not.

Where no platform plugin loads, Qt aborts the process (SIGABRT, exit 134) after printing that the "xcb" plugin
was found but could not be loaded, with a hint naming libxcb-cursor0 whichever library is missing: on a
desktop without libxcb-icccm4 and libxcb-keysyms1 that hint named a library that was installed; with no
display at all it printed the same (issue 32 item 11). So before the QApplication exists, the platform Qt
would use (QT_QPA_PLATFORM, or xcb, or Wayland in a Wayland session) is checked as Qt will load it: the
shared libraries its plugin needs that the dynamic loader cannot find (ldd's answer, each confirmed by
loading it), then the display it would connect to. A start that would work is never refused: any platform
this does not know, or any one that passes, lets Qt go on.

The X connection that asks stays open until Qt has connected (`checked_display` holds it): an X server with no
other client resets when its last client leaves (Xvfb, xvfb-run), and a connection arriving during that reset
fails, 19 of 600 times on a quiet machine here, so Qt's own connection right after the probe's failed the same way
("could not connect to display", a CI run under load). A desktop always has another client (its window manager).
"""

from __future__ import annotations

import ctypes
import os
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path

from PySide6.QtCore import QLibraryInfo

_DESCRIBED = {"xcb": "X11", "wayland": "Wayland"}
# Debian/Ubuntu packages whose names do not follow from the library's (libxcb-icccm.so.4 -> libxcb-icccm4).
_PACKAGES = {"libglib-2.0.so.0": "libglib2.0-0", "libgthread-2.0.so.0": "libglib2.0-0"}
_LDD_TIMEOUT_S = 10  # ldd answers in tens of milliseconds; a hung one must not hold the start for ever
_NOT_FOUND = re.compile(r"^\s*(\S+) => not found\s*$", re.MULTILINE)
_CANNOT_OPEN = re.compile(r"(\S+\.so[.\d]*): cannot open shared object file")


@contextmanager
def checked_display(env: Mapping[str, str] = os.environ) -> Iterator[str | None]:
    """`display_problem`, with the connection it made to the display kept open until the block ends: create the
    QApplication inside it."""
    with ExitStack() as held:
        yield display_problem(env, held)


def display_problem(env: Mapping[str, str] = os.environ, held: ExitStack | None = None) -> str | None:
    """One line saying why Qt cannot open a window here, or None when it can (or this cannot tell). A display
    connection that answered is closed by `held` where given, else at once."""
    if not sys.platform.startswith("linux"):
        return None
    requested = [p.split(":")[0].strip() for p in env.get("QT_QPA_PLATFORM", "").split(";") if p.strip()]
    platforms = requested or (["wayland", "xcb"] if env.get("XDG_SESSION_TYPE") == "wayland" else ["xcb"])
    if any(p not in _DESCRIBED for p in platforms):  # offscreen, vnc, eglfs...: Qt's own affair
        return None
    with ExitStack() as own:
        problems = [_problem(platform, env, held if held is not None else own) for platform in platforms]
    if any(p is None for p in problems):
        return None
    found = [p for p in problems if p is not None]
    # A platform with a display but not its libraries says the most; then one whose display does not answer.
    return min(found, key=lambda p: p[0])[1]


def _problem(platform: str, env: Mapping[str, str], held: ExitStack) -> tuple[int, str] | None:
    """(rank, line) of what stops `platform`, the lowest rank the most telling, or None when it should work."""
    name = _DESCRIBED[platform]
    display = _display(platform, env)
    if display is None:
        return 3, (
            "no graphical display to open the window on (neither DISPLAY nor WAYLAND_DISPLAY is set): start "
            "Quarry from a desktop session, or use its commands here: quarry index FOLDER, quarry search QUERY "
            "(see quarry --help)"
        )
    plugins = plugin_files(platform, env)
    if not plugins:
        return (
            0,
            f"Qt's {name} platform plugin (libq{platform}*.so) is missing from this installation; reinstall Quarry",
        )
    missing_by_plugin = [missing_libraries(p, env) for p in plugins]
    if all(missing_by_plugin):
        missing = min(missing_by_plugin, key=len)
        packages = list(dict.fromkeys(debian_package(m) for m in missing))
        return 1, (
            f"cannot open the window: Qt's {name} support needs {', '.join(missing)}, not found on this system; "
            f"on Debian or Ubuntu: sudo apt-get install {' '.join(packages)}"
        )
    if platform == "xcb" and not _x_answers(display, held):
        return 2, (
            f"cannot open the window: the X display {display} (DISPLAY) does not answer or refuses Quarry; start "
            "Quarry from a desktop session, or check DISPLAY and XAUTHORITY"
        )
    return None


def _display(platform: str, env: Mapping[str, str]) -> str | None:
    """The display `platform` would connect to, or None when there is none."""
    if platform == "xcb":
        return env.get("DISPLAY") or None
    socket = env.get("WAYLAND_DISPLAY") or "wayland-0"
    path = Path(socket) if os.path.isabs(socket) else Path(env.get("XDG_RUNTIME_DIR", "/nonexistent")) / socket
    return socket if path.exists() else None


def plugin_files(platform: str, env: Mapping[str, str] = os.environ) -> list[Path]:
    """The plugin files Qt would try for `platform`, in its order: QT_QPA_PLATFORM_PLUGIN_PATH, then each
    QT_PLUGIN_PATH folder's platforms/, then its own plugins folder."""
    folders = [env["QT_QPA_PLATFORM_PLUGIN_PATH"]] if env.get("QT_QPA_PLATFORM_PLUGIN_PATH") else []
    folders += [f"{p}/platforms" for p in env.get("QT_PLUGIN_PATH", "").split(os.pathsep) if p]
    folders.append(f"{QLibraryInfo.path(QLibraryInfo.LibraryPath.PluginsPath)}/platforms")
    files: list[Path] = []
    for folder in folders:
        files += sorted(Path(folder).glob(f"libq{platform}*.so"))
    return files


def missing_libraries(path: Path, env: Mapping[str, str] = os.environ) -> list[str]:
    """The shared libraries `path` needs (directly or through others) that the dynamic loader cannot find."""
    if _opens(path):
        # Every start on a working desktop ends here: loading the plugin (Qt loads it next anyway) takes a
        # millisecond where starting ldd took tens; ldd lists what is missing only once something is.
        return []
    try:
        listed = subprocess.run(
            ["ldd", str(path)], capture_output=True, text=True, env=dict(env), timeout=_LDD_TIMEOUT_S, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):  # no ldd (a minimal system): the loader's own first complaint
        return _first_missing(path)
    return [name for name in dict.fromkeys(_NOT_FOUND.findall(listed)) if not _loads(name)]


def _loads(name: str) -> bool:
    """Whether this process can load the library `name` (confirms ldd: its "not found" must be real)."""
    try:
        ctypes.CDLL(name)
    except OSError:
        return False
    return True


def _opens(path: Path) -> bool:
    try:
        ctypes.CDLL(str(path), mode=os.RTLD_LAZY)
    except OSError:
        return False
    return True


def _first_missing(path: Path) -> list[str]:
    try:
        ctypes.CDLL(str(path), mode=os.RTLD_LAZY)
    except OSError as exc:
        found = _CANNOT_OPEN.search(str(exc))
        return [found.group(1)] if found and found.group(1) != path.name else []
    return []


def debian_package(library: str) -> str:
    """The Debian/Ubuntu package that installs `library` (libxcb-icccm.so.4 -> libxcb-icccm4), by the soname
    rule the distributions follow; the library's own name where it does not fit the rule."""
    if library in _PACKAGES:
        return _PACKAGES[library]
    parsed = re.fullmatch(r"lib(.+)\.so\.(\d+)", library)
    if parsed is None:
        return library
    name, version = parsed.group(1).lower(), parsed.group(2)
    return f"lib{name}{'-' if name[-1].isdigit() else ''}{version}"


def _x_answers(display: str, held: ExitStack) -> bool:
    """Whether the X server at `display` accepts a connection (xcb_connect, as Qt's xcb plugin connects); one
    that does is left for `held` to close."""
    try:
        xcb = ctypes.CDLL("libxcb.so.1")  # the xcb plugin's own: its libraries were found just before
    except OSError:
        return True  # cannot ask: let Qt try
    xcb.xcb_connect.restype = ctypes.c_void_p
    xcb.xcb_connect.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    xcb.xcb_connection_has_error.argtypes = [ctypes.c_void_p]
    xcb.xcb_disconnect.argtypes = [ctypes.c_void_p]
    connection = xcb.xcb_connect(display.encode(), None)
    if xcb.xcb_connection_has_error(connection) != 0:
        xcb.xcb_disconnect(connection)
        return False
    held.callback(xcb.xcb_disconnect, connection)
    return True
