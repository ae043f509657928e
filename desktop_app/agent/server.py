"""`quarry mcp`: AgentTools served over stdio with the official MCP SDK (no protocol code of our own).

The descriptions are what an agent reads to decide when and how to call each tool; they say what each
returns and what to do next, since an agent cannot ask.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Awaitable
from pathlib import Path
from typing import Annotated, Any

# The SDK wraps each request in an OpenTelemetry span; with no exporter configured they go nowhere, and this
# keeps it so even where the user's environment configures one: nothing leaves the machine.
os.environ.setdefault("OTEL_SDK_DISABLED", "true")

from mcp.server.mcpserver import MCPServer  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402
from mcp_types import CallToolResult, TextContent, ToolAnnotations  # noqa: E402
from pydantic import Field  # noqa: E402

from ..logs import log_dir  # noqa: E402
from ..search.request import MODES  # noqa: E402
from ..worker import ops  # noqa: E402
from ..worker.worker import Worker  # noqa: E402
from .tools import LOAD_WAIT_S, MAX_K, AgentTools, ToolFailure  # noqa: E402

_log = logging.getLogger(__name__)
INSTRUCTIONS = """\
Quarry searches the indexed repository by meaning and by name, ranked, and stays up to date as files change.
Use `search` first for "where is X done / how does Y work" questions and for identifiers. To find the function
that does something, say what it does as its doc comment would ("Removes all expired sessions from the
cache", "parse a MIME header"): such a question ranks functions, each overload apart; a noun phrase ("session
expiry") ranks the files and parts of the code about it. Use `find_symbol`
when you know a definition's name; read code with `read_span` (current lines from disk). `index_status`
says how complete the index is; `reindex` catches up, or indexes the server's folder; a folder inside an
indexed one is brought up to date as part of it (only the user can add others). The default folder is the
indexed repository holding the server's working directory; pass `root` to search another indexed folder.
"""

_READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
_MAX_DETAIL_CHARS = 300


def build_server(tools: AgentTools) -> MCPServer:
    server: MCPServer = MCPServer("quarry", instructions=INSTRUCTIONS, log_level="WARNING")

    @server.tool(annotations=_READ_ONLY)
    async def search(
        query: Annotated[
            str,
            Field(
                description="What to find: a description in words (what a function does, opening with its verb, "
                "finds that function), or an identifier."
            ),
        ],
        mode: Annotated[
            str,
            Field(
                description="hybrid (default: meaning and names together), semantic (meaning only), exact "
                "(names and keywords only) or text (every line holding the query as typed, like grep; each "
                "result is a file with its matching lines)",
                json_schema_extra={"enum": list(MODES)},
            ),
        ] = "hybrid",
        k: Annotated[int, Field(description=f"How many results, 1 to {MAX_K}.")] = 10,
        lang: Annotated[
            str | None, Field(description="Only this language, lowercase: python, typescript, go, rust, ...")
        ] = None,
        path_glob: Annotated[
            str | None, Field(description="Only paths matching this gitignore-style pattern, e.g. 'src/**/*.ts'.")
        ] = None,
        symbol_type: Annotated[
            str | None, Field(description="Only definitions of this kind: function, method, class, struct, ...")
        ] = None,
        changed_only: Annotated[
            bool, Field(description="In a git worktree: only files that differ from the main checkout.")
        ] = False,
        root: Annotated[
            str | None,
            Field(description="An indexed folder (or a folder inside one) to search instead of the default."),
        ] = None,
        regex: Annotated[
            bool, Field(description="Text mode: the query is a regular expression (Python's re syntax).")
        ] = False,
        case_sensitive: Annotated[bool, Field(description="Text mode: match case (ignored by default).")] = False,
    ) -> CallToolResult:
        """Search the indexed code by meaning and by name, or for a literal or regex (mode text). Returns up to
        k results, best first, each with path, start_line/end_line, symbol and its parent (class), score
        (0..1), why it was found (name, keyword, meaning) and a snippet of at most 30 lines; in text mode up to
        k files in path order, each with its matches (line, start_col, end_col). Read more with read_span.
        A server that has just started waits for its index's vectors to load first (up to its --load-wait, 30 s
        by default); past that, vectors_searched says what share of them meaning was searched in."""
        return await _call(
            tools.search(query, mode, k, lang, path_glob, symbol_type, changed_only, root, regex, case_sensitive)
        )

    @server.tool(annotations=_READ_ONLY)
    async def find_symbol(
        name: Annotated[str, Field(description="The definition's name, any case: parse_config, HttpClient.")],
        kind: Annotated[
            str | None, Field(description="Only this kind: function, method, class, struct, interface, ...")
        ] = None,
        root: Annotated[str | None, Field(description="An indexed folder instead of the default.")] = None,
    ) -> CallToolResult:
        """Find where a function, class, method or other symbol is defined: every definition with that name
        (exact spelling first), with path, lines, kind, parent and its first lines."""
        return await _call(tools.find_symbol(name, kind, root))

    @server.tool(annotations=_READ_ONLY)
    async def read_span(
        path: Annotated[str, Field(description="A file path, relative to the default folder or absolute.")],
        start_line: Annotated[int, Field(description="First line, counting from 1.")],
        end_line: Annotated[int, Field(description="Last line (at most 400 lines are returned per call).")],
    ) -> CallToolResult:
        """Read lines of an indexed file as they are on disk now. Only files of indexed folders that the
        index took in can be read (not ignored or skipped files)."""
        return await _call(tools.read_span(path, start_line, end_line))

    @server.tool(annotations=_READ_ONLY)
    async def index_status(
        root: Annotated[str | None, Field(description="An indexed folder instead of the default.")] = None,
    ) -> CallToolResult:
        """How complete and current the index of a folder is: files, chunks, the share of chunks with
        vectors (coverage: keyword, fast, full), when it was last indexed, whether a run is going, and files
        changed or deleted since (call reindex to catch up)."""
        return await _call(tools.index_status(root))

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True))
    async def reindex(
        root: Annotated[
            str,
            Field(
                description="The folder to index or bring up to date: the server's folder, an indexed one or "
                "a folder inside either (indexed as part of the folder holding it)."
            ),
        ],
        wait_seconds: Annotated[
            float, Field(description="Wait up to this long (0 to 300) for the run to finish before answering.")
        ] = 0,
        fresh: Annotated[
            bool,
            Field(
                description="Start a new run once this session's run of the folder has finished (to pick up "
                "changes made since; the folder is also kept up to date as files change)."
            ),
        ] = False,
    ) -> CallToolResult:
        """Index a folder, or bring its index up to date. The first call starts a run; each later call reports
        on that same run, so poll with reindex(root, wait_seconds=0) until state is finished: while it runs
        state is started (this call started it) or running, with progress (phase, stage, files and chunks
        done of total, eta_s); when it ends, every call answers finished (or cancelled) with its summary
        (files, files_changed, chunks, chunks_embedded, seconds, finished_at) until fresh=true starts another
        run. A failed run is a tool error, repeated until fresh=true retries. Search works while it runs and
        improves as it goes. Other folders than the server's and the indexed ones are refused: only the user
        can add them."""
        return await _call(tools.reindex(root, wait_seconds, fresh))

    return server


async def _call(result: Awaitable[dict[str, Any]]) -> CallToolResult:
    """The answer as structured content plus the same JSON, compact, as text for clients that read only text
    (the SDK's default indents it: a quarter more tokens for the agent). A failure is the call's answer,
    never the server's end: the agent reads what went wrong."""
    try:
        answer = await result
    except ToolFailure as exc:
        raise ToolError(str(exc)) from exc
    except Exception as exc:
        _log.exception("an agent tool failed")
        detail = str(exc)
        if len(detail) > _MAX_DETAIL_CHARS:  # it may quote an argument, which can be megabytes long
            detail = detail[:_MAX_DETAIL_CHARS] + "…"
        raise ToolError(f"Quarry failed ({type(exc).__name__}: {detail}); the details are in {log_dir()}") from exc
    text = json.dumps(answer, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=answer)


def serve(worker: Worker, cwd: Path, load_wait_s: float = LOAD_WAIT_S) -> None:
    """Serve until the client closes stdin; the default folder is watched for changes from the start. The
    model and the vectors load while the client starts; a search by meaning waits up to `load_wait_s` for
    them."""
    scope = worker.run(ops.scope_containing(cwd)).result()  # before the load, which holds the worker a while
    tools = AgentTools(worker, cwd, worker.run(ops.warm_up()), load_wait_s)
    if scope is not None:
        tools.follow(scope.root)
    build_server(tools).run("stdio")
