"""The SQL statements both stores run word for word, written once (both schemas name their tables and columns
alike: schema_names.py). Only the placeholder differs: apsw binds SQLite's `?`, psycopg `%s`, so each store takes
the set made with its own (SQLITE, POSTGRES). What the dialects write differently stays in each store: `IN (...)`
lists against `= ANY(%s)` (a statement that takes one has a `{chosen}` for it), FTS5 against tsvector, vec0 against
pgvector tables, `meta` against `quarry_meta`."""

from __future__ import annotations


class Statements:
    def __init__(self, p: str):
        # --- models
        self.model_dims = f"SELECT dims FROM model WHERE id = {p}"
        self.model_source = f"SELECT source FROM model WHERE id = {p}"
        self.model_table = f"SELECT vector_table, dims FROM model WHERE id = {p}"
        self.insert_model = (
            f"INSERT INTO model (id, dims, vector_table, source, created_at) VALUES ({p}, {p}, {p}, {p}, {p})"
        )
        self.delete_model = f"DELETE FROM model WHERE id = {p}"
        # --- scopes
        self.count_scopes = "SELECT count(*) FROM scope"
        self.child_scopes = f"SELECT id FROM scope WHERE parent_id = {p}"
        self.mark_indexed = f"UPDATE scope SET last_indexed_at = {p} WHERE id = {p}"
        self.delete_scope_and_children = f"DELETE FROM scope WHERE id = {p} OR parent_id = {p}"
        self.scope_files_and_bytes = (
            f"SELECT count(*), coalesce(sum(size), 0) FROM file WHERE scope_id = {p} AND status = 'indexed'"
        )
        self.scope_places = f"SELECT count(*) FROM file_chunk WHERE scope_id = {p}"
        # --- files and chunks
        self.file_states = f"SELECT path, size, mtime_ns, sha256, status FROM file WHERE scope_id = {p}"
        self.file_row = f"SELECT path, size, mtime_ns, sha256, status FROM file WHERE scope_id = {p} AND path = {p}"
        self.count_chunks = "SELECT count(*) FROM chunk"
        # --- file outlines: the indexed files lacking an outline vector of a model (bound first)
        without_outline = (
            "FROM file f WHERE f.status = 'indexed' AND NOT EXISTS "
            f"(SELECT 1 FROM file_outline o WHERE o.model_id = {p} AND o.file_id = f.id)"
        )
        self.files_without_outline = (
            f"SELECT f.id, f.scope_id, f.path, f.sha256 {without_outline} ORDER BY f.mtime_ns DESC, f.id LIMIT {p}"
        )
        self.count_files_without_outline = f"SELECT count(*) {without_outline}"
        # Written only while the file has the content the vector was made from (rows.outline_rows binds them).
        self.add_outline = (
            f"INSERT INTO file_outline (file_id, model_id, vector) SELECT id, {p}, {p} FROM file "
            f"WHERE scope_id = {p} AND path = {p} AND sha256 = {p} AND status = 'indexed' "
            "ON CONFLICT (model_id, file_id) DO UPDATE SET vector = excluded.vector"
        )
        # --- definitions: the lines each definition among `chosen` places spans in its file, with its windows and
        # overloads (its name in its enclosing symbol) and its members (whose enclosing symbol is it or lies in it),
        # through the places' index on their file (a file holds tens to hundreds)
        self.definition_extents = (
            "WITH d AS (SELECT id, file_id, symbol_name AS name, parent_symbol AS parent, "
            "coalesce(parent_symbol || '.', '') || symbol_name AS qualified FROM file_chunk "
            "WHERE {chosen} AND symbol_name IS NOT NULL) "
            "SELECT d.id, max(p.end_line) - min(p.start_line) + 1 FROM d JOIN file_chunk p ON p.file_id = d.file_id "
            "WHERE (p.symbol_name = d.name AND p.parent_symbol IS NOT DISTINCT FROM d.parent) "
            "OR p.parent_symbol = d.qualified "
            "OR substr(p.parent_symbol, 1, length(d.qualified) + 1) = d.qualified || '.' GROUP BY d.id"
        )
        # --- search history
        self.add_history = (
            "INSERT INTO history (at, query, scope_root, mode, result_count, top_score, duration_ms) "
            f"VALUES ({p}, {p}, {p}, {p}, {p}, {p}, {p})"
        )
        self.history = (
            "SELECT at, query, scope_root, mode, result_count, top_score, duration_ms FROM history "
            f"ORDER BY id DESC LIMIT {p}"
        )


SQLITE = Statements("?")
POSTGRES = Statements("%s")
