"""The MCP SDK's own client, talking to a real `quarry mcp` process over stdio, driven from plain tests.

The client's streams live in one task on a private event loop (anyio wants a task group entered and left
by the same task), and each call is handed to that task and awaited through a future.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import CallToolResult


def server_environment() -> dict[str, str]:
    """The test session's private folders (log, cache, settings): the SDK passes on only PATH, HOME and a few
    more by default."""
    return {k: v for k, v in os.environ.items() if k.startswith("QUARRY_") or k.startswith("XDG_")}


class McpSession:
    def __init__(self, args: list[str], cwd: Path, errlog: Path):
        self.params = StdioServerParameters(
            command=sys.executable, args=["-m", "desktop_app.cli", *args], cwd=str(cwd), env=server_environment()
        )
        self._errlog = errlog.open("w", encoding="utf-8")
        self._loop = asyncio.new_event_loop()
        self._queue: asyncio.Queue | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, name="mcp-client", daemon=True)
        self._thread.start()
        ready: Future = Future()
        self._done = asyncio.run_coroutine_threadsafe(self._serve(ready), self._loop)
        ready.result(timeout=120)

    async def _serve(self, ready: Future) -> None:
        self._queue = asyncio.Queue()
        try:
            async with Client(stdio_client(self.params, errlog=self._errlog)) as client:
                ready.set_result(None)
                while (item := await self._queue.get()) is not None:
                    call, answer = item
                    try:
                        answer.set_result(await call(client))
                    except BaseException as exc:  # handed to the test that made the call
                        answer.set_exception(exc)
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise

    def _run(self, call: Callable[[Client], Awaitable[Any]]) -> Any:
        answer: Future = Future()
        assert self._queue is not None
        self._loop.call_soon_threadsafe(self._queue.put_nowait, (call, answer))
        return answer.result(timeout=300)

    def instructions(self) -> str | None:
        """What the server told the client at the start, for the agent's context."""

        async def read(client: Client) -> str | None:
            return client.instructions

        return self._run(read)

    def list_tools(self) -> list:
        return self._run(lambda c: c.list_tools()).tools

    def call(self, tool: str, /, **arguments: Any) -> CallToolResult:
        return self._run(lambda c: c.call_tool(tool, arguments))

    def ok(self, tool: str, /, **arguments: Any) -> dict:
        """A call that must succeed: its structured answer (checked against its text twin)."""
        result = self.call(tool, **arguments)
        assert not result.is_error, result.content[0].text
        assert json.loads(result.content[0].text) == result.structured_content
        return result.structured_content

    def error(self, tool: str, /, **arguments: Any) -> str:
        """A call that must fail as a tool error: its message."""
        result = self.call(tool, **arguments)
        assert result.is_error, result.structured_content
        return result.content[0].text

    def close(self) -> None:
        assert self._queue is not None
        self._loop.call_soon_threadsafe(self._queue.put_nowait, None)
        self._done.result(timeout=60)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._errlog.close()
