"""Issue 29, items 8 and 9 (reliability round 3: N21, N27, N54, N55): every text-mode pattern ends.

RE2 runs every pattern it accepts on any text; `re` runs the rest, and the lines RE2 may read otherwise, in a
child process stopped after QUARRY_REGEX_BUDGET_MS. Real index, real `quarry` processes, a real MCP server.
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from desktop_app.search.bounded_re import BoundedRe
from desktop_app.search.request import SearchError
from desktop_app.search.text_pattern import TextPattern
from desktop_app.search.text_search import _Engines, _Lines

from .mcp_client import McpSession
from .reliability import one_line_error, quarry

# `re` tries about 2^60 ways to match it over 60 a's and a "!": no machine finishes.
CATASTROPHIC = "(a+)+$"
ONLY_RE = "(?<!x)(a+)+$"  # the same with a look-behind, which RE2 refuses
LINE = "a" * 60 + "!"
SMALL_BUDGET = {"QUARRY_REGEX_BUDGET_MS": "100"}


@pytest.fixture(scope="module")
def cafe(tmp_path_factory):
    """A folder whose one file has a character beyond ASCII (which put every chunk of it on `re`) and the line
    of 60 a's, indexed up to its keyword stage."""
    root = tmp_path_factory.mktemp("regex-bounds") / "u"
    root.mkdir()
    (root / "cata_utf8.py").write_text(f'# café\ndef g():\n    s = "{LINE}"\n    return s\n', encoding="utf-8")
    db = root.parent / "index.db"
    proc = quarry("index", root, "--db", db, "--until", "keyword", "--quiet")
    assert proc.returncode == 0, proc.stderr
    return root, db


def _search(cafe, pattern: str, *options: str, env: dict | None = None) -> dict:
    root, db = cafe
    # The timeout only keeps a failing run from hanging the suite.
    proc = quarry("search", pattern, "--mode", "text", "--regex", *options, "--root", root, "--db", db, "--json",
                  env=env, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("word", [(), ("--word",)])
def test_a_catastrophic_pattern_over_text_beyond_ascii_is_answered_in_full(cafe, word):
    """N55: with --word, or in a file with an é, `re` ran it and never ended (Ctrl+C did nothing)."""
    none = _search(cafe, CATASTROPHIC, *word)
    assert (none["files_matched"], none["matches_total"], none["complete"], none["notice"]) == (0, 0, True, None)
    found = _search(cafe, "(a+)+!", *word)  # the line is searched, not skipped
    assert [(m["line"], m["start_col"], m["end_col"]) for m in found["results"][0]["matches"]] == [(3, 9, 70)]


def test_a_pattern_only_re_can_run_is_stopped_after_its_budget(cafe):
    stopped = _search(cafe, ONLY_RE, env=SMALL_BUDGET)
    assert stopped["complete"] is False and "took too long (over 0.1 s)" in stopped["notice"], stopped
    # `re` runs what it can finish: under the default budget, as a loaded CI machine (five busy processes on two
    # cores) did not start the child and match within 100 ms once.
    assert _search(cafe, "(?<!x)a+!")["matches_total"] == 1
    root, db = cafe
    shown = quarry("search", ONLY_RE, "--mode", "text", "--regex", "--root", root, "--db", db, env=SMALL_BUDGET)
    assert shown.returncode == 0 and "note: the regular expression took too long" in shown.stdout, shown
    assert "before it stopped" in shown.stdout and "raise -k" not in shown.stdout, shown.stdout  # -k is no help


def test_a_repetition_too_large_is_an_invalid_pattern(cafe):
    """N54: `a{99999999999}` raised OverflowError, a traceback and exit 1."""
    root, db = cafe
    for pattern in ("a{99999999999}", "(?:" * 1000 + ")" * 1000):  # OverflowError; RecursionError
        proc = quarry("search", pattern, "--mode", "text", "--regex", "--root", root, "--db", db)
        one_line_error(proc, 2, "invalid regular expression")
    proc = quarry("search", "x", "--mode", "text", "--root", root, "--db", db, env={"QUARRY_REGEX_BUDGET_MS": "soon"})
    one_line_error(proc, 2, "QUARRY_REGEX_BUDGET_MS must be a whole number")


def test_the_mcp_server_answers_a_catastrophic_pattern_and_goes_on(cafe, tmp_path, monkeypatch):
    """N27: the search took the server's one worker for good, and later calls timed out; N21: an invalid pattern
    is a tool error, not "Quarry failed"."""
    root, db = cafe
    monkeypatch.setenv("QUARRY_REGEX_BUDGET_MS", SMALL_BUDGET["QUARRY_REGEX_BUDGET_MS"])
    server = McpSession(["mcp", "--db", str(db)], root, tmp_path / "err")
    try:
        answer = server.ok("search", query=CATASTROPHIC, mode="text", regex=True)
        assert (answer["results"], answer["complete"]) == ([], True)
        stopped = server.ok("search", query=ONLY_RE, mode="text", regex=True)
        assert stopped["complete"] is False and "took too long" in stopped["notice"]
        assert [d["symbol"] for d in server.ok("find_symbol", name="g")["definitions"]] == ["g"]
        assert "invalid regular expression" in server.error("search", query="a{99999999999}", mode="text", regex=True)
    finally:
        server.close()


def test_the_child_is_stopped_when_its_time_is_up_and_started_again():
    bounded = BoundedRe()
    assert bounded.find(CATASTROPHIC, re.MULTILINE, [(5, LINE, [(0, len(LINE))])], 0.05) is None
    assert bounded.find("a+!", re.MULTILINE, [(5, LINE, [(0, len(LINE))])], 60) == [(5, 66)]
    child = bounded._child
    assert child is not None
    child.kill()  # as Ctrl+C in a terminal ends it between two searches
    child.wait()
    assert bounded.find("a+!", re.MULTILINE, [(0, LINE, [(0, len(LINE))])], 60) == [(0, 61)]
    bounded.close()


# Pieces of patterns and of text where RE2 and `re` could part: letters, digits and spaces beyond ASCII, the
# characters case folding joins (k and the Kelvin sign, s and ſ, i, İ and ı), \b and \B between them, empty
# matches (`re` then looks for a longer one at the same place), and syntax both read.
_ATOMS = ["a", "é", "ß", "k", "\u212a", "i", "ı", "İ", "_", "1", "٣", "-", " ", ".", r"\w", r"\d", r"\S", r"\b",
          r"\B", "^", "$", "[a-c]", "[é-ü]", "(?:a|é)", "ſ", r"\.", r"\x41", r"\0"]  # fmt: skip
_CHARS = "abcéÉßKk\u212aiIıİ_1٣- .xſs\tA\x0b\xa0\u2003"
_QUANTIFIERS = ["", "*", "+", "?", "{2}", "{1,3}", "*?", "+?"]
_pattern = st.lists(st.tuples(st.sampled_from(_ATOMS), st.sampled_from(_QUANTIFIERS)), min_size=1, max_size=4)
_text = st.lists(st.text(_CHARS, max_size=12), min_size=1, max_size=4).map("\n".join)
_BOUNDED = BoundedRe()  # one child for every example


@given(_pattern, _text, st.booleans(), st.booleans())
@example([(".", "*?")], "ßs٣é\n\xa0", True, False)  # an empty match first, then one character at each place
@example([(r"\B", ""), ("([é-ü]|\\B)", "+")], "cıééaı", False, False)  # RE2's \B holds inside ı's two bytes
@example([("i", ""), ("\u212a", "")], "ık İK Ik", False, False)  # İ and ı are i to `re`
def test_re2_and_re_together_find_what_re_finds(parts, text, word, case_sensitive):
    """None of these patterns can match a line end, so `re` over the whole text is the yardstick."""
    pattern = TextPattern("".join(a + q for a, q in parts), regex=True, case_sensitive=case_sensitive, word=word)
    try:
        expected = pattern.compiled()
    except SearchError:  # not a pattern `re` takes
        return
    engines = _Engines(pattern, _BOUNDED, 60)

    def real(spans):
        return sorted((s, e) for s, e in spans if s < e and "\n" not in text[s:e])

    found = engines.find(text, _Lines([], case_sensitive), [(0, len(text))])
    assert real(found) == real(m.span() for m in expected.finditer(text))
