"""Calls spelled as shell lines: the CLI's side of suggestions, ``next`` and the pointer.

The answers layer names calls as data (:class:`~scratch.calls.Call`); this table says
how each command's arguments are written on a ``scratch`` command line, so every call the CLI
prints runs as printed: the words are shlex-quoted, booleans become their flag, lists are
comma-joined. A test checks the table against the live command tree (every argument here is a
parameter of that command, spelled as its ``--help`` spells it).
"""

from __future__ import annotations

import shlex
from typing import Any, NamedTuple

from scratch.calls import Call


class Spelling(NamedTuple):
    """How one command is written: its positional arguments in order, then its options in the
    order they are printed (``(arg, flag)``; a flag ending in ``!`` is printed when the
    argument is False, e.g. ``numbers=False`` as ``--no-numbers``)."""

    words: tuple[str, ...]  # the command's own words after ``scratch``
    positional: tuple[str, ...] = ()
    options: tuple[tuple[str, str], ...] = ()


_NUMBERS = ("numbers", "--no-numbers!")
SPELLINGS: dict[str, Spelling] = {
    "head": Spelling(("head",), ("ref",), (("lines", "-n"), ("fit", "--fit"), _NUMBERS)),
    "tail": Spelling(("tail",), ("ref",), (("lines", "-n"), ("fit", "--fit"), _NUMBERS)),
    "slice": Spelling(("slice",), ("ref", "start", "end"),
                      (("from_byte", "--from-byte"), ("fit", "--fit"), _NUMBERS)),
    "read": Spelling(("read",), ("ref",), (("since_version", "--since-version"),
                                           ("context", "-U"), ("raw", "--raw"),
                                           ("fit", "--fit"))),
    "export": Spelling(("export",), ("ref",), (("output", "-o"),)),
    "grep": Spelling(("grep",), ("ref", "pattern"),
                     (("context", "-C"), ("ignore_case", "-i"), ("fixed", "-F"),
                      ("invert", "-v"), ("max_count", "-m"), ("from_line", "--from-line"),
                      ("count", "--count"), ("count_by", "--count-by"), ("offset", "--offset"),
                      ("limit", "--limit"), ("fit", "--fit"))),
    "schema": Spelling(("schema",), ("ref",), (("depth", "--depth"),)),
    "get-in": Spelling(("get-in",), ("ref", "path"),
                       (("keys", "--keys"), ("fields", "--fields"), ("count", "--count"),
                        ("offset", "--offset"), ("limit", "--limit"), ("fit", "--fit"))),
    "item-schema": Spelling(("item-schema",), ("ref", "path"),
                            (("offset", "--offset"), ("limit", "--limit"), ("depth", "--depth"))),
    "iterate-over": Spelling(("iterate-over",), ("ref", "path"),
                             (("fields", "--fields"), ("where", "--where"),
                              ("sort", "--sort"), ("desc", "--desc"), ("count", "--count"),
                              ("count_by", "--count-by"), ("offset", "--offset"),
                              ("limit", "--limit"), ("fit", "--fit"))),
    "summarize": Spelling(("summarize",), ("ref",)),
    "sql": Spelling(("sql",), ("ref", "query"),
                    (("table", "--table"), ("path", "--path"), ("describe", "--describe"),
                     ("offset", "--offset"), ("limit", "--limit"), ("fit", "--fit"))),
    "log read": Spelling(("log", "read"), ("name",),
                         (("since", "--since"), ("limit", "--limit"), ("fit", "--fit"))),
    "log tail": Spelling(("log", "tail"), ("name",), (("lines", "-n"), ("fit", "--fit"))),
    "log append": Spelling(("log", "append"), ("name", "entry"), (("lines", "--lines"),)),
    "diff": Spelling(("diff",), ("name", "a", "b"), (("context", "-U"),)),
    "history": Spelling(("history",), ("name",)),
    "restore": Spelling(("restore",), ("ref",)),
    "rm": Spelling(("rm",), ("name",)),
    "ls": Spelling(("ls",), ("prefix",)),
    "write": Spelling(("write",), ("name", "source"), (("allow_empty", "--allow-empty"),)),
    "stats": Spelling(("stats",)),
    "config": Spelling(("config",)),
    "config threshold": Spelling(("config", "threshold"), ("server", "tool")),
    "budget": Spelling(("budget",)),
    "budget used": Spelling(("budget", "used"), ("tokens",)),
    "budget reset": Spelling(("budget", "reset")),
    "budget set-window": Spelling(("budget", "set-window"), ("tokens",)),
}


def _word(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def shell_words(c: Call) -> list[str]:
    """``c`` as the words of a ``scratch`` command line (unquoted)."""
    if c.command == "grep" and c.args.get("all"):
        args = {k: v for k, v in c.args.items() if k not in ("all", "ref")}
        spelling = SPELLINGS["grep"]._replace(positional=("pattern",))
        words = ["scratch", "grep", "--all"]
    else:
        known = SPELLINGS.get(c.command)
        if known is None:
            raise KeyError(f"no shell spelling for command {c.command!r}")
        spelling = known
        args = dict(c.args)
        words = ["scratch", *spelling.words]
    for name in spelling.positional:
        if name in args:
            words.append(_word(args.pop(name)))
    for name, flag in spelling.options:
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
    return words


def shell_line(c: Call) -> str:
    """``c`` as a command line that runs as printed."""
    return " ".join(shlex.quote(w) for w in shell_words(c))
