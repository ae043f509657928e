"""Part 2 of the reliability issue: odd files in one real tree, indexed end to end.

Each odd file is either indexed with the right text or skipped with a counted reason, and the run completes.
"""

from __future__ import annotations

import codecs
import hashlib
import json
import os
import sys
import threading
import time
from pathlib import Path

import pytest

from desktop_app.indexing.indexer import Indexer
from desktop_app.search.pipeline import Searcher
from desktop_app.search.request import SearchRequest
from desktop_app.store.sqlite.store import SqliteStore

from .reliability import check_invariants, file_rows, quarry_as_nobody

_SJIS = '# 日本語のコメント\ndef shift_jis_func():\n    return "こんにちは"\n'
_GBK = '# 中文注释\ndef gbk_func():\n    return "你好世界"\n'
# name -> (content, a symbol defined in it that a search must find)
INDEXABLE: dict[str, tuple[bytes, str]] = {
    "with space.py": (b"def spaced_out_function():\n    return 'spaces'\n", "spaced_out_function"),
    "na\u00efve_\u00fcn\u00efcode.py": (b"def cafe_au_lait():\n    return 1\n", "cafe_au_lait"),
    "\u65e5\u672c\u8a9e/\u30e2\u30b8\u30e5\u30fc\u30eb.py": (
        b"def japanese_greeting():\n    return 2\n",
        "japanese_greeting",
    ),
    "crlf.py": (b"def windows_line_endings():\r\n    return 42\r\n", "windows_line_endings"),
    "latin.py": ("# caf\xe9 cr\xe8me\ndef latin_dessert():\n    return 3\n".encode("latin-1"), "latin_dessert"),
    "utf16.py": (codecs.BOM_UTF16_LE + "def utf_sixteen():\n    return 16\n".encode("utf-16-le"), "utf_sixteen"),
    "broken.py": (b"def broken_utf8_bytes():\n    return '\xff\xfe\xc3'\n", "broken_utf8_bytes"),
    "grows.py": (b"def growing_file():\n    return 4\n", "growing_file"),
    # Read as Windows-1252, these were indexed as mojibake that no search for their words found.
    "sjis.py": (_SJIS.encode("shift_jis"), "shift_jis_func"),
    "gbk.py": (_GBK.encode("gbk"), "gbk_func"),
    "mixed.py": (
        "# \u00fcber \u2014 ".encode() + "caf\xe9\n".encode("latin-1") + b"def mixed_bytes():\n    pass\n",
        "mixed_bytes",
    ),
}
DECODED = {
    "sjis.py": _SJIS.rstrip("\n"),
    "gbk.py": _GBK.rstrip("\n"),
    "mixed.py": "# \u00fcber \u2014 caf\xe9\ndef mixed_bytes():\n    pass",
    "crlf.py": "def windows_line_endings():\n    return 42",
    "latin.py": "# caf\xe9 cr\xe8me\ndef latin_dessert():\n    return 3",
    "utf16.py": "def utf_sixteen():\n    return 16",
}
EXPECTED_SKIPS = {  # files; a looping folder link is counted in folders_skipped
    "symlink_loop": 2,
    "dangling_symlink": 1,
    "special_file": 1,
    "unreadable": 1,
    "vanished": 1,
    "minified": 1,
    "undecodable_name": 1,
    "undecodable": 1,
}


def _build(root: Path) -> None:
    for name, (content, _) in INDEXABLE.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(content)
    (root / "empty.py").write_bytes(b"")
    (root / "undecodable.py").write_bytes(b"def odd():\n    return '\x81 \x8d \x90 \x9d'\n")  # no codec reads it
    (root / "bundle.min.js").write_text("var a=" + ",".join(f"x{i}" for i in range(3000)) + ";\n")
    (root / "vanishes.py").write_text("def going_away():\n    pass\n")
    (root / os.fsdecode(b"bad\xffname.py")).write_text("def badly_named():\n    pass\n")
    os.symlink(".", root / "loop")
    os.symlink("b.py", root / "a.py")
    os.symlink("a.py", root / "b.py")
    os.symlink("nowhere.py", root / "dangling.py")
    os.mkfifo(root / "fifo")
    os.symlink("fifo", root / "pipe.py")  # a .py name that opens a FIFO: the reader refuses it


class _Grower:
    """Appends lines to a file from another thread for as long as it runs."""

    def __init__(self, path: Path):
        self._path = path
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with open(self._path, "a") as f:
            n = 0
            while not self._stop.is_set():
                f.write(f"# appended line {n}\n")
                f.flush()
                n += 1
                time.sleep(0.001)

    def __enter__(self) -> _Grower:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs, symlinks and byte file names are POSIX")
def test_odd_files_are_indexed_or_skipped_with_a_reason(tmp_path, embedder):
    root = tmp_path / "odd"
    root.mkdir()
    _build(root)
    db = tmp_path / "index.db"
    store = SqliteStore(db)
    try:

        def vanish_once_listed(progress) -> None:
            if progress.phase == "started":  # the walk has listed it; reading comes next
                (root / "vanishes.py").unlink(missing_ok=True)

        with _Grower(root / "grows.py"):
            stats = Indexer(store, embedder).index(root, vanish_once_listed)
        assert not stats.cancelled and stats.skipped == EXPECTED_SKIPS and stats.folders_skipped == {"symlink_loop": 1}
        assert (
            stats.files_skipped
            == sum(EXPECTED_SKIPS.values())
            == len([p for p, _ in stats.skipped_paths if not p.endswith("/")])
        )
        assert stats.files_indexed == len(INDEXABLE) + 1  # and empty.py, with no chunks
        _assert_stored_text(store, root)
        searcher = Searcher(store, embedder)
        for name, (_, symbol) in INDEXABLE.items():
            top = searcher.search(SearchRequest(symbol, roots=(str(root),), record_history=False)).results[0]
            assert (top.path, top.symbol_name) == (name, symbol)
        for words, name in (("日本語", "sjis.py"), ("你好", "gbk.py"), ("— café", "mixed.py")):
            found = searcher.search(SearchRequest(words, roots=(str(root),), mode="text", record_history=False))
            assert [r.path for r in found.results] == [name], words

        again = Indexer(store, embedder).index(root)  # the grown file is read again, the rest is unchanged
        assert (again.files_changed, again.files_deleted) == (1, 1)
        grown = (root / "grows.py").read_bytes()
        assert file_rows(db, ("path", "sha256"))["grows.py"] == (hashlib.sha256(grown).hexdigest(),)
    finally:
        store.close()
    check_invariants(db, blank_files=True)


def _assert_stored_text(store: SqliteStore, root: Path) -> None:
    rows = {
        path: row
        for path, *row in store._rows(
            "SELECT f.path, f.size, f.sha256, group_concat(chunk_text_of(c.text), char(10)) FROM file f "
            "LEFT JOIN file_chunk fc ON fc.file_id = f.id LEFT JOIN chunk c ON c.id = fc.chunk_id "
            "WHERE f.status = 'indexed' GROUP BY f.id"
        )
    }
    assert set(rows) == {*INDEXABLE, "empty.py"}
    assert rows["empty.py"][2] is None
    for name, text in DECODED.items():
        assert rows[name][2] == text
    assert "\ufffd" in rows["broken.py"][2] or "\xff" in rows["broken.py"][2]
    # The growing file was indexed as it stood at one moment: a prefix of what is on disk now.
    size, sha256, text = rows["grows.py"]
    assert hashlib.sha256((root / "grows.py").read_bytes()[:size]).hexdigest() == sha256
    assert text.startswith("def growing_file():")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="drops to 'nobody' from root")
def test_permission_denied_files_and_folders_are_skipped_by_a_real_unprivileged_run(world_tmp):
    root = world_tmp / "repo"
    (root / "locked").mkdir(parents=True)
    (root / "readable.py").write_text("def open_to_everyone():\n    return 1\n")
    (root / "secret.py").write_text("def top_secret():\n    return 2\n")
    (root / "locked" / "inner.py").write_text("def hidden_inside():\n    return 3\n")
    (root / "secret.py").chmod(0o000)
    (root / "locked").chmod(0o000)
    store_dir = world_tmp / "store"
    store_dir.mkdir(mode=0o777)
    store_dir.chmod(0o777)
    db = store_dir / "index.db"

    proc = quarry_as_nobody("index", root, "--db", db, "--json", "--quiet")
    assert proc.returncode == 0, proc.stderr
    stats = json.loads(proc.stdout)
    assert stats["skipped"] == {"unreadable": 1} and stats["folders_skipped"] == {"unreadable": 1}
    assert sorted(map(tuple, stats["skipped_paths"])) == [("locked/", "unreadable"), ("secret.py", "unreadable")]
    assert stats["files_indexed"] == 1
    assert file_rows(db) == {"readable.py": ("indexed", None), "secret.py": ("skipped", "unreadable")}
    found = quarry_as_nobody("search", "open_to_everyone", "--root", root, "--db", db, "--json")
    assert found.returncode == 0, found.stderr
    assert [r["path"] for r in json.loads(found.stdout)["results"]] == ["readable.py"]
