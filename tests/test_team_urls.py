"""Team index URLs in the forms libpq accepts: a password is never shown (output, log, printed configs), a
printed config gives back the URL it was given, a malformed URL is one line, and the advice for a missing
pgvector extension can be followed (issue 29: N10, N12, N13, N14, N16). Real `quarry` processes against
the session's real PostgreSQL server."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from .reliability import one_line_error, quarry, write_tree
from .team_server import TeamServer, database_of

ROLE = "url_user"
PASSWORD = "Url-Secret-4417"


def _log_text(logs: Path) -> str:
    return (logs / "quarry.log").read_text()


def _require_password(team_server: TeamServer, role: str) -> None:
    """Make the server ask `role` for its password over the socket, and wait until it has read the rule
    (pg_reload_conf only signals the server)."""
    hba = team_server.folder / "pg_hba.conf"
    rule = f"local all {role} scram-sha-256"
    if rule in hba.read_text():
        return
    loaded = team_server.sql("SELECT pg_conf_load_time();")
    hba.write_text(rule + "\n" + hba.read_text())
    team_server.sql("SELECT pg_reload_conf();")
    deadline = time.monotonic() + 30
    while team_server.sql("SELECT pg_conf_load_time();") == loaded:
        assert time.monotonic() < deadline, "the server did not reload pg_hba.conf"


@pytest.fixture(scope="module")
def password_database(team_server) -> str:
    """A database with pgvector that ROLE, which logs in with PASSWORD, may write; its name."""
    database = database_of(team_server.new_database())
    team_server.sql(
        f"DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{ROLE}') THEN "
        f"CREATE ROLE {ROLE} LOGIN PASSWORD '{PASSWORD}'; END IF; END $$;"
    )
    team_server.sql(f"CREATE EXTENSION vector; GRANT ALL ON SCHEMA public TO {ROLE};", database)
    _require_password(team_server, ROLE)
    return database


def _mcp_args(printed: str) -> list[str]:
    return json.loads(printed)["mcpServers"]["quarry"]["args"]


def test_a_password_parameter_is_never_shown_and_the_printed_config_works(team_server, password_database, tmp_path):
    """N12: the password as a `password=` parameter of a URL that has no user or host part."""
    without = f"postgresql:///{password_database}?host={team_server.folder}&user={ROLE}"
    url = f"{without}&password={PASSWORD}"
    logs = tmp_path / "logs"
    env = {"QUARRY_LOG_DIR": str(logs)}
    tree = write_tree(tmp_path / "tree", 3, "tiny")

    indexed = quarry("index", tree, "--db", url, "--until", "keyword", env=env)
    assert indexed.returncode == 0, indexed.stderr
    assert PASSWORD not in indexed.stdout + indexed.stderr
    failed = quarry("scopes", "--db", f"{url}&sslmode=bogus", env=env)
    assert PASSWORD not in one_line_error(failed, 1, "sslmode")

    config = quarry("mcp", "--print-config", "claude", "--db", url, env=env)
    assert config.returncode == 0, config.stderr
    assert PASSWORD not in config.stdout + config.stderr
    assert _mcp_args(config.stdout)[-2:] == ["--db", without]
    assert f"--db '{without}'" in config.stderr  # the `claude mcp add` line
    assert "PGPASSWORD" in config.stderr and "~/.pgpass" in config.stderr

    log = _log_text(logs)
    assert PASSWORD not in log
    assert f"into {without}" in log

    # The printed URL is the one given, less its password, which libpq then takes from PGPASSWORD.
    refused = quarry("scopes", "--db", without, env=env)
    one_line_error(refused, 1, "refused the login")
    listed = quarry("scopes", "--db", without, env={**env, "PGPASSWORD": PASSWORD})
    assert listed.returncode == 0, listed.stderr
    assert str(tree.resolve()) in listed.stdout


def test_print_config_gives_back_a_url_without_user_or_host_exactly(team_server, tmp_path):
    """N14: `postgresql:///DB?host=...` was printed with one slash, which Quarry then read as a file path."""
    database = database_of(team_server.new_database())
    team_server.sql("CREATE EXTENSION vector;", database)
    url = f"postgresql:///{database}?host={team_server.folder}"
    env = {"PGUSER": "postgres"}  # the URL names no user
    tree = write_tree(tmp_path / "tree", 2, "slash")
    indexed = quarry("index", tree, "--db", url, "--until", "keyword", env=env)
    assert indexed.returncode == 0, indexed.stderr

    config = quarry("mcp", "--print-config", "claude", "--db", url, env=env)
    assert config.returncode == 0, config.stderr
    printed = _mcp_args(config.stdout)[-1]
    assert printed == url
    assert "PGPASSWORD" not in config.stderr  # there was no password to leave out
    listed = quarry("scopes", "--db", printed, env=env)
    assert listed.returncode == 0 and str(tree.resolve()) in listed.stdout, listed.stderr


@pytest.mark.parametrize(
    "url",
    [
        "postgresql:/{database}?host={folder}",  # what print-config used to print
        "postgres:{database}",
        "POSTGRESQL://postgres@/{database}?host={folder}",
    ],
)
def test_a_string_naming_postgres_is_never_read_as_a_file_path(team_server, tmp_path, url):
    """N14: such a string made an empty SQLite index in the working directory and answered from it."""
    url = url.format(database=database_of(team_server.new_database()), folder=team_server.folder)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    proc = quarry("scopes", "--db", url, cwd=cwd)
    one_line_error(proc, 1, "is malformed", "postgresql://")
    assert list(cwd.iterdir()) == []


SECRET = "Hidden-Pw-41"


@pytest.mark.parametrize(
    ("url", "said"),
    [
        (f"postgresql://qt:{SECRET}@[::1/team1", "IPv6"),
        (f"postgresql://qt:{SECRET}@127.0.0.1:1/team1?bogusparam=1", "bogusparam"),
        (f"postgresql:///team1?host=127.0.0.1&port=1&password={SECRET}&bogusparam=1", "bogusparam"),
        ("postgresql://qt:Hidden%Pw-41@127.0.0.1:1/team1", "%25"),  # N13: a literal % in the password
    ],
)
def test_a_malformed_url_is_one_line_without_its_password(tmp_path, url, said):
    """N10, N13: these were tracebacks, one of them quoting the password."""
    logs = tmp_path / "logs"
    env = {"QUARRY_LOG_DIR": str(logs)}
    for command in (["scopes"], ["mcp", "--print-config", "claude"]):
        proc = quarry(*command, "--db", url, env=env)
        message = one_line_error(proc, 1, "is malformed", said)
        assert "Hidden" not in message + proc.stdout
    assert "Hidden" not in _log_text(logs)


def test_a_key_value_connection_string_is_refused_without_making_a_file_or_showing_its_password(tmp_path):
    """libpq's other form was read as a file path: an empty index file named after the server, password
    and all, appeared in the working directory."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    for db in (f"host=127.0.0.1 dbname=team1 user=qt password={SECRET}", f"dbname=team1 password={SECRET}"):
        proc = quarry("scopes", "--db", db, cwd=cwd)
        message = one_line_error(proc, 1, "key=value connection string", "postgresql://")
        assert "Hidden" not in message
    assert list(cwd.iterdir()) == []


def test_pgvector_missing_for_the_database_owner_asks_a_superuser(team_server):
    """N16: the owner was told to ask the database's owner, that is itself; creating pgvector needs a
    superuser."""
    owner = "db_owner_nosuper"
    team_server.sql(
        f"DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{owner}') THEN "
        f"CREATE ROLE {owner} LOGIN; END IF; END $$;"
    )
    database = database_of(team_server.new_database())
    team_server.sql(f"ALTER DATABASE {database} OWNER TO {owner};")
    url = team_server.url(database, user=owner)

    missing = quarry("scopes", "--db", url)
    message = one_line_error(
        missing,
        1,
        "this role may not create it",
        f"ask a superuser (for example the server's administrator) to run CREATE EXTENSION vector in the "
        f"database {database}",
    )
    assert "ask its owner" not in message
    # The advice works: a superuser creates it, and the owner's next run goes on.
    team_server.sql("CREATE EXTENSION vector;", database)
    listed = quarry("scopes", "--db", url)
    assert listed.returncode == 0, listed.stderr
