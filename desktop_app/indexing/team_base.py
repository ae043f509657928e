"""When an index run brings a team index's shared base to a newer commit, and what it reports of it.

A team index shares a repository's committed content only: its base scope holds the files of one commit, the
tip of the default branch (git_commits.default_tip) as the indexer that put it there knew it. Each checkout's
own changes (uncommitted edits, new and deleted files, another branch) live in its overlay, which no other
checkout sees. An index run of a checkout moves the base forward only: to its default branch's tip when that is
ahead of the base's commit, or when the base holds none yet or a history that was rewritten since; never back
to an older commit, and never to one this clone lacks the history of to judge.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from ..store.rows import Published, Scope
from .git_commits import GitFailed, Relation, Tip, default_tip, relation

# What a run did about the base (BaseReport.action).
PUBLISH: Final = "publish"  # brought it to the checkout's default branch tip
Action = Literal["publish", "current", "newer", "unknown", "no-tip"]
# current: it holds that tip already; newer: it holds a descendant of the tip (this clone is behind);
# unknown: it holds a commit this clone lacks (fetch to compare); no-tip: git gave no default branch tip.
_ACTIONS: dict[Relation, Action] = {
    "same": "current",
    "ahead": PUBLISH,
    "diverged": PUBLISH,  # the branch was rewritten (a force-push): its tip is what the team has now
    "behind": "newer",
    "unknown": "unknown",
}


@dataclass
class BaseReport:
    repository: str
    action: Action
    tip: Tip | None
    published: Published | None  # what the base held before this run
    cancelled: bool = False
    files_changed: int = 0  # by this run, when it published
    files_deleted: int = 0

    def to_dict(self) -> dict:
        return {
            "repository": self.repository,
            "action": self.action,
            "branch": self.tip.branch if self.tip else None,
            "commit": self.tip.commit if self.tip else None,
            "published_before": None if self.published is None else self.published.commit,
            "cancelled": self.cancelled,
            "files_changed": self.files_changed,
            "files_deleted": self.files_deleted,
        }


def base_report(root: Path, repository: str, base: Scope) -> BaseReport:
    """What to do about `base`, the base of the repository `repository` that the checkout at `root` is of."""
    try:
        tip = default_tip(root)
        if tip is None:
            return BaseReport(repository, "no-tip", None, base.published)
        if base.published is None:
            return BaseReport(repository, PUBLISH, tip, None)
        action = _ACTIONS[relation(root, base.published.commit, tip.commit)]
    except GitFailed:
        return BaseReport(repository, "no-tip", None, base.published)
    return BaseReport(repository, action, tip, base.published)
