"""Calls: a command and its arguments, as data (usable from every layer).

Suggestions in refusals, ``next`` in ``--fit`` answers and the pointer's next commands are
:class:`Call` records, never command lines: only an interface spells them (the CLI as a shell
line, MCP as a tool call), so every interface offers the same calls.

Invariants:
- ``command`` is a command name as the core knows it (``"head"``, ``"get-in"``,
  ``"log read"``, ``"budget reset"``); ``args`` uses the core's argument names (``ref``,
  ``lines``, ``max_count``, ``fit`` ...), positive booleans (``numbers=False``, never
  ``no_numbers``), and holds only what the call sets: an argument left out takes the
  command's default in every interface.
- A call is a value: two calls with the same command and arguments are the same suggestion.
- Below the answers layer (the store, sync, tokens, runs) a suggestion names a :class:`Step`,
  what to do next, never a command: the answers layer says which of its commands does each
  step (:func:`does`, filled when :mod:`scratch.answers` is imported) and :func:`suggest`
  makes the call. Every interface runs commands through the answers layer, so every call it
  shows names a command.
- An argument is what an interface's user can set (:data:`Arg`: a string, a number, a boolean,
  a list of strings), or, for the calls an interface builds itself, what it hands the command
  in-process (ingest's stream, content and companions, run's progress callback: :data:`ArgValue`).
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, NamedTuple, TypeAlias

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from os import PathLike
    from typing import IO

    from typing_extensions import Buffer  # bytes, without f"{x}" passing for text

# what a user sets, on the command line or in an MCP tool call's arguments
Arg: TypeAlias = "str | int | float | bool | list[str] | None"
# what an interface hands a command in-process besides: stdin, content and log entries as
# bytes, a path, tokens' chunks of its input, an MCP proxy's companions, notices and _meta
# info
ArgValue: TypeAlias = ("Arg | Buffer | Sequence[Buffer] | PathLike[str] | IO[bytes]"
                       " | Iterable[bytes] | tuple[object, ...] | Mapping[str, object]")


class Call(NamedTuple):
    """One command with its arguments (see the module docstring)."""

    command: str
    args: dict[str, ArgValue]

    def key(self) -> tuple[str, tuple[tuple[str, object], ...]]:
        """A hashable identity: the same command and arguments give the same key."""
        return self.command, tuple(sorted((k, _frozen(v)) for k, v in self.args.items()))

    def with_args(self, **changes: ArgValue) -> Call:
        """This call with ``changes`` applied (a value of None removes the argument)."""
        args = {**self.args, **changes}
        return Call(self.command, {k: v for k, v in args.items() if v is not None})


def call(command: str, **args: ArgValue) -> Call:
    """A :class:`Call`; arguments given as None are left out (they take their default)."""
    return Call(command, {k: v for k, v in args.items() if v is not None})


def _frozen(value: object) -> object:
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    return value


def unique(calls: list[Call], *, without: Call | None = None) -> list[Call]:
    """``calls`` in order, each once, and never ``without`` (the refused call itself)."""
    seen = set() if without is None else {without.key()}
    out = []
    for c in calls:
        k = c.key()
        if k not in seen:
            seen.add(k)
            out.append(c)
    return out


class Step(Enum):
    """What a layer below the answers layer suggests doing next, said by what it does (see the
    module docstring)."""

    LIST_ENTRIES = "list the entries"
    REMOVE_ENTRY = "remove an entry"
    READ_LOG = "read a log"
    SYNC = "sync with a remote"
    LIST_REMOTES = "list the remotes"
    ADD_REMOTE = "add a remote"
    REMOVE_REMOTE = "remove a remote"
    SHOW_BUDGET = "show the budget"
    SET_BUDGET_USED = "set what the budget has used"
    RESET_BUDGET = "reset the budget"
    SET_BUDGET_WINDOW = "set the budget's window"
    LIST_ARTIFACTS = "list a run's artifacts"
    NEXT_ITERATION = "start a run's next iteration"


_DOERS: dict[Step, str] = {}


def does(doers: Mapping[Step, str]) -> None:
    """Register which command does each step (the answers layer's, by the command's name)."""
    _DOERS.update(doers)


def doer(step: Step) -> str | None:
    """The command registered for ``step``, None while none is (the answers layer unloaded)."""
    return _DOERS.get(step)


def suggest(step: Step, **args: ArgValue) -> Call:
    """The call that does ``step`` with ``args`` (None left out, as :func:`call`). Used with no
    answers layer loaded (a lower layer on its own, never an interface), the call names the
    step's own words, as no command."""
    return call(_DOERS.get(step, step.value), **args)
