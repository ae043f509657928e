"""File selection (walk + ignore rules) and source reading, against real files on disk."""

from __future__ import annotations

import codecs
import hashlib
import os
import pickle
import random
import shutil
import struct
import subprocess
import sys
import time
import traceback
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop_app.indexing.file_selection import Candidate, Selection, SelectionOptions, select_files, select_paths
from desktop_app.indexing.languages import classify
from desktop_app.indexing.source_reader import SkipFile, is_lock_file, read_source

T = TypeVar("T")
OPTIONS = SelectionOptions()


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", newline="")


def symlink(link: Path, target: str | Path) -> None:
    try:
        os.symlink(target, link)
    except (OSError, NotImplementedError):
        pytest.skip("this platform or account cannot create symlinks")


def candidate_paths(root: Path, **kwargs) -> set[str]:
    return {c.rel_path for c in select_files(root, **kwargs).candidates}


def png_bytes() -> bytes:
    """A valid 1x1 RGB PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


# --- the walk: ignore files, default exclusions and skip reasons --------------------------------------


def realistic_tree() -> dict[str, str | bytes]:
    return {
        ".git/HEAD": "ref: refs/heads/main\n",
        ".git/info/exclude": "secret*.md\n",
        # build/ is directory-only; docs/** hides what is in docs/ but not docs/ itself, so the
        # negation can bring one file back; the last line beats .git/info/exclude.
        ".gitignore": "*.txt\n!important.txt\nbuild/\ndocs/**\n!docs/keep.md\nout\n!secret_public.md\n",
        ".quarryignore": "generated/\n!wanted.txt\n",
        "README.md": "# Demo\n",
        "important.txt": "kept by a negation\n",
        "notes.txt": "ignored\n",
        "wanted.txt": ".quarryignore overrides the .gitignore beside it\n",
        "secret_notes.md": "excluded by .git/info/exclude\n",
        "secret_public.md": "re-included by .gitignore\n",
        "build/app.py": "x = 1\n",
        "out/x.py": "x = 1\n",
        "docs/guide.md": "# Guide\n",
        "docs/keep.md": "# Keep\n",
        "docs/old/page.md": "# Old\n",
        "generated/api.py": "x = 1\n",
        # Patterns in a nested .gitignore are relative to its own directory.
        "src/.gitignore": "local_*.py\n!local_keep.py\nREADME/\n",
        "src/app.py": "def main():\n    pass\n",
        "src/my module.py": "x = 1\n",
        "src/café.py": "x = 'é'\n",
        "src/empty.py": "",
        "src/README": "a file named like the directory-only pattern stays\n",
        "src/sub/README/x.md": "# inside an ignored directory\n",
        "src/local_debug.py": "x = 1\n",
        "src/local_keep.py": "x = 1\n",
        "src/vendor/.quarryignore": "*.js\n",
        "src/vendor/lib.js": "var x = 1;\n",
        "src/vendor/lib.py": "x = 1\n",
        "src/__pycache__/app.cpython-311.pyc": b"\x00\x01",
        "node_modules/left-pad/index.js": "module.exports = 1;\n",
        "web/node_modules/x/index.js": "module.exports = 1;\n",
        "web/app.ts": "export const x = 1;\n",
        "web/package-lock.json": "{}\n",
        "web/yarn.lock": "# yarn\n",
        "Cargo.lock": "# cargo\n",
        "go.sum": "example.com/x v1.0.0 h1:abc=\n",
        "uv.lock": "version = 1\n",
        "custom.lock": "anything\n",
        "tools/py env/pyvenv.cfg": "home = /usr/bin\n",
        "tools/py env/lib/site.py": "x = 1\n",
        ".venv/lib/x.py": "x = 1\n",
        ".github/workflows/ci.yml": "on: push\n",
        "logo.png": png_bytes(),
        "big.py": "x = 1\n" * (1024 * 1024 // 6 + 1),
    }


def test_realistic_tree_gives_exact_candidates_and_skip_reasons(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write(root, realistic_tree())

    selection = select_files(root)

    assert [c.rel_path for c in selection.candidates] == [
        ".github/workflows/ci.yml",
        ".gitignore",
        ".quarryignore",
        "README.md",
        "docs/keep.md",
        "important.txt",
        "secret_public.md",
        "src/.gitignore",
        "src/README",
        "src/app.py",
        "src/café.py",
        "src/empty.py",
        "src/local_keep.py",
        "src/my module.py",
        "src/vendor/.quarryignore",
        "src/vendor/lib.py",
        "wanted.txt",
        "web/app.ts",
    ]
    assert dict(selection.skipped) == {
        ".git/": "excluded_dir",
        ".venv/": "excluded_dir",
        "node_modules/": "excluded_dir",
        "src/__pycache__/": "excluded_dir",
        "tools/py env/": "excluded_dir",
        "web/node_modules/": "excluded_dir",
        "build/": "ignored",
        "docs/guide.md": "ignored",
        "docs/old/": "ignored",
        "generated/": "ignored",
        "notes.txt": "ignored",
        "out/": "ignored",
        "secret_notes.md": "ignored",
        "src/local_debug.py": "ignored",
        "src/sub/README/": "ignored",
        "src/vendor/lib.js": "ignored",
        "Cargo.lock": "lock_file",
        "custom.lock": "lock_file",
        "go.sum": "lock_file",
        "uv.lock": "lock_file",
        "web/package-lock.json": "lock_file",
        "web/yarn.lock": "lock_file",
        "logo.png": "not_source",
        "big.py": "too_large",
    }
    assert len(selection.skipped) == len(dict(selection.skipped))  # each path once
    assert selection.skipped == sorted(selection.skipped)
    assert selection.skip_counts() == {
        "excluded_dir": 6,
        "ignored": 10,
        "lock_file": 6,
        "not_source": 1,
        "too_large": 1,
    }


def test_named_files_are_judged_as_the_walk_judges_them(tmp_path: Path) -> None:
    """select_paths, what a watched folder's update reads instead of walking: each file of the realistic tree
    named alone is selected, passed over for the same reason, or (in a folder the walk passes over) in neither
    list, as the walk of the whole tree has it."""
    root = tmp_path / "repo"
    tree = realistic_tree()
    write(root, tree)
    walk = select_files(root)
    selected = {c.rel_path: c for c in walk.candidates}
    skipped = dict(walk.skipped)
    for path in tree:
        if path.rsplit("/", 1)[-1] in (".gitignore", ".quarryignore"):
            assert select_paths(root, [path]) is None, path  # its rules change what else is selected
            continue
        named = select_paths(root, [path])
        assert named is not None, path
        if path in selected:
            assert named.candidates == [selected[path]] and named.skipped == [], path
        elif path in skipped:
            assert named.candidates == [] and named.skipped == [(path, skipped[path])], path
        else:
            assert named.candidates == [] and named.skipped == [], path  # in a folder passed over
    assert select_paths(root, ["src/gone.py", "nowhere/x.py"]) == Selection([], [])
    assert select_paths(root, ["src"]) is None and select_paths(root, ["src/app.py", "web"]) is None
    both = select_paths(root, ["web/app.ts", "src/app.py", "notes.txt"])
    assert both is not None and [c.rel_path for c in both.candidates] == ["src/app.py", "web/app.ts"]
    assert both.skipped == [("notes.txt", "ignored")]


def test_candidate_fields_come_from_the_file_and_classify(tmp_path: Path) -> None:
    write(tmp_path, {"pkg/mod.py": "x = 1\n", "Dockerfile": "FROM scratch\n", "notes.md": "# n\n"})

    for cand in select_files(tmp_path).candidates:
        info = cand.abs_path.stat()
        kind = classify(cand.rel_path)
        assert kind is not None
        assert cand == Candidate(
            cand.rel_path, tmp_path / cand.rel_path, info.st_size, info.st_mtime_ns, kind.language, kind.kind
        )
        assert cand.abs_path.is_absolute()


@pytest.mark.parametrize(
    ("gitignore", "expected"),
    [
        # Each of these is misjudged by pathspec's GitIgnoreSpec.match_file (issues #129, #137).
        ("d/**\n!d/keep.py\n", {"d/keep.py", "top.py", ".gitignore"}),
        ("*\n!*/\n!*.py\n", {"d/keep.py", "d/other.py", "d/sub/deep.py", "top.py"}),
        ("d/**/\n", {"d/keep.py", "d/other.py", "top.py", "d/notes.md", ".gitignore"}),
        ("d\n!d/\n", {"d/keep.py", "d/other.py", "d/sub/deep.py", "top.py", "d/notes.md", ".gitignore"}),
        ("d/\n!d/keep.py\n", {"top.py", ".gitignore"}),  # git cannot re-include a file inside an excluded directory
    ],
)
def test_ignore_semantics_follow_git(tmp_path: Path, gitignore: str, expected: set[str]) -> None:
    write(
        tmp_path,
        {
            ".gitignore": gitignore,
            "top.py": "",
            "d/keep.py": "",
            "d/other.py": "",
            "d/notes.md": "",
            "d/sub/deep.py": "",
        },
    )
    assert candidate_paths(tmp_path) == expected


def test_the_walk_says_how_many_files_it_has_found_as_it_goes(tmp_path: Path) -> None:
    for folder in range(3):
        (tmp_path / f"pkg{folder}").mkdir()
        for i in range(250):
            (tmp_path / f"pkg{folder}" / f"m{i}.py").write_text("x = 1\n")
    (tmp_path / ".gitignore").write_text("pkg2/m1*.py\n")  # 111 files of pkg2: m1, m10-m19, m100-m199
    found: list[int] = []
    selection = select_files(tmp_path, found=found.append)
    assert len(selection.candidates) == 750 - 111 + 1  # the .gitignore is indexed too
    assert len(found) >= 2 and found == sorted(found) and found[-1] <= len(selection.candidates)


def test_unparseable_pattern_is_skipped_like_git_does(tmp_path: Path) -> None:
    write(tmp_path, {".gitignore": "!\n*.md\nbad\\\n", "a.py": "", "b.md": ""})
    assert candidate_paths(tmp_path) == {"a.py", ".gitignore"}


def test_root_that_does_not_exist_raises(tmp_path: Path) -> None:
    # An empty selection would tell the indexer that every file was deleted.
    with pytest.raises(FileNotFoundError):
        select_files(tmp_path / "missing")


_GIT_NAMES = ["a", "b", "d", "src", "build", "keep", "x"]
_GIT_PATTERNS = [
    "*",
    "!*/",
    "!*.txt",
    "*.txt",
    "build/",
    "build",
    "/build",
    "d/**",
    "!d/keep.txt",
    "d/*",
    "!d/",
    "**/x",
    "a/**/b.txt",
    "!keep",
    "!keep/",
    "keep/*",
    "src/",
    "!src/",
    "/a/",
    "a/b/",
    "**/b/",
    "!x.txt",
    "x/",
    "d/**/",
    "!**/keep.txt",
    "b*",
    "!b.txt",
    "[ab].txt",
    "a?/",
]


def _random_tree(root: Path, rng: random.Random, depth: int = 0) -> None:
    for _ in range(rng.randint(1, 4)):
        name = rng.choice(_GIT_NAMES)
        if depth < 3 and rng.random() < 0.45 and not (root / name).is_file():
            (root / name).mkdir(exist_ok=True)
            _random_tree(root / name, rng, depth + 1)
        else:
            (root / f"{name}.txt").write_text("x")
    if rng.random() < 0.5:
        (root / ".gitignore").write_text("\n".join(rng.sample(_GIT_PATTERNS, rng.randint(1, 5))) + "\n")


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git as the reference")
def test_ignore_rules_agree_with_git_on_random_trees(tmp_path: Path) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    for seed in range(40):
        root = tmp_path / str(seed)
        root.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=root, check=True, env=env)
        _random_tree(root, random.Random(seed))
        listed = subprocess.run(
            ["git", "ls-files", "--others", "--exclude-standard", "-z"],
            cwd=root,
            check=True,
            env=env,
            capture_output=True,
            text=True,
        ).stdout
        git_sees = {p for p in listed.split("\0") if p.endswith(".txt")}
        assert {p for p in candidate_paths(root) if p.endswith(".txt")} == git_sees, f"seed {seed}"


# --- reading sources -----------------------------------------------------------------------------------


def test_reading_every_candidate_of_a_mixed_tree(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "latin1.py": "name = 'café'\n".encode("latin-1"),
            "crlf.py": b"a = 1\r\nb = 2\r\n",
            "old_mac.txt": b"one\rtwo\r",
            "utf8_bom.py": codecs.BOM_UTF8 + "x = 'é'\n".encode(),
            "utf16.md": "# Título\r\n".encode("utf-16"),
            "utf16be.md": codecs.BOM_UTF16_BE + "# Größe\n".encode("utf-16-be"),
            "empty.py": b"",
            "ansi.txt": b"\x1b[31mred\x1b[0m\tdone\n",
            "image.py": png_bytes(),
            "controls.txt": b"ab\x01\x02\x03\x04\x05\x06cd\n",
            "bundle.min.js": "var a=1;" * 1000,
            "wide_but_fine.py": "x = '" + "y" * 990 + "'\n",
        },
    )

    outcomes: dict[str, object] = {}
    for cand in select_files(tmp_path).candidates:
        try:
            source = read_source(cand.abs_path, OPTIONS)
        except SkipFile as skip:
            outcomes[cand.rel_path] = skip.reason
        else:
            raw = cand.abs_path.read_bytes()
            assert (source.sha256, source.size) == (hashlib.sha256(raw).hexdigest(), len(raw))
            outcomes[cand.rel_path] = (source.text, source.encoding)

    assert outcomes == {
        "latin1.py": ("name = 'café'\n", "cp1252"),
        "crlf.py": ("a = 1\nb = 2\n", "utf-8"),
        "old_mac.txt": ("one\ntwo\n", "utf-8"),
        "utf8_bom.py": ("x = 'é'\n", "utf-8"),
        "utf16.md": ("# Título\n", "utf-16"),
        "utf16be.md": ("# Größe\n", "utf-16"),
        "empty.py": ("", "utf-8"),
        "ansi.txt": ("\x1b[31mred\x1b[0m\tdone\n", "utf-8"),
        "image.py": "binary",
        "controls.txt": "binary",
        "bundle.min.js": "minified",
        "wide_but_fine.py": ("x = '" + "y" * 990 + "'\n", "utf-8"),
    }


def test_file_deleted_after_selection_has_vanished(tmp_path: Path) -> None:
    write(tmp_path, {"gone.py": "x = 1\n"})
    [cand] = select_files(tmp_path).candidates
    cand.abs_path.unlink()
    with pytest.raises(SkipFile) as info:
        read_source(cand.abs_path, OPTIONS)
    assert info.value.reason == "vanished"


def test_file_that_grew_past_the_limit_is_too_large(tmp_path: Path) -> None:
    write(tmp_path, {"grows.py": "x = 1\n"})
    [cand] = select_files(tmp_path, SelectionOptions(max_file_size=100)).candidates
    cand.abs_path.write_text("x = 1\n" * 100)
    with pytest.raises(SkipFile) as info:
        read_source(cand.abs_path, SelectionOptions(max_file_size=100))
    assert info.value.reason == "too_large"


def test_reading_with_an_unbounded_limit_does_not_allocate_it(tmp_path: Path) -> None:
    write(tmp_path, {"a.py": "x = 1\n"})
    huge = SelectionOptions(max_file_size=1 << 40, max_line_length=1 << 40)
    assert read_source(tmp_path / "a.py", huge).text == "x = 1\n"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_is_never_opened_for_reading(tmp_path: Path) -> None:
    # Opening a FIFO for reading would block until a writer appears; the walk and the reader must not hang.
    os.mkfifo(tmp_path / "pipe.py")
    assert dict(select_files(tmp_path).skipped) == {"pipe.py": "special_file"}
    with pytest.raises(SkipFile) as info:
        read_source(tmp_path / "pipe.py", OPTIONS)
    assert info.value.reason == "unreadable"


def test_directory_in_place_of_a_file_is_unreadable(tmp_path: Path) -> None:
    (tmp_path / "looks_like.py").mkdir()
    with pytest.raises(SkipFile) as info:
        read_source(tmp_path / "looks_like.py", OPTIONS)
    assert info.value.reason == "unreadable"


_SMALL = SelectionOptions(max_file_size=2048, max_line_length=60)
_BOMS = st.sampled_from([b"", codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_LE])
_CONTENT = st.one_of(
    st.binary(max_size=3000),
    st.text(max_size=500).map(lambda s: s.encode("utf-8", "surrogatepass")),
    st.text(alphabet=st.characters(max_codepoint=255), max_size=500).map(lambda s: s.encode("latin-1")),
    st.lists(st.sampled_from([b"\r", b"\n", b"\r\n", b"\x00", b"\x1b", b"\xe9", b"abc", b" " * 70])).map(b"".join),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(bom=_BOMS, content=_CONTENT)
def test_read_source_only_ever_raises_skipfile(tmp_path: Path, bom: bytes, content: bytes) -> None:
    data = bom + content
    path = tmp_path / "random.py"
    path.write_bytes(data)
    try:
        source = read_source(path, _SMALL)
    except SkipFile as skip:
        assert skip.reason in {"too_large", "binary", "minified", "undecodable"}
        return
    assert source.size == len(data) and source.sha256 == hashlib.sha256(data).hexdigest()
    assert "\r" not in source.text
    assert all(len(line) <= _SMALL.max_line_length for line in source.text.split("\n"))


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("package-lock.json", True),
        ("yarn.lock", True),
        ("pnpm-lock.yaml", True),
        ("Cargo.lock", True),
        ("Gemfile.lock", True),
        ("go.sum", True),
        ("bun.lockb", True),
        ("packages.lock.json", True),
        ("whatever.lock", True),
        ("package.json", False),
        ("lock.py", False),
        ("go.mod", False),
    ],
)
def test_is_lock_file(name: str, expected: bool) -> None:
    assert is_lock_file(name) is expected


# --- symlinks --------------------------------------------------------------------------------------------


def test_symlinks_never_leave_the_root_or_loop(tmp_path: Path) -> None:
    root, outside = tmp_path / "repo", tmp_path / "outside"
    write(outside, {"secret.py": "x = 1\n"})
    write(root, {".gitignore": "build/\n", "real/mod.py": "x = 1\n", "build/gen.py": "x = 1\n"})
    symlink(root / "alias", "real")  # a second way into a directory already walked
    symlink(root / "real" / "loop", "..")  # back to an ancestor
    symlink(root / "gen_link", "build")  # into a directory the walk never entered
    symlink(root / "mod_link.py", "real/mod.py")
    symlink(root / "escape.py", "../outside/secret.py")
    symlink(root / "escape_dir", "../outside")
    symlink(root / "abs_escape", outside)
    symlink(root / "dangling.py", "missing.py")
    symlink(root / "ping.py", "pong.py")
    symlink(root / "pong.py", "ping.py")

    selection = select_files(root)

    assert [c.rel_path for c in selection.candidates] == [".gitignore", "gen_link/gen.py", "mod_link.py", "real/mod.py"]
    assert dict(selection.skipped) == {
        "build/": "ignored",
        "alias/": "symlink_loop",
        "real/loop/": "symlink_loop",
        "ping.py": "symlink_loop",
        "pong.py": "symlink_loop",
        "escape.py": "symlink_outside_root",
        "escape_dir/": "symlink_outside_root",
        "abs_escape/": "symlink_outside_root",
        "dangling.py": "dangling_symlink",
    }


def test_a_directory_is_always_listed_under_its_own_path_not_a_link(tmp_path: Path) -> None:
    # Links are examined after every real directory, so the outcome does not depend on listing order.
    for name in ("a", "m", "z"):
        write(tmp_path, {f"{name}/deep/er/x.py": ""})
        symlink(tmp_path / f"{name}_shortcut", f"{name}/deep/er")
        symlink(tmp_path / f"shortcut_{name}", f"{name}/deep")
    selection = select_files(tmp_path)
    assert [c.rel_path for c in selection.candidates] == ["a/deep/er/x.py", "m/deep/er/x.py", "z/deep/er/x.py"]
    assert {reason for _, reason in selection.skipped} == {"symlink_loop"}
    assert len(selection.skipped) == 6


def test_root_reached_through_a_symlink(tmp_path: Path) -> None:
    write(tmp_path / "repo", {"a.py": "", "sub/b.py": ""})
    symlink(tmp_path / "link", "repo")
    symlink(tmp_path / "repo" / "up", "../link")  # the root again, by another name
    selection = select_files(tmp_path / "link")
    assert [c.rel_path for c in selection.candidates] == ["a.py", "sub/b.py"]
    assert selection.skipped == [("up/", "symlink_loop")]


# --- permissions, races and cancelling -------------------------------------------------------------------


def run_without_privileges(fn: Callable[[], T]) -> T:
    """Run fn() where file permissions apply: root ignores them, so a forked child drops to 'nobody'."""
    if os.geteuid() != 0:
        return fn()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        try:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            payload = pickle.dumps(("ok", fn()))
        except BaseException:
            payload = pickle.dumps(("error", traceback.format_exc()))
        with os.fdopen(write_end, "wb") as out:
            out.write(payload)
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as result:
        status, value = pickle.loads(result.read())
    os.waitpid(pid, 0)
    if status != "ok":
        pytest.fail(f"unprivileged child failed:\n{value}")
    return value


@pytest.mark.skipif(sys.platform == "win32" or not hasattr(os, "fork"), reason="POSIX permissions")
def test_permission_denied_is_unreadable_and_the_walk_goes_on(world_tmp: Path) -> None:
    write(world_tmp, {"ok.py": "", "secret.py": "x = 1\n", "locked/inner.py": "", "noexec/a.py": ""})
    (world_tmp / "secret.py").chmod(0o000)  # listed and stat-able, but not readable
    (world_tmp / "locked").chmod(0o000)  # cannot be listed
    (world_tmp / "noexec").chmod(0o644)  # listed, but nothing inside can be stat-ed

    def select_and_read() -> tuple[list[str], list[tuple[str, str]], str]:
        selection = select_files(world_tmp)
        try:
            read_source(world_tmp / "secret.py", OPTIONS)
        except SkipFile as skip:
            reason = skip.reason
        return [c.rel_path for c in selection.candidates], selection.skipped, reason

    candidates, skipped, read_reason = run_without_privileges(select_and_read)

    assert candidates == ["ok.py", "secret.py"]
    assert skipped == [("locked/", "unreadable"), ("noexec/a.py", "unreadable")]
    assert read_reason == "unreadable"


def test_directories_that_change_mid_walk(tmp_path: Path) -> None:
    write(tmp_path, {"keep/a.py": "", "gone/b.py": "", "swapped/c.py": ""})

    def change_tree_once() -> bool:
        # should_stop runs before each directory is entered; the first call comes after the root listing.
        if (tmp_path / "gone").exists():
            shutil.rmtree(tmp_path / "gone")
            shutil.rmtree(tmp_path / "swapped")
            (tmp_path / "swapped").write_text("now a file")
        return False

    selection = select_files(tmp_path, should_stop=change_tree_once)

    assert [c.rel_path for c in selection.candidates] == ["keep/a.py"]
    assert selection.skipped == [("gone/", "vanished"), ("swapped/", "unreadable")]


def test_files_deleted_mid_listing_have_vanished(tmp_path: Path) -> None:
    names = {f"m{i:03}.py" for i in range(600)}
    write(tmp_path, dict.fromkeys(names, ""))

    def delete_everything() -> bool:
        for name in names:
            (tmp_path / name).unlink(missing_ok=True)
        return False

    selection = select_files(tmp_path, should_stop=delete_everything)

    vanished = {rel for rel, reason in selection.skipped if reason == "vanished"}
    assert vanished and {c.rel_path for c in selection.candidates} | vanished == names
    assert {reason for _, reason in selection.skipped} == {"vanished"}


def test_cancel_returns_promptly_with_what_was_gathered(tmp_path: Path) -> None:
    write(tmp_path, {"top.py": "", **{f"d{i}/m.py": "" for i in range(50)}})
    calls = 0

    def stop() -> bool:
        nonlocal calls
        calls += 1
        return True

    assert candidate_paths(tmp_path, should_stop=stop) == {"top.py"}
    assert calls == 1


# --- speed ----------------------------------------------------------------------------------------------


def test_selecting_ten_thousand_files_is_fast(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.log\nbuild/\n!keep.log\n/dist\n**/gen/**\n")
    for d in range(100):
        folder = tmp_path / f"pkg{d:02}" / "sub"
        folder.mkdir(parents=True)
        for i in range(50):
            (folder.parent / f"m{i}.py").write_bytes(b"x = 1\n")
            (folder / f"t{i}.ts").write_bytes(b"let x = 1;\n")

    started = time.perf_counter()
    selection = select_files(tmp_path)
    elapsed = time.perf_counter() - started

    print(f"\nselected {len(selection.candidates)} files in {elapsed * 1000:.0f} ms")
    assert len(selection.candidates) == 10_001  # and the .gitignore


def test_minified_files_are_judged_by_their_shape_not_one_long_line(tmp_path: Path) -> None:
    jsdoc = "/** " + "Thrown when the server answers with an error status; " * 25 + "*/"
    handwritten = (
        jsdoc + "\n" + "".join(f"export class HTTPError{i} extends Error {{\n  status = {i};\n}}\n" for i in range(30))
    )
    write(
        tmp_path,
        {
            "errors.ts": handwritten,  # one 1,400-character line among 90 short ones
            "bundle.js": "var a=" + ",".join(f"x{i}" for i in range(3000)) + ";\n",
            "packed.js": "\n".join(f"function f{i}(a,b){{return a+b*{i};}}" * 36 for i in range(40)),
        },
    )
    assert len(jsdoc) > OPTIONS.max_line_length
    read_source(tmp_path / "errors.ts", OPTIONS)
    for name in ("bundle.js", "packed.js"):
        with pytest.raises(SkipFile) as info:
            read_source(tmp_path / name, OPTIONS)
        assert info.value.reason == "minified", name
