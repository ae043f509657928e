"""The window's search rules without a window (desktop_app/session/search_session.py)."""

from __future__ import annotations

from desktop_app.search.results import SearchResult
from desktop_app.session.search_session import Enter, SearchSession, identity
from desktop_app.store.rows import HistoryEntry
from desktop_app.worker.operations import Change, ChangeNotice


def hit(path: str, line: int = 1) -> SearchResult:
    return SearchResult(
        path, line, line + 5, 0.5, "both", "python", "function", None, None, None, "", None, "full", "/repo"
    )


A, B, C = hit("a.py"), hit("b.py"), hit("c.py", 7)


def test_a_refresh_keeps_the_users_pick_by_what_it_is_or_the_top_result():
    session = SearchSession()
    assert session.answered("cache", [A, B, C]) == 0
    # Nothing picked: a refresh that moves the top result selects the new top, not where the old one went.
    assert session.answered("cache", [B, C, A]) == 0
    session.choose(C)
    assert session.answered("cache", [C, A, B]) == 0
    assert session.answered("cache", [A, B, C]) == 2  # the pick, wherever it is now
    assert session.answered("cache", [A, B]) == 0  # gone: the top one, and the pick waits in case it returns
    assert session.answered("cache", [B, C]) == 1
    assert session.answered("cache evict", [B, C]) == 0 and session.chosen is None  # a new query starts over
    session.choose(B)
    session.cleared()
    assert session.answered("cache evict", [A, B]) == 0


def test_enter_opens_the_pick_of_this_very_query_and_searches_otherwise():
    session = SearchSession()
    session.answered("cache", [A, B])
    assert session.enter("cache", has_current=True) is Enter.SEARCH  # the top result is not a pick
    session.choose(B)
    assert session.enter("cache", has_current=True) is Enter.OPEN
    assert session.enter("cache evict", has_current=True) is Enter.SEARCH  # typed on since
    assert session.enter("cache", has_current=False) is Enter.SEARCH


def test_reruns_while_indexing_come_at_most_once_per_interval():
    now = [100.0]
    session = SearchSession(clock=lambda: now[0], rerun_interval_s=1.0)
    assert session.rerun_due()
    now[0] += 0.5
    assert not session.rerun_due()
    now[0] += 0.5
    assert session.rerun_due()
    assert not session.rerun_due()


def test_a_change_touches_the_search_only_when_it_changes_the_projects_answers():
    touches = SearchSession.touches
    assert touches(ChangeNotice("index", Change.CONTENT | Change.SCOPES, ("/repo",)), "/repo")
    assert touches(ChangeNotice("reembed", Change.MODEL, ()), "/repo")  # the whole index
    assert not touches(ChangeNotice("index", Change.CONTENT, ("/other",)), "/repo")
    assert not touches(ChangeNotice("remove", Change.SCOPES, ("/repo",)), "/repo")
    assert not touches(ChangeNotice("index", Change.CONTENT, ()), None)


def test_a_handed_over_query_applies_once_and_never_over_what_the_user_typed():
    session = SearchSession()
    session.hand_over("kestrel")
    assert session.take_handed() == "kestrel"
    assert session.take_handed() is None
    session.hand_over("kestrel")
    session.edited()
    assert session.take_handed() is None


def test_history_offers_the_projects_distinct_queries_newest_first():
    def entry(query: str, roots: str | None) -> HistoryEntry:
        return HistoryEntry(0.0, query, roots, "hybrid", 1, None, 1.0)

    entries = [entry("b", "/repo"), entry("x", "/other"), entry("a", "/other,/repo"), entry("b", "/repo")]
    assert SearchSession.history(entries, "/repo") == ["b", "a"]
    assert SearchSession.history(entries, None) == ["b", "x", "a"]
    assert SearchSession.history(entries, "/repo", limit=1) == ["b"]


def test_identity_names_a_result_across_answers():
    assert identity(C) == ("/repo", "c.py", 7)


def test_a_file_opened_outside_the_list_leaves_nothing_selected_until_a_new_query():
    session = SearchSession()
    session.answered("cache", [A, B])
    session.choose(B)
    session.look_elsewhere()  # Quick Open
    assert session.answered("cache", [A, B]) is None  # a refresh selects nothing beside the file shown
    assert session.enter("cache", has_current=False) is Enter.SEARCH
    session.choose(A)  # back in the list
    assert session.answered("cache", [B, A]) == 1
    session.look_elsewhere()
    assert session.answered("cache evict", [A, B]) == 0  # a new query: its top result
