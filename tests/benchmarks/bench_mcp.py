"""What `quarry mcp` adds to a search: per-call latency through MCP against the engine's own time for the
same queries through the CLI's --queries-file, in one run on one index.

    python tests/benchmarks/bench_mcp.py [--repo DIR] [--rounds 3] [--work DIR] [--json]

Indexes DIR (default: the standard library's `email` package) into a fresh store with the real model, then
runs the same queries (hybrid mode, k=10) both ways, after one warm-up query each:
- CLI: `quarry search --queries-file --json`; each query's `elapsed_ms` is the engine's time for it;
- MCP: `quarry mcp` as a subprocess, called with the SDK's client over stdio; each call is timed at the
  client, from the request to the parsed answer (JSON-RPC, argument validation, scope look-up, the search,
  bounding snippets, serialising the answer twice: structured and text).
It prints p50/p95 of both, and of the overhead: each MCP call's round trip minus the engine's time within
that same call (the answer's elapsed_ms), and the machine's load. The last line printed is a JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from tests.mcp_client import server_environment  # noqa: E402

QUARRY = [sys.executable, "-m", "desktop_app"]  # as the `quarry` command starts
EMAIL = Path(sys.base_prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "email"
QUERIES = [
    "parse an email message from bytes",
    "decode a MIME encoded header",
    "fold long header lines",
    "quoted printable encoding of a body",
    "base64 encode attachment",
    "get the charset of a message part",
    "walk every part of a multipart message",
    "format a date for an email header",
    "split an address list into name and address",
    "generate the message as text with line endings",
    "policy that controls line length",
    "BytesParser",
    "HeaderRegistry",
    "EmailMessage.get_body",
    "make_msgid",
    "formataddr",
    "decode_header",
    "set_payload",
    "get_content_type default",
    "MIMEMultipart boundary",
    "content manager for text",
    "where are defects registered while parsing",
    "unfold header whitespace",
    "iterate over attachments",
    "encode a word with RFC 2047",
    "Charset body encoding",
    "feedparser push data incrementally",
    "raise an error for a malformed header",
    "utf8 option of the policy",
    "address header with group syntax",
]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def cli_times(root: Path, db: Path, queries: list[str], work: Path) -> list[float]:
    queries_file = work / "queries.txt"
    queries_file.write_text("\n".join(queries) + "\n", encoding="utf-8")
    out = subprocess.run(
        [*QUARRY, "search", "--queries-file", str(queries_file), "--root", str(root), "--db", str(db), "--json"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return [json.loads(line)["elapsed_ms"] for line in out.splitlines()]


async def mcp_times(root: Path, db: Path, queries: list[str], work: Path) -> tuple[list[float], list[float]]:
    """Each call's round trip at the client, and the engine's time within it (the answer's elapsed_ms)."""
    params = StdioServerParameters(
        command=QUARRY[0], args=[*QUARRY[1:], "mcp", "--db", str(db)], cwd=str(root), env=server_environment()
    )
    times, engine = [], []
    with (work / "mcp.err").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            for query in queries:
                start = time.perf_counter()
                result = await client.call_tool("search", {"query": query, "k": 10})
                times.append((time.perf_counter() - start) * 1000)
                assert not result.is_error, result.content[0].text
                engine.append(result.structured_content["elapsed_ms"])
    return times, engine


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, default=EMAIL, help="folder to index and search")
    parser.add_argument("--rounds", type=int, default=3, help="times each query is asked each way")
    parser.add_argument("--work", type=Path, default=None, help="folder for the store")
    parser.add_argument("--json", action="store_true", help="print only the JSON line")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="quarry-bench-mcp-"))
    work.mkdir(parents=True, exist_ok=True)
    root, db = args.repo.resolve(), work / "index.db"
    subprocess.run([*QUARRY, "index", str(root), "--db", str(db), "--quiet"], check=True)
    # One warm-up query each way (model and vectors loading), then every query `rounds` times.
    asked = [QUERIES[0]] + QUERIES * args.rounds
    cli = cli_times(root, db, asked, work)[1:]
    calls, engine = asyncio.run(mcp_times(root, db, asked, work))
    via_mcp, overhead = calls[1:], [c - e for c, e in zip(calls[1:], engine[1:], strict=True)]
    figures = {
        "queries": len(cli),
        "cli_engine_ms": {"p50": round(statistics.median(cli), 2), "p95": round(percentile(cli, 0.95), 2)},
        "mcp_call_ms": {"p50": round(statistics.median(via_mcp), 2), "p95": round(percentile(via_mcp, 0.95), 2)},
        "overhead_ms": {"p50": round(statistics.median(overhead), 2), "p95": round(percentile(overhead, 0.95), 2)},
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "repo": str(root),
    }
    if not args.json:
        print(f"{figures['queries']} searches of {root}, hybrid, k=10 (load {figures['load_average']})")
        for name, label in (
            ("cli_engine_ms", "CLI engine time"),
            ("mcp_call_ms", "MCP call"),
            ("overhead_ms", "MCP overhead"),
        ):
            print(f"  {label:16} p50 {figures[name]['p50']:7.2f} ms   p95 {figures[name]['p95']:7.2f} ms")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
