"""The default model's session begun before Quarry's imports (launch.py, model_prefetch.py): which command lines
begin it, and that the engine's first load takes it, drops one begun for something else, and never waits in a
forked child. The real bundled model and ONNX Runtime."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from desktop_app import cli, model_prefetch
from desktop_app.command_words import COMMANDS, command_of, first_word, option_value
from desktop_app.embedding.embedder import Embedder
from desktop_app.embedding.providers import cpu_threads
from desktop_app.launch import begin_model_for, searched_by_meaning


@pytest.fixture(autouse=True)
def nothing_begun() -> None:
    model_prefetch.take(("", "", "", 0))  # whatever an earlier test began is settled (dropped) first


def test_the_command_words_are_the_command_lines():
    assert set(cli._COMMANDS) == COMMANDS


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], "auto"),  # the window
        (["--db", "x.db"], "auto"),
        (["--db", "x.db", "--root", "src", "--query", "parse"], "auto"),
        (["search", "parse", "a", "header"], "auto"),
        (["--db", "x.db", "search", "parse", "--lang", "python"], "auto"),
        (["search", "parse", "--mode", "semantic"], "auto"),
        (["search", "parse", "--mode", "text"], None),
        (["search", "--mode=exact", "parse_header"], None),
        (["mcp"], "auto"),
        (["--provider", "cpu", "search", "parse"], "cpu"),
        (["search", "parse", "--provider=cuda"], "cuda"),
        (["index", "."], None),
        (["--db", "x.db", "scopes"], None),
        (["history"], None),
        (["open", "a.py:3"], None),
        (["--model", "fast", "search", "parse"], None),
        (["search", "parse", "--model-dir=/models/mine"], None),
        (["search", "-h"], None),
        (["--help"], None),
        (["--install-desktop-entry"], None),
    ],
)
def test_which_command_lines_begin_the_model(argv: list[str], expected: str | None):
    assert searched_by_meaning(argv) == expected


def test_command_line_words():
    assert first_word(["--db", "x", "--json", "search", "q"]) == 3
    assert command_of(["--db", "x", "/home/me/project"]) is None  # a folder to open in the window
    assert command_of(["--db", "index", "search"]) == "search"  # a value is not the command
    assert option_value(["--mode", "text", "--mode=regex"], "--mode") == "regex"  # the last one wins, as argparse's
    assert option_value(["--mode"], "--mode") is None


def test_the_first_load_takes_the_session_begun_for_it():
    begin_model_for(["search", "parse a header"])
    embedder = Embedder()
    embedder.load()
    begun_session = embedder._session
    assert model_prefetch.take(("", "", "", 0)) is None  # taken: nothing is left to take

    fresh = Embedder()
    fresh.load()  # nothing begun: it builds its own
    assert fresh._session is not begun_session
    query = "parse a MIME header into its parts"
    np.testing.assert_allclose(embedder.embed_query(query), fresh.embed_query(query), atol=1e-6)
    assert embedder.provider == fresh.provider == "CPUExecutionProvider"


def test_a_session_begun_for_another_provider_or_threads_is_dropped():
    begin_model_for(["--provider", "cpu", "search", "q"])
    embedder = Embedder(provider_preference="auto")  # the engine's own preference differs: builds its own
    embedder.load()
    assert model_prefetch.take(_default_key("cpu")) is None  # dropped by that load, not kept for later

    begin_model_for(["search", "q"])
    other = Embedder(threads=cpu_threads() + 1)
    other.load()
    assert model_prefetch.take(_default_key("auto")) is None
    assert other.embed_query("q").shape == (384,)


def test_a_failed_begin_leaves_the_load_to_say_why():
    def broken() -> tuple[model_prefetch.Key, Callable[[], model_prefetch.Built]]:
        def build() -> model_prefetch.Built:
            raise OSError("the model file could not be read")

        return _default_key("auto"), build

    model_prefetch.begin(broken)
    embedder = Embedder()
    embedder.load()  # built its own, as if nothing had been begun
    assert embedder.embed_query("q").shape == (384,)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="a platform without fork has no forked child to guard")
def test_a_forked_child_never_waits_for_its_parents_session():
    release = threading.Event()

    def slow() -> tuple[model_prefetch.Key, Callable[[], model_prefetch.Built]]:
        release.wait()
        raise OSError("never used")

    model_prefetch.begin(slow)
    pid = os.fork()
    if pid == 0:  # the child: the thread building it was not copied, so its future would never be done
        os._exit(0 if model_prefetch.take(_default_key("auto")) is None else 1)
    _, status = os.waitpid(pid, 0)
    release.set()
    assert os.waitstatus_to_exitcode(status) == 0
    assert model_prefetch.take(_default_key("auto")) is None  # the parent's own: failed, so nothing


def _default_key(preference: str) -> model_prefetch.Key:
    spec = Embedder().spec
    return model_prefetch.session_key(spec.model_path, spec.model_sha256, preference, cpu_threads())


def test_a_command_that_fails_at_once_exits_as_it_should_while_the_session_is_built(tmp_path: Path):
    """A usage error ends the process while the session begun at the start may still be building: the exit waits
    for it (a daemon thread inside ONNX Runtime as the interpreter shut down aborted the process)."""
    for _ in range(3):
        proc = subprocess.run(
            [sys.executable, "-m", "desktop_app", "search", "retry http", "--db", str(tmp_path / "x.db"), "-k", "x"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 2, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1 and "-k" in proc.stderr
