"""Interim: today's core spells suggestions and ``next`` as CLI lines (``scratch head pods -n 20``);
this reads such a line back into a core call ``(command, args)`` with the core contract's
argument names, so MCP can show it as a tool call.

It goes away when the answers layer hands over calls as data (``Call(command, args)``): then
:func:`scratch.mcp.specs.to_tool_call` takes them as they are. Until then the grammar below
mirrors the CLI's options for every command a suggestion can name; a line it cannot read
(advice text, a placeholder) is returned as ``None`` and the caller keeps the text.
"""

from __future__ import annotations

import shlex
from typing import Any, NamedTuple


class Grammar(NamedTuple):
    positionals: tuple[tuple[str, str], ...]  # (core name, "str"|"int"), in order
    options: dict[str, tuple[str, Any]]  # flag -> (core name, "int"|"str" or the value it sets)
    optional_from: int | None = None  # positionals from this index on may be left out


_FIT = {"--fit": ("fit", True)}
_NUMBERS = {"--no-numbers": ("numbers", False)}
_PAGE = {"--offset": ("offset", "int"), "--limit": ("limit", "int")}
_GREP = {"-C": ("context", "int"), "--context": ("context", "int"),
         "-i": ("ignore_case", True), "--ignore-case": ("ignore_case", True),
         "-F": ("fixed", True), "--fixed-strings": ("fixed", True),
         "-m": ("max_count", "int"), "--max-count": ("max_count", "int"),
         "-v": ("invert", True), "--invert-match": ("invert", True)}
REF = ("ref", "str")
NAME = ("name", "str")

GRAMMARS: dict[str, Grammar] = {
    "head": Grammar((REF,), {"-n": ("lines", "int"), "--lines": ("lines", "int"),
                             **_NUMBERS, **_FIT}),
    "tail": Grammar((REF,), {"-n": ("lines", "int"), "--lines": ("lines", "int"),
                             **_NUMBERS, **_FIT}),
    "slice": Grammar((REF, ("start", "int"), ("end", "int")),
                     {**_NUMBERS, **_FIT, "--from-byte": ("from_byte", "int")}),
    "read": Grammar((REF,), {"--since-version": ("since_version", "int"),
                             "-U": ("context", "int"), "--unified": ("context", "int"),
                             "--raw": ("raw", True), **_FIT}),
    "grep": Grammar((REF, ("pattern", "str")),
                    {**_GREP, "--from-line": ("from_line", "int"), **_FIT}),
    "grep --all": Grammar((("pattern", "str"),), _GREP),
    "schema": Grammar((REF,), {"--depth": ("depth", "int")}),
    "get-in": Grammar((REF, ("path", "str")), {**_PAGE, **_FIT}),
    "item-schema": Grammar((REF, ("path", "str")), {**_PAGE, "--depth": ("depth", "int")}),
    "iterate-over": Grammar((REF, ("path", "str")),
                            {"--fields": ("fields", "str"), **_PAGE,
                             "--where": ("where", "str"), **_FIT}),
    "summarize": Grammar((REF,), {}),
    "log read": Grammar((NAME,), {"--since": ("since", "int"), "--limit": ("limit", "int"),
                                  **_FIT}),
    "log tail": Grammar((NAME,), {"-n": ("lines", "int"), **_FIT}),
    "log append": Grammar((NAME, ("entry", "str")), {}),
    "diff": Grammar((NAME, ("a", "int"), ("b", "int")),
                    {"-U": ("context", "int"), "--unified": ("context", "int")}),
    "history": Grammar((NAME,), {}),
    "restore": Grammar((REF,), {}),
    "rm": Grammar((NAME,), {}),
    "ls": Grammar((("prefix", "str"),), {}, optional_from=0),
    "stats": Grammar((), {}),
    "budget": Grammar((), {}),
    "budget reset": Grammar((), {}),
    "budget used": Grammar((("tokens", "int"),), {}),
    "budget set-window": Grammar((("tokens", "int"),), {}),
}
_GROUPS = {"log", "budget"}  # commands whose second word is a subcommand


def _value(kind: str, word: str) -> Any:
    return int(word) if kind == "int" else word


def parse_cli_line(line: str) -> tuple[str, dict[str, Any]] | None:
    """``scratch head pods -n 20`` -> ``("head", {"ref": "pods", "lines": 20})``; None when
    the line is not a command this grammar knows."""
    try:
        words = shlex.split(line)
    except ValueError:
        return None
    if len(words) < 2 or words[0] != "scratch":
        return None
    words = words[1:]
    command = words.pop(0)
    if command in _GROUPS and words and f"{command} {words[0]}" in GRAMMARS:
        command = f"{command} {words.pop(0)}"
    if command == "grep" and "--all" in words:
        words.remove("--all")
        command, extra = "grep --all", {"all": True}
    else:
        extra = {}
    grammar = GRAMMARS.get(command)
    if grammar is None:
        return None
    args: dict[str, Any] = dict(extra)
    positional: list[str] = []
    try:
        i = 0
        while i < len(words):
            word = words[i]
            flag, eq, inline = word.partition("=")
            if word.startswith("-") and len(word) > 1 and (flag in grammar.options):
                core, kind = grammar.options[flag]
                if kind in ("int", "str"):
                    if eq:
                        raw = inline
                    else:
                        i += 1
                        raw = words[i]
                    args[core] = _value(kind, raw)
                else:
                    args[core] = kind
            elif word.startswith("-") and len(word) > 1 and not word.lstrip("-").isdigit():
                return None  # an option this grammar does not know
            else:
                positional.append(word)
            i += 1
        need = len(grammar.positionals) if grammar.optional_from is None else grammar.optional_from
        if not need <= len(positional) <= len(grammar.positionals):
            return None
        for (core, kind), word in zip(grammar.positionals, positional, strict=False):
            args[core] = _value(kind, word)
    except (IndexError, ValueError):
        return None
    if "fields" in args:
        args["fields"] = [f.strip() for f in str(args["fields"]).split(",") if f.strip()]
    if command == "log append":
        args["entries"] = [args.pop("entry")]
    return ("grep" if command == "grep --all" else command), args
