"""Nothing lost: an index killed at several points and resumed ends identical to an uninterrupted one.

    python tests/benchmarks/bench_kill_resume.py [--trees repo] [--repo PATH] [--kills keyword:0.5,fast:0.1,text:0.3]
    python tests/benchmarks/bench_kill_resume.py --trees kernel      # Debian's linux-source, as bench_fast_stage.py

For each tree: one uninterrupted `quarry index TREE --db A --until fast`, then the same command on a new database
B, killed with SIGKILL at each point of `--kills` in turn (a step of the progress line, `keyword`, `fast` or
`text`, and the share of it done), each kill followed by the same command again, the last run to its end. Then
both databases are compared: files (path, size, mtime, sha256, language, status), places (path, ordinal, lines,
type, symbol, parent, chunk hash), chunks (hash, token count, text), the keyword and trigram indexes' vocabularies
(fts5vocab: terms with their document and occurrence counts), every vector by its chunk's hash, the sign bits by
rowid, meta, and the chunks still waiting for the text index. Sign packs may differ in number (a resumed run's
collection rewrites them whole), not in content. Prints each part as same or different, then one JSON line.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import apsw
import numpy as np
import sqlite_vec

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_fast_stage import SEMBLE_REPO, kernel_tree, stdlib_copy  # noqa: E402

from desktop_app.store.sqlite import text_codec  # noqa: E402
from desktop_app.store.sqlite.vec0_storage import Vec0Table  # noqa: E402

# What the CLI's progress line says in each step, and the count it reports there.
STEP_LINES = {
    "keyword": re.compile(r"keyword index: (\d+)/(\d+) files"),
    "fast": re.compile(r"fast vectors: (\d+)/(\d+) chunks"),
    "text": re.compile(r"text index: (\d+)/(\d+) chunks"),
}


def index(root: Path, db: Path, kill_at: tuple[str, float] | None = None) -> str:
    """Run `quarry index`; with `kill_at` (step, share), SIGKILL it at the first progress line of that step showing
    that share done. What the last progress line said, or that the run ended before it was killed."""
    cmd = [sys.executable, "-m", "desktop_app", "index", str(root), "--db", str(db), "--until", "fast"]
    # From a temporary folder: `python -m` puts the working directory first on the path (bench_fast_stage.py).
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=tempfile.gettempdir()
    )
    last = ""
    assert proc.stderr is not None
    for line in proc.stderr:
        last = line.strip() or last
        if kill_at is None:
            continue
        m = STEP_LINES[kill_at[0]].search(line)
        if m and int(m.group(2)) and int(m.group(1)) >= kill_at[1] * int(m.group(2)):
            proc.send_signal(signal.SIGKILL)
            break
    proc.wait()
    if proc.returncode == -signal.SIGKILL:
        return f"killed after: {last}"
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}: {last}")
    return f"ended before the kill: {last}" if kill_at is not None else last


def _digest(rows) -> tuple[int, str]:
    h, n = hashlib.sha256(), 0
    for r in rows:
        h.update(repr(r).encode())
        n += 1
    return n, h.hexdigest()[:16]


def _signs(conn: apsw.Connection, table: str) -> tuple[int, str]:
    ids, words = [], []
    for size, rowids, signs in conn.execute(
        "SELECT size, ids, signs FROM vector_sign WHERE vector_table = ? ORDER BY id", (table,)
    ):
        ids.append(np.frombuffer(rowids, dtype=np.int64))
        words.append(np.frombuffer(signs, dtype=np.uint64).reshape(-1, size))
    if not ids:
        return 0, ""
    joined_ids, joined = np.concatenate(ids), np.concatenate(words, axis=1)
    order = np.argsort(joined_ids, kind="stable")
    return len(order), hashlib.sha256(joined_ids[order].tobytes() + joined[:, order].tobytes()).hexdigest()[:16]


def summary(db: Path) -> dict[str, object]:
    """Each part of the store, as a count and a digest that does not depend on row ids or write order."""
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    text_codec.ChunkTextCodec(conn)
    out: dict[str, object] = {
        "files": _digest(
            conn.execute("SELECT path, size, mtime_ns, sha256, language, status, skip_reason FROM file ORDER BY path")
        ),
        "places": _digest(
            conn.execute(
                "SELECT f.path, fc.ordinal, fc.start_line, fc.end_line, fc.chunk_type, fc.symbol_name, "
                "fc.symbol_type, fc.parent_symbol, c.hash FROM file_chunk fc JOIN file f ON f.id = fc.file_id "
                "JOIN chunk c ON c.id = fc.chunk_id ORDER BY f.path, fc.ordinal"
            )
        ),
        # Their text as written, not as compressed: a resumed run trains its dictionaries on other batches.
        "chunks": _digest(
            conn.execute(f"SELECT hash, token_count, {text_codec.UNPACK}(text) FROM chunk ORDER BY hash")
        ),
        "waiting for the text index": conn.execute("SELECT count(*) FROM chunk_text_pending").fetchall()[0][0],
        # A scope's id is random: the meta keys that hold one are compared without it.
        "meta": sorted((k.split(":")[0], v) for k, v in conn.execute("SELECT key, value FROM meta")),
    }
    vocab = apsw.Connection(str(db))  # fts5vocab tables live in `temp`: nothing is written to the file
    vocab.execute("CREATE VIRTUAL TABLE temp.kv USING fts5vocab(main, 'fts', 'row')")
    vocab.execute("CREATE VIRTUAL TABLE temp.tv USING fts5vocab(main, 'chunk_text', 'row')")
    out["keyword vocabulary"] = _digest(vocab.execute("SELECT term, doc, cnt FROM temp.kv ORDER BY term"))
    out["trigram vocabulary"] = _digest(vocab.execute("SELECT term, doc FROM temp.tv ORDER BY term"))
    vocab.close()
    hashes = dict(conn.execute("SELECT id, hash FROM chunk"))
    for table, dims in conn.execute("SELECT vector_table, dims FROM model").fetchall():
        for name in (table, table + "_name"):
            rows = sorted(
                (hashes[i], hashlib.md5(row.tobytes()).hexdigest())
                for ids, codes in Vec0Table(conn, name, dims).batches(0, 200_000, codes=True)
                for i, row in zip(ids.tolist(), codes, strict=True)
            )
            out[f"vectors {name}"] = _digest(rows)
            out[f"sign bits {name}"] = _signs(conn, name)
    conn.close()
    return out


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trees", default="repo", help="comma-separated: repo, stdlib, kernel")
    ap.add_argument("--repo", type=Path, default=SEMBLE_REPO, help="the 'repo' tree")
    ap.add_argument("--kills", default="keyword:0.5,fast:0.1,text:0.3", help="step:share, comma-separated, in order")
    ap.add_argument("--json", action="store_true", help="print only the JSON line")
    args = ap.parse_args(argv)
    kills = [(step, float(share)) for step, share in (k.split(":") for k in args.kills.split(","))]
    results = []
    with tempfile.TemporaryDirectory(prefix="quarry-bench-kill-") as tmp_name:
        tmp = Path(tmp_name)
        for name in args.trees.split(","):
            root = {"repo": lambda: args.repo, "stdlib": lambda: stdlib_copy(tmp), "kernel": kernel_tree}[name]()
            whole, killed = tmp / f"{name}-whole.db", tmp / f"{name}-killed.db"
            index(root, whole)
            said = [index(root, killed, kill) for kill in kills]
            index(root, killed)
            a, b = summary(whole), summary(killed)
            parts = {part: a[part] == b.get(part) for part in a}
            results.append({"tree": name, "kills": dict(zip(args.kills.split(","), said, strict=True)), "parts": parts})
            if not args.json:
                for kill, line in results[-1]["kills"].items():
                    print(f"{name}: {kill}: {line}")
                for part, same in parts.items():
                    print(
                        f"  {'same' if same else 'DIFFERENT'}: {part} {a[part]}" + ("" if same else f" / {b.get(part)}")
                    )
    out = {
        "trees": results,
        "identical": all(all(r["parts"].values()) for r in results),
        "load_avg": os.getloadavg()[0],
    }
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
