"""The window's search rules, without Qt: which result stays selected when results refresh, what Enter does,
when the open query runs again by itself, whether a change in the index touches it, when a query handed over
by another `quarry` process applies, and which recent searches are the project's.

The window (ui/main_window.py) tells it what the user did and what the engine answered, and asks it what to
do; each rule is tested here alone (tests/test_search_session.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from enum import Enum

from ..search.results import SearchResult
from ..store.rows import HistoryEntry
from ..worker.operations import Change, ChangeNotice

Identity = tuple[str, str, int]  # scope root, path, first line: a result across two answers

# The open query runs again by itself at most this often while its project is being indexed (each run's
# answer redraws the list; more often only flickers).
RERUN_INTERVAL_S = 1.0
HISTORY_SHOWN = 20  # distinct queries offered, newest first


def identity(result: SearchResult) -> Identity:
    return result.scope_root, result.path, result.start_line


class Enter(Enum):
    SEARCH = "search"  # run the bar's query now (and record it in the history)
    OPEN = "open"  # the user picked a result of this very query: show it, do not start over


class SearchSession:
    def __init__(self, clock: Callable[[], float] = time.monotonic, rerun_interval_s: float = RERUN_INTERVAL_S):
        self.clock = clock  # injectable, so tests need not wait on real time
        self.rerun_interval_s = rerun_interval_s
        self.shown_query: str | None = None  # the query whose answer the list shows
        self.chosen: Identity | None = None  # the result the user picked in that answer (None: the top one)
        self.elsewhere = False  # the user opened something outside the list (Quick Open): nothing is selected
        self.handed_query: str | None = None  # handed over by another process, not applied yet
        self.search_on_progress = False  # the last search came too early for the project's first index run
        self._last_rerun = float("-inf")

    # --- the selection --------------------------------------------------------------------------

    def choose(self, result: SearchResult | None) -> None:
        """The user moved to `result` (a click, arrow keys, F4): it stays selected while the list refreshes."""
        self.chosen = identity(result) if result is not None else None
        self.elsewhere = False

    def look_elsewhere(self) -> None:
        """The user opened a file outside the list (Quick Open, Go to Symbol, a dropped file): no result is
        selected beside it, and refreshes of the same query keep it so."""
        self.chosen = None
        self.elsewhere = True

    def answered(self, query: str, hits: Iterable[SearchResult]) -> int | None:
        """An answer for `query` is shown with `hits` in display order: the position to select (None: none).
        The user's pick is kept where it still is, found by what it is (its row moves as results arrive); a new
        query, or a pick no longer in the list, selects the top result, which is not a pick of the user's."""
        if query != self.shown_query:
            self.chosen = None
            self.elsewhere = False
        self.shown_query = query
        if self.elsewhere:
            return None
        if self.chosen is None:
            return 0
        positions = [identity(hit) for hit in hits]
        return positions.index(self.chosen) if self.chosen in positions else 0

    def cleared(self) -> None:
        self.shown_query = None
        self.chosen = None
        self.elsewhere = False

    def enter(self, text: str, has_current: bool) -> Enter:
        """Enter in the search bar: the result the user picked in the answer to this very text is opened; any
        other text (or no pick) is searched for now."""
        if has_current and self.chosen is not None and text == self.shown_query:
            return Enter.OPEN
        return Enter.SEARCH

    # --- running again by itself -----------------------------------------------------------------

    def rerun_due(self) -> bool:
        """An index run of the project reported progress: True (and the clock restarted) when the open query
        should run again for what it added; at most once per `rerun_interval_s`."""
        now = self.clock()
        if now - self._last_rerun < self.rerun_interval_s:
            return False
        self._last_rerun = now
        return True

    @staticmethod
    def touches(notice: ChangeNotice, project: str | None) -> bool:
        """Whether a finished write may change the open project's answers (its content, or the model)."""
        return bool(notice.changes & (Change.CONTENT | Change.MODEL)) and notice.concerns(project)

    # --- a query handed over by another process ---------------------------------------------------

    def hand_over(self, query: str) -> None:
        """`quarry FOLDER --query Q` reached this window: Q waits only until its folder is the project."""
        self.handed_query = query or None

    def edited(self) -> None:
        """The user typed in the search bar: what they type wins over a query handed over earlier."""
        self.handed_query = None

    def take_handed(self) -> str | None:
        """The handed-over query to put in the bar now, once; None if the user typed since it came."""
        query, self.handed_query = self.handed_query, None
        return query

    # --- history ----------------------------------------------------------------------------------

    @staticmethod
    def history(entries: Iterable[HistoryEntry], project: str | None, limit: int = HISTORY_SHOWN) -> list[str]:
        """The project's distinct recent queries, newest first (`entries` newest first, all projects)."""
        queries: list[str] = []
        for entry in entries:
            if project is not None and project not in (entry.scope_root or "").split(","):
                continue
            if entry.query not in queries:
                queries.append(entry.query)
        return queries[:limit]
