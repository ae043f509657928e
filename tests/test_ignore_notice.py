"""Ignore rules that leave (nearly) nothing of a folder to index are said out loud, naming the rule."""

from __future__ import annotations

import json
from pathlib import Path

from desktop_app.indexing.file_selection import IgnoredTop, IgnoreRule, select_files

from .reliability import quarry


def _kernel_like(root: Path, gitignore: str) -> None:
    """Debian's linux-source tree: its .gitignore is "/*" with its packaging re-included."""
    for name in ("kernel", "mm", "net", "fs", "drivers", "arch", "include", "lib", "init", "ipc"):
        (root / name).mkdir(parents=True)
        (root / name / "core.c").write_text(f"int {name}_init(void) {{ return 0; }}\n")
    (root / "Makefile").write_text("all:\n")
    (root / "README").write_text("Linux kernel\n")
    (root / ".gitignore").write_text(gitignore)


def test_a_gitignore_of_slash_star_is_named_with_what_it_took(tmp_path):
    _kernel_like(tmp_path, "/*\n!/debian/\n")
    (tmp_path / "debian").mkdir()
    (tmp_path / "debian" / "rules.py").write_text("x = 1\n")
    selection = select_files(tmp_path)
    assert [c.rel_path for c in selection.candidates] == ["debian/rules.py"]
    # 10 folders, the Makefile, the README and the .gitignore itself, of 14 entries (debian/ is re-included).
    assert selection.ignored_top() == IgnoredTop(IgnoreRule(".gitignore", "/*"), 13, 14)


def test_the_rule_from_git_info_exclude_is_named_too(tmp_path):
    _kernel_like(tmp_path, "")
    (tmp_path / ".git" / "info").mkdir(parents=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("# local\n*\n")
    selection = select_files(tmp_path)
    assert selection.candidates == []
    assert selection.ignored_top() == IgnoredTop(IgnoreRule(".git/info/exclude", "*"), 13, 13)


def test_ignoring_a_build_folder_says_nothing(tmp_path):
    _kernel_like(tmp_path, "build/\n*.o\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "kernel" / "core.o").write_bytes(b"\x7fELF")
    selection = select_files(tmp_path)
    assert selection.top_ignored_by == {IgnoreRule(".gitignore", "build/"): 1}
    assert selection.ignored_top() is None


def test_index_says_which_rule_left_no_files_and_json_carries_it(tmp_path):
    root = tmp_path / "linux-source-6.12"
    _kernel_like(root, "/*\n!/debian/\n")
    proc = quarry("index", root, "--db", tmp_path / "index.db", "--until", "keyword", "--json", "--quiet")
    assert proc.returncode == 0, proc.stderr
    stats = json.loads(proc.stdout)
    assert stats["files_indexed"] == 0
    assert stats["ignored_top"] == {
        "rule": {"source": ".gitignore", "pattern": "/*"},
        "entries_ignored": 13,
        "entries": 13,
    }
    lines = proc.stderr.splitlines()
    assert [line for line in lines if "excludes" in line] == [
        "quarry: 0 files: the folder's .gitignore excludes /* (13 of the 13 entries at its top are ignored); "
        "to index them anyway, add a .quarryignore beside it that re-includes them, such as !/*"
    ]
