"""Calls spelled as shell lines: the CLI's side of suggestions, ``next`` and the pointer.

The answers layer names calls as data (:class:`~scratch.calls.Call`); a command's declaration
(:mod:`scratch.declare`) says how each of its arguments is written on a ``scratch`` command
line, so every call the CLI prints runs as printed: the words are shlex-quoted, booleans become
their flag, lists are comma-joined. The same declaration spells an argument an error names
(:func:`flag_of`).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import NamedTuple

from scratch.calls import Call
from scratch.declare import Command, params


class Spelling(NamedTuple):
    """How one command is written: its positional arguments in order, then its options in the
    order they are printed (``(arg, flag)``; a flag ending in ``!`` is printed when the
    argument is False, e.g. ``numbers=False`` as ``--no-numbers``)."""

    words: tuple[str, ...]  # the command's own words after ``scratch``
    positional: tuple[str, ...] = ()
    options: tuple[tuple[str, str], ...] = ()




_DECLARED: dict[str, Spelling] = {}


def _declared(command: str) -> Command | None:
    from scratch.answers.kernel.catalogue import declaration
    from scratch.errors import UsageError
    try:
        return declaration(command)
    except UsageError:
        return None


def spelling(command: str) -> Spelling | None:
    """How ``command`` is written, from its declaration."""
    known = _DECLARED.get(command)
    if known is not None:
        return known
    cmd = _declared(command)
    if cmd is None or not cmd.cli:
        return None
    declared = [p for p in params(cmd) if p.arg.cli]
    known = Spelling(cmd.words, tuple(p.name for p in declared if p.positional),
                     tuple((p.name, p.arg.negate + "!" if p.arg.negate else p.arg.flags[0])
                           for p in declared if not p.positional))
    _DECLARED[command] = known
    return known


def flag_of(command: str | None, name: str) -> str:
    """How the CLI writes argument ``name`` of ``command`` in a message: its long flag
    (``--count-by``), or its metavar when it is positional (``QUERY``)."""
    cmd = _declared(command) if command else None
    if cmd is not None:
        for p in params(cmd):
            if p.name != name:
                continue
            if p.positional:
                return p.arg.metavar or p.name.upper()
            if p.arg.negate:
                return p.arg.negate
            longs = [f for f in p.arg.flags if f.startswith("--")]
            return (longs or list(p.arg.flags))[0]
    return "--" + name.replace("_", "-")


def _word(value: object) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def shell_words(c: Call, repeated: Sequence[str] = ()) -> list[str]:
    """``c`` as the words of a ``scratch`` command line (unquoted), ending in the ``repeated``
    words it does not hold already: the common options (``--agent w2``, ``--run r1`` ...)
    the command being answered was given by flag, so a suggestion run as printed acts on the
    same store, agent, session and run (the CLI's renderings are made with them,
    :mod:`scratch.cli.render`)."""
    known = spelling(c.command)
    if known is None:
        raise KeyError(f"no shell spelling for command {c.command!r}")
    form = known
    args = dict(c.args)
    words = ["scratch", *form.words]
    cmd = _declared(c.command)
    for flag, layout in (cmd.layouts.items() if cmd is not None else ()):
        if args.get(flag):  # another layout: its flag first, then its own positionals
            words.append(dict(form.options)[flag])
            args.pop(flag)
            form = form._replace(positional=layout)
            args = {k: v for k, v in args.items()
                    if k in layout or k not in known.positional}
            break
    for name in form.positional:
        if name in args:
            words.append(_word(args.pop(name)))
    for name, flag in form.options:
        if name not in args:
            continue
        value = args.pop(name)
        if flag.endswith("!"):
            if value is False:
                words.append(flag[:-1])
        elif value is True:
            words.append(flag)
        elif value is not False and value is not None:
            words += [flag, _word(value)]
    if args:
        raise KeyError(f"{c.command}: no shell spelling for {sorted(args)}")
    return words + _missing(words, repeated)


def _missing(words: list[str], repeated: Sequence[str]) -> list[str]:
    """The ``repeated`` words (flags, each with its value if it takes one) a line does not
    already hold (``artifact put RUN`` names its run)."""
    out: list[str] = []
    i = 0
    while i < len(repeated):
        flag = repeated[i]
        takes = i + 1 < len(repeated) and not repeated[i + 1].startswith("--")
        part = list(repeated[i:i + 2]) if takes else [flag]
        if flag not in words:
            out += part
        i += len(part)
    return out


def shell_line(c: Call, repeated: Sequence[str] = ()) -> str:
    """``c`` as a command line that runs as printed (``repeated``: see :func:`shell_words`)."""
    return " ".join(shlex.quote(w) for w in shell_words(c, repeated))
