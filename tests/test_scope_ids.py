"""A local index numbers its folders (scopes): the id is in every place's row and in two of the places' indexes,
where a 26-character ULID took ~200 MB of the Linux kernel's index. Numbers are never given twice, and a store
whose folders have ULIDs (made by an earlier build) keeps them and numbers the folders it adds."""

from __future__ import annotations

import json
from pathlib import Path

from desktop_app.store.sqlite.connection import open_connection
from desktop_app.store.sqlite.store import SqliteStore

from .reliability import quarry, write_tree

_ULID = "01M8HMGDVNANQSEF3YB7ZSYFDM"


def _places_by_scope(db: Path) -> dict[str, int]:
    conn = open_connection(db)
    try:
        return dict(conn.execute("SELECT scope_id, count(*) FROM file_chunk GROUP BY scope_id").fetchall())
    finally:
        conn.close()


def test_folders_are_numbered_and_no_number_is_given_twice(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    store = SqliteStore(db)
    try:
        first = store.create_scope(tmp_path / "a")
        second = store.create_scope(tmp_path / "b")
        assert (first.id, second.id) == ("1", "2")
        assert store.create_scope(tmp_path / "a").id == "1"  # the folder's scope, not a new one
        store.remove_scope(second.id)
        assert store.create_scope(tmp_path / "c").id == "3"
        assert store.scope_by_id("3") is not None and store.scope_by_id("2") is None
    finally:
        store.close()


def test_an_index_run_writes_the_number_into_its_places(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    tree = write_tree(tmp_path / "tree", 5, "numbered")
    proc = quarry("index", tree, "--db", db, "--until", "keyword", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["scope_id"] == "1"
    assert _places_by_scope(db) == {"1": 5}


def test_a_store_with_ulid_folders_keeps_them_and_numbers_new_ones(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    old_tree = write_tree(tmp_path / "old", 3, "older")
    assert quarry("index", old_tree, "--db", db, "--until", "keyword").returncode == 0
    conn = open_connection(db)
    try:  # as an earlier build named the folder: a ULID, and no count of numbers given
        conn.execute("PRAGMA foreign_keys = OFF")
        with conn:
            for table, column in (("scope", "id"), ("file", "scope_id"), ("file_chunk", "scope_id")):
                conn.execute(f"UPDATE {table} SET {column} = ?", (_ULID,))
            conn.execute("UPDATE meta SET key = 'chunking:' || ? WHERE key = 'chunking:1'", (_ULID,))
            conn.execute("DELETE FROM meta WHERE key = 'scope_numbers'")
    finally:
        conn.close()
    new_tree = write_tree(tmp_path / "new", 2, "newer")
    proc = quarry("index", new_tree, "--db", db, "--until", "keyword", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["scope_id"] == "1"
    again = quarry("index", old_tree, "--db", db, "--until", "keyword", "--json")
    assert again.returncode == 0, again.stderr
    assert (json.loads(again.stdout)["scope_id"], json.loads(again.stdout)["files_unchanged"]) == (_ULID, 3)
    assert _places_by_scope(db) == {_ULID: 3, "1": 2}
    found = quarry("search", "older", "--db", db, "--root", old_tree, "--mode", "exact", "--json")
    assert found.returncode == 0, found.stderr
    assert {r["path"] for r in json.loads(found.stdout)["results"]} == {f"pkg{i}/older_{i}.py" for i in range(3)}
