"""The command line's wording of the engine's errors: the engine says what is wrong, this adds what to type."""

from __future__ import annotations

from .indexing.file_selection import IgnoredTop
from .search.request import SearchError, SearchRemedy
from .store.errors import Remedy, StoreError
from .store.rows import PageCheck
from .wording import counted, file_size
from .worker.ops import ScopeNotFound

_STORE_REMEDIES = {
    Remedy.UPGRADE: "upgrade Quarry",
    Remedy.REBUILD: "run `quarry index FOLDER --rebuild` to move it aside and build a fresh index",
    Remedy.OTHER_STORE: "choose another index (a file or a team URL) with --db",
}


def explain(exc: BaseException) -> str:
    """One line for the user: the engine's message plus the command-line way to act on it."""
    if isinstance(exc, StoreError) and exc.remedies:
        return f"{exc}; " + ", or ".join(_STORE_REMEDIES[r] for r in exc.remedies)
    if isinstance(exc, SearchError) and exc.remedy is not None:
        return f"{exc}; {_search_remedy(exc.remedy, exc.subject)}"
    if isinstance(exc, ScopeNotFound):
        return f"{exc}; `quarry scopes` lists them"
    return str(exc)


def _search_remedy(remedy: SearchRemedy, subject: str | None) -> str:
    if remedy is SearchRemedy.NAME_SCOPE:
        return "pass --root PATH or --all-scopes"
    if remedy is SearchRemedy.INDEX_FIRST:
        return f"run `quarry index {subject or 'PATH'}` first"
    if remedy is SearchRemedy.PASS_FOLDER:
        return "pass the indexed folder that contains it with --root"
    return "search a linked worktree with --root"


def ignored_top_line(files_indexed: int, ignored: IgnoredTop) -> str:
    """e.g. "0 files: the folder's .gitignore excludes /* (31 of the 31 entries at its top); ..."."""
    rule = ignored.rule
    remedy = (
        "edit it to index them"
        if rule.source == ".quarryignore"
        else f"to index them anyway, add a .quarryignore beside it that re-includes them, such as !{rule.pattern}"
    )
    return (
        f"{counted(files_indexed, 'file')}: the folder's {rule.source} excludes {rule.pattern} "
        f"({ignored.entries_ignored:,} of the {ignored.entries:,} entries at its top are ignored); {remedy}"
    )


def page_check_line(check: PageCheck, why: bool = True) -> str:
    """e.g. "checking the whole index (4.1 GB) for damage, as it is not as Quarry last left it (copied, changed by
    another program, or a run cut off): 12 s" (without the reason unless `why`), and at its end "checked the whole
    index (4.1 GB) for damage in 16 s"."""
    size = file_size(check.size_bytes)
    if check.done:
        return f"checked the whole index ({size}) for damage in {check.seconds:.0f} s"
    reason = ", as it is not as Quarry last left it (copied, changed by another program, or a run cut off)"
    return f"checking the whole index ({size}) for damage{reason if why else ''}: {check.seconds:.0f} s"
