"""SQL that turns a store back into what an older schema left, for the tests of migrating it."""

from __future__ import annotations

import shutil
from pathlib import Path

import apsw

# Schema 9's text parts, as a store had them before migration 10: no text dictionary, and the trigram index
# reading its text from the chunk table (filled with every chunk: none waiting). For a store whose text is plain.
BEFORE_COMPRESSED_TEXT = """
    DROP TABLE text_dictionary;
    DROP TRIGGER chunk_text_insert;
    DROP TRIGGER chunk_text_delete;
    DROP TABLE chunk_text;
    CREATE VIRTUAL TABLE chunk_text USING fts5(
        text, content='chunk', content_rowid='id', tokenize='trigram', detail='none'
    );
    INSERT INTO chunk_text(chunk_text) VALUES ('rebuild');
    DELETE FROM chunk_text_pending;
    CREATE TRIGGER chunk_text_insert AFTER INSERT ON chunk BEGIN
        INSERT INTO chunk_text_pending(chunk_id) VALUES (new.id);
    END;
    CREATE TRIGGER chunk_text_delete AFTER DELETE ON chunk BEGIN
        INSERT INTO chunk_text(chunk_text, rowid, text) SELECT 'delete', old.id, old.text
            WHERE NOT EXISTS (SELECT 1 FROM chunk_text_pending WHERE chunk_id = old.id);
        DELETE FROM chunk_text_pending WHERE chunk_id = old.id;
    END;
"""


# Schema 10's chunk hash keys, as a store had them before migration 11: 32 hex digits rather than their bytes.
BEFORE_HASH_BYTES = "UPDATE chunk SET hash = lower(hex(hash)) WHERE typeof(hash) = 'blob'"


# Schema 11's trigger, as a store had it before migration 12: a deleted place forgets the mark that no chunk is
# unused, and nothing records which chunk it used.
BEFORE_UNPLACED = """
    DROP TABLE chunk_unplaced;
    DROP TRIGGER file_chunk_delete;
    CREATE TRIGGER file_chunk_delete AFTER DELETE ON file_chunk BEGIN
        DELETE FROM meta WHERE key = 'no_garbage';
    END;
"""


def old_copy(index: Path, db: Path, version: int, undo: str = "") -> None:
    """Copy the index at `index` to `db` as schema `version` (at most 9) left it: schema 9's text parts and hash
    keys, then `undo` (SQL taking away what came after `version`)."""
    shutil.copy(index, db)
    conn = apsw.Connection(str(db))
    try:
        conn.execute(BEFORE_HASH_BYTES)
        conn.execute(BEFORE_COMPRESSED_TEXT)
        conn.execute(f"{undo}; PRAGMA user_version = {int(version)}")
    finally:
        conn.close()
