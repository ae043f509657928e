"""CI: the bundled `quarry mcp` answers a real MCP client (the SDK's) with a search of an indexed fixture.

    python .ci/bundle_mcp_check.py QUARRY_EXE REPO DB

The bundle runs with an empty environment, as a client started from a desktop would run it.
"""

from __future__ import annotations

import asyncio
import sys

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client


async def check(exe: str, repo: str, db: str) -> None:
    params = StdioServerParameters(command=exe, args=["mcp", "--db", db], cwd=repo, env={"PATH": "/usr/bin:/bin"})
    async with Client(stdio_client(params)) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert names == {"search", "find_symbol", "read_span", "index_status", "reindex"}, names
        result = await client.call_tool("search", {"query": "retry"})
        assert not result.is_error and result.structured_content["results"], result.content
        print(f"bundled quarry mcp: {len(result.structured_content['results'])} results for 'retry'")


if __name__ == "__main__":
    asyncio.run(check(*sys.argv[1:4]))
