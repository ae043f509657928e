"""Linux desktop integration: the desktop entry and icons a user installs, and "Open with Quarry" on a folder."""

from __future__ import annotations

import configparser
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from desktop_app import desktop_entry
from desktop_app.assets import resource_path
from desktop_app.cli import main
from desktop_app.desktop_entry import data_home, exec_value, install, install_for_current_user, launch_command

ICON_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def read_entry(path: Path) -> dict[str, str]:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # desktop entry keys are case-sensitive
    parser.read(path, encoding="utf-8")
    return dict(parser["Desktop Entry"])


def exec_argv(value: str) -> list[str]:
    """Read an Exec value back as the Desktop Entry Specification says: string escapes, then arguments
    (space-separated, whole-argument double quotes in which \\ escapes " ` $ and \\), then %% (%F dropped)."""
    unescaped = re.sub(r"\\(.)", lambda m: {"s": " ", "n": "\n", "t": "\t", "r": "\r"}.get(m[1], m[1]), value)
    args = [
        re.sub(r'\\(["`$\\])', r"\1", quoted) if quoted or not bare else bare
        for quoted, bare in re.findall(r'"((?:\\.|[^"\\])*)"|([^ ]+)', unescaped)
    ]
    return [arg.replace("%%", "%") for arg in args if arg != "%F"]


def installed_files(data_dir: Path) -> set[Path]:
    return {p for p in data_dir.rglob("*") if p.is_file() and p.name != "mimeinfo.cache"}


def test_install_writes_the_entry_and_every_icon_under_the_data_dir(tmp_path):
    data_dir = tmp_path / "share"
    written = install(data_dir, ["/opt/quarry/quarry"])

    entry_path = data_dir / "applications" / "quarry.desktop"
    icons = [data_dir / "icons" / "hicolor" / f"{s}x{s}" / "apps" / "quarry.png" for s in ICON_SIZES]
    svg = data_dir / "icons" / "hicolor" / "scalable" / "apps" / "quarry.svg"
    assert set(written) == installed_files(data_dir) == {entry_path, *icons, svg}
    for icon in (*icons, svg):
        source = resource_path("icons", "hicolor", *icon.relative_to(data_dir / "icons" / "hicolor").parts)
        assert icon.read_bytes() == source.read_bytes()
    assert icons[0].read_bytes().startswith(b"\x89PNG")

    entry = read_entry(entry_path)
    assert entry["Exec"] == "/opt/quarry/quarry %F"
    assert entry["Name"] == "Quarry" and entry["Icon"] == "quarry" and entry["Type"] == "Application"
    assert entry["Terminal"] == "false" and entry["Categories"] == "Development;"
    assert entry["MimeType"] == "inode/directory;"
    assert entry["StartupWMClass"] == "Quarry"  # Qt's X11 window class is the application name


def test_installing_again_replaces_the_files_and_leaves_nothing_behind(tmp_path):
    data_dir = tmp_path / "share"
    install(data_dir, ["/old/place/quarry"])
    before = installed_files(data_dir)
    install(data_dir, ["/new/place/quarry"])

    assert installed_files(data_dir) == before
    assert not [p for p in data_dir.rglob(".*")]  # no partial files
    assert read_entry(data_dir / "applications" / "quarry.desktop")["Exec"] == "/new/place/quarry %F"


@given(
    st.lists(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\0")), min_size=1, max_size=4)
)
def test_exec_value_reads_back_as_the_same_command(command):
    value = exec_value(command)
    assert value.endswith(" %F") and "\n" not in value
    assert exec_argv(value) == command


def test_exec_quotes_paths_with_spaces_and_shell_characters():
    assert exec_value(["/home/ann/My Apps/quarry"]) == '"/home/ann/My Apps/quarry" %F'
    assert exec_value(["/opt/q$1/quarry", "-m"]) == '"/opt/q\\\\$1/quarry" -m %F'
    assert exec_value(["/opt/100%/quarry"]) == "/opt/100%%/quarry %F"


def test_data_home_follows_xdg_data_home_and_ignores_a_relative_one(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert data_home({"XDG_DATA_HOME": "/srv/share"}) == Path("/srv/share")
    assert data_home({"XDG_DATA_HOME": "relative/share"}) == tmp_path / ".local" / "share"
    assert data_home({}) == tmp_path / ".local" / "share"


def test_launch_command_is_the_running_quarry(monkeypatch, tmp_path):
    script = tmp_path / "bin" / "quarry"
    script.parent.mkdir()
    script.write_text("#!/usr/bin/env python3\n")
    monkeypatch.setattr(sys, "argv", [str(script), "--install-desktop-entry"])
    assert launch_command() == [str(script)]

    monkeypatch.setattr(sys, "argv", [str(Path(desktop_entry.__file__).with_name("__main__.py"))])
    assert launch_command() == [sys.executable, "-m", "desktop_app"]

    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", "/opt/quarry/quarry")
    assert launch_command() == ["/opt/quarry/quarry"]


def test_the_shipped_entry_is_valid():
    tool = shutil.which("desktop-file-validate")
    if tool is None:
        pytest.skip("desktop-file-validate (Debian package desktop-file-utils) is not installed")
    proc = subprocess.run([tool, str(resource_path("quarry.desktop"))], capture_output=True, text=True)
    assert proc.returncode == 0 and not proc.stdout.strip(), proc.stdout


def run_quarry(*args: object, env: dict[str, str], timeout: int = 180) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "desktop_app", *map(str, args)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=timeout,
    )


def test_python_m_desktop_app_installs_the_desktop_entry(tmp_path):
    env = {"XDG_DATA_HOME": str(tmp_path / "share")}
    first = run_quarry("--install-desktop-entry", env=env)
    assert first.returncode == 0, first.stderr
    entry_path = tmp_path / "share" / "applications" / "quarry.desktop"
    assert f"wrote {entry_path}" in first.stdout.splitlines()
    assert len([line for line in first.stdout.splitlines() if line.startswith("wrote ")]) == len(ICON_SIZES) + 2
    assert exec_argv(read_entry(entry_path)["Exec"]) == [sys.executable, "-m", "desktop_app"]

    again = run_quarry("--install-desktop-entry", env=env)
    assert again.returncode == 0 and again.stdout == first.stdout, again.stderr


def test_other_systems_are_told_where_their_integration_is(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    monkeypatch.setattr(sys, "platform", "darwin")
    assert install_for_current_user() == 2
    assert "Quarry.app" in capsys.readouterr().err and not list(tmp_path.iterdir())


def test_a_folder_on_the_command_line_opens_as_the_project(tmp_path, mixed_root):
    """What "Open with Quarry" runs: `quarry FOLDER`, here with a screenshot to see the folder was opened."""
    shot = tmp_path / "shot.png"
    proc = run_quarry(
        mixed_root,
        "--query",
        "retry",
        "--screenshot",
        shot,
        "--db",
        tmp_path / "i.db",
        env={"QT_QPA_PLATFORM": "offscreen", "XDG_CONFIG_HOME": str(tmp_path / "config")},
    )
    assert proc.returncode == 0, proc.stderr
    assert shot.read_bytes().startswith(b"\x89PNG")
    assert re.search(r"saved .*, [1-9]\d* results\)", proc.stdout), proc.stdout


def test_an_argument_that_is_neither_a_folder_nor_a_command_is_a_usage_error(tmp_path, capsys):
    assert main([str(tmp_path / "no-such-folder")]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_the_window_icon_has_every_size(qapp):
    from desktop_app.app import application_icon

    sizes = {size.width() for size in application_icon().availableSizes()}
    assert sizes == set(ICON_SIZES)
