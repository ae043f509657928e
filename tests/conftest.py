"""Shared, session-wide fixtures: the real model, a real mixed repository and one index of it."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Log files go to a private folder (inherited by the quarry processes tests start), never the user's.
os.environ["QUARRY_LOG_DIR"] = tempfile.mkdtemp(prefix="quarry-test-logs-")
# Quarry's cache folder (verdicts on index files) is a private one, readable by the tests that drop to
# another user.
os.environ["QUARRY_CACHE_DIR"] = tempfile.mkdtemp(prefix="quarry-test-cache-")
os.chmod(os.environ["QUARRY_CACHE_DIR"], 0o755)
# Settings shared by the window, `quarry open` and `quarry mcp` (the editor) go to a private folder too.
os.environ["QUARRY_CONFIG_DIR"] = tempfile.mkdtemp(prefix="quarry-test-config-")

from hypothesis import settings  # noqa: E402

# The same examples on every run, so CI is reproducible; HYPOTHESIS_PROFILE=explore searches afresh.
settings.register_profile("ci", derandomize=True, deadline=None)
settings.register_profile("explore", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

from desktop_app.embedding.embedder import Embedder  # noqa: E402
from desktop_app.worker import ops  # noqa: E402
from desktop_app.worker.worker import EngineConfig, Worker  # noqa: E402

from . import mixed_repo  # noqa: E402


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    emb = Embedder()
    emb.load()
    return emb


@pytest.fixture(scope="session")
def mixed_root(tmp_path_factory) -> Path:
    return mixed_repo.build(tmp_path_factory.mktemp("mixed") / "repo")


@pytest.fixture(scope="session")
def mixed_index(tmp_path_factory, mixed_root):
    """(db path, first index stats) of the mixed repository; tests must not modify either."""
    db = tmp_path_factory.mktemp("mixed-db") / "index.db"
    worker = Worker(EngineConfig(db)).start()
    try:
        stats = worker.run(ops.index(mixed_root)).result()
    finally:
        worker.close()
    return db, stats


@pytest.fixture(scope="session")
def team_server():
    """One real PostgreSQL server with pgvector for the session (skips where it cannot start)."""
    from .team_server import start_team_server

    server = start_team_server()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def mixed_team_index(team_server, mixed_root) -> str:
    """The URL of a team index holding the mixed repository; tests must not modify it."""
    url = team_server.new_database()
    worker = Worker(EngineConfig(url)).start()
    try:
        worker.run(ops.index(mixed_root)).result()
    finally:
        worker.close()
    return url


@pytest.fixture
def index_copy(tmp_path, mixed_index) -> Path:
    """A private copy of the mixed index, for tests that write to it (searches record history too)."""
    db = tmp_path / "index.db"
    shutil.copy(mixed_index[0], db)
    return db


@pytest.fixture
def mixed_copy(tmp_path, mixed_root, index_copy) -> tuple[Path, Path]:
    """A private copy of the repository and of its index, for tests that change them."""
    root = tmp_path / "repo"
    shutil.copytree(mixed_root, root, symlinks=True)
    return root, index_copy


@pytest.fixture
def worker_for(request):
    """Start a real worker on a database; closed at the end of the test."""
    started: list[Worker] = []

    def start(db: Path, on_change=None, **kwargs) -> Worker:
        w = Worker(EngineConfig(db, **kwargs), on_change).start()
        started.append(w)
        return w

    yield start
    for w in started:
        w.close()


# --- GUI (pytest-qt, offscreen) -------------------------------------------------------------------


@pytest.fixture
def qasync_loop(qapp):
    """A qasync loop marked running, so coroutines advance whenever pytest-qt spins the Qt event loop."""
    import asyncio

    import qasync

    from desktop_app.ui.refcount_guard import guard_singleton_refcounts

    guard_singleton_refcounts()
    loop = qasync.QEventLoop(qapp)
    asyncio.set_event_loop(loop)
    # Marked running by hand: qasync's already_running=True would call app.exit() on stop, which
    # leaves Qt's quit flag set and breaks every later wait in the session.
    asyncio.events._set_running_loop(loop)
    yield loop
    for task in asyncio.all_tasks(loop):
        task.cancel()
    for _ in range(5):  # let cancelled tasks unwind
        qapp.processEvents()
    asyncio.events._set_running_loop(None)
    loop.close()
    asyncio.set_event_loop(None)


@pytest.fixture
def gui_settings(tmp_path):
    """Settings in a private INI file, never the user's."""
    from PySide6.QtCore import QSettings

    from desktop_app.ui.app_settings import AppSettings

    return AppSettings(QSettings(str(tmp_path / "quarry.ini"), QSettings.Format.IniFormat))


@pytest.fixture
def world_tmp():
    """A directory an unprivileged user ('nobody') can reach; pytest's tmp_path lives under a 0700 directory."""
    path = Path(tempfile.mkdtemp(prefix="quarry-perm-"))
    path.chmod(0o755)
    yield path
    for dirpath, dirnames, filenames in os.walk(path):
        for name in dirnames + filenames:
            os.chmod(os.path.join(dirpath, name), 0o755, follow_symlinks=False)
    shutil.rmtree(path)


@pytest.fixture
def embedding_gate(monkeypatch):
    """Install a gate on document embedding (see tests/gates.py); opened at the end of the test."""
    from .gates import EmbeddingGate

    gates: list[EmbeddingGate] = []

    def install(pass_calls: int = 0) -> EmbeddingGate:
        gate = EmbeddingGate(pass_calls)
        monkeypatch.setattr(Embedder, "embed_documents", lambda self, texts: gate.embed_documents(self, texts))
        gates.append(gate)
        return gate

    yield install
    for gate in gates:
        gate.release()
