"""The command-line interface: a thin layer over the core (only this package imports typer)."""

import sys
from typing import Annotated, Optional

import typer

from scratch.cli.common import (
    GLOBAL_DEFAULTS,
    AgentOpt,
    EncodingOpt,
    JsonOpt,
    ModelOpt,
    SessionOpt,
    StoreOpt,
    app,
)


def _version(value: bool) -> None:
    if value:
        from scratch import __version__
        print(f"scratch {__version__}")
        raise typer.Exit(0)


@app.callback()
def main_callback(
    json_output: JsonOpt = False,
    store: StoreOpt = None,
    agent: AgentOpt = None,
    session: SessionOpt = None,
    model: ModelOpt = None,
    encoding: EncodingOpt = None,
    version: Annotated[Optional[bool], typer.Option(
        "--version", callback=_version, is_eager=True, help="Print the version and exit.")] = None,
) -> None:
    """Common options given before the command apply to it (after it they win)."""
    GLOBAL_DEFAULTS.update(json_output=json_output, store=store, agent=agent, session=session,
                           model=model, encoding=encoding)


def _register() -> None:
    # importing the modules registers their commands on `app`
    from scratch.cli import explore_cmds, ingest_cmds, log_cmds, store_cmds, tokens_cmds  # noqa: F401
    from scratch.cli import docs_cmds  # noqa: F401


def main() -> None:
    _register()
    from scratch.cli.ingest_cmds import rewrite_run_argv
    try:
        app(args=rewrite_run_argv(sys.argv[1:]), prog_name="scratch")
    except BrokenPipeError:
        sys.exit(0)
