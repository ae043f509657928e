"""The SQLite store's write-ahead log: checkpointed only after CHECKPOINT_PAGES pages (a checkpoint writes each page
it holds once, however many transactions rewrote it), and cut back to WAL_KEPT_BYTES once checkpointed, so a big
index run leaves no large log behind. Real store, real writes, the log file as SQLite leaves it."""

from __future__ import annotations

import apsw

from desktop_app.store.sqlite import connection
from desktop_app.store.sqlite.store import SqliteStore

from .test_vector_index import Corpus


def wal_frames(conn: apsw.Connection) -> tuple[int, int]:
    """(frames in the log, frames of it already in the database file), after a checkpoint that waits on nobody."""
    busy, logged, checkpointed = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()[0]
    assert busy == 0
    return logged, checkpointed


def test_the_log_outgrows_sqlites_default_checkpoint_and_is_cut_back_after_one(tmp_path, monkeypatch):
    monkeypatch.setattr(connection, "WAL_KEPT_BYTES", 256 << 10)
    path = tmp_path / "index.db"
    store = SqliteStore(path)
    try:
        corpus = Corpus(store, seed=5)
        for _ in range(6):  # some 1,500 pages of 4 KB in six transactions
            corpus.write(200, 8)
        wal = path.with_name("index.db-wal")
        # SQLite's default (1,000 pages) would have checkpointed after a transaction and started the log again.
        assert wal.stat().st_size > 1000 * 4096
        reader = apsw.Connection(str(path))
        try:
            logged, checkpointed = wal_frames(reader)
        finally:
            reader.close()
        assert logged > 1000 and checkpointed == logged
        corpus.write(1, 1)  # the first write after a whole checkpoint starts the log again, cut back
        assert wal.stat().st_size <= 256 << 10
        assert len(store.known_chunks(corpus.code)) == len(corpus.code)  # nothing lost on the way
    finally:
        store.close()
