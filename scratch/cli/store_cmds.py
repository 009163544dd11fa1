"""Commands of the store: init, stats, config, git."""

from pathlib import Path
from typing import Annotated, Optional

import typer

from scratch.answers.kernel.context import Context
from scratch.calls import call
from scratch.cli.common import app, command, group_default


@app.command("init", help="Create a .scratch/ store in DIR (default: the current directory).\n\n"
             "Example: scratch init ~/project")
def init_cmd(
    directory: Annotated[Path, typer.Argument(metavar="[DIR]", help="Where to create .scratch/.",
                                              show_default=False)] = Path("."),
    json_output: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
) -> None:
    from scratch.answers import entries
    from scratch.cli.common import run
    store = str(directory.absolute() / ".scratch")
    run("init", lambda ctx: entries.init(directory), {"json_output": json_output,
                                                      "store": store})


@command("stats", help="Per agent: files, logs, log entries, bytes, operations by kind.\n\n"
         "Example: scratch stats --json")
def stats_cmd(ctx: Context):
    return call("stats")


@app.command("git", context_settings={"allow_extra_args": True, "ignore_unknown_options": True,
                                      "help_option_names": []},
             help="Run git on the store, e.g. 'scratch git log -p'.\n\n"
             "Uses the store found as for other commands (--store must come before 'git').\n\n"
             "Example: scratch git log --oneline")
def git_cmd(typer_ctx: typer.Context) -> None:
    from scratch.answers import entries
    from scratch.cli.common import GLOBAL_DEFAULTS, run
    run("git", lambda ctx: entries.git_passthrough(ctx, list(typer_ctx.args)),
        {"store": GLOBAL_DEFAULTS.get("store"), "agent": GLOBAL_DEFAULTS.get("agent")})


config_app = typer.Typer(name="config", help="Show the effective settings and where each came "
                         "from; 'config threshold TOOL' explains ingest thresholds.\n\n"
                         "Example: scratch config --json")
app.add_typer(config_app, name="config")


def _show_config(ctx: Context):
    return call("config")


group_default(config_app, "config", _show_config)


@command("threshold", target=config_app,
         help="Say which pattern decides TOOL's ingest threshold, and why; with SERVER, the "
         "threshold at which 'scratch mcp proxy' stores a result of that MCP server's TOOL "
         "([mcp.servers.SERVER.scratchpad], then [thresholds]).\n\n"
         "Example: scratch config threshold kubectl_get")
def threshold_cmd(ctx: Context,
                  first: Annotated[str, typer.Argument(
                      metavar="TOOL|SERVER", help="Tool name as given to ingest --tool; or, "
                      "with a second argument, an MCP server's name.")],
                  second: Annotated[Optional[str], typer.Argument(
                      metavar="[TOOL]", help="The MCP server's tool.",
                      show_default=False)] = None):
    if second is not None:
        return call("config threshold", server=first, tool=second)
    return call("config threshold", tool=first)
