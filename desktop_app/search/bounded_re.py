"""Python's `re` in a child process, stopped when its time is up: text mode's patterns that RE2 cannot run alike.

`re` backtracks: `(a+)+$` over a line of 60 a's and a "!" tries about 2^60 ways and never ends. It holds the
GIL while it does, and it checks for signals only on the main thread, so in the worker thread nothing can stop
it: not Ctrl+C (the CLI's main thread never got the GIL back), not another search (the MCP server's single worker
stayed stuck, and kept a core busy after its client left). A child process can be killed. It starts once per
text search engine, when a pattern first needs it (14 ms to the first answer here), and answers request after
request (0.3 ms there and back).

This file runs as that child too (`python -I -S bounded_re.py`, or the standalone bundle's entry point with
CHILD_ARGUMENT), so it imports nothing but the standard library.
"""

from __future__ import annotations

import contextlib
import json
import re
import signal
import subprocess
import sys
import threading
import weakref
from collections.abc import Sequence

# The argument that makes the standalone bundle's executable the child (installer/quarry_main.py): a frozen
# program has no interpreter to hand a script to.
CHILD_ARGUMENT = "--quarry-regex-child"
# The child ends itself this long after a request's budget, should its parent be gone and not kill it.
_ORPHAN_GRACE_S = 2.0

Piece = tuple[int, str, Sequence[tuple[int, int]]]  # (offset of `text` in the caller's text, text, spans in it)


class BoundedRe:
    """One child process, started when first asked and again after it was stopped; one request at a time."""

    def __init__(self) -> None:
        self._child: subprocess.Popen[bytes] | None = None
        self._end: weakref.finalize | None = None  # stops the child when this object goes, or at exit

    def find(self, pattern: str, flags: int, pieces: Sequence[Piece], budget_s: float) -> list[tuple[int, int]] | None:
        """(start, end) of every match of `re.compile(pattern, flags)` within each piece's spans (as finditer with
        pos and endpos gives them), offset into the caller's text, in order; None when `budget_s` ran out (or
        the child was stopped, as Ctrl+C stops it with its parent): the child is then ended."""
        if self._child is not None and self._child.poll() is not None:
            self.close()  # it ended between requests
        child = self._child or self._start()
        stdin, stdout = child.stdin, child.stdout
        assert stdin is not None and stdout is not None
        reply: list[bytes] = []
        reader = threading.Thread(target=lambda: reply.append(stdout.readline()), daemon=True)
        reader.start()
        texts = [text.encode() for _, text, _ in pieces]
        heads = [(offset, len(data), spans) for (offset, _, spans), data in zip(pieces, texts, strict=True)]
        try:
            stdin.write(json.dumps([pattern, flags, budget_s + _ORPHAN_GRACE_S, heads]).encode() + b"\n")
            stdin.writelines(texts)
            stdin.flush()
        except OSError:  # it died (Ctrl+C reached it first)
            pass
        reader.join(budget_s)
        if reader.is_alive() or not reply or not reply[0].endswith(b"\n"):
            self.close()  # the reader then sees the end of its output
            reader.join()
            return None
        flat = json.loads(reply[0])
        return list(zip(flat[::2], flat[1::2], strict=True))

    def close(self) -> None:
        if self._end is not None:
            self._end()
        self._child = self._end = None

    def _start(self) -> subprocess.Popen[bytes]:
        frozen = getattr(sys, "frozen", False)
        command = [sys.executable, CHILD_ARGUMENT] if frozen else [sys.executable, "-I", "-S", __file__]
        self._child = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            # No console window flashes up behind the window on Windows.
            creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),
        )
        self._end = weakref.finalize(self, _kill, self._child)
        return self._child


def _kill(child: subprocess.Popen[bytes]) -> None:
    child.kill()
    child.wait()
    for stream in (child.stdin, child.stdout):
        with contextlib.suppress(OSError):
            stream.close()  # type: ignore[union-attr]


def serve() -> int:
    """The child: requests on stdin, each a JSON line [pattern, flags, seconds, [[offset, bytes, spans], ...]]
    followed by the pieces' text in UTF-8 (JSON would take 1.5 ms to write and read 400 KB of code, UTF-8 0.03),
    each answered with one line of the matches' offsets [start, end, start, end, ...], until stdin closes."""
    source, out = sys.stdin.buffer, sys.stdout.buffer
    try:
        while line := source.readline():
            pattern, flags, seconds, pieces = json.loads(line)
            texts = [source.read(size).decode() for _, size, _ in pieces]
            if hasattr(signal, "setitimer"):  # SIGALRM's default action ends the process, even inside `re`
                signal.setitimer(signal.ITIMER_REAL, seconds)
            regex = re.compile(pattern, flags)
            found: list[int] = []
            for (offset, _, spans), text in zip(pieces, texts, strict=True):
                for start, end in spans:
                    for m in regex.finditer(text, start, end):
                        found += (offset + m.start(), offset + m.end())
            if hasattr(signal, "setitimer"):
                signal.setitimer(signal.ITIMER_REAL, 0)
            out.write(json.dumps(found).encode() + b"\n")
            out.flush()
    except (KeyboardInterrupt, BrokenPipeError):  # Ctrl+C in the terminal reaches the child too; the parent left
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(serve())
