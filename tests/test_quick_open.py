"""Quick Open (Ctrl+P) and Go to Symbol (Ctrl+T), issue 14 item 5: fuzzy names, ranked as editors rank them,
answered by the engine on the real index (both stores), and the window's dialog."""

from __future__ import annotations

import pytest

from desktop_app.search.fuzzy import fuzzy_rank
from desktop_app.worker import ops
from desktop_app.worker.worker import Worker

PATHS = [
    "desktop_app/ui/main_window.py",
    "desktop_app/ui/window_state.py",
    "docs/maintenance/windows.md",
    "tests/test_main_window.py",
    "desktop_app/ui/mw.py",
    "desktop_app/store/sqlite/migrations.py",
]


def ranked(query: str, items=PATHS, **kw) -> list[str]:
    return [items[i] for i in fuzzy_rank(query, items, 10, **kw)]


def test_typed_characters_in_order_find_a_path_and_the_file_name_counts_most():
    assert ranked("mwin")[0] == "desktop_app/ui/main_window.py"  # m-ain_w-in-dow, word starts in the name
    assert ranked("main_window")[:2] == ["desktop_app/ui/main_window.py", "tests/test_main_window.py"]
    assert ranked("migr")[0] == "desktop_app/store/sqlite/migrations.py"
    assert ranked("mw")[0] == "desktop_app/ui/mw.py"  # a name typed whole beats a scattered match
    assert ranked("zzz") == [] and ranked("   ") == []
    assert ranked("MAIN WIN")[0] == "desktop_app/ui/main_window.py"  # case and spaces ignored


def test_a_symbol_is_found_by_its_own_name_first_then_by_its_class():
    names = ["LRUCache.put", "LRUCache.get", "Matrix.multiply", "put_object", "SearchBox.onQuery"]
    assert ranked("put", names, tail_separator=".")[:2] == ["LRUCache.put", "put_object"]
    assert ranked("lruput", names, tail_separator=".") == ["LRUCache.put"]


@pytest.fixture(params=["sqlite", "team"])
def engine_worker(request, mixed_index, worker_for) -> Worker:
    where = request.getfixturevalue("mixed_team_index") if request.param == "team" else mixed_index[0]
    return worker_for(where)


def test_the_engine_finds_files_and_definitions_of_the_project(engine_worker, mixed_root):
    scope = engine_worker.run(ops.scope_containing(mixed_root)).result(timeout=60)
    files = engine_worker.run(ops.find_files(scope, "htcli")).result(timeout=60)
    assert files[0].path == "src/http_client.py" and files[0].sha256
    assert [f.path for f in engine_worker.run(ops.find_files(scope, "deb")).result(timeout=60)][:1] == [
        "web/debounce.ts"
    ]
    symbols = engine_worker.run(ops.find_symbols(scope, "lru put")).result(timeout=60)
    assert (symbols[0].parent_symbol, symbols[0].symbol_name, symbols[0].path) == ("LRUCache", "put", "src/cache.py")
    names = [
        (h.parent_symbol, h.symbol_name) for h in engine_worker.run(ops.find_symbols(scope, "fetch")).result(timeout=60)
    ]
    assert names[0] == (None, "fetch_with_retry") and len(names) == len(set(names))  # one row per definition
