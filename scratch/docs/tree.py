"""A plain, deterministic model of the live command tree, for man pages, completions and tests.

The click objects Typer builds (``typer.main.get_command(app)``) are walked once into frozen
:class:`CommandDoc` / :class:`ParamDoc` records, so the generators never touch click internals
and a test can check every command in one loop.

Conventions read from each command's help text (the same text ``--help`` shows):
- the first paragraph is the one-line summary;
- ``Example: CMD`` (or ``Examples:`` followed by one command per line) ends a paragraph and
  gives the examples; the rest of that paragraph stays in the description;
- an epilog equal to the exit-status line is left out (the man pages have EXIT STATUS).

Hidden commands whose callback is a visible command's callback are recorded as that command's
``aliases``; they get no page of their own and are not offered by completion.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from typing import Any

COMMON_PANEL = "Common options"
_EXAMPLE = re.compile(r"(?:^|(?<=\s))Examples?:\s*", re.MULTILINE)


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

    @property
    def name(self) -> str:
        return " ".join(("scratch",) + self.path)

    @property
    def page(self) -> str:
        return "-".join(("scratch",) + self.path)


def root_command() -> Any:
    """The click command of the whole CLI, with every command module registered."""
    import typer.main

    from scratch.cli import _register, app
    _register()
    return typer.main.get_command(app)


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


def _param_doc(param: Any, ctx: Any) -> ParamDoc:
    is_option = param.param_type_name == "option"
    is_flag = bool(getattr(param, "is_flag", False))
    metavar = param.metavar or ""
    if not metavar and not is_flag:
        metavar = param.name.upper() if not is_option else param.type.name.upper()
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
    )


def _context(cmd: Any, path: tuple[str, ...], parent_ctx: Any) -> Any:
    """A context as click would make it (context_settings decide e.g. the help option names)."""
    import typer._click as click

    return click.Context(cmd, info_name=path[-1] if path else "scratch", parent=parent_ctx,
                         **(cmd.context_settings or {}))


def _doc(cmd: Any, path: tuple[str, ...], parent_ctx: Any, aliases: tuple[str, ...],
         skip_epilog: str) -> CommandDoc:
    ctx = _context(cmd, path, parent_ctx)
    text = _clean_help(cmd.help)
    epilog = _clean_help(cmd.epilog)
    paras = paragraphs(text)
    if epilog and epilog != skip_epilog:
        paras += paragraphs(epilog)
    kept, examples = split_examples(paras)
    summary = " ".join(kept[0].split()) if kept else ""
    subs = getattr(cmd, "commands", None) or {}
    settings = cmd.context_settings or {}
    return CommandDoc(
        path=path,
        help=text,
        summary=summary,
        description=tuple(kept[1:]),
        examples=tuple(examples),
        params=tuple(_param_doc(p, ctx) for p in cmd.get_params(ctx)),
        subcommands=tuple(sorted(n for n, c in subs.items() if not c.hidden)),
        is_group=hasattr(cmd, "commands"),
        hidden=bool(cmd.hidden),
        aliases=aliases,
        takes_extra_args=bool(settings.get("allow_extra_args")) and not hasattr(cmd, "commands"),
        runs_alone=bool(getattr(cmd, "invoke_without_command", False)),
    )


def walk(root: Any | None = None, *, include_hidden: bool = False) -> list[CommandDoc]:
    """Every command, parents before children, siblings sorted by name."""
    from scratch.cli.common import EXIT_STATUS_TEXT

    root = root if root is not None else root_command()
    out: list[CommandDoc] = []

    def visit(cmd: Any, path: tuple[str, ...], parent_ctx: Any, aliases: tuple[str, ...]) -> None:
        doc = _doc(cmd, path, parent_ctx, aliases, EXIT_STATUS_TEXT)
        if doc.hidden and not include_hidden:
            return
        out.append(doc)
        subs: dict[str, Any] = getattr(cmd, "commands", None) or {}
        ctx = _context(cmd, path, parent_ctx)
        by_callback: dict[Any, list[str]] = {}
        for name in sorted(subs):
            sub = subs[name]
            if sub.hidden and sub.callback is not None:
                by_callback.setdefault(inspect.unwrap(sub.callback), []).append(name)
        for name in sorted(subs):
            sub = subs[name]
            found = () if sub.hidden or sub.callback is None else tuple(
                by_callback.get(inspect.unwrap(sub.callback), ()))
            visit(sub, path + (name,), ctx, found)

    visit(root, (), None, ())
    return out


def alias_names(docs: list[CommandDoc]) -> set[str]:
    """Full names of hidden aliases (``scratch get_in``) of the given commands."""
    return {" ".join(("scratch",) + d.path[:-1] + (a,)) for d in docs for a in d.aliases}
