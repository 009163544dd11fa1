"""The command-line interface: a thin layer over the core (only this package imports typer)."""

import os
import sys
from collections.abc import Callable
from typing import Annotated, Optional, Protocol, cast

import typer

from scratch.cli.common import (
    GLOBAL_DEFAULTS,
    AgentOpt,
    CoordinatorOpt,
    EncodingOpt,
    IterationOpt,
    JsonOpt,
    ModelOpt,
    RunOpt,
    SessionOpt,
    StoreOpt,
    app,
)


def _version(value: bool) -> None:
    if value:
        from scratch import __distribution__, __version__
        print(f"{__distribution__} {__version__}")
        raise typer.Exit(0)


@app.callback()
def main_callback(
    json_output: JsonOpt = False,
    store: StoreOpt = None,
    agent: AgentOpt = None,
    session: SessionOpt = None,
    model: ModelOpt = None,
    encoding: EncodingOpt = None,
    run_id: RunOpt = None,
    iteration: IterationOpt = None,
    coordinator: CoordinatorOpt = False,
    version: Annotated[Optional[bool], typer.Option(
        "--version", callback=_version, is_eager=True, help="Print the version and exit.")] = None,
) -> None:
    """Common options given before the command apply to it (after it they win)."""
    GLOBAL_DEFAULTS.update(json_output=json_output, store=store, agent=agent, session=session,
                           model=model, encoding=encoding, run_id=run_id, iteration=iteration,
                           coordinator=coordinator)


# The commands of the CLI alone (they run no answer of the core: set-up, the MCP servers, the
# docs), by the module that declares them; every other command is generated from its
# declaration in scratch.answers.commands. Typer builds a click command for every registered
# function on each run (about 2.5 ms apiece), so a run registers only the command it was asked
# for; --help, completion and unknown names register them all.
COMMAND_MODULES = {
    **dict.fromkeys(("init", "git"), "store_cmds"),
    **dict.fromkeys(("completions", "guide"), "docs_cmds"),
    "mcp": "mcp_cmds",
    "ui": "ui_cmds",
    **dict.fromkeys(("hook", "hooks"), "hooks_cmds"),
}
_VALUED_GLOBALS = {"--store", "--agent", "--session", "--model", "--encoding", "--run",
                   "--iteration"}


def _command_of(args: list[str]) -> str | None:
    """The subcommand named in ``args`` (None when help is asked first, or none is named)."""
    i = 0
    while i < len(args):
        word = args[i]
        if word in ("-h", "--help", "--version"):
            return None
        if word in _VALUED_GLOBALS:
            i += 2
            continue
        if word.startswith("-"):
            i += 1  # a flag such as --json, or --opt=value
            continue
        return word
    return None


def _register(args: list[str] | None = None) -> None:
    """Import the command modules (importing one registers its commands on ``app``)."""
    import importlib

    from scratch.answers.commands import GROUPS
    from scratch.answers.kernel.catalogue import commands_under, every_command
    from scratch.cli.generate import register_all

    name = _command_of(args) if args is not None else None
    declared = commands_under(name) if name is not None else []
    if name in COMMAND_MODULES:
        modules = [COMMAND_MODULES[name]]
    elif declared:
        modules = []
    else:
        modules = sorted(set(COMMAND_MODULES.values()))
        declared = every_command()
    for module in modules:
        importlib.import_module(f"scratch.cli.{module}")
    register_all(declared, GROUPS)


def command_tree() -> object:
    """The click command of the whole CLI, with every command module registered."""
    import typer.main

    _register()
    return typer.main.get_command(app)


def _plain_help(typer_app: typer.Typer) -> None:
    """Help and usage errors as plain text (no rich boxes) in ``typer_app`` and its groups."""
    typer_app.rich_markup_mode = None
    for group in typer_app.registered_groups:
        if group.typer_instance is not None:
            _plain_help(group.typer_instance)


def main() -> None:
    argv = sys.argv[1:]
    if argv[:1] == ["hook"] and not {"-h", "--help"} & set(argv):
        # what a client runs after every tool call: no command tree (scratch.__main__ answers
        # it before this module is even imported; this is for entry points made before it)
        from scratch.cli.spelling import shell_line
        from scratch.hooks.run import main as hook
        sys.exit(hook(argv[1:], speller=lambda: shell_line))
    if os.environ.get("_SCRATCH_COMPLETE"):  # a shell asking for completions, not a command
        from scratch.docs.completion import respond
        sys.exit(respond(os.environ["_SCRATCH_COMPLETE"], command_tree))
    _register(argv)
    if not sys.stdout.isatty():  # help, usage and errors for a pipe or an agent: plain text
        _plain_help(app)
    from typer import Abort

    from scratch.cli.argv import rewrite_run_argv
    try:
        code = app(args=rewrite_run_argv(argv), prog_name="scratch", standalone_mode=False)
    except Abort:
        code = 130
    except BrokenPipeError:
        code = 0
    except Exception as exc:
        if not _is_usage_error(exc):
            raise
        code = _usage_error(cast(_ParserError, exc), argv)
    _skip_final_collection()
    sys.exit(code if isinstance(code, int) else 0)


def _skip_final_collection() -> None:
    """Leave every live object out of the garbage collection the interpreter runs on exit.

    That last pass walks every object of Typer, click and scratch (~7 ms of a ~60 ms command
    on a typical machine) only to free memory the process is about to give back anyway.
    Nothing is skipped but the pass: atexit handlers still run, streams are still flushed,
    and objects are still freed by reference counting. Every file scratch writes is closed
    (``with`` blocks) before this point.
    """
    import gc

    gc.freeze()


def _is_usage_error(exc: BaseException) -> bool:
    """A bad command line as the parser reports it (unknown option, missing argument, ...).

    Typer exports no base class for these, so they are known by what every one of them offers:
    an exit code, a message, and a way to show itself.
    """
    return (isinstance(getattr(exc, "exit_code", None), int)
            and callable(getattr(exc, "format_message", None))
            and callable(getattr(exc, "show", None)))


class _ParserError(Protocol):
    """What a parser's error offers (see :func:`_is_usage_error`)."""

    exit_code: int

    def format_message(self) -> str: ...

    def show(self) -> None: ...


def _usage_error(exc: _ParserError, argv: list[str]) -> int:
    """Bad arguments: the JSON envelope with --json (agents parse stdout), else click's text."""
    words = argv[: argv.index("--")] if "--" in argv else argv
    if type(exc).__name__ == "NoArgsIsHelpError":  # bare 'scratch' or a bare group: help
        exc.show()
        return 2
    if "--json" in words:
        from scratch.cli import render
        from scratch.errors import UsageError

        return render.render_error(_command_of(words) or "scratch",
                                   UsageError(exc.format_message(), code="usage_error"),
                                   json_mode=True)
    if app.rich_markup_mode is None:
        exc.show()
    else:
        try:
            from typer import rich_utils

            # it names click's exception class, which typer keeps private
            rich_format_error: Callable[..., None] = rich_utils.rich_format_error
            rich_format_error(exc)
        except Exception:
            exc.show()
    return int(getattr(exc, "exit_code", 2))
