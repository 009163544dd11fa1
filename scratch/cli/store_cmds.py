"""Commands of the store: init, write, read, history, diff, restore, rm, ls, git."""

from pathlib import Path
from typing import Annotated, Optional

import typer

from scratch.answers.kernel.context import Context
from scratch.calls import call
from scratch.cli.common import NameArg, app, command, read_input

SourceArg = Annotated[Optional[str], typer.Argument(
    metavar="[FILE|-]", help="Read from FILE; stdin when omitted or '-'.", show_default=False)]
ContextOpt = Annotated[int, typer.Option("-U", "--unified", metavar="N",
                                         help="Lines of context around each change.")]


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


@command("write", help="Store a new version of NAME from FILE or stdin.\n\n"
         "Identical content makes no new version and says 'unchanged'.\n\n"
         "Example: echo 'step 1' | scratch write notes/plan.md")
def write_cmd(ctx: Context, name: NameArg, source: SourceArg = None,
              allow_empty: Annotated[bool, typer.Option(
                  "--allow-empty", help="Store empty input instead of refusing it.")] = False):
    from scratch.names import validate_name
    validate_name(name)
    data = read_input(source, limit=ctx.config["limits.max_write_bytes"], what="content",
                      allow_empty=allow_empty)
    return call("write", name=name, content=data, allow_empty=allow_empty or None)


@command("history", help="List the versions of NAME: number, time, bytes, lines, commit, "
         "message.\n\nExample: scratch history notes/plan.md")
def history_cmd(ctx: Context, name: NameArg):
    return call("history", name=name)


@command("diff", help="Show what changed in NAME between versions A and B (unified hunks).\n\n"
         "Example: scratch diff notes/plan.md 1 3")
def diff_cmd(ctx: Context, name: NameArg,
             a: Annotated[int, typer.Argument(metavar="A", help="Older version.")],
             b: Annotated[int, typer.Argument(metavar="B", help="Newer version.")],
             context: ContextOpt = 3):
    return call("diff", name=name, a=a, b=b, context=None if context == 3 else context)


@command("restore", help="Make version N of NAME the new current version.\n\n"
         "Also brings back a deleted entry. Example: scratch restore notes/plan.md@2")
def restore_cmd(ctx: Context, ref: Annotated[str, typer.Argument(
        metavar="NAME@N", help="Entry and the version to bring back.")]):
    return call("restore", ref=ref)


@command("rm", help="Delete entry NAME (a commit; 'scratch restore NAME@N' brings it back).\n\n"
         "Example: scratch rm notes/old.md")
def rm_cmd(ctx: Context, name: NameArg):
    return call("rm", name=name)


@command("ls", help="List the agent's entries: kind, version, bytes, lines, updated.\n\n"
         "PREFIX is literal and case-sensitive. Example: scratch ls kubectl_get/")
def ls_cmd(ctx: Context, prefix: Annotated[str, typer.Argument(
        metavar="[PREFIX]", help="Only names starting with PREFIX.", show_default=False)] = ""):
    return call("ls", prefix=prefix or None)


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
