"""The `quarry` command's entry point: the default model's session begun on a thread of its own, then the command.

The window, `quarry mcp` and `quarry search` (but by text or exact names) search by meaning first, and every such
search needs the default model, also on an index made by the fast model alone (its queries are read through the
default model's query map: embedding/static_model.py). Its session is begun here, before Quarry's own imports
(0.28 s for a command, 0.5 s with Qt for the window), and taken by the engine's first load (model_prefetch.py).
A line that names another model (--model, --model-dir) begins nothing; one that names a provider begins it there.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Sequence

from . import model_prefetch
from .command_words import command_of, option_value

# Options after which no search by meaning with the default model follows: help, the menu entry, another model.
_BEGIN_NOTHING = frozenset(("-h", "--help", "--install-desktop-entry", "--model", "--model-dir"))


def main() -> int:
    begin_model_for(sys.argv[1:])
    from .cli import main as cli_main  # Quarry's imports, while the session is built

    return cli_main()


def begin_model_for(argv: Sequence[str]) -> None:
    """Begin the default model's session when command line `argv` will soon search by meaning."""
    preference = searched_by_meaning(argv)
    if preference is not None:
        model_prefetch.begin(functools.partial(_default_session, preference))


def searched_by_meaning(argv: Sequence[str]) -> str | None:
    """The provider preference of the default model's session this command line will soon ask for; None when it
    will not (another command, another model, help, or a search by text or exact names)."""
    if any(arg in _BEGIN_NOTHING or arg.startswith(("--model=", "--model-dir=")) for arg in argv):
        return None
    command = command_of(argv)
    if command not in (None, "search", "mcp"):
        return None
    if command == "search" and option_value(argv, "--mode") in ("text", "exact"):
        return None
    return option_value(argv, "--provider") or "auto"


def _default_session(preference: str) -> tuple[model_prefetch.Key, Callable[[], model_prefetch.Built]]:
    from .embedding.model_spec import default_model_spec
    from .embedding.providers import cpu_threads, verified_session

    spec = default_model_spec()
    threads = cpu_threads()

    key = model_prefetch.session_key(spec.model_path, spec.model_sha256, preference, threads)
    return key, functools.partial(verified_session, spec.model_path, spec.model_sha256, preference, threads)
