"""The Typer commands of the answers layer, generated from their declarations.

Each :class:`~scratch.declare.Command` becomes one Typer command (under its group for a
two-word name such as ``log read``) with one parameter per declared argument the CLI offers:
a positional argument for an :class:`~scratch.declare.Arg` without flags, an option spelled by
``Arg.flags`` otherwise (``Arg.negate`` for a True-default boolean), a comma-separated string for
a list of names. What a command line gives is turned into a :class:`~scratch.calls.Call` with
the core's names, leaving out every argument that equals its default, so the call is the same
one MCP or a suggestion would make. Ranges declared on an argument are checked here with the
same rule (and text) as over MCP (:func:`scratch.declare.check`).

Only this module and :mod:`scratch.cli.common` build Typer commands for the answers layer.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Optional, TypedDict, cast

import typer

from scratch.calls import Call

if TYPE_CHECKING:
    from scratch.calls import ArgValue
from scratch.cli.common import (
    app,
    command,
    complete_agents,
    complete_artifacts,
    complete_names,
    complete_remotes,
    group_default,
)
from scratch.declare import Command, Param, check, left_out, params

_GROUPS: dict[str, typer.Typer] = {}
_DONE: set[str] = set()

_COMPLETE: dict[str, Callable[..., list[str]]] = {"names": complete_names,
                                                  "agents": complete_agents,
                                                  "remotes": complete_remotes,
                                                  "artifacts": complete_artifacts}
_TYPES: dict[str, type] = {"str": str, "int": int, "bool": bool, "names": str, "bytes": str}


class _Settings(TypedDict, total=False):
    """What typer.Argument/typer.Option are given here besides the flags."""

    help: str | None
    autocompletion: Callable[..., list[str]]
    metavar: str | None
    show_default: bool


def _annotation(p: Param) -> object:
    """The Typer annotation of one argument."""
    a = p.arg
    extra: _Settings = {"help": a.help}
    if a.complete:
        extra["autocompletion"] = _COMPLETE[a.complete]
    base: type = _TYPES[p.kind]
    if p.positional:
        extra["metavar"] = a.metavar or p.name.upper()
        if p.required:
            extra["show_default"] = False
            return Annotated[base, typer.Argument(**extra)]
        extra["show_default"] = a.show_default and p.default not in (None, "")
        return Annotated[Optional[base], typer.Argument(**extra)]  # noqa: UP045
    if p.kind == "bool":
        if a.negate:
            extra["help"] = a.negate_help or a.help
            return Annotated[bool, typer.Option(a.negate, **extra)]
        return Annotated[bool, typer.Option(*a.flags, **extra)]
    if a.metavar:
        extra["metavar"] = a.metavar
    shown = a.show_default and p.default is not None and p.kind != "names"
    extra["show_default"] = shown
    if p.required:
        return Annotated[base, typer.Option(*a.flags, **extra)]
    return Annotated[Optional[base], typer.Option(*a.flags, **extra)]  # noqa: UP045


def _cli_default(p: Param) -> object:
    if p.required:
        return inspect.Parameter.empty
    if p.kind == "bool":
        return False
    if p.kind == "names":
        return None
    return p.default


def _core_value(p: Param, value: object) -> object:
    """A value as the command line gave it, in the core's terms."""
    if p.kind == "bool":
        return (not value) if p.arg.negate else bool(value)
    if p.kind == "names" and isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if p.kind == "bytes" and isinstance(value, str):
        return value.encode("utf-8", errors="surrogateescape")
    return value


def to_call(cmd: Command, given: dict[str, object]) -> Call:
    """The call a command line makes: core names, each value checked, defaults left out."""
    declared = [p for p in params(cmd) if p.arg.cli]
    values = dict(given)
    for flag, layout in cmd.layouts.items():  # another positional layout, chosen by a flag
        if values.get(flag):
            positionals = [p.name for p in declared if p.positional]
            words = [values[n] for n in positionals if values.get(n) is not None]
            from scratch.errors import UsageError, argument
            if len(words) > len(layout):
                raise UsageError(f"with {argument(flag)} give only "
                                 + " and ".join(argument(n) for n in layout),
                                 code="invalid_argument", argument=flag)
            for n in positionals:
                values[n] = None
            values.update(zip(layout, words, strict=False))
    args: dict[str, ArgValue] = {}
    for p in declared:
        value = _core_value(p, values.get(p.name))
        if left_out(p, value):
            continue
        check(cmd, p, value)
        args[p.name] = cast("ArgValue", value)  # a str, int, bool, list[str] or bytes
    return Call(cmd.name, args)


# the CLI's own step for a command: what a command line gives besides its words (a FILE,
# stdin, the words after "--") turned into the core's arguments; ctx, the call made -> the call
InputHook = Callable[..., Call]
_HOOKS: dict[str, InputHook] = {}


def input_hooks() -> dict[str, InputHook]:
    """Command name -> its input hook; registered here, on the CLI side, by name (the
    declarations below never name the CLI). The hooks' modules load on first use."""
    if not _HOOKS:
        from scratch.cli import inputs, streams, words
        _HOOKS.update({"write": inputs.write_input, "log append": inputs.log_append_input,
                       "artifact put": inputs.artifact_put_input,
                       "ingest": streams.ingest_stdin, "tokens": streams.tokens_stdin,
                       "config threshold": words.threshold_words, "run": words.run_words})
    return _HOOKS


def _group(word: str, help_text: str, *, runs_alone: bool = False) -> typer.Typer:
    """The Typer group ``word``; alone on a line it shows its help, unless it ``runs_alone``
    (a command of its own, ``budget``)."""
    group = _GROUPS.get(word)
    if group is None:
        group = typer.Typer(name=word, help=help_text, no_args_is_help=not runs_alone)
        app.add_typer(group, name=word)
        _GROUPS[word] = group
    return group


def register(cmd: Command, *, group_help: str = "") -> None:
    """Add ``cmd`` to the CLI (once)."""
    if cmd.name in _DONE or not cmd.cli:
        return
    _DONE.add(cmd.name)
    declared = [p for p in params(cmd) if p.arg.cli]
    # words the parser leaves unparsed (run's command after "--") go to the hook as extra_args
    extra = bool(cmd.cli_settings.get("allow_extra_args"))
    signature = inspect.Signature(
        [inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + ([inspect.Parameter("cli_context", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                              annotation=typer.Context)] if extra else [])
        + [inspect.Parameter(p.name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                             default=_cli_default(p), annotation=_annotation(p))
           for p in declared])

    def body(ctx: object, **given: object) -> object:
        parsed = given.pop("cli_context", None)
        made = to_call(cmd, given)
        hook = input_hooks().get(cmd.name)
        if hook is not None:
            if extra:
                return hook(ctx, made, extra_args=list(getattr(parsed, "args", ())))
            return hook(ctx, made)
        return made

    body.__signature__ = signature  # type: ignore[attr-defined]
    body.__name__ = cmd.name.replace(" ", "_").replace("-", "_") + "_cmd"
    words = cmd.words
    settings = dict(cmd.cli_settings) or None
    # every command reads -1, -2.name, -5 as arguments (a command handing its words on
    # unparsed, run's, keeps them as given)
    cls = None
    if not extra:
        from scratch.cli.negative_paths import ArgumentWords
        cls = ArgumentWords
    if len(words) == 1:
        command(words[0], aliases=cmd.aliases, help=cmd.help, context_settings=settings,
                cls=cls)(body)
        return
    command(words[1], aliases=cmd.aliases, target=_group(words[0], group_help), help=cmd.help,
            context_settings=settings, cls=cls)(body)


def register_group_default(cmd: Command) -> None:
    """A command that is also a group's name (``budget``): ``scratch budget`` alone runs it."""
    if cmd.name in _DONE:
        return
    _DONE.add(cmd.name)
    group = _group(cmd.name, cmd.group_help or cmd.help, runs_alone=True)
    group_default(group, cmd.name, lambda ctx: to_call(cmd, {}))


def register_all(commands: list[Command], group_helps: dict[str, str]) -> None:
    """Add ``commands`` to the CLI; a one-word command that names a group of others becomes
    that group's default action."""
    groups = {c.words[0] for c in commands if len(c.words) > 1}
    for cmd in commands:
        if len(cmd.words) == 1 and cmd.name in groups:
            register_group_default(cmd)
    for cmd in commands:
        if len(cmd.words) > 1:
            register(cmd, group_help=group_helps.get(cmd.words[0], ""))
        elif cmd.name not in groups:
            register(cmd)
