"""Start-up on an existing index: how long until the window is visible, and until a query typed at once is answered.

Run: python tests/benchmarks/bench_startup.py [--work DIR] [--runs 5] [--query TEXT] [--json]

Uses the ~4,000-chunk index of bench_gui.py (built once and cached in --work). Each run starts a fresh
process the way a double-click does (`quarry --db INDEX`, offscreen Qt, its own empty settings folder
with the indexed folder as the last project) and records, in seconds from the moment the process was
created (its start time in /proc, so interpreter start-up and imports count):

- `visible_s`: the main window's first paint;
- `results_s`: the query, typed into the search bar at that first paint and sent with Enter as a user in a
  hurry would, answered in the result tree;
- `first_search_ms`: the engine's own time for that search (`SearchResponse.elapsed_ms`), and its mode.

Each run starts the window twice, in turn: with the default model's session begun before the imports, as the
`quarry` command does (desktop_app/launch.py), and without. The last line printed is one JSON object with the
median of each figure over the runs, for each way.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEFAULT_QUERY = "parse an email header"
# Each run starts the window both ways, in turn: the model's session begun before the imports, as the `quarry`
# command does (launch.py), and not, as before stop 60.
BEGUN, NOT_BEGUN = "model begun at start", "model not begun"
TIMEOUT_S = 60


def process_age_s() -> float:
    """Seconds since this process was created (from /proc: the kernel's start time, in clock ticks since boot)."""
    ticks = os.sysconf("SC_CLK_TCK")
    stat = Path("/proc/self/stat").read_text()
    started = int(stat.rsplit(")", 1)[1].split()[19]) / ticks
    uptime = float(Path("/proc/uptime").read_text().split()[0])
    return uptime - started


def child(db: Path, root: str, query: str, prefetch: bool) -> None:
    """One start-up, in a fresh process; prints its figures as JSON."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    sys.path.insert(0, str(REPO))
    if prefetch:  # as the `quarry` command does before its imports
        from desktop_app.launch import begin_model_for

        begin_model_for(["--db", str(db)])
    from PySide6.QtCore import QEvent, QObject, Qt, QTimer
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from desktop_app import cli
    from desktop_app.ui.app_settings import AppSettings
    from desktop_app.ui.main_window import MainWindow

    app = QApplication(sys.argv[:1])
    app.setOrganizationName("Quarry")
    app.setApplicationName("Quarry")
    AppSettings().last_project = root  # as if the folder had been open when the app last quit
    figures: dict = {"imported_s": process_age_s()}

    def type_query(window: MainWindow) -> None:
        window.results_shown.connect(lambda _seq: answered(window))
        QTest.keyClicks(window.search_bar, query)
        QTest.keyClick(window.search_bar, Qt.Key.Key_Return)

    def answered(window: MainWindow) -> None:
        if "results_s" in figures:
            return
        figures["results_s"] = process_age_s()
        response = window.last_response
        figures.update(
            first_search_ms=round(response.elapsed_ms, 1), mode=response.effective_mode, results=len(response.results)
        )
        window.close()

    class FirstPaint(QObject):
        def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
            if isinstance(obj, MainWindow) and event.type() == QEvent.Type.Paint and "visible_s" not in figures:
                figures["visible_s"] = process_age_s()
                QTimer.singleShot(0, lambda: type_query(obj))
            return False

    watcher = FirstPaint()
    app.installEventFilter(watcher)
    QTimer.singleShot(TIMEOUT_S * 1000, app.quit)  # a start-up that never answers ends the run
    rc = cli.main(["--db", str(db)])
    print(json.dumps({"rc": rc, **figures}))


def run_once(db: Path, root: Path, query: str, prefetch: bool) -> dict:
    with tempfile.TemporaryDirectory(prefix="quarry-startup-") as config:
        env = {**os.environ, "XDG_CONFIG_HOME": config, "QT_QPA_PLATFORM": "offscreen"}
        child_args = ["--child", "--db", str(db), "--root", str(root), "--query", query]
        out = subprocess.run(
            [sys.executable, __file__, *child_args, *([] if prefetch else ["--no-prefetch"])],
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S + 30,
        )
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode != 0 or not lines:
        raise SystemExit(f"start-up run failed (exit {out.returncode}):\n{out.stderr[-2000:]}")
    figures = json.loads(lines[-1])
    if "results_s" not in figures:
        raise SystemExit(f"the typed query was never answered within {TIMEOUT_S} s:\n{out.stderr[-2000:]}")
    return figures


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "quarry-bench-gui")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--query", default=DEFAULT_QUERY)
    ap.add_argument("--json", action="store_true", help="print only the JSON line")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--no-prefetch", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--db", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--root", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.db, args.root, args.query, not args.no_prefetch)
        return

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_gui import build_corpus  # builds the shared index once; Qt is imported only here

    work = args.work.resolve()
    db = work / "index.db"
    chunks = build_corpus(work, db)
    runs: dict[str, list[dict]] = {BEGUN: [], NOT_BEGUN: []}
    for i in range(args.runs):
        ways = [(BEGUN, True), (NOT_BEGUN, False)]
        for way, prefetch in ways if i % 2 == 0 else ways[::-1]:
            started = time.perf_counter()
            runs[way].append(run_once(db, work / "corpus", args.query, prefetch))
            if not args.json:
                r = runs[way][-1]
                print(
                    f"run {i + 1}, {way}: visible {r['visible_s']:.2f} s, answered {r['results_s']:.2f} s "
                    f"(search {r['first_search_ms']} ms, {r['mode']}, {r['results']} results; "
                    f"process {time.perf_counter() - started:.1f} s)"
                )
    out: dict = {"chunks": chunks, "runs": args.runs, "query": args.query, "load_avg": os.getloadavg()[0]}
    for way, done in runs.items():
        figures: dict = {}
        for key in ("imported_s", "visible_s", "results_s", "first_search_ms"):
            figures[key] = round(statistics.median(r[key] for r in done), 3)
        figures["max_results_s"] = round(max(r["results_s"] for r in done), 3)
        figures["modes"] = sorted({r["mode"] for r in done})
        out[way] = figures
    print(json.dumps(out))


if __name__ == "__main__":
    main()
