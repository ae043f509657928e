"""The window's session: the open project, the indexed folders, which of them are followed on disk, and the
search mode and filters.

Qt-free (napari's ViewerModel/QtViewer split): the window draws it and observes it, and whatever changes it
(a menu, a dropped folder, a change notice from the engine) goes through these methods. Observers hear the
name of the aspect that changed: "project", "scopes", "mode" (and text mode's switches) or "filters".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..search.request import Mode, SearchFilters, SearchRequest, TextOptions
from ..store.rows import ScopeSummary

Observer = Callable[[str], None]


class SessionModel:
    def __init__(self, mode: Mode = "hybrid"):
        self.project: str | None = None  # the folder searched (a root path), indexed or not yet
        self.scopes: dict[str, ScopeSummary] = {}  # the index's folders by root
        self.bases: dict[str, ScopeSummary] = {}  # a team index's repository bases by id (not folders)
        self.mode = mode
        self.filters = SearchFilters()
        self.text = TextOptions()  # how text mode reads the query
        self._watched: set[str] = set()  # roots whose changes on disk the engine follows
        self._observers: list[Observer] = []

    def observe(self, observer: Observer) -> None:
        self._observers.append(observer)

    def _notify(self, aspect: str) -> None:
        for observer in self._observers:
            observer(aspect)

    # --- the project ----------------------------------------------------------------------------

    def set_project(self, root: str | None) -> None:
        if root != self.project:
            self.project = root
            self._notify("project")

    @property
    def project_scope(self) -> ScopeSummary | None:
        return self.scopes.get(self.project or "")

    def project_roots(self) -> list[str]:
        """Every folder the project list offers: the indexed ones and the open project."""
        return sorted(set(self.scopes) | ({self.project} if self.project else set()))

    # --- the index's folders --------------------------------------------------------------------

    @property
    def project_base(self) -> ScopeSummary | None:
        """On a team index, the repository base the project's overlay lies over."""
        scope = self.project_scope
        return self.bases.get(scope.scope.parent_id or "") if scope is not None else None

    def set_scopes(self, summaries: Iterable[ScopeSummary]) -> None:
        summaries = list(summaries)
        self.bases = {s.scope.id: s for s in summaries if s.scope.type == "base"}
        self.scopes = {s.scope.root: s for s in summaries if s.scope.type != "base"}
        self._watched &= self.scopes.keys()  # a removed folder is no longer followed (the engine stopped)
        self._notify("scopes")

    def roots_to_watch(self) -> list[str]:
        """Indexed folders not followed on disk yet, now counted as followed (the caller starts the watches)."""
        new = sorted(self.scopes.keys() - self._watched)
        self._watched.update(new)
        return new

    def forget_watches(self) -> None:
        """The engine restarted: it follows nothing until asked again."""
        self._watched.clear()

    # --- how to search --------------------------------------------------------------------------

    def set_mode(self, mode: Mode) -> None:
        if mode != self.mode:
            self.mode = mode
            self._notify("mode")

    def set_text_options(self, text: TextOptions) -> None:
        """Regex, case and whole-word switches of text mode (heard as a change of "mode")."""
        if text != self.text:
            self.text = text
            self._notify("mode")

    def set_filters(self, filters: SearchFilters) -> None:
        if filters != self.filters:
            self.filters = filters
            self._notify("filters")

    def request(
        self, query: str, k: int, record_history: bool = True, relative_cutoff: float = 0.0
    ) -> SearchRequest | None:
        """The search for `query` in the open project, or None when there is nothing to search for or in."""
        if not query.strip() or self.project is None:
            return None
        return SearchRequest(
            query=query,
            roots=(self.project,),
            k=k,
            mode=self.mode,
            filters=self.filters,
            record_history=record_history,
            text=self.text,
            relative_cutoff=relative_cutoff,
        )
