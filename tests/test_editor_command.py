"""Opening a result in the user's editor: the right line syntax for each editor family."""

from __future__ import annotations

import pytest

from desktop_app.editor_command import editor_command, installed_editors, line_arguments


@pytest.mark.parametrize(
    ("editor", "expected"),
    [
        ("code", ["code", "-g", "/p/a.py:12"]),
        ("code --wait", ["code", "--wait", "-g", "/p/a.py:12"]),
        ("/usr/bin/codium", ["/usr/bin/codium", "-g", "/p/a.py:12"]),
        ("subl -w", ["subl", "-w", "/p/a.py:12"]),
        ("vim", ["vim", "+12", "/p/a.py"]),
        ("nvim", ["nvim", "+12", "/p/a.py"]),
        ("nano", ["nano", "+12", "/p/a.py"]),
        ("emacsclient -c", ["emacsclient", "-c", "+12", "/p/a.py"]),
        ("/opt/idea/bin/idea", ["/opt/idea/bin/idea", "--line", "12", "/p/a.py"]),
        ("pycharm", ["pycharm", "--line", "12", "/p/a.py"]),
        ("'/Applications/My Editor/bin/unknown-editor'", ["/Applications/My Editor/bin/unknown-editor", "/p/a.py"]),
    ],
)
def test_editor_families_get_their_line_syntax(editor, expected):
    assert editor_command("/p/a.py", 12, {"EDITOR": editor}) == expected


def test_visual_wins_over_editor_and_blank_values_are_ignored():
    assert editor_command("/p/a.py", 3, {"VISUAL": "subl", "EDITOR": "vim"}) == ["subl", "/p/a.py:3"]
    assert editor_command("/p/a.py", 3, {"VISUAL": "  ", "EDITOR": "vim"}) == ["vim", "+3", "/p/a.py"]


def test_no_editor_means_the_system_opener():
    assert editor_command("/p/a.py", 3, {}) is None


def test_windows_style_programs_and_bad_lines():
    assert line_arguments(r"C:\Program Files\Microsoft VS Code\Code.exe", "a.py", 7) == ["-g", "a.py:7"]
    assert line_arguments("WebStorm64.exe", "a.ts", 7) == ["--line", "7", "a.ts"]
    assert editor_command("/p/a.py", 0, {"EDITOR": "vim"}) == ["vim", "+1", "/p/a.py"]  # lines start at 1
    assert editor_command("/p/a.py", 3, {"EDITOR": "vim 'unbalanced"}) == ["vim 'unbalanced", "/p/a.py"]


def test_settings_offers_the_editors_found_on_path(tmp_path):
    """Issue 14, item 4: presets of the editors this computer has, a terminal editor said to open in one."""
    for name in ("code", "nvim", "not-an-editor"):
        program = tmp_path / name
        program.write_text("#!/bin/sh\n")
        program.chmod(0o755)
    (tmp_path / "subl").write_text("not executable")
    assert installed_editors({"PATH": str(tmp_path)}) == [("VS Code", "code"), ("Neovim (in a terminal)", "nvim")]
