"""config: the effective settings, and where each came from."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scratch.answers.kernel.result import Payload, Result, Table
from scratch.declare import Command

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context


def show_config(ctx: Context) -> Result[Payload]:
    rows = ctx.config.describe()
    data = {"store": str(ctx.root), "store_source": ctx.root_source,
            "config_file": str(ctx.config.path) if ctx.config.path else None,
            "agent": ctx.agent, "session": ctx.session, "settings": rows}
    table = Table(["key", "value", "source"],
                  [["store", str(ctx.root), ctx.root_source], ["agent", ctx.agent, ""]]
                  + [[r["key"], _show(r["value"]), r["source"]] for r in rows])
    return Result("config", data=data, table=table)


def _show(value: object) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items()) or "{}"
    return str(value)


# no MCP tool: the settings name the store's paths and every agent's, a person's to read
COMMAND = Command(
    "config", "Show the effective settings and where each came from.\n\n"
    "Example: scratch config --json",
    show_config,
    group_help="Show the effective settings and where each came from; 'config threshold "
    "TOOL' explains ingest thresholds.\n\nExample: scratch config --json")
