"""What the window shows at its default size is readable (issue 32 items 7, 8 and 9): result rows, the preview
of a long definition, Settings, F1, text mode's columns, disabled toggles and the preview's empty state.
A real engine and index, a real window (offscreen), driven through pytest-qt."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from .test_gui import open_window, run, search  # noqa: E402

# A project named as real ones are: a long method name under its class, in a file some folders down.
DEEP_PATH = "packages/rich_ui/renderables/layout/columns/table_layout.py"


def _long_method() -> str:
    """A method of about 150 lines, cut into several chunks; the query below finds one near its end."""
    body = []
    for n in range(60):
        body.append(f"        width_{n} = self._measure_column(console, options, columns[{n % 7}]) + {n}")
        body.append(f"        widths.append(max(width_{n}, minimum_widths[{n % 5}]))")
    body += [
        "        table_width = sum(widths)",
        "        if table_width > max_width:",
        "            # last resort: shrink every column evenly until the table fits the console",
        "            excess_width = table_width - max_width",
        "            widths = ratio_reduce(excess_width, [1] * len(widths), widths, widths)",
        "        return widths",
    ]
    return (
        "    def _calculate_column_widths(\n"
        "        self, console: Console, options: ConsoleOptions\n"
        "    ) -> list[int]:\n"
        '        """Work out the widths of every column of the table."""\n'
        "        widths = []\n"
        "        minimum_widths = [self.min_width] * 5\n" + "\n".join(body) + "\n"
    )


TABLE = (
    "from .console import Console, ConsoleOptions\n\n\n"
    "def ratio_reduce(total, ratios, maximums, values):\n"
    "    return [v - total // len(values) for v in values]\n\n\n"
    "class Table:\n"
    '    """A console table with columns that fit the width of the terminal."""\n\n'
    "    def __init__(self, min_width: int = 1):\n"
    "        self.min_width = min_width\n\n"
    "    def _measure_column(self, console, options, column):\n"
    "        return column.width\n\n" + _long_method()
)


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("readable") / "rich"
    for rel in ("rich/table.py", DEEP_PATH):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(TABLE)
    return root


@pytest.fixture
def window(qtbot, qasync_loop, gui_settings, tmp_path, project):
    win = open_window(qtbot, gui_settings, tmp_path / "index.db", None)
    assert run(qtbot, win.open_project(project), timeout=120_000) is not None
    yield win
    win.close()
    win.bridge.shutdown()


# --- item 7: result rows --------------------------------------------------------------------------


def test_each_ranked_row_shows_its_definition_and_its_path_at_the_default_size(qtbot, window):
    assert (window.width(), window.height()) == (1280, 800)  # the default window, as a first start opens it
    response = search(qtbot, window, "calculate column widths")
    tree = window.tree
    hits = response.results
    assert any(r.symbol_name == "_calculate_column_widths" for r in hits[:2])
    line = tree.fontMetrics().height()
    for row, hit in enumerate(hits[:5]):
        index = tree.results.index(row, 0)
        assert tree.visualRect(index).height() >= 2 * line  # the definition over where it is
        what = tree.results.item(row, 0).text().split("   ")[0]  # "1.  fn Table._calculate_column_widths"
        lines = f"{hit.start_line}" if hit.start_line == hit.end_line else f"{hit.start_line}–{hit.end_line}"
        title, place = tree.shown_row(row)
        assert title == what  # nothing of the name cut
        if hit.path == "rich/table.py":
            assert place == f"rich/table.py:{lines}"
        else:  # a long path gives way in its folders' middle: the file name and lines stay whole
            assert hit.path == DEEP_PATH and place.startswith("pack") and "…" in place
            assert place.endswith(f"/table_layout.py:{lines}")
