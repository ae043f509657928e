"""`quarry mcp --print-config CLIENT`: the snippet that registers Quarry with a coding agent or editor."""

from __future__ import annotations

import json
import shlex

CLIENTS = ("claude", "cursor", "vscode", "zed")

# Where each client reads its servers from (project-level files, so a repository can carry them).
WHERE = {
    "claude": "save as .mcp.json in the repository (Claude Code), or run the `claude mcp add` line below",
    "cursor": "save as .cursor/mcp.json in the repository, or merge into ~/.cursor/mcp.json",
    "vscode": "save as .vscode/mcp.json in the repository (VS Code agent mode)",
    "zed": "merge into Zed's settings.json (zed: open settings)",
}


def client_config(client: str, command: list[str]) -> str:
    """The JSON `client` reads to start `command` (argv) as a stdio MCP server named "quarry"."""
    program, args = command[0], command[1:]
    if client == "vscode":
        config: dict = {"servers": {"quarry": {"type": "stdio", "command": program, "args": args}}}
    elif client == "zed":
        config = {"context_servers": {"quarry": {"source": "custom", "command": program, "args": args, "env": {}}}}
    elif client in ("claude", "cursor"):
        config = {"mcpServers": {"quarry": {"command": program, "args": args}}}
    else:
        raise ValueError(f"unknown client {client!r}")
    return json.dumps(config, indent=2)


def claude_add_line(command: list[str]) -> str:
    """The one-line alternative for Claude Code."""
    return "claude mcp add quarry -- " + shlex.join(command)
