"""Text mode (issue 14, item 1): every line where a literal or a regex occurs, as ripgrep finds it in the indexed
files, backed by the store's trigram index. Real index files, real `rg`, real `quarry` processes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import apsw
import pytest

from desktop_app.search import text_search
from desktop_app.search.bounded_re import BoundedRe
from desktop_app.search.request import SearchError, SearchRequest, TextOptions
from desktop_app.search.text_pattern import TextPattern
from desktop_app.search.text_search import _Engines, _Lines, _matches
from desktop_app.store.sqlite.store import SqliteStore
from desktop_app.worker import ops

from .old_schemas import old_copy
from .reliability import one_line_error, quarry
from .ripgrep import needs_rg, rg_matches


def _indexed_files(db: Path) -> list[str]:
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return sorted(r[0] for r in conn.execute("SELECT path FROM file"))
    finally:
        conn.close()


def _quarry(worker, root: Path, pattern: str, **options) -> set[tuple[str, int, int, int]]:
    response = worker.run(
        ops.search(
            SearchRequest(
                pattern, roots=(str(root),), mode="text", k=100, text=TextOptions(**options), record_history=False
            )
        )
    ).result(timeout=60)
    assert response.text_complete and response.files_matched == len(response.results) <= 100
    return {(r.path, m["line"], m["start_col"], m["end_col"]) for r in response.results for m in r.matches}


@needs_rg
@pytest.mark.parametrize(
    ("pattern", "options", "rg_flags"),
    [
        ("retry", {}, ("-i", "-F")),
        ("Retry", {"case_sensitive": True}, ("-s", "-F")),
        ("self.", {}, ("-i", "-F")),  # a literal with a regex character
        ("in", {}, ("-i", "-F")),  # too short for the trigram index: every chunk is read
        ("attempts", {"word": True}, ("-i", "-F", "-w")),
        (r"def \w+\(self", {"regex": True}, ("-i",)),
        (r"^\s*(pub )?fn [a-z_]+", {"regex": True, "case_sensitive": True}, ("-s",)),
        (r"retry|Matrix", {"regex": True}, ("-i",)),
        (r"[A-Z][a-z]+Error", {"regex": True, "case_sensitive": True}, ("-s",)),
        ("response.status_code", {}, ("-i", "-F")),
        (r"_{2}init_{2}\(", {"regex": True}, ("-i",)),  # repeated literals: their copies are the needle
        (r"\bht{2,}p", {"regex": True}, ("-i",)),
    ],
)
def test_text_mode_finds_what_ripgrep_finds_in_the_indexed_files(
    mixed_root, mixed_index, worker_for, tmp_path, pattern, options, rg_flags
):
    db = tmp_path / "index.db"
    shutil.copy(mixed_index[0], db)
    worker = worker_for(db)
    expected = rg_matches(mixed_root, pattern, *rg_flags, paths=tuple(_indexed_files(db)))
    assert expected, "the pattern must occur in the repository for the comparison to mean anything"
    assert _quarry(worker, mixed_root, pattern, **options) == expected


@needs_rg
def test_places_read_a_slice_of_files_at_a_time_find_what_ripgrep_finds(
    mixed_root, mixed_index, worker_for, tmp_path, monkeypatch
):
    # As a search whose needle is in too many chunks to read their places by chunk (the Linux kernel's), with
    # slices of 2, 4, 8... files so that a small repository takes several.
    monkeypatch.setattr(text_search, "PLACES_BY_CHUNK", 0)
    monkeypatch.setattr(text_search, "FIRST_FILES", 2)
    db = tmp_path / "index.db"
    shutil.copy(mixed_index[0], db)
    worker = worker_for(db)
    files = tuple(_indexed_files(db))
    for pattern, options, flags in [
        ("retry", {}, ("-i", "-F")),
        ("in", {}, ("-i", "-F")),
        (r"def \w+\(self", {"regex": True}, ("-i",)),
    ]:
        assert _quarry(worker, mixed_root, pattern, **options) == rg_matches(mixed_root, pattern, *flags, paths=files)
    first = worker.run(ops.search(SearchRequest("e", roots=(str(mixed_root),), mode="text", k=3))).result(timeout=60)
    every = worker.run(ops.search(SearchRequest("e", roots=(str(mixed_root),), mode="text", k=100))).result(timeout=60)
    assert not first.text_complete and every.text_complete
    assert [(r.path, r.matches) for r in first.results] == [(r.path, r.matches) for r in every.results][:3]


@needs_rg
def test_the_team_index_finds_what_ripgrep_finds_too(mixed_root, mixed_index, mixed_team_index, worker_for):
    worker = worker_for(mixed_team_index)
    files = _indexed_files(mixed_index[0])
    for pattern, options, flags in [
        ("retry", {}, ("-i", "-F")),
        ("100%_", {}, ("-i", "-F")),  # LIKE's wildcards, taken literally
        (r"def \w+\(self", {"regex": True}, ("-i",)),
    ]:
        assert _quarry(worker, mixed_root, pattern, **options) == rg_matches(
            mixed_root, pattern, *flags, paths=tuple(files)
        ), pattern


def test_text_mode_follows_changes_to_the_index_and_lists_files_in_path_order(mixed_copy, worker_for):
    root, db = mixed_copy
    worker = worker_for(db)
    (root / "src" / "zebra.py").write_text("def stripes():\n    return 'zzquux marks'\n")
    (root / "src" / "cache.py").unlink()
    worker.run(ops.index(root)).result(timeout=300)
    response = worker.run(ops.search(SearchRequest("zzquux", roots=(str(root),), mode="text"))).result(timeout=60)
    assert [(r.path, r.matches) for r in response.results] == [
        ("src/zebra.py", [{"line": 2, "start_col": 12, "end_col": 18, "text": "    return 'zzquux marks'"}])
    ]
    gone = worker.run(ops.search(SearchRequest("OrderedDict", roots=(str(root),), mode="text"))).result(timeout=60)
    assert "src/cache.py" not in {r.path for r in gone.results}  # its chunks left the trigram index too
    every = worker.run(ops.search(SearchRequest("e", roots=(str(root),), mode="text", k=3))).result(timeout=60)
    assert [r.path for r in every.results] == sorted(r.path for r in every.results)
    assert len(every.results) == 3 and every.files_matched >= 3  # stopped once the first 3 files were whole
    complete = worker.run(ops.search(SearchRequest("e", roots=(str(root),), mode="text", k=100))).result(timeout=60)
    assert complete.text_complete and [r.path for r in complete.results][:3] == [r.path for r in every.results]
    assert [r.matches for r in complete.results][:3] == [r.matches for r in every.results]  # and whole


def test_an_index_made_before_text_mode_gets_its_trigram_index_when_opened(tmp_path, mixed_index, mixed_root):
    db = tmp_path / "index.db"
    old_copy(
        mixed_index[0],
        db,
        1,  # as schema 1 left it: what came after is made again
        "DROP TRIGGER chunk_text_insert; DROP TRIGGER chunk_text_delete; DROP TABLE chunk_text; "
        "DROP TABLE file_outline; DROP TABLE chunk_text_pending; DROP TABLE vector_sign; "
        "DROP TABLE vector_sign_complete; DROP TRIGGER file_chunk_delete; "
        "DROP TRIGGER chunk_count_insert; DROP TRIGGER chunk_count_delete",
    )
    store = SqliteStore(db)
    try:
        assert len(store.chunks_containing(["fetch_with_retry"])) >= 1
    finally:
        store.close()


def test_needles_are_what_every_match_must_contain():
    assert TextPattern("was never awaited").needles() == [["was never awaited"]]
    assert TextPattern("ab").needles() == []
    assert TextPattern(r"def\s+get_event_loop", regex=True).needles() == [["get_event_loop", "def"]]
    assert TextPattern(r"\w+Error", regex=True).needles() == [["Error"]]
    assert TextPattern(r"(TODO|FIXME)", regex=True).needles() == [["TODO"], ["FIXME"]]  # one branch or the other
    assert TextPattern(r"(foo|ba)x", regex=True).needles() == []  # no literal of 3 is certain
    assert TextPattern(r"colou?r", regex=True).needles() == [["colo"]]
    # A repeated literal is its copies, run on into what comes before and after it.
    assert TextPattern(r"x{4}y", regex=True).needles() == [["xxxxy"]]
    assert TextPattern(r"ax{4,}y", regex=True).needles() == [["axxxx", "xxxxy"]]
    assert TextPattern(r"_{5,}[a-z]", regex=True).needles() == [["_____"]]
    assert TextPattern(r"(?:foo){1,3}bar", regex=True).needles() == [["foobar", "foo"]]
    assert TextPattern(r"a{0,3}bcd", regex=True).needles() == [["bcd"]]
    assert TextPattern(r"(a|b){3}cd", regex=True).needles() == []
    assert TextPattern(r"q{900}", regex=True).needles() == [["q" * 32]]
    with pytest.raises(SearchError, match="invalid regular expression"):
        TextPattern("(unclosed", regex=True).compiled()


def test_the_cli_prints_matches_like_grep_and_json_with_columns(mixed_root, mixed_index, tmp_path):
    db = tmp_path / "index.db"
    shutil.copy(mixed_index[0], db)
    text = quarry("search", "fetch_with_retry", "--mode", "text", "--root", mixed_root, "--db", db)
    assert text.returncode == 0, text.stderr
    assert "src/http_client.py:21:5:def fetch_with_retry(url, policy=None, timeout=10):" in text.stdout
    as_json = quarry("search", "FETCH_WITH", "--mode", "text", "--root", mixed_root, "--db", db, "--json")
    payload = json.loads(as_json.stdout)
    match = payload["results"][0]["matches"][0]
    assert (match["line"], match["start_col"], match["end_col"]) == (21, 4, 14)
    assert payload["files_matched"] >= 1 and payload["matches_total"] >= 1
    one_line_error(
        quarry("search", "(unclosed", "--mode", "text", "--regex", "--root", mixed_root, "--db", db),
        2,
        "invalid regular expression",
    )
    one_line_error(quarry("search", "x", "--regex", "--root", mixed_root, "--db", db), 2, "--mode text")


@pytest.mark.parametrize(
    "pattern",
    [r"[A-Z][a-zA-Z]+Exception\b", r"^\s*def \w+", r"\bfoo\b|bar$", r"ret(urn|ry)\s+\d+", "x.y", r"\W+\d", "caf."],
)
@pytest.mark.parametrize("word", [False, True])
def test_re2_finds_exactly_what_re_finds(pattern, word):
    """RE2 runs a batch (several times faster) and `re` the lines RE2 may read otherwise (the letters beyond ASCII
    its \\w and \\b do not know, here é): both together must give the lines and columns `re` alone gives, chunk
    edges included."""
    texts = [
        "class FooException(Exception):\n    def run(self):\n        return 42",
        "foo = bar\nretry  7 # IOException x.y\n\tdef  go():",
        "bar\n  def f(): raise ValueException\nfoo",
        "# café foo ÉtéException\nrétry 7 x.y foo\ndef été(): return 3",
    ]
    text = TextPattern(pattern, regex=True, word=word)
    engines = _Engines(text, BoundedRe(), 60)
    assert engines.re2 is not None
    fast = _matches(engines, _Lines(text.needles(), False), texts)
    engines.re2 = None  # the same search with `re` alone
    slow = _matches(engines, _Lines(text.needles(), False), texts)
    assert fast == slow and fast and not engines.stopped, pattern


def test_text_re2_cannot_match_alike_is_searched_with_re():
    # `re`'s \s takes \x0b (and \x1c-\x1f), RE2's does not: that line goes to `re`
    spaced = TextPattern(r"a\sb", regex=True)
    found = _matches(_Engines(spaced, BoundedRe(), 60), _Lines([], False), ["xa\x0bb\na b"])
    assert found == [(0, {(0, 1): (4, "xa\x0bb"), (1, 0): (3, "a b")})]
    for refused in (r"(?<=a)b", r"[[:alpha:]]+", r"ab{,2}", r"(?U)a+", "(a)\\1", "ı", "[À-ž]"):  # refused, or read
        assert TextPattern(refused, regex=True).compiled_re2() is None, refused  # otherwise (ı ignoring case)
    assert TextPattern("ı", regex=True, case_sensitive=True).compiled_re2() is not None
