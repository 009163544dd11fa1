"""Words that start with ``-`` and a digit are arguments on every command: ``item-schema REF
-1.server_zones``, ``get-in REF -2.name``, ``slice REF -5 -1``.

Click reads every word that starts with ``-`` as an option, so a negative index given as a
PATH was ``No such option: -1`` on every command but the one that had opted out of that rule
(get-in, which let unknown options through and refused the real ones afterwards). The rule
belongs to the parser of every command instead: :class:`ArgumentWords` is the class of each
generated command, and before click parses a command line it moves the words that
:func:`scratch.declare.argument_word` calls arguments (and the other positional words, in
their order) after a ``--``, leaving the options and their values in front. Nothing else
changes: a word that is an option's value (``--offset -20``) stays the value, an unknown
option (``--nosuch``, ``-x``) is refused by click as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import typer.core

from scratch.declare import argument_word


class _Param(Protocol):
    """What is read of a click parameter (an option's ``is_flag`` and ``count`` through
    getattr: click's parameter base class has neither)."""

    @property
    def opts(self) -> Sequence[str]: ...

    @property
    def secondary_opts(self) -> Sequence[str]: ...


class _Command(Protocol):
    """What is read of a click command (``help_option_names`` through getattr)."""

    @property
    def params(self) -> Sequence[_Param]: ...


def _options(command: _Command) -> tuple[set[str], set[str]]:
    """(every option spelling of ``command``, the spellings that take a value)."""
    names: set[str] = set()
    valued: set[str] = set()
    for param in command.params:
        if getattr(param, "param_type_name", "") != "option":
            continue
        spellings = [*param.opts, *param.secondary_opts]
        names.update(spellings)
        if not (getattr(param, "is_flag", False) or getattr(param, "count", False)):
            valued.update(spellings)
    names.update(getattr(command, "help_option_names", None) or ("--help",))
    return names, valued


def arguments_last(command: _Command, args: list[str]) -> list[str]:
    """``args`` with its options (and their values) first and its positional words after a
    ``--`` when one of them is an :func:`argument_word`; ``args`` as it is otherwise."""
    if not any(argument_word(a) for a in args):
        return args
    names, valued = _options(command)
    options: list[str] = []
    positional: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word == "--":
            positional += args[i:]
            break
        if argument_word(word) and word not in names:
            positional.append(word)
        elif word[:1] == "-" and len(word) > 1:
            options.append(word)
            if word.startswith("--"):
                takes = "=" not in word and word in valued
            else:  # -n 5, or -n5 with its value attached
                takes = len(word) == 2 and word in valued
            if takes and i < len(args):
                options.append(args[i])
                i += 1
        else:
            positional.append(word)
    if not any(argument_word(w) for w in positional):
        return args  # every such word was an option's value: nothing to move
    return [*options, "--", *positional]


class ArgumentWords(typer.core.TyperCommand):
    """A generated command whose parser takes :func:`scratch.declare.argument_word` words as
    arguments (see the module)."""

    # ctx: click's Context, a class typer keeps private (typer.Context, a subclass, would
    # narrow the override)
    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, arguments_last(self, list(args)))
