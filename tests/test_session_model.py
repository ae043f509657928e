"""The window's session state without a window: what changes, who hears of it, and what it searches."""

from __future__ import annotations

from desktop_app.search.request import SearchFilters
from desktop_app.session.model import SessionModel
from desktop_app.store.rows import Scope, ScopeSummary


def summary(root: str) -> ScopeSummary:
    return ScopeSummary(Scope(root.strip("/"), "main", root, None, 0.0, 1.0), 3, 9)


def test_observers_hear_each_aspect_once_and_only_when_it_changes():
    session = SessionModel("hybrid")
    heard: list[str] = []
    session.observe(heard.append)
    session.set_project("/a")
    session.set_project("/a")
    session.set_mode("exact")
    session.set_mode("exact")
    session.set_filters(SearchFilters(languages=("python",)))
    session.set_filters(SearchFilters(languages=("python",)))
    session.set_scopes([summary("/a")])
    assert heard == ["project", "mode", "filters", "scopes"]


def test_the_project_list_offers_indexed_folders_and_the_open_one():
    session = SessionModel()
    session.set_scopes([summary("/b"), summary("/a")])
    session.set_project("/c")
    assert session.project_roots() == ["/a", "/b", "/c"]
    assert session.project_scope is None
    session.set_project("/b")
    assert session.project_scope is not None and session.project_scope.files == 3


def test_each_indexed_folder_is_watched_once_until_the_engine_restarts():
    session = SessionModel()
    session.set_scopes([summary("/a")])
    assert session.roots_to_watch() == ["/a"]
    session.set_scopes([summary("/a"), summary("/b")])
    assert session.roots_to_watch() == ["/b"]
    assert session.roots_to_watch() == []
    session.set_scopes([summary("/b")])  # /a removed from the index: indexed again later, it is watched again
    session.set_scopes([summary("/a"), summary("/b")])
    assert session.roots_to_watch() == ["/a"]
    session.forget_watches()
    assert session.roots_to_watch() == ["/a", "/b"]


def test_a_request_needs_a_project_and_a_query_and_carries_mode_and_filters():
    session = SessionModel("semantic")
    assert session.request("retry", 30) is None
    session.set_project("/a")
    assert session.request("   ", 30) is None
    session.set_filters(SearchFilters(globs=("src/**",)))
    request = session.request("retry", 30, record_history=False)
    assert request is not None
    assert (request.roots, request.mode, request.k, request.filters.globs, request.record_history) == (
        ("/a",),
        "semantic",
        30,
        ("src/**",),
        False,
    )
