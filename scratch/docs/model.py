"""The records of a command tree (:class:`CommandDoc`, :class:`ParamDoc`), read from click objects.

The click objects Typer builds (``typer.main.get_command(app)``) are read into frozen records, so
the man pages, shell completion and tests never touch click internals and a test can check every
command in one loop. Only public attributes of the command, parameter, type and context objects
are read, plus each command's signature (for the completion callback a parameter declares:
``autocompletion=`` on ``typer.Option``/``typer.Argument``). :class:`Tree` gives the record of
any command path, built on first use.

Conventions read from each command's help text (the same text ``--help`` shows):
- the first paragraph is the one-line summary;
- ``Example: CMD`` (or ``Examples:`` followed by one command per line) ends a paragraph and
  gives the examples; the rest of that paragraph stays in the description;
- an epilog that states the exit status (it begins ``Exit status:``) is left out: the man pages
  have EXIT STATUS.

Hidden commands whose callback is a visible command's callback are recorded as that command's
``aliases``; they get no page of their own and are not offered by completion.

The records also hold what shell completion needs to read a line as the CLI would (how many words
an option takes, whether options may follow arguments, the subcommands in their own order,
hidden ones included), so :mod:`scratch.docs.resolve` works from them alone.

Invariant: this module never imports the CLI (it is handed the root command), so the CLI may use
it, through shell completion, without an import cycle; :mod:`scratch.docs.tree` finds the live
root.
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, cast

if TYPE_CHECKING:
    import typer

COMMON_PANEL = "Common options"
_EXAMPLE = re.compile(r"(?:^|(?<=\s))Examples?:\s*", re.MULTILINE)
EXIT_STATUS = "Exit status:"  # how the epilog that states the exit codes begins
# a parameter's completion callback, called as complete(line, incomplete) (line: a
# scratch.docs.resolve.Line) -> values, or (value, help) pairs
Completer = Callable[..., Iterable[object]]


class ClickType(Protocol):
    """What is read of a click parameter type (``choices``, ``file_okay`` through getattr:
    only some types have them)."""

    name: str


class ClickParam(Protocol):
    """What is read of a click parameter. An option's ``is_flag``, ``count``,
    ``show_default``, ``multiple``, ``hidden`` and ``rich_help_panel`` are read through
    getattr: an argument has none of them. Typer keeps click's classes private, so the tree
    is read through these descriptions (a root handed in is one, :class:`Tree`)."""

    name: str | None
    param_type_name: str  # "option" or "argument"
    type: ClickType
    metavar: str | None
    help: str | None  # typer's parameters have it (click's arguments do not)
    opts: list[str]
    secondary_opts: list[str]
    required: bool
    nargs: int
    default: object


class ClickCommand(Protocol):
    """What is read of a click command (a group's ``commands``, ``list_commands`` and
    ``invoke_without_command``: :class:`ClickGroup`, found with getattr/hasattr)."""

    help: str | None
    epilog: str | None
    hidden: bool
    context_settings: Mapping[str, object]
    callback: Callable[..., object] | None

    def get_params(self, ctx: typer.Context) -> list[ClickParam]: ...

    def get_short_help_str(self) -> str: ...


class ClickGroup(ClickCommand, Protocol):
    commands: Mapping[str, ClickCommand]

    def list_commands(self, ctx: typer.Context) -> list[str]: ...


@dataclass(frozen=True)
class ParamDoc:
    name: str
    kind: str  # "option" or "argument"
    opts: tuple[str, ...]  # option strings (secondary ones included); () for an argument
    metavar: str  # what the value is called: NAME, N, [FILE|-]; "" for a flag
    help: str
    default: str | None  # shown default, None when none is shown
    required: bool
    is_flag: bool
    common: bool  # one of the options every command shares
    hidden: bool
    # words it takes: an option's value count (0 for a flag or a counter), an argument's
    # count (-1: all that remain)
    nargs: int = 1
    multiple: bool = False  # an option that may be given more than once
    # the completion callback it declares, called as complete(line, incomplete)
    complete: Completer | None = field(default=None, compare=False)
    choices: tuple[str, ...] = ()  # the values a choice parameter accepts
    paths: str | None = None  # "file"/"dir": the shell completes a path here when nothing else


@dataclass(frozen=True)
class CommandDoc:
    path: tuple[str, ...]  # () for the root, ("log", "append") for `scratch log append`
    help: str  # the help text, cleaned, without the epilog
    summary: str
    description: tuple[str, ...]  # paragraphs after the summary, examples taken out
    examples: tuple[str, ...]
    params: tuple[ParamDoc, ...]
    subcommands: tuple[str, ...]  # visible ones, sorted
    is_group: bool
    hidden: bool
    aliases: tuple[str, ...]
    takes_extra_args: bool  # e.g. `scratch git ARGS...`
    runs_alone: bool = False  # a group that also does something without a subcommand
    commands: tuple[str, ...] = ()  # every subcommand, hidden ones too, in the group's order
    listing: tuple[tuple[str, str], ...] = ()  # (name, short help) of the visible ones, in order
    interspersed: bool = True  # options may follow arguments (not in groups, nor `scratch run`)
    ignore_unknown_options: bool = False  # unknown options pass as arguments (`scratch git`)

    @property
    def name(self) -> str:
        return " ".join(("scratch",) + self.path)

    @property
    def page(self) -> str:
        return "-".join(("scratch",) + self.path)


def paragraphs(text: str) -> list[str]:
    return [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]


def split_examples(paras: list[str]) -> tuple[list[str], list[str]]:
    """(paragraphs without examples, examples) from help paragraphs."""
    kept: list[str] = []
    examples: list[str] = []
    for para in paras:
        match = _EXAMPLE.search(para)
        if match is None:
            kept.append(para)
            continue
        before = para[: match.start()].strip()
        if before:
            kept.append(before)
        examples += [line.strip() for line in para[match.end():].splitlines() if line.strip()]
    return kept, examples


def _clean_help(text: str | None) -> str:
    return inspect.cleandoc(text or "").partition("\f")[0].strip()


# click parameter types whose values are never paths
_NOT_PATHS = frozenset({"int", "int range", "float", "float range", "boolean", "uuid", "datetime"})


def path_kind(param: ClickParam) -> str | None:
    """'file'/'dir' for a click parameter the shell should complete as a path, else None.

    Any value that may be a path is one (a plain string too: ``write NAME [FILE]``); numbers,
    booleans and flags are not. The parameter's own completion callback, if any, comes first.
    """
    if getattr(param, "is_flag", False):
        return None
    if getattr(param.type, "name", "") in _NOT_PATHS:
        return None
    if getattr(param.type, "file_okay", True) is False:
        return "dir"
    return "file"


def declared_completions(cmd: ClickCommand) -> dict[str, Completer]:
    """The completion callback each parameter of ``cmd`` declares, by parameter name.

    Typer builds a command from its function's signature (``Annotated[str, typer.Argument(
    autocompletion=f)]``, or ``= typer.Option(autocompletion=f)``) and keeps the callback only in
    click's private state, so it is read back from that signature; a click parameter is named
    after its function parameter.
    """
    if cmd.callback is None:
        return {}
    try:
        signature = inspect.signature(inspect.unwrap(cmd.callback), eval_str=True)
    except (NameError, TypeError, ValueError):
        return {}
    out = {}
    for param in signature.parameters.values():
        declared = [param.default]
        if typing.get_origin(param.annotation) is typing.Annotated:
            declared += typing.get_args(param.annotation)[1:]
        for info in declared:
            callback = getattr(info, "autocompletion", None)
            if callable(callback):
                out[param.name] = callback
    return out


def _param_doc(param: ClickParam, complete: Completer | None) -> ParamDoc:
    is_option = param.param_type_name == "option"
    is_flag = bool(getattr(param, "is_flag", False))
    takes_no_value = is_option and (is_flag or bool(getattr(param, "count", False)))
    choices = tuple(str(c) for c in getattr(param.type, "choices", None) or ())
    metavar = param.metavar or ""
    if not metavar and not is_flag:
        metavar = (param.name or "").upper() if not is_option else param.type.name.upper()
    default = None
    show = getattr(param, "show_default", None)
    if is_option and not is_flag and show not in (False, None) and param.default is not None:
        default = str(param.default) if show is True else str(show)
    return ParamDoc(
        name=param.name or "",
        kind="option" if is_option else "argument",
        # short forms first; stable, because click keeps the help option's names in a set
        opts=tuple(sorted((*param.opts, *param.secondary_opts), key=lambda o: o.startswith("--")))
        if is_option else (),
        metavar=metavar,
        help=" ".join((param.help or "").split()),
        default=default,
        required=bool(param.required),
        is_flag=is_flag,
        common=getattr(param, "rich_help_panel", None) == COMMON_PANEL,
        hidden=bool(getattr(param, "hidden", False)),
        nargs=0 if takes_no_value else int(param.nargs),
        multiple=bool(getattr(param, "multiple", False)),
        complete=complete,
        choices=choices,
        paths=None if complete is not None or choices else path_kind(param),
    )


def _context(cmd: ClickCommand, path: tuple[str, ...], parent_ctx: typer.Context | None
             ) -> typer.Context:
    """A context as click would make it (context_settings decide e.g. the help option names)."""
    import typer

    # its first parameter is typed as click's Command, a class typer keeps private
    make: Callable[..., typer.Context] = typer.Context
    return make(cmd, info_name=path[-1] if path else "scratch", parent=parent_ctx,
                         **(cmd.context_settings or {}))


def _doc(cmd: ClickCommand, path: tuple[str, ...], ctx: typer.Context,
         aliases: tuple[str, ...]) -> CommandDoc:
    """The record of ``cmd``, whose own context is ``ctx``."""
    text = _clean_help(cmd.help)
    epilog = _clean_help(cmd.epilog)
    paras = paragraphs(text)
    if epilog and not epilog.startswith(EXIT_STATUS):
        paras += paragraphs(epilog)
    kept, examples = split_examples(paras)
    summary = " ".join(kept[0].split()) if kept else ""
    subs: Mapping[str, ClickCommand] = getattr(cmd, "commands", None) or {}
    settings = cmd.context_settings or {}
    completes = declared_completions(cmd)
    commands = tuple(cast(ClickGroup, cmd).list_commands(ctx)) if subs else ()
    return CommandDoc(
        path=path,
        help=text,
        summary=summary,
        description=tuple(kept[1:]),
        examples=tuple(examples),
        params=tuple(_param_doc(p, completes.get(p.name or ""))
                     for p in cmd.get_params(ctx)),
        subcommands=tuple(sorted(n for n, c in subs.items() if not c.hidden)),
        is_group=hasattr(cmd, "commands"),
        hidden=bool(cmd.hidden),
        aliases=aliases,
        takes_extra_args=bool(settings.get("allow_extra_args")) and not hasattr(cmd, "commands"),
        runs_alone=bool(getattr(cmd, "invoke_without_command", False)),
        commands=commands,
        listing=tuple((n, subs[n].get_short_help_str()) for n in commands if not subs[n].hidden),
        interspersed=bool(ctx.allow_interspersed_args),
        ignore_unknown_options=bool(ctx.ignore_unknown_options),
    )


def _aliases(subs: Mapping[str, ClickCommand]) -> dict[str, tuple[str, ...]]:
    """The hidden aliases of each visible subcommand in ``subs`` (same callback), sorted."""
    by_callback: dict[Callable[..., object], list[str]] = {}
    for name in sorted(subs):
        sub = subs[name]
        if sub.hidden and sub.callback is not None:
            by_callback.setdefault(inspect.unwrap(sub.callback), []).append(name)
    return {name: tuple(by_callback.get(inspect.unwrap(sub.callback), ()))
            for name, sub in subs.items() if not sub.hidden and sub.callback is not None}


# a command of the tree, its context, its aliases
_Node = tuple[ClickCommand, "typer.Context", tuple[str, ...]]


class Tree(Mapping[tuple[str, ...], CommandDoc]):
    """Every command's record by path, hidden ones included, each built on first use (shell
    completion reads only the commands on the line). Iteration goes parents first, siblings
    sorted by name."""

    def __init__(self, root: object) -> None:
        command = cast(ClickCommand, root)  # a click command (typer's get_command)
        # path -> (command, its context, its aliases); None for a path that names no command
        self._nodes: dict[tuple[str, ...], _Node | None] = {
            (): (command, _context(command, (), None), ())}
        self._docs: dict[tuple[str, ...], CommandDoc] = {}
        self._aliases: dict[tuple[str, ...], dict[str, tuple[str, ...]]] = {}  # by parent

    def _node(self, path: tuple[str, ...]) -> _Node | None:
        if path not in self._nodes:
            parent = self._node(path[:-1])
            subs: Mapping[str, ClickCommand] = (getattr(parent[0], "commands", None) or {}) \
                if parent else {}
            cmd = subs.get(path[-1])
            if parent is None or cmd is None:
                self._nodes[path] = None
            else:
                if path[:-1] not in self._aliases:
                    self._aliases[path[:-1]] = _aliases(subs)
                aliases = self._aliases[path[:-1]].get(path[-1], ())
                self._nodes[path] = (cmd, _context(cmd, path, parent[1]), aliases)
        return self._nodes[path]

    def __getitem__(self, path: tuple[str, ...]) -> CommandDoc:
        if path not in self._docs:
            node = self._node(path)
            if node is None:
                raise KeyError(path)
            cmd, ctx, aliases = node
            self._docs[path] = _doc(cmd, path, ctx, aliases)
        return self._docs[path]

    def __iter__(self) -> Iterator[tuple[str, ...]]:
        def paths(cmd: ClickCommand, path: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
            yield path
            subs: Mapping[str, ClickCommand] = getattr(cmd, "commands", None) or {}
            for name in sorted(subs):
                yield from paths(subs[name], path + (name,))

        root = self._nodes[()]
        assert root is not None
        return paths(root[0], ())

    def __len__(self) -> int:
        return sum(1 for _ in self)
