"""`quarry open PATH:LINE`: the editor chosen in Settings (shared with the window and agents), else $VISUAL or
$EDITOR, started for real (a recording stand-in for a terminal editor, which `quarry open` waits for)."""

from __future__ import annotations

import os
import stat

import pytest

from desktop_app import shared_settings
from desktop_app.cli import main
from desktop_app.editor_command import editor_command


@pytest.fixture
def fake_vim(tmp_path):
    """An executable named vim that writes the arguments it was given to a file."""
    record = tmp_path / "args.txt"
    script = tmp_path / "bin" / "vim"
    script.parent.mkdir()
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {record}\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script, record


@pytest.fixture
def no_editor_settings(tmp_path, monkeypatch):
    monkeypatch.setenv("QUARRY_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)


def test_open_uses_the_editor_chosen_in_settings_at_the_line(tmp_path, fake_vim, no_editor_settings, monkeypatch):
    script, record = fake_vim
    monkeypatch.setenv("EDITOR", "nano")  # Settings win over the environment
    shared_settings.set_editor(str(script))
    source = tmp_path / "a.py"
    source.write_text("x = 1\n" * 20)
    assert main(["open", f"{source}:12"]) == 0
    assert record.read_text().split("\n")[:2] == ["+12", str(source.resolve())]
    assert main(["open", f"{source}:7-9"]) == 0  # as `quarry search` prints a result's lines
    assert record.read_text().split("\n")[0] == "+7"


def test_open_falls_back_to_the_environment(tmp_path, fake_vim, no_editor_settings, monkeypatch):
    script, record = fake_vim
    monkeypatch.setenv("VISUAL", str(script))
    source = tmp_path / "name:with:colons.txt"
    source.write_text("hello\n")
    assert main(["open", f"{source}:3:14"]) == 0
    assert record.read_text().split("\n")[:2] == ["+3", str(source.resolve())]


def test_open_a_missing_file_is_one_line_and_exit_2(tmp_path, no_editor_settings, capsys):
    assert main(["open", f"{tmp_path}/nope.py:3"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nope.py" in err and "is not a file" in err


def test_the_setting_survives_a_broken_settings_file(tmp_path, no_editor_settings):
    shared_settings.set_editor("code --wait")
    assert shared_settings.editor() == "code --wait"
    assert editor_command("/p/a.py", 4, {}, chosen=shared_settings.editor()) == ["code", "--wait", "-g", "/p/a.py:4"]
    shared_settings.settings_file().write_text("{not json")
    assert shared_settings.editor() == ""
    shared_settings.set_editor("subl")
    assert shared_settings.editor() == "subl"
    assert not [p for p in os.listdir(shared_settings.settings_file().parent) if p.startswith(".settings-")]
