"""Which results are one function, for a question that asks for a function: the overloads of a name apart.

The index knows a definition by its file, enclosing symbol, kind and name (fusion.definition_key). The windows of a
long function share that key, and results fold into one per key (pipeline._extend) so that a function is one result.
But the overloads of one name in one type (Java's, C#'s, Kotlin's, C++'s) share it too, and they are different
functions: a question saying what code does (query.py's describes_an_action) showed the overload that ranked best
and hid the one it described, which was never in the top 50 for 70 of the 300 questions of the Java doc-comment set.

So for such a question a function's places under one key are taken in line order, and a place continues the function
before it while it overlaps that function's lines or starts deeper than its first line (a body goes on indented
deeper than its signature; the next overload's doc comment, annotation or signature starts at the same depth; C's
preprocessor lines and goto labels, at the margin inside a function, do not count); otherwise it starts another
function. The best OVERLOADS_SHOWN functions of a key are results of their own, and the places of the others fold
into the best one, so that one family of overloads does not fill the page.

Measured on the full index (hybrid, `run_eval.py SET --skip-index` over stop 55's stores; nl MRR@10, R@10): Java
0.561 -> 0.598 (R@10 0.710 -> 0.837); every overload its own result 0.602 (0.853), at most two 0.594 (0.820); Rust
0.472 -> 0.471; Go, TypeScript, C and the two stdlib sets unchanged. Over the five doc-comment sets' 1,448 questions
the top 10 held 149 results of a name already listed (the same name in other types) before, 805 after (886 with
every overload apart; 925 splitting wherever lines do not meet, as a long function's windows do at a blank line).
semble-dev's questions are about parts of the code, none describes an action: its figure stays by construction.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from .fusion import Candidate, definition_key

OVERLOADS_SHOWN = 3


def definition_units(pool: Sequence[Candidate], overloads_apart: bool) -> Callable[[Candidate], str | None]:
    """The unit of each candidate of `pool` (best first) that merge_units folds by: its definition_key, and where
    `overloads_apart`, a function's places under one key told apart by the function they belong to."""
    if not overloads_apart:
        return lambda c: definition_key(c.hit)
    units = {id(c): definition_key(c.hit) for c in pool}
    by_key: dict[str, list[Candidate]] = {}
    for c in pool:
        key = units[id(c)]
        if key is not None and c.hit.chunk_type == "function":
            by_key.setdefault(key, []).append(c)
    for key, places in by_key.items():
        if len(places) < 2:
            continue
        part, depth, end = 0, 0, 0
        for c in sorted(places, key=lambda c: (c.hit.start_line, c.hit.end_line)):
            if not end:
                depth = _depth(c)
            elif c.hit.start_line > end and (starts := _depth(c)) <= depth:
                part, depth = part + 1, starts  # another function of the same name
            end = max(end, c.hit.end_line)
            units[id(c)] = f"{key}#{part}"
        shown: dict[str | None, str | None] = {}  # unit -> the unit it is shown as, best first
        for c in places:  # in rank order
            unit = units[id(c)]
            if unit not in shown:
                shown[unit] = unit if len(shown) < OVERLOADS_SHOWN else next(iter(shown.values()))
            units[id(c)] = shown[unit]
    return lambda c: units[id(c)]


# Lines that say nothing of the code's depth: C's preprocessor lines and goto labels stand at the margin inside a
# function (`#ifdef CONFIG_X`, `err_free:` after a blank line, where a window may begin); `#` comments go with them.
_NO_DEPTH = re.compile(r"\s*(#|[A-Za-z_]\w*:\s*$)")


def _depth(c: Candidate) -> int:
    """How far the first line of a place's text that shows the code's depth is indented (its white space)."""
    for line in c.hit.text.split("\n"):
        if line.strip() and not _NO_DEPTH.match(line):
            return len(line) - len(line.lstrip())
    return 0
