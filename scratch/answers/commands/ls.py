"""ls: the agent's entries."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from scratch.answers.kernel.result import Result, Table
from scratch.declare import Arg, Command, Tool

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context

PREFIX = Arg("Only names starting with this (literal, case-sensitive).", metavar="[PREFIX]",
             max_length=1024, show_default=False)


def ls(ctx: Context, prefix: Annotated[str, PREFIX] = "") -> Result[dict[str, object]]:
    rows = ctx.store().list(prefix)
    table = Table(["name", "kind", "version", "bytes", "lines", "updated"],
                  [[r["name"], r["kind"], r["version"] if r["version"] is not None else "-",
                    r["bytes"], r["lines"], r["updated"]] for r in rows])
    return Result("ls", data={"agent": ctx.agent, "entries": rows}, table=table)


COMMAND = Command(
    "ls", "List the agent's entries: kind, version, bytes, lines, updated.\n\n"
    "PREFIX is literal and case-sensitive. Example: scratch ls kubectl_get/",
    ls,
    tools=(Tool("list_files", "This agent's entries: kind, version, bytes, lines, updated.",
                toolset="files"),))
