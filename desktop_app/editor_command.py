"""The command line that opens a file at a line in the user's editor: the one chosen in Settings (shared by
the window, `quarry open` and agents), else $VISUAL, then $EDITOR.

Plain Python so it can be tested without Qt; None means "no editor configured, use the system opener".
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Mapping
from pathlib import PurePath

# Executable names (lowercase, without .exe / .cmd) grouped by how they take a line number.
_GOTO_FLAG = {"code", "code-insiders", "codium", "vscodium", "cursor", "windsurf"}  # -g file:line
_COLON_SUFFIX = {"subl", "sublime_text", "zed", "mate", "atom", "hx", "helix"}  # file:line
_PLUS_LINE = {
    "vi",
    "vim",
    "nvim",
    "gvim",
    "mvim",
    "view",
    "nano",
    "pico",
    "emacs",
    "emacsclient",
    "micro",
    "kak",
    "joe",
    "jed",
    "ne",
    "mg",
    "kate",
    "gedit",
    "xed",
    "pluma",
}  # +line file
_LINE_FLAG = {
    "idea",
    "idea64",
    "pycharm",
    "pycharm64",
    "charm",
    "webstorm",
    "webstorm64",
    "clion",
    "clion64",
    "goland",
    "goland64",
    "rider",
    "rider64",
    "phpstorm",
    "phpstorm64",
    "rubymine",
    "rubymine64",
    "rustrover",
    "rustrover64",
    "datagrip",
    "studio",
    "studio64",
    "fleet",
}  # --line N file
_TERMINAL = {"vi", "vim", "nvim", "view", "nano", "pico", "micro", "kak", "joe", "jed", "ne", "mg", "hx", "helix"}


def editor_command(
    path: str | PurePath, line: int, env: Mapping[str, str] | None = None, chosen: str = ""
) -> list[str] | None:
    """argv that opens `path` at `line` in the `chosen` editor (a command line, from Settings) or else the
    environment's, or None when none is configured."""
    env = os.environ if env is None else env
    for value in (chosen.strip(), env.get("VISUAL", "").strip(), env.get("EDITOR", "").strip()):
        if value:
            try:
                words = shlex.split(value)
            except ValueError:  # unbalanced quotes: take the value as one program name
                words = [value]
            if words:
                return words + line_arguments(words[0], str(path), max(1, line))
    return None


def line_arguments(program: str, path: str, line: int) -> list[str]:
    """The arguments `program` needs to open `path` at `line`; just the path for editors we do not know."""
    name = _program_name(program)
    if name in _GOTO_FLAG:
        return ["-g", f"{path}:{line}"]
    if name in _COLON_SUFFIX:
        return [f"{path}:{line}"]
    if name in _PLUS_LINE:
        return [f"+{line}", path]
    if name in _LINE_FLAG:
        return ["--line", str(line), path]
    return [path]


def runs_in_terminal(program: str) -> bool:
    """Editors that draw in a terminal: started from the window, they need a terminal window of their own."""
    return _program_name(program) in _TERMINAL


def _program_name(program: str) -> str:
    name = PurePath(program.replace("\\", "/")).name.lower()
    for suffix in (".exe", ".cmd", ".bat", ".sh", ".app"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


# Editors offered in Settings, by the command that starts them; only those on PATH are listed.
PRESETS = (
    ("VS Code", "code"),
    ("Cursor", "cursor"),
    ("VSCodium", "codium"),
    ("IntelliJ IDEA", "idea"),
    ("PyCharm", "pycharm"),
    ("WebStorm", "webstorm"),
    ("GoLand", "goland"),
    ("CLion", "clion"),
    ("Rider", "rider"),
    ("RustRover", "rustrover"),
    ("Sublime Text", "subl"),
    ("Zed", "zed"),
    ("Helix", "hx"),
    ("Emacs", "emacs"),
    ("Neovim", "nvim"),
    ("Vim", "vim"),
    ("Kate", "kate"),
    ("gedit", "gedit"),
    ("nano", "nano"),
)


def installed_editors(env: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """(name, command) of the PRESETS found on PATH; a terminal editor's name says it opens in a terminal.
    Looks on disk: callers in a window run it off the UI thread."""
    path = (os.environ if env is None else env).get("PATH", "")
    out = []
    for name, command in PRESETS:
        if shutil.which(command, path=path):
            out.append((f"{name} (in a terminal)" if command in _TERMINAL else name, command))
    return out
