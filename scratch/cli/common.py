"""Shared CLI plumbing: the app, common options declared once, and the command runner.

Every command is declared with :func:`command`, which adds the common options (``--json``,
``--store``, ``--agent``, ``--session``, ``--model``, ``--encoding``, ``--run``,
``--iteration``, ``--coordinator``) to its signature, builds the
:class:`~scratch.context.Context`, calls the operation, and hands the Result (or the error) to
``scratch.cli.render``. Command bodies therefore never print and never catch errors themselves.
"""

import functools
import inspect
import os
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Annotated, Optional, Protocol, TypedDict, cast

import typer

from scratch.errors import EXIT_CODE_HELP, ScratchError, UsageError

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context
    from scratch.answers.kernel.result import Result
    from scratch.progress import TerminalLine

EXIT_STATUS_TEXT = "Exit status: " + "; ".join(
    f"{int(code)} {text}" for code, text in EXIT_CODE_HELP.items())

app = typer.Typer(
    name="scratch",
    help="A git-backed scratchpad for LLM agents: big tool outputs stored once, explored "
         "cheaply, every answer priced in real tokens.\n\n"
         "A person at a terminal is not an agent: with no agent named (no --agent, no "
         "$SCRATCH_AGENT), stdout a terminal and no --json, the budget is charged and shown "
         "but never refuses; the per-call cap still does, with --fit offered. Agents (an "
         "agent named, --json, or stdout not a terminal) are held to both.",
    epilog=EXIT_STATUS_TEXT,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

COMMON = "Common options"


class CompletionLine(Protocol):
    """What a completion callback (``autocompletion=``) is given: the values typed on the line
    so far, by parameter name (``store``, ``agent``, ...); see scratch.docs.resolve."""

    @property
    def params(self) -> Mapping[str, str | None]: ...  # the values click parsed


def complete_names(ctx: CompletionLine, incomplete: str) -> list[str]:
    """Stored entry names of the agent and store given on the line (else the environment's)."""
    try:
        from scratch.answers.kernel.context import Context
        sctx = Context.build(store=ctx.params.get("store"), agent=ctx.params.get("agent"))
        if not (sctx.root / ".git").exists():
            return []
        return [r["name"] for r in sctx.store(create=False).list(incomplete)]
    except Exception:
        return []


def complete_agents(ctx: CompletionLine, incomplete: str) -> list[str]:
    """Agent names in the store given on the line (else the environment's)."""
    try:
        from scratch.store.names import find_store_root
        root, _ = find_store_root(ctx.params.get("store"))
        return sorted(p.name for p in (root / "agents").iterdir() if p.name.startswith(incomplete))
    except Exception:
        return []


def complete_artifacts(ctx: CompletionLine, incomplete: str) -> list[str]:
    """Artifact names of the run given on the line (its RUN, else --run), in the store given
    on the line (else the environment's)."""
    try:
        from scratch.runs import list_artifacts
        from scratch.store.names import find_store_root
        root, _ = find_store_root(ctx.params.get("store"))
        run = ctx.params.get("run") or ctx.params.get("run_id") or os.environ.get("SCRATCH_RUN")
        if not run:
            return []
        return [a["name"] for a in list_artifacts(root, str(run))
                if a["name"].startswith(incomplete)]
    except Exception:
        return []


def complete_remotes(ctx: CompletionLine, incomplete: str) -> list[str]:
    """Remote names of the store given on the line (else the environment's)."""
    try:
        from scratch.store.names import find_store_root
        from scratch.sync.remotes import remotes
        root, _ = find_store_root(ctx.params.get("store"))
        return [name for name in remotes(root) if name.startswith(incomplete)]
    except Exception:
        return []


JsonOpt = Annotated[bool, typer.Option(
    "--json", help="Print exactly one JSON document: {scratch, ok, command, data|error, meta}.",
    rich_help_panel=COMMON)]
StoreOpt = Annotated[Optional[str], typer.Option(
    "--store", metavar="DIR", help="Store directory (else $SCRATCH_HOME, the nearest .scratch/, "
    "or $XDG_DATA_HOME/scratch).", rich_help_panel=COMMON, show_default=False)]
AgentOpt = Annotated[Optional[str], typer.Option(
    "--agent", metavar="NAME", help="Agent namespace (else $SCRATCH_AGENT, or 'default'); "
    "naming one holds a terminal's calls to the budget too.",
    autocompletion=complete_agents, rich_help_panel=COMMON, show_default=False)]
SessionOpt = Annotated[Optional[str], typer.Option(
    "--session", metavar="NAME", help="Budget session (else $SCRATCH_SESSION, or 'default').",
    rich_help_panel=COMMON, show_default=False)]
ModelOpt = Annotated[Optional[str], typer.Option(
    "--model", metavar="MODEL", help="Model whose tokenizer prices answers (else $SCRATCH_MODEL or"
    " config 'model').", rich_help_panel=COMMON, show_default=False)]
EncodingOpt = Annotated[Optional[str], typer.Option(
    "--encoding", metavar="ENC",
    help="Tokenizer override: o200k_base, cl100k_base, gemma3, claude.",
    rich_help_panel=COMMON, show_default=False)]

RunOpt = Annotated[Optional[str], typer.Option(
    "--run", metavar="RUN", help="Work as a worker of this run (else $SCRATCH_RUN): its "
    "artifacts are readable as artifact:RUN/NAME, its budget is the run's.",
    rich_help_panel=COMMON, show_default=False)]
IterationOpt = Annotated[Optional[int], typer.Option(
    "--iteration", metavar="N", help="The run's iteration (else $SCRATCH_ITERATION, or the "
    "latest); one not started is refused.", rich_help_panel=COMMON, show_default=False)]
CoordinatorOpt = Annotated[bool, typer.Option(
    "--coordinator", help="As the run's coordinator: no scratchpad; artifacts whole, held to "
    "the per-call cap.", rich_help_panel=COMMON)]

_COMMON_PARAMS: list[tuple[str, object]] = [  # (parameter, its annotation)
    ("json_output", JsonOpt), ("store", StoreOpt), ("agent", AgentOpt),
    ("session", SessionOpt), ("model", ModelOpt), ("encoding", EncodingOpt),
    # run_id: the command's own RUN argument (artifact put RUN NAME) is "run"
    ("run_id", RunOpt), ("iteration", IterationOpt), ("coordinator", CoordinatorOpt),
]
GLOBAL_DEFAULTS: dict[str, object] = {}


class CommonOptions(TypedDict):
    """The common options of one call but ``--json`` (given, else the group's), as
    :data:`_COMMON_PARAMS` declares them to typer."""

    store: str | None
    agent: str | None
    session: str | None
    model: str | None
    encoding: str | None
    run_id: str | None
    iteration: int | None
    coordinator: bool | None


def _debug() -> bool:
    return os.environ.get("SCRATCH_DEBUG", "") not in ("", "0")


# the common options a suggestion must repeat to run as printed: the store, agent, session,
# run and tokenizer this call was given by flag (the environment's are the shell's already)
_REPEATED = (("store", "--store"), ("agent", "--agent"), ("session", "--session"),
             ("model", "--model"), ("encoding", "--encoding"), ("run_id", "--run"),
             ("coordinator", "--coordinator"))  # not --iteration: it names one that may not exist


def _common_words(merged: Mapping[str, object]) -> list[str]:
    words: list[str] = []
    for key, flag in _REPEATED:
        value = merged.get(key)
        if value is True:
            words.append(flag)
        elif value is not None and value is not False:
            words += [flag, str(value)]
    return words


def run(name: str, body: Callable[["Context"], object], common: Mapping[str, object]) -> None:
    """Build the context, run ``body(ctx)`` (a Call goes through the answers pipeline), render
    the result or the error, exit."""
    merged = {k: (common.get(k) if common.get(k) is not None and common.get(k) is not False
                  else GLOBAL_DEFAULTS.get(k)) for k in dict(_COMMON_PARAMS)}
    json_mode = bool(merged.pop("json_output"))
    # the values typer parsed for the options _COMMON_PARAMS declares
    _answer(name, body, cast(CommonOptions, merged), json_mode)


def _answer(name: str, body: Callable[["Context"], object], merged: CommonOptions,
            json_mode: bool) -> None:
    from scratch.cli import render
    # every line spelled for this answer (its suggestions, next calls, notices) repeats the
    # common options given by flag: the rendering that prices it prints it
    words = _common_words(merged)
    rendering = render.JsonEnvelope(words) if json_mode else render.ShellText(words)
    spell = rendering.spell
    try:
        from scratch.answers.kernel.context import Context
        from scratch.calls import Call
        ctx = Context.build(
            store=merged["store"], agent=merged["agent"], session=merged["session"],
            model=merged["model"], encoding=merged["encoding"], run=merged["run_id"],
            iteration=merged["iteration"], coordinator=bool(merged["coordinator"]))
        said = ctx.model_warning()  # priced with a tokenizer nobody chose: say so, once
        if said:
            sys.stderr.write(f"warning: {said}\n")
            sys.stderr.flush()
        # a person at a terminal, not an agent: the budget is shown but never refuses
        ctx.person = not json_mode and "agent" not in ctx.named and _stdout_is_terminal()
        auto = ctx.config["sync.auto"] and _auto_head(ctx)
        retain = _retention_head(ctx)
        line = None if json_mode else _progress_line(ctx)
        from scratch.progress import reporting
        try:
            with reporting(line):
                produced = body(ctx)
                if isinstance(produced, Call):
                    from scratch.answers.kernel.execution import execute
                    produced = execute(ctx, rendering, produced)
        finally:
            if line is not None:
                line.close()  # wiped before the answer is printed
        # a body gives an exit code, a Call (answered above) or an answer
        code = produced if isinstance(produced, int) else render.render(
            cast("Result[object]", produced), json_mode=json_mode, spell=spell)
        if auto:
            from scratch.sync.auto import after_command
            after_command(name, ctx.root, auto[0])
        if retain:
            from scratch.sync.retention import after_command as retention_after
            retention_after(name, ctx.root, retain[0], ctx.config)
    except ScratchError as exc:
        if _debug():
            raise
        code = render.render_error(name, exc, json_mode=json_mode, spell=spell)
    except BrokenPipeError:
        _silence_stdout()
        code = 0
    except KeyboardInterrupt:
        code = 130
    except ImportError as exc:  # a broken install, not a bug: say what to reinstall
        if _debug():
            raise
        from scratch.errors import missing_dependency
        code = render.render_error(name, missing_dependency(exc, f"scratch {name}"),
                                   json_mode=json_mode, spell=spell)
    except Exception as exc:  # a bug: report it without a traceback unless debugging
        if _debug():
            raise
        code = render.render_error(name, ScratchError(
            f"unexpected {type(exc).__name__}: {exc} (set SCRATCH_DEBUG=1 for a traceback)",
            code="internal_error"), json_mode=json_mode, spell=spell)
    raise typer.Exit(code)


def _progress_line(ctx: "Context") -> "TerminalLine | None":
    """The line that shows a long command's progress to a person: on stderr when stderr is a
    terminal (never in --json, never into a pipe or a file), once the command has run
    config ``progress.after`` seconds (:mod:`scratch.progress`)."""
    try:
        if not os.isatty(sys.stderr.fileno()):
            return None
        width = os.get_terminal_size(sys.stderr.fileno()).columns
    except (AttributeError, OSError, ValueError):  # replaced or closed (a test's capture)
        return None
    from scratch.progress import Shown, TerminalLine
    return TerminalLine(sys.stderr, Shown(after=float(ctx.config["progress.after"])),
                        width=width or 80)


def _stdout_is_terminal() -> bool:
    try:
        return os.isatty(sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):  # replaced or closed (a test's capture)
        return False


def _auto_head(ctx: "Context") -> tuple[str | None]:
    """With ``sync.auto``: HEAD before the command, to tell afterwards whether it changed."""
    from scratch.sync.auto import head_before
    return (head_before(ctx.root),)


def _retention_head(ctx: "Context") -> tuple[str | None] | None:
    """With retention configured: HEAD before the command (a changed store may start the
    daily gc afterwards); None otherwise (nothing more is read)."""
    cfg = ctx.config
    if not (cfg["retention.max_age"] or cfg["retention.keep_versions"]
            or cfg["cache.max_bytes"]):
        return None
    from scratch.sync.auto import head_before
    return (head_before(ctx.root),)


def _silence_stdout() -> None:
    """The reader went away (e.g. `| head`): stop writing without a traceback."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass


def command(name: str, *, aliases: tuple[str, ...] = (), target: typer.Typer | None = None,
            help: str | None = None,  # noqa: A002 - typer's name for it
            context_settings: Mapping[str, object] | None = None,
            cls: type[typer.core.TyperCommand] | None = None,
            ) -> Callable[[Callable[..., object]], Callable[..., None]]:
    """Register ``fn(ctx, **args)`` as a command with the common options added."""
    settings = None if context_settings is None else dict(context_settings)

    def decorate(fn: Callable[..., object]) -> Callable[..., None]:
        sig = inspect.signature(fn)
        own = [p for p in sig.parameters.values() if p.name != "ctx"]
        extra = [inspect.Parameter(pname, inspect.Parameter.KEYWORD_ONLY,
                                   default=False if pname == "json_output" else None,
                                   annotation=annot) for pname, annot in _COMMON_PARAMS]
        full_name = name if target is None or target is app else f"{target.info.name} {name}"

        @functools.wraps(fn)
        def wrapper(**kwargs: object) -> None:
            common = {k: kwargs.pop(k) for k, _ in _COMMON_PARAMS}
            run(full_name, lambda ctx: fn(ctx, **kwargs), common)

        wrapper.__signature__ = sig.replace(parameters=own + extra)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {**{p.name: p.annotation for p in own},
                                   **dict(_COMMON_PARAMS)}
        del wrapper.__wrapped__  # typer must see the new signature, not fn's
        registry = target or app
        registry.command(name, help=help, context_settings=settings, cls=cls)(wrapper)
        for alias in aliases:
            registry.command(alias, hidden=True, help=help, context_settings=settings,
                             cls=cls)(wrapper)
        return wrapper
    return decorate


def group_default(group: typer.Typer, name: str, action: Callable[["Context"], object]
                  ) -> None:
    """Make ``scratch <group>`` alone run ``action``; with a subcommand, hand the common options
    given before it on to the subcommand (as the top-level options are)."""
    def main(typer_ctx: typer.Context, json_output: JsonOpt = False, store: StoreOpt = None,
             agent: AgentOpt = None, session: SessionOpt = None, model: ModelOpt = None,
             encoding: EncodingOpt = None, run_id: RunOpt = None,
             iteration: IterationOpt = None, coordinator: CoordinatorOpt = False) -> None:
        common = {"json_output": json_output, "store": store, "agent": agent,
                  "session": session, "model": model, "encoding": encoding, "run_id": run_id,
                  "iteration": iteration, "coordinator": coordinator}
        if typer_ctx.invoked_subcommand is not None:
            GLOBAL_DEFAULTS.update({k: v for k, v in common.items() if v})
            return
        run(name, action, common)

    group.callback(invoke_without_command=True)(main)


def read_input(source: str | None, *, limit: int | None = None, what: str = "input",
               allow_empty: bool = False) -> bytes:
    """Bytes of FILE, or of stdin for None/'-'; refuses a terminal and (unless allowed) nothing
    (the same reader and checks as the core's, :mod:`scratch.answers.capture.inputs`)."""
    from scratch.answers.capture.inputs import checked, read_file, read_upto
    if source not in (None, "-"):
        return read_file(source, limit=limit, what=what, allow_empty=allow_empty)
    if sys.stdin is None or sys.stdin.isatty():
        raise UsageError(f"no {what}: stdin is a terminal; pipe data in or give a FILE",
                         code="no_input")
    return checked(read_upto(sys.stdin.buffer, limit), "stdin", limit=limit, what=what,
                   allow_empty=allow_empty)
