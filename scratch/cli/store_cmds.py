"""Commands of the store for people: init (a store here) and git (plain git on the store)."""

from pathlib import Path
from typing import Annotated

import typer

from scratch.cli.common import app


@app.command("init", help="Create a .scratch/ store in DIR (default: the current directory).\n\n"
             "Example: scratch init ~/project")
def init_cmd(
    directory: Annotated[Path, typer.Argument(metavar="[DIR]", help="Where to create .scratch/.",
                                              show_default=False)] = Path("."),
    json_output: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
) -> None:
    from scratch.answers import store_admin
    from scratch.cli.common import run
    store = str(directory.absolute() / ".scratch")
    run("init", lambda ctx: store_admin.init(directory), {"json_output": json_output,
                                                      "store": store})


@app.command("git", context_settings={"allow_extra_args": True, "ignore_unknown_options": True,
                                      "help_option_names": []},
             help="Run git on the store, e.g. 'scratch git log -p'.\n\n"
             "Uses the store found as for other commands (--store must come before 'git').\n\n"
             "Example: scratch git log --oneline")
def git_cmd(typer_ctx: typer.Context) -> None:
    from scratch.answers import store_admin
    from scratch.cli.common import GLOBAL_DEFAULTS, run
    run("git", lambda ctx: store_admin.git_passthrough(ctx, _git_words(list(typer_ctx.args))),
        {"store": GLOBAL_DEFAULTS.get("store"), "agent": GLOBAL_DEFAULTS.get("agent")})


def _git_words(args: list[str]) -> list[str]:
    """The words for git as they were typed: the parser drops the first ``--`` (``scratch git
    log -- PATH``), which git needs to read a path that no longer exists as a path."""
    import sys
    argv = sys.argv[1:]
    if "git" in argv and "--" in argv:
        tail = argv[argv.index("git") + 1:]
        cut = tail.index("--") if "--" in tail else -1
        if cut >= 0 and tail[:cut] + tail[cut + 1:] == args:
            return tail
    return args
