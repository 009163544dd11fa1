"""The commands the answers layer serves: found by name, and what each would answer.

Every command is one module of :mod:`scratch.answers.commands` named after it (``get-in`` is
``get_in.py``, ``log read`` is ``log_read.py``) whose ``COMMAND`` is its
:class:`~scratch.declare.Command`; nothing else lists them. Invariants:

- A command's module is imported only when the command runs, or when every command is asked
  for (``--help``, ``tools/list``, the docs): a cold CLI call pays for its own command only.
- ``describe`` has no side effects on the budget: it returns a candidate answer, or for
  commands that are not priced (writes, listings) their result.
- The arguments a call may carry are the declaration's, plus the keyword-only parameters of the
  answer function that the interface supplies itself (``rendering``, ``stream``). An answer
  function that takes ``asked`` is given the call itself, its defaults left out
  (:func:`scratch.declare.asked`), never packs it again from its arguments.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from typing import TYPE_CHECKING

from scratch.declare import Command, asked, params
from scratch.errors import UsageError, argument

if TYPE_CHECKING:
    from scratch.answers.kernel.candidate import Candidate
    from scratch.answers.kernel.context import Context
    from scratch.answers.kernel.rendering import Rendering
    from scratch.answers.kernel.result import Result
    from scratch.calls import Call

PACKAGE = "scratch.answers.commands"


def module_name(command: str) -> str:
    """The module (under :data:`PACKAGE`) that declares ``command``."""
    return command.replace("-", "_").replace(" ", "_")


def module_names() -> list[str]:
    """Every command module, sorted (a directory listing: nothing is imported)."""
    package = importlib.import_module(PACKAGE)
    return sorted(m.name for m in pkgutil.iter_modules(package.__path__)
                  if not m.name.startswith("_"))


def _load(module: str) -> Command:
    found = getattr(importlib.import_module(f"{PACKAGE}.{module}"), "COMMAND", None)
    if not isinstance(found, Command):
        raise TypeError(f"{PACKAGE}.{module} declares no COMMAND")
    return found


_KNOWN: dict[str, Command] = {}


def declaration(command: str) -> Command:
    """The declaration of ``command``; an unknown name is a usage error."""
    known = _KNOWN.get(command)
    if known is not None:
        return known
    module = module_name(command)
    if module not in module_names():
        raise UsageError(f"unknown command {command!r}", code="unknown_command", command=command)
    found = _load(module)
    if found.name != command:
        raise UsageError(f"unknown command {command!r}", code="unknown_command", command=command)
    _KNOWN[command] = found
    return found


def every_command() -> list[Command]:
    """Every declared command, by name."""
    out = []
    for module in module_names():
        found = _load(module)
        _KNOWN[found.name] = found
        out.append(found)
    return sorted(out, key=lambda c: c.name)


def commands_under(word: str) -> list[Command]:
    """The commands a CLI line naming ``word`` first may run: ``word`` itself and, when it is a
    group (``log``, ``budget``), the commands under it. Only their modules are imported."""
    stem = module_name(word)
    out = []
    for module in module_names():
        if module == stem or module.startswith(stem + "_"):
            found = _load(module)
            if found.words[0] == word or (module == stem and word in found.aliases):
                _KNOWN[found.name] = found
                out.append(found)
    return out


def _supplied(fn: object) -> frozenset[str]:
    """The keyword-only parameters of an answer function that are not declared arguments: the
    interface gives them (how it prints, its input stream)."""
    names = {p.name for p in list(inspect.signature(fn).parameters.values())[1:]  # type: ignore[arg-type]
             if p.kind is p.KEYWORD_ONLY}
    return frozenset(names)


_CHECKED: dict[str, tuple[frozenset[str], frozenset[str], frozenset[str]]] = {}


def _names(command: Command) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """(declared names, required names, supplied names) of ``command``, read once."""
    known = _CHECKED.get(command.name)
    if known is None:
        declared = params(command)
        known = (frozenset(p.name for p in declared),
                 frozenset(p.name for p in declared if p.required),
                 _supplied(command.answer) - {p.name for p in declared})
        _CHECKED[command.name] = known
    return known


def describe(ctx: Context, call: Call, rendering: Rendering | None = None
             ) -> Candidate | Result[object]:
    """What ``call`` would answer, without charging anything. A command whose answer depends
    on how it is printed (the pointer's next calls are spelled and sized as the agent reads
    them) takes the ``rendering``."""
    command = declaration(call.command)
    declared, required, supplied = _names(command)
    args: dict[str, object] = dict(call.args)
    unknown = sorted(set(args) - declared - supplied)
    if unknown:
        raise UsageError(f"{call.command} takes no argument {argument(unknown[0])}",
                         code="invalid_argument", command=call.command, argument=unknown[0])
    missing = sorted(required - set(args))
    if missing:
        raise UsageError(f"{call.command} needs {argument(missing[0])}",
                         code="invalid_argument", command=call.command, argument=missing[0])
    if "rendering" in supplied and rendering is not None:
        args["rendering"] = rendering
    if "asked" in supplied:  # the call as asked, defaults left out (one rule: declare.asked)
        args["asked"] = asked(command, call.args)
    produced = command.answer(ctx, **args)
    return produced  # type: ignore[return-value]


def describe_candidate(ctx: Context, call: Call) -> Candidate:
    """The candidate of ``call`` (a finished result is wrapped as one that cannot be cut)."""
    from scratch.answers.kernel.candidate import Candidate, Fixed
    produced = describe(ctx, call)
    if isinstance(produced, Candidate):
        return produced
    return Fixed(call, produced, code="")
