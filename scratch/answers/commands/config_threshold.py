"""config threshold: which pattern decides a tool's ingest threshold, and why."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from scratch.answers.kernel.result import Result
from scratch.declare import Arg, Command
from scratch.errors import UsageError, argument

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context

SERVER = Arg("An MCP server's name: the threshold is the one at which the MCP proxy stores a "
             "result of that server's tool.", metavar="[SERVER]", max_length=255)
TOOL = Arg("Tool name, as given to ingest's tool.", metavar="TOOL", max_length=255)


def threshold(ctx: Context, server: Annotated[str | None, SERVER] = None,
              tool: Annotated[str | None, TOOL] = None) -> Result[dict[str, object]]:
    """Which [thresholds] pattern decides TOOL's ingest threshold, and why; with ``server``,
    the threshold at which the MCP proxy stores a result of that server's TOOL.

    ``tool`` has a default only so that the optional ``server`` may come first, as a command
    line writes them (``config threshold [SERVER] TOOL``): it is needed."""
    if tool is None:
        raise UsageError(f"config threshold needs {argument('tool')}", code="invalid_argument",
                         command="config threshold", argument="tool")
    from scratch.thresholds import resolve_server_threshold, resolve_threshold
    if server is None:
        t = resolve_threshold(tool, ctx.config["thresholds"])
    else:
        t = resolve_server_threshold(server, tool, ctx.config["mcp.servers"],
                                     ctx.config["thresholds"])
    src = f"pattern {t.pattern!r}" if t.pattern else "the default"
    if server is not None and t.pattern:
        src += f" of [{t.table}]"
    who = tool if server is None else f"{server} {tool}"
    return Result("config threshold", data=t.as_dict(),
                  text=f"{who}: min_tokens {t.min_tokens} from {src} ({t.reason})\n")


COMMAND = Command(
    "config threshold",
    "Say which pattern decides TOOL's ingest threshold, and why; with SERVER, the threshold at "
    "which 'scratch mcp proxy' stores a result of that MCP server's TOOL "
    "([mcp.servers.SERVER.scratchpad], then [thresholds]).\n\n"
    "Example: scratch config threshold kubectl_get",
    threshold)
