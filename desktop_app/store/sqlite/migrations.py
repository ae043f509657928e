"""Numbered schema migrations, applied in order and tracked with PRAGMA user_version.

Vectors live in one vec0 table per embedding model (see Store.register_model) so a store can be
re-embedded with a new model while the old vectors keep answering searches; meta.active_model
names the model whose vectors searches use.
"""

from __future__ import annotations

from pathlib import Path

import apsw

from ..errors import Remedy, StoreError, StoreUnusable
from .connection import query_value, write_transaction

MIGRATIONS: list[str] = [
    # 1: scopes, files, chunks, file->chunk mappings, keyword index, models, search history
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE scope (
        id TEXT PRIMARY KEY,
        type TEXT NOT NULL CHECK (type IN ('main', 'worktree')),
        root TEXT NOT NULL UNIQUE,
        parent_id TEXT REFERENCES scope(id) ON DELETE CASCADE,
        created_at REAL NOT NULL,
        last_indexed_at REAL
    );
    CREATE TABLE chunk (
        id INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: in-memory vector copies key on it
        hash TEXT NOT NULL UNIQUE,          -- sha256 of the embedded document (header + text): see 8, 11
        text TEXT NOT NULL,                 -- the file lines the chunk covers
        token_count INTEGER NOT NULL,
        created_at REAL NOT NULL
    );
    CREATE TABLE model (
        id TEXT PRIMARY KEY,
        dims INTEGER NOT NULL,
        vector_table TEXT NOT NULL UNIQUE,
        source TEXT NOT NULL,               -- "default" or the model folder, to load it again
        created_at REAL NOT NULL
    );
    CREATE TABLE file (
        id INTEGER PRIMARY KEY,
        scope_id TEXT NOT NULL REFERENCES scope(id) ON DELETE CASCADE,
        path TEXT NOT NULL,                 -- POSIX, relative to the scope root
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        sha256 TEXT,
        language TEXT,
        status TEXT NOT NULL CHECK (status IN ('indexed', 'skipped')),
        skip_reason TEXT,
        indexed_at REAL NOT NULL,
        UNIQUE (scope_id, path)
    );
    CREATE TABLE file_chunk (
        id INTEGER PRIMARY KEY,
        file_id INTEGER NOT NULL REFERENCES file(id) ON DELETE CASCADE,
        scope_id TEXT NOT NULL,             -- copied from file so scope filters need no join
        chunk_id INTEGER NOT NULL REFERENCES chunk(id),
        ordinal INTEGER NOT NULL,
        start_line INTEGER NOT NULL,
        end_line INTEGER NOT NULL,
        chunk_type TEXT NOT NULL,
        symbol_name TEXT,
        symbol_type TEXT,
        parent_symbol TEXT
    );
    CREATE INDEX file_chunk_file ON file_chunk(file_id);
    CREATE INDEX file_chunk_scope_chunk ON file_chunk(scope_id, chunk_id);
    CREATE INDEX file_chunk_chunk ON file_chunk(chunk_id);
    CREATE INDEX file_chunk_symbol ON file_chunk(scope_id, symbol_name COLLATE NOCASE);  -- named places only: 9
    -- Keyword index, one row per file_chunk (rowid = file_chunk.id); identifiers are split
    -- before insertion so `parseHTTPHeader` also matches "parse", "http" and "header".
    CREATE VIRTUAL TABLE fts USING fts5(
        symbol, path, body, content='', contentless_delete=1, tokenize="unicode61 remove_diacritics 2 tokenchars '_'"
    );
    CREATE TABLE history (
        id INTEGER PRIMARY KEY,
        at REAL NOT NULL,
        query TEXT NOT NULL,
        scope_root TEXT,
        mode TEXT NOT NULL,
        result_count INTEGER NOT NULL,
        top_score REAL,
        duration_ms REAL NOT NULL
    );
    """,
    # 2: a trigram index of the chunks' text, for literal and regex search (search/text_search.py). It reads
    # the text from the chunk table (external content: nothing stored twice) and holds no positions
    # (detail=none): it only narrows the chunks the real pattern runs over. Chunks are never updated, only
    # inserted and deleted, so two triggers keep it in step.
    """
    CREATE VIRTUAL TABLE chunk_text USING fts5(
        text, content='chunk', content_rowid='id', tokenize='trigram', detail='none'
    );
    INSERT INTO chunk_text(chunk_text) VALUES ('rebuild');
    CREATE TRIGGER chunk_text_insert AFTER INSERT ON chunk BEGIN
        INSERT INTO chunk_text(rowid, text) VALUES (new.id, new.text);
    END;
    CREATE TRIGGER chunk_text_delete AFTER DELETE ON chunk BEGIN
        INSERT INTO chunk_text(chunk_text, rowid, text) VALUES ('delete', old.id, old.text);
    END;
    """,
    # 3: one vector per file and model of the file's outline (its path and the names it defines), for ranking
    # files by what they are about as a whole (search/fusion.py). Never searched by nearness, only read for the
    # candidates' files, so a plain table of float32 blobs; it goes with its file (rewritten on every change)
    # and with its model.
    """
    CREATE TABLE file_outline (
        file_id INTEGER NOT NULL REFERENCES file(id) ON DELETE CASCADE,
        model_id TEXT NOT NULL REFERENCES model(id) ON DELETE CASCADE,
        vector BLOB NOT NULL,
        PRIMARY KEY (model_id, file_id)
    ) WITHOUT ROWID;
    CREATE INDEX file_outline_file ON file_outline(file_id);
    """,
    # 4: the trigram index filled after the first answers. Its trigger was 1.5 s of stage 1's 2.6 s of writes
    # on commons-lang (7,577 chunks), and about 9 of the Linux kernel's 22 minutes. A new chunk now waits in
    # chunk_text_pending, which text search takes as a candidate of every pattern (the pattern then runs over
    # its text), until an index run's text step moves it into chunk_text. A chunk deleted while it waits was
    # never in chunk_text: its 'delete' would corrupt the index, so the trigger leaves it out.
    """
    CREATE TABLE chunk_text_pending (chunk_id INTEGER PRIMARY KEY);
    DROP TRIGGER chunk_text_insert;
    CREATE TRIGGER chunk_text_insert AFTER INSERT ON chunk BEGIN
        INSERT INTO chunk_text_pending(chunk_id) VALUES (new.id);
    END;
    DROP TRIGGER chunk_text_delete;
    CREATE TRIGGER chunk_text_delete AFTER DELETE ON chunk BEGIN
        INSERT INTO chunk_text(chunk_text, rowid, text) SELECT 'delete', old.id, old.text
            WHERE NOT EXISTS (SELECT 1 FROM chunk_text_pending WHERE chunk_id = old.id);
        DELETE FROM chunk_text_pending WHERE chunk_id = old.id;
    END;
    """,
    # 5: the sign bits of each vec0 table's vectors, in packs written with them (see sign_packs.py), so a search of
    # a large index nominates candidates without loading every vector. A table made before has no packs until an
    # index run's garbage collection writes them and lists it as complete. And a mark that no chunk is unused, so
    # that a run which deleted nothing need not look for them.
    """
    CREATE TABLE vector_sign (
        id INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: a reader notices packs rewritten under it
        vector_table TEXT NOT NULL,
        size INTEGER NOT NULL,
        ids BLOB NOT NULL,                  -- int64 rowids
        signs BLOB NOT NULL                 -- the vectors' sign bits: uint64 words, word-major
    );
    CREATE INDEX vector_sign_table ON vector_sign(vector_table, id, size);  -- sizes summed without the blobs
    CREATE TABLE vector_sign_complete (vector_table TEXT PRIMARY KEY) WITHOUT ROWID;
    -- collect_garbage marks the store free of unused chunks; deleting any place (a cascade from its file or
    -- scope too) may leave one, so it forgets the mark.
    CREATE TRIGGER file_chunk_delete AFTER DELETE ON file_chunk BEGIN
        DELETE FROM meta WHERE key = 'no_garbage';
    END;
    """,
    # 6: the number of chunks, kept by triggers: with the mark above it is the number a search of every scope
    # covers, which counting took 0.3-0.45 s of a first search of the Linux kernel (its 3M chunk ids read). A
    # trigger a row costs ~1 us inside the batch's one insert statement. A new store starts at 0; one with chunks
    # gets its count at its next collection (store.collect_garbage): counting the kernel's took 20 s cold, which a
    # search that happens to migrate the file must not pay. Until then the triggers find no row to update.
    """
    INSERT INTO meta (key, value) SELECT 'chunk_count', 0 WHERE NOT EXISTS (SELECT 1 FROM chunk);
    CREATE TRIGGER chunk_count_insert AFTER INSERT ON chunk BEGIN
        UPDATE meta SET value = value + 1 WHERE key = 'chunk_count';
    END;
    CREATE TRIGGER chunk_count_delete AFTER DELETE ON chunk BEGIN
        UPDATE meta SET value = value - 1 WHERE key = 'chunk_count';
    END;
    """,
    # 7: the keyword index merges its segments 16 at a time rather than FTS5's 4 (a setting FTS5 keeps in the
    # file). Each write transaction adds a segment, and every merge rewrites what it merges: on the Linux kernel
    # (3.0M chunks, one run each, quiet) the keyword stage took 342 s with batches of 8192 chunks alone and
    # 329 s with this too (348 s with neither), 44.7 -> 40.8 GB written; warm searches by words and names kept
    # their p50 / p95 (hybrid, sentences: 2 / 14 -> 3 / 15 ms).
    """
    INSERT INTO fts (fts, rank) VALUES ('automerge', 16);
    """,
    # 8: a chunk's hash is kept as the first 32 hex digits of its sha256 (128 bits; store.hash_key), not all 64.
    # The unique index on it is where stage 1's new chunks land on random pages, a page each; with the shorter
    # key its 3M entries on the Linux kernel take ~46 bytes instead of ~83, and the column 33 instead of 65. The
    # kernel's keyword stage (the text index left out, one machine, one hour): its database 3.27 -> 3.05 GB,
    # 25.6 -> 21.3 GB written, its writes 249 -> 214 s (with 9 as well, in a later pair: 217 -> 195 s; figures
    # in tests/benchmarks/README.md, stop 47). As 16 bytes (`unhex`) it took 2.94 GB, but the tests' short
    # made-up hashes are not hex. Two chunks collide on 128 bits with odds of about n^2 / 2^129: 1.5e-23 for
    # 100 million chunks. Rewriting the kernel's 3M hashes took 43 s (its file keeps its size: the freed pages
    # are reused as it grows), ~14 us a chunk.
    """
    UPDATE chunk SET hash = substr(hash, 1, 32) WHERE length(hash) > 32;
    """,
    # 9: the symbol-name index holds only the places that have a name (38 % of the Linux kernel's 3.0M have none:
    # code between definitions, prose, config and comments). Each lookup asks for a name (`symbol_name COLLATE
    # NOCASE IN (...)`), which SQLite takes as implying the index's condition, so every query that used it still
    # does; a place without a name costs no page of it when written. The kernel's keyword-stage database with 8:
    # 3.05 -> 3.00 GB.
    """
    DROP INDEX file_chunk_symbol;
    CREATE INDEX file_chunk_symbol ON file_chunk(scope_id, symbol_name COLLATE NOCASE) WHERE symbol_name IS NOT NULL;
    """,
    # 10: chunk text compressed with dictionaries trained on it (text_codec.py); `chunks` counts those each
    # serves. The trigram index read its text from the chunk table (a 'delete' gives it the old text, and FTS5's
    # integrity check compares the two), which now holds blobs: it becomes contentless, forgetting a chunk by its
    # id. Its entries go and every chunk waits for it again: an index run's text step fills it back, and a text
    # search takes waiting chunks as candidates meanwhile. The Linux kernel's fast-stage index (3M chunks): 19 s
    # to migrate, then 326 s of text step in the next run. Text written before stays plain (`index --rebuild`
    # compresses it; rewriting it here would free pages without shrinking the file).
    """
    CREATE TABLE text_dictionary (id INTEGER PRIMARY KEY, data BLOB NOT NULL, chunks INTEGER NOT NULL);
    DROP TRIGGER chunk_text_insert;
    DROP TRIGGER chunk_text_delete;
    DROP TABLE chunk_text;
    CREATE VIRTUAL TABLE chunk_text USING fts5(
        text, content='', contentless_delete=1, tokenize='trigram', detail='none'
    );
    INSERT OR IGNORE INTO chunk_text_pending (chunk_id) SELECT id FROM chunk;
    CREATE TRIGGER chunk_text_insert AFTER INSERT ON chunk BEGIN
        INSERT INTO chunk_text_pending(chunk_id) VALUES (new.id);
    END;
    CREATE TRIGGER chunk_text_delete AFTER DELETE ON chunk BEGIN
        DELETE FROM chunk_text WHERE rowid = old.id
            AND NOT EXISTS (SELECT 1 FROM chunk_text_pending WHERE chunk_id = old.id);
        DELETE FROM chunk_text_pending WHERE chunk_id = old.id;
    END;
    """,
    # 11: a chunk's hash key kept as its 16 bytes rather than 32 hex digits (store.stored_hash; a key that is not
    # hex, as the tests make up, stays text). The unique index on it is where stage 1's new chunks land on random
    # pages; stop 47 measured this form on the Linux kernel's keyword stage against the hex digits: database
    # 2.94 against 3.05 GB, its writes 200 against 214 s, 18.5 against 21.3 GB written.
    """
    UPDATE chunk SET hash = unhex(hash) WHERE unhex(hash) IS NOT NULL;
    """,
    # 12: a deleted place leaves its chunk's id behind as one that may now be unused, and the collection looks at
    # those alone, where it read every chunk: on the Linux kernel's index (3M chunks), a run after a 10-file change
    # spent 5.7 of its 17.5 s there (py-spy). The mark of 5 keeps its other meaning (a store without it gets one
    # look at every chunk, as before), and the store is free of unused chunks when it has the mark and no id waits.
    # Safe to run again, as the tests do on stores set back to an older version.
    """
    CREATE TABLE IF NOT EXISTS chunk_unplaced (chunk_id INTEGER PRIMARY KEY);
    DROP TRIGGER IF EXISTS file_chunk_delete;
    CREATE TRIGGER file_chunk_delete AFTER DELETE ON file_chunk BEGIN
        INSERT OR IGNORE INTO chunk_unplaced (chunk_id) VALUES (old.chunk_id);
    END;
    """,
]

SCHEMA_VERSION = len(MIGRATIONS)
NO_GARBAGE_KEY = "no_garbage"  # the meta key of migration 5's trigger
CHUNK_COUNT_KEY = "chunk_count"  # the meta key of migration 6's triggers


def migrate(conn: apsw.Connection, path: Path) -> None:
    """Bring the store at `path` up to SCHEMA_VERSION; refuse a store this build cannot read, and any
    other program's SQLite database (it must never be written to)."""
    version = check_version(conn, path)
    if version == SCHEMA_VERSION:
        return
    with write_transaction(conn):
        # Another process may have migrated between the check and taking the write lock.
        for number in range(check_version(conn, path), SCHEMA_VERSION):
            conn.execute(MIGRATIONS[number])
            conn.execute(f"PRAGMA user_version = {number + 1}")


def check_version(conn: apsw.Connection, path: Path) -> int:
    """The store's schema version; raises when this build must not touch the file."""
    version = query_value(conn, int, "PRAGMA user_version")
    if version > SCHEMA_VERSION:
        raise StoreUnusable(
            path,
            f"was written by a newer Quarry (schema {version}; this build reads up to {SCHEMA_VERSION})",
            (Remedy.UPGRADE, Remedy.REBUILD),
        )
    if version == 0 and query_value(conn, int, "SELECT count(*) FROM sqlite_schema"):
        raise StoreError(f"{path} is another program's SQLite database, not a Quarry index", (Remedy.OTHER_STORE,))
    return version
