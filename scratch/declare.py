"""Commands declared once: the record every interface and document is derived from.

A command of the answers layer is one module under :mod:`scratch.answers.commands` holding
``COMMAND``, a :class:`Command`: its name, its help, its MCP tools, and its answer function.
The answer function's own signature is the declaration of its arguments (as llm builds a tool's
schema from one signature): each parameter after the context is a core argument whose name,
type and default are the signature's, and whose ``Annotated`` :class:`Arg` gives the rest (help
text, CLI spelling, range, completion). :func:`params` reads them into :class:`Param` records.

From these records alone are derived: the Typer commands (:mod:`scratch.cli.generate`), the
shell spelling of a call (:mod:`scratch.cli.spelling`), the MCP tools, their input schemas and
the tool spelling of a call (:mod:`scratch.mcp.specs`), and so the man pages, completions and
the guide's command list (read from the live CLI). Adding an argument is one edit: a parameter
of the answer function.

Invariants:
- Argument names are the core's (``ref``, ``lines``, ``count_by``); no text here names a CLI
  flag or an MCP field except ``Arg.flags`` itself, so an error about an argument is rendered by
  each interface in its own spelling (``--count-by`` on the CLI, ``count_by`` over MCP).
- A boolean is positive (``numbers``, never ``no_numbers``); ``Arg.negate`` spells a
  True-default one as its negative flag on the CLI.
- A list of names (``list[str]``) is comma-separated on both interfaces.
- This module imports nothing but the standard library: it is read on every cold start.
"""

from __future__ import annotations

import inspect
import sys
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from scratch.calls import ArgValue, Call

# the kinds of value a core argument takes, as both interfaces spell them
KINDS = ("str", "int", "bool", "names", "bytes")


def argument_word(word: str) -> bool:
    """Whether a command-line word is an argument although it starts with ``-``: a dash and a
    digit (``-1``, ``-1.server_zones``, ``-5``) is a negative index, a path or a number, never
    an option, since no option of scratch is spelled so (a test holds every declared flag to
    it). The CLI's parser and its completion both read words by this one rule."""
    return len(word) > 1 and word[0] == "-" and word[1].isdigit()


class Arg(NamedTuple):
    """What a signature cannot say about one argument.

    ``flags``: its CLI spellings, the one suggestions print first (``("-n", "--lines")``);
    none: a positional argument on the CLI, in signature order. ``negate``: the CLI flag of a
    True-default boolean that sets it False (``--no-numbers``), with ``negate_help``.
    ``cli`` / ``mcp``: whether the interface offers it (an argument neither offers is given by
    the interface itself, see ``supplied``). ``complete``: what CLI
    completion offers (``names`` of entries, ``agents``). ``max_length`` / ``minimum`` /
    ``maximum`` / ``choices``: the range both interfaces check before anything runs.
    """

    help: str
    flags: tuple[str, ...] = ()
    metavar: str = ""
    minimum: int | None = None
    maximum: int | None = None
    max_length: int = 4096
    choices: tuple[str, ...] = ()
    negate: str = ""
    negate_help: str = ""
    cli: bool = True
    mcp: bool = True
    complete: str = ""
    supplied: str = ""  # an interface fact given by the interface (none today)
    show_default: bool = True


class Param(NamedTuple):
    """One core argument of a command: the signature's name, kind and default with its
    :class:`Arg` (``required``: the signature gives no default)."""

    name: str
    kind: str  # one of KINDS
    optional: bool  # None is a value (the signature allows it)
    required: bool
    default: object
    arg: Arg

    @property
    def positional(self) -> bool:
        return self.arg.cli and not self.arg.flags and not self.arg.negate


class Tool(NamedTuple):
    """One MCP tool that runs the command.

    ``names``: core argument -> MCP name where they differ (Aura's ``file`` for ``ref``).
    ``args``: the core arguments the tool offers, in order (None: every one the declaration
    offers over MCP). ``defaults``: MCP defaults that differ from the core's (grep's context of
    3), left out when any argument of ``default_unless`` is set. ``fixed``: core arguments the
    tool always passes. ``primary``: the tool that spells the command in suggestions.
    ``reshape``: (to_core, from_core) for a tool whose arguments are not one-to-one with the
    core's (restore's ``path`` + ``version`` is the core's ``ref``). ``helps``: argument help
    where this tool's meaning is narrower than the command's. ``required``: core arguments
    this tool requires although the command does not (grep's ``ref`` and ``pattern``: the
    command's other layout, ``all``, takes no ``ref``). ``own``: arguments the tool declares
    itself, taking the place of the core's of the same name or standing for none (a reshaped
    tool's: restore's ``version``; one the tool needs where the core does not: write_file's
    ``content``, which the CLI reads from a FILE instead).
    """

    name: str
    description: str
    names: Mapping[str, str] = {}
    args: tuple[str, ...] | None = None
    defaults: Mapping[str, ArgValue] = {}
    default_unless: Mapping[str, tuple[str, ...]] = {}
    fixed: Mapping[str, ArgValue] = {}
    primary: bool = True
    read_only: bool = True
    destructive: bool = False
    idempotent: bool = False
    reshape: tuple[Callable[[dict[str, ArgValue]], dict[str, ArgValue]],
                   Callable[[dict[str, ArgValue]], dict[str, ArgValue]]] | None = None
    helps: Mapping[str, str] = {}
    # one of TOOLSETS: what a server offers by default, and the order; None: none (a new tool
    # is offered only by ``--tools all`` until its declaration says which set it joins, so no
    # session pays for it unasked)
    toolset: str | None = None
    required: tuple[str, ...] = ()
    own: tuple[Param, ...] = ()


# the toolsets, in the order tools/list shows them
TOOLSETS = ("explore", "files", "session", "run")


@dataclass(frozen=True, slots=True)
class Command:
    """One command of the answers layer (see the module docstring).

    ``name``: as the core knows it (``get-in``, ``log read``). ``help``: the CLI's and the man
    page's text (first paragraph: the summary; ``Example:`` lines). ``answer``: the function,
    ``answer(ctx, **args)``. ``aliases``: hidden CLI spellings (``get_in``). ``layouts``: other
    positional layouts on the CLI, chosen by a flag (grep's ``--all`` takes only PATTERN).
    ``cli``: offered on the command line at all (what a command line gives besides its
    words, a FILE or stdin, the CLI turns into core arguments itself: the input hooks of
    :mod:`scratch.cli.generate`, registered there by command name). ``group_help``: when the
    command is a group's own (``budget``, ``log``), the group's help.
    """

    name: str
    help: str
    answer: Callable[..., object]
    tools: tuple[Tool, ...] = ()
    aliases: tuple[str, ...] = ()
    layouts: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    cli: bool = True
    group_help: str = ""
    # click context settings (ignore_unknown_options)
    cli_settings: Mapping[str, bool] = field(default_factory=dict)

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(self.name.split(" "))

    @property
    def summary(self) -> str:
        return self.help.split("\n\n", 1)[0]


def _kind(annotation: object) -> tuple[str, bool]:
    """The kind of a (resolved) annotation and whether None is allowed."""
    args = typing.get_args(annotation)
    optional = False
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        optional = len(rest) < len(args)
        annotation = rest[0] if len(rest) == 1 else annotation
    if annotation is bool:
        return "bool", optional
    if annotation is int:
        return "int", optional
    if annotation is str:
        return "str", optional
    if annotation is bytes:
        return "bytes", optional
    if typing.get_origin(annotation) is list and typing.get_args(annotation) == (str,):
        return "names", optional
    raise TypeError(f"no kind for annotation {annotation!r}")


_PARAMS: dict[tuple[str, int], tuple[Param, ...]] = {}


def params(command: Command) -> tuple[Param, ...]:
    """The core arguments of ``command``, read from its answer's signature (the first parameter,
    the context, is not one). Every parameter must be ``Annotated[T, Arg(...)]``, but for
    keyword-only ones that are not: the interface gives those and they are never offered."""
    key = (command.name, id(command.answer))
    known = _PARAMS.get(key)
    if known is None:
        known = _PARAMS[key] = _read_params(command)
    return known


def _read_params(command: Command) -> tuple[Param, ...]:
    fn = command.answer
    module = sys.modules[fn.__module__]
    out = []
    for p in list(inspect.signature(fn).parameters.values())[1:]:
        annotation = p.annotation
        if p.kind is p.KEYWORD_ONLY and not (str(annotation).startswith("Annotated[")
                                             or typing.get_origin(annotation)
                                             is typing.Annotated):
            continue  # what the interface supplies itself (rendering, stream): never offered
        if isinstance(annotation, str):
            annotation = eval(annotation, vars(module))  # noqa: S307 - the module's own text
        if typing.get_origin(annotation) is not typing.Annotated:
            if p.kind is p.KEYWORD_ONLY:
                continue  # given by the interface (how it prints, its input stream)
            raise TypeError(f"{command.name}: argument {p.name!r} is not Annotated with an Arg")
        base, *extras = typing.get_args(annotation)
        arg = next((e for e in extras if isinstance(e, Arg)), None)
        if arg is None:
            raise TypeError(f"{command.name}: argument {p.name!r} has no Arg")
        kind, optional = _kind(base)
        required = p.default is inspect.Parameter.empty
        out.append(Param(p.name, kind, optional, required,
                         None if required else p.default, arg))
    return tuple(out)


def param(command: Command, name: str) -> Param:
    for p in params(command):
        if p.name == name:
            return p
    raise KeyError(f"{command.name} has no argument {name!r}")


def left_out(p: Param, value: object) -> bool:
    """Whether a call leaves out ``value`` of ``p``: None, or (for an argument that is not
    required) the declared default or an empty list. The one rule every call a command was asked
    (the CLI's, an MCP tool's, the asked call an answer repeats in its suggestions) follows,
    so that two ways of asking the same thing are one call."""
    return value is None or (not p.required and (value == p.default or value == []))


def asked(command: Command, args: Mapping[str, object]) -> Call:
    """The call of ``command`` with ``args`` as it was asked: only its declared arguments, each
    left out as :func:`left_out` says. The answers pipeline hands it to an answer function that
    takes ``asked`` (its refusals' and pages' calls are this call with arguments changed)."""
    from scratch.calls import Call

    return Call(command.name, {p.name: args[p.name] for p in params(command)  # type: ignore[misc]
                               if p.name in args and not left_out(p, args[p.name])})


def check(command: Command, p: Param, value: object) -> None:
    """Refuse a value outside what ``p`` declares (its range, its length, its choices), with
    the same text on every interface (the argument named by :func:`scratch.errors.argument`)."""
    from scratch.errors import UsageError, argument

    a = p.arg
    if p.kind == "int" and isinstance(value, int) and not isinstance(value, bool):
        if a.minimum is not None and value < a.minimum:
            raise UsageError(f"{argument(p.name)} must be >= {a.minimum}, not {value}",
                             code="invalid_argument", command=command.name, argument=p.name)
        if a.maximum is not None and value > a.maximum:
            raise UsageError(f"{argument(p.name)} must be <= {a.maximum}, not {value}",
                             code="invalid_argument", command=command.name, argument=p.name)
    elif p.kind == "str" and isinstance(value, str):
        if len(value) > a.max_length:
            raise UsageError(f"{argument(p.name)} is {len(value):,} characters, over its limit "
                             f"of {a.max_length:,}", code="invalid_argument",
                             command=command.name, argument=p.name, limit=a.max_length)
        if a.choices and value not in a.choices:
            raise UsageError(f"{argument(p.name)} must be one of {', '.join(a.choices)}, not "
                             f"{value!r}", code="invalid_argument", command=command.name,
                             argument=p.name, choices=list(a.choices))
