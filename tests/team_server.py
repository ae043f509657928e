"""A real PostgreSQL server with pgvector for the team-index tests, started from the pip package `pgserver`
(which bundles both) in a temporary folder and stopped at the end of the session."""

from __future__ import annotations

import os
import secrets
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

import pytest


def database_of(url: str) -> str:
    return urlsplit(url).path.lstrip("/")


class TeamServer:
    def __init__(self, server, folder: Path):
        self._server = server
        self.folder = folder  # also where its Unix socket is

    def url(self, database: str, user: str = "postgres") -> str:
        return f"postgresql://{user}@/{database}?host={self.folder}"

    def new_database(self) -> str:
        """A fresh, empty database's URL."""
        name = "t_" + secrets.token_hex(6)
        self.sql(f"CREATE DATABASE {name};")
        return self.url(name)

    def sql(self, command: str, database: str = "postgres") -> str:
        if database != "postgres":
            command = f"\\c {database}\n{command}"
        return self._server.psql(command)

    def stop(self) -> None:
        self._server.cleanup()


def start_team_server() -> TeamServer:
    # pgserver keeps a lock file in the user's runtime folder, which a CI machine may not have.
    os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.mkdtemp(prefix="qpg-run-"))
    try:
        import pgserver
    except ImportError:
        pytest.skip("pgserver is not installed (pip install '.[test]'): no PostgreSQL server for the team tests")
    # Short: the server's Unix socket lives in this folder, and a socket path may not exceed ~100 bytes.
    folder = Path(tempfile.mkdtemp(prefix="qpg-", dir="/tmp"))
    try:
        server = pgserver.get_server(folder, cleanup_mode="delete")
    except Exception as exc:  # a machine where the bundled server cannot run: say why, once
        pytest.skip(f"the bundled PostgreSQL server (pgserver) cannot start here: {type(exc).__name__}: {exc}")
    return TeamServer(server, folder)
