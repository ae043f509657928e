"""The team index's schema: numbered migrations tracked in quarry_meta, applied under an advisory lock so
that several Quarry processes starting at once migrate it once.

Vectors live in one table per embedding model (`vec_<model>` and `vec_<model>_name`, made by
PostgresStore.register_model with the model's dimensions and an HNSW index), keyed by chunk id: a chunk
is one text, shared by every scope, checkout and user that has it.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator

import psycopg

from ..errors import Remedy, StoreUnusable

_LOCK = 0x5175617272  # pg_advisory_xact_lock key: "Quarr"
_log = logging.getLogger(__name__)

MIGRATIONS: list[str] = [
    # 1: scopes keyed by repository identity, where each machine has them checked out, chunks keyed by content,
    #    files, places with their keyword vectors, models, embedding claims, search history, a change counter
    """
    CREATE TABLE quarry_meta (key text PRIMARY KEY, value text NOT NULL);
    CREATE TABLE scope (
        id text PRIMARY KEY,
        key text NOT NULL UNIQUE,
        type text NOT NULL CHECK (type IN ('main', 'worktree')),
        parent_id text REFERENCES scope(id) ON DELETE CASCADE,
        created_at double precision NOT NULL,
        last_indexed_at double precision
    );
    CREATE TABLE checkout (
        scope_id text NOT NULL REFERENCES scope(id) ON DELETE CASCADE,
        host text NOT NULL,
        root text NOT NULL,
        seen_at double precision NOT NULL,
        PRIMARY KEY (scope_id, host, root)
    );
    CREATE TABLE chunk (
        id bigserial PRIMARY KEY,
        hash text NOT NULL UNIQUE,
        text text NOT NULL,
        token_count integer NOT NULL,
        created_at double precision NOT NULL
    );
    CREATE TABLE model (
        id text PRIMARY KEY,
        dims integer NOT NULL,
        vector_table text NOT NULL UNIQUE,
        source text NOT NULL,
        created_at double precision NOT NULL
    );
    CREATE TABLE file (
        id bigserial PRIMARY KEY,
        scope_id text NOT NULL REFERENCES scope(id) ON DELETE CASCADE,
        path text NOT NULL,
        size bigint NOT NULL,
        mtime_ns bigint NOT NULL,
        sha256 text,
        language text,
        status text NOT NULL CHECK (status IN ('indexed', 'skipped')),
        skip_reason text,
        indexed_at double precision NOT NULL,
        UNIQUE (scope_id, path)
    );
    CREATE TABLE file_chunk (
        id bigserial PRIMARY KEY,
        file_id bigint NOT NULL REFERENCES file(id) ON DELETE CASCADE,
        scope_id text NOT NULL,
        chunk_id bigint NOT NULL REFERENCES chunk(id),
        ordinal integer NOT NULL,
        start_line integer NOT NULL,
        end_line integer NOT NULL,
        chunk_type text NOT NULL,
        symbol_name text,
        symbol_type text,
        parent_symbol text,
        keywords tsvector NOT NULL
    );
    CREATE INDEX file_chunk_file ON file_chunk (file_id);
    CREATE INDEX file_chunk_scope_chunk ON file_chunk (scope_id, chunk_id);
    CREATE INDEX file_chunk_chunk ON file_chunk (chunk_id);
    CREATE INDEX file_chunk_symbol ON file_chunk (scope_id, lower(symbol_name));
    CREATE INDEX file_chunk_keywords ON file_chunk USING gin (keywords);
    CREATE TABLE claim (
        model text NOT NULL,
        names boolean NOT NULL,
        chunk_id bigint NOT NULL REFERENCES chunk(id) ON DELETE CASCADE,
        owner text NOT NULL,
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (model, names, chunk_id)
    );
    CREATE TABLE history (
        id bigserial PRIMARY KEY,
        at double precision NOT NULL,
        query text NOT NULL,
        scope_root text,
        mode text NOT NULL,
        result_count integer NOT NULL,
        top_score double precision,
        duration_ms double precision NOT NULL
    );
    CREATE TABLE generation (id integer PRIMARY KEY CHECK (id = 1), n bigint NOT NULL);
    INSERT INTO generation VALUES (1, 0);
    """,
    # 2: one vector per file and model of the file's outline (its path and the names it defines), read for the
    #    candidates' files when ranking (never searched by nearness: float32 bytes, whatever the model's size)
    """
    CREATE TABLE file_outline (
        file_id bigint NOT NULL REFERENCES file(id) ON DELETE CASCADE,
        model_id text NOT NULL REFERENCES model(id) ON DELETE CASCADE,
        vector bytea NOT NULL,
        PRIMARY KEY (model_id, file_id)
    );
    CREATE INDEX file_outline_file ON file_outline (file_id);
    """,
    # 3: a repository's shared base (its committed content at one commit: which, of which branch, by which host,
    #    when) and each checkout's private overlay over it (store/identity.py). A repository's scope so far held
    #    the working tree of whoever indexed it last, uncommitted edits included, and a linked worktree's scope was
    #    shared by every teammate's worktree of its branch: the first becomes the base (its next index brings it
    #    to a commit), the second goes (each checkout's next index makes its overlay, mapping the base's chunks).
    """
    ALTER TABLE scope DROP CONSTRAINT scope_type_check;
    DELETE FROM scope WHERE type = 'worktree';
    UPDATE scope SET type = 'base' WHERE type = 'main' AND key LIKE 'git:%';
    ALTER TABLE scope ADD CONSTRAINT scope_type_check CHECK (type IN ('main', 'worktree', 'base', 'overlay'));
    ALTER TABLE scope ADD COLUMN base_commit text, ADD COLUMN base_branch text, ADD COLUMN published_by text,
        ADD COLUMN published_at double precision;
    """,
    # 4: the place columns a search filters on, in the indexes it reads places by (scope, chunk; chunk), so that
    #    a filter's allowed chunks and a filtered walk's check of each candidate read no table row: a scope's
    #    chunks of one kind at 1M places took a sequential scan of the table and its 2 KB keyword rows
    """
    CREATE INDEX file_chunk_scope_chunk_cover ON file_chunk (scope_id, chunk_id)
        INCLUDE (file_id, chunk_type, symbol_type);
    DROP INDEX file_chunk_scope_chunk;
    CREATE INDEX file_chunk_chunk_cover ON file_chunk (chunk_id) INCLUDE (scope_id, file_id, chunk_type, symbol_type);
    DROP INDEX file_chunk_chunk;
    """,
    # 5: a place's names (its symbol's, then its path's and enclosing symbol's words: the keywords' A and B parts) as
    #    keywords of their own, a tenth of the whole, so that a query matching many places ranks the best named
    #    ones before reading any place's text words (PostgresStore.keyword_matches). Generated, so every way a
    #    place is written fills it; adding it rewrites the places once (145 s for 2.25M places on 2 cores).
    """
    ALTER TABLE file_chunk ADD COLUMN name_keywords tsvector
        GENERATED ALWAYS AS (ts_filter(keywords, '{a,b}')) STORED;
    CREATE INDEX file_chunk_name_keywords ON file_chunk USING gin (name_keywords);
    """,
]

SCHEMA_VERSION = len(MIGRATIONS)
# Run after the migration of that number commits (VACUUM cannot run inside a transaction). 5 rewrote the places,
# which leaves their visibility map empty until a vacuum: until then no read of a place could come from its index
# alone, and nothing else would vacuum the table soon (autovacuum counts changed rows, and a rewrite changes none).
# A filter's allowed chunks at 1M places took 0.8-1.2 s by a scan of the whole table, 0.14-0.33 s after (6 s).
AFTER_MIGRATION = {5: "VACUUM (ANALYZE) file_chunk"}


def schema_version(conn: psycopg.Connection) -> int:
    exists = conn.execute("SELECT to_regclass('quarry_meta')").fetchone()
    if exists is None or exists[0] is None:
        return 0
    row = conn.execute("SELECT value FROM quarry_meta WHERE key = 'schema_version'").fetchone()
    return int(row[0]) if row else 0


@contextlib.contextmanager
def setup_lock(conn: psycopg.Connection) -> Iterator[None]:
    """Held by one process at a time while it sets the database up (extension, schema). Taken outside any
    transaction, so the next statement starts a new one and sees what the previous holder created."""
    conn.execute("SELECT pg_advisory_lock(%s)", (_LOCK,))
    try:
        yield
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (_LOCK,))


def migrate(conn: psycopg.Connection, shown: str) -> None:
    """Bring the schema up to SCHEMA_VERSION (the caller holds setup_lock); refuse one written by a newer
    Quarry."""
    version = schema_version(conn)
    if version > SCHEMA_VERSION:
        raise _newer(shown, version)
    if version == SCHEMA_VERSION:
        return
    # Some rewrite every place (5: about a minute per million places on 2 cores) while other processes wait.
    if version:
        _log.info("upgrading the team index %s from schema %d to %d", shown, version, SCHEMA_VERSION)
    started = time.monotonic()
    with conn.transaction():
        for number in range(version, SCHEMA_VERSION):
            conn.execute(MIGRATIONS[number])
            conn.execute(
                "INSERT INTO quarry_meta (key, value) VALUES ('schema_version', %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (str(number + 1),),
            )
    for number in range(version + 1, SCHEMA_VERSION + 1):
        if number in AFTER_MIGRATION:
            conn.execute(AFTER_MIGRATION[number])
    if version:
        _log.info(
            "upgraded the team index %s to schema %d in %.1f s", shown, SCHEMA_VERSION, time.monotonic() - started
        )


def _newer(shown: str, version: int) -> StoreUnusable:
    return StoreUnusable(
        shown,
        f"was written by a newer Quarry (schema {version}; this build reads up to {SCHEMA_VERSION})",
        (Remedy.UPGRADE,),
    )
