"""A candidate answer: what a command would show, described without side effects.

A command describes its answer as a :class:`Candidate`; :mod:`scratch.answers.kernel.fitting` is the
one place that decides what of it fits the per-call cap and the budget, prices it in the chosen
rendering, charges it, cuts it for ``--fit`` and finds the suggestions of a refusal. A
candidate never touches the budget: building any of its pages, or a suggestion's, only reads.

The answer is made of ``units`` pieces (lines, grep regions, rows, log entries); ``page(k)``
is the answer showing the first k of them (``page(units)``: all of it). An answer that cannot
be cut has one unit.

Invariants a candidate keeps:
- ``page(k)`` is pure and its cost grows with k; ``text_price(k)`` (when not None) is exactly
  what the text of ``page(k)`` is priced at, and ``estimate(k)`` (when not None) never exceeds
  what ``page(k)`` costs in any rendering, so a page whose estimate is over the cap is refused
  before it is built.
- ``resume(k)`` is the call that continues exactly after the first k units (None when they
  were all); following it until it is None shows every unit once.
- ``shrunk(k)`` is the candidate of a standalone call showing the first k of
  ``shrink_units`` (``head -n k``, ``grep -m k``, ``--limit k``, ``schema --depth k``); its
  ``asked`` is that call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Literal, NamedTuple, TypeAlias

if TYPE_CHECKING:
    from scratch.answers.kernel.result import Result
    from scratch.calls import Call


class Alternative(NamedTuple):
    """Another way into a refused answer, offered when its own answer fits.

    ``call``: the call suggested (when ``shrink`` is False); ``candidate``: its answer, or a
    function of the cap building it (returning None when it cannot fit; None: the pipeline
    describes ``call``); ``shrink``: suggest the
    largest ``candidate.shrunk(k)`` that fits instead; ``fit``: suggest ``candidate``'s
    ``--fit`` call when its first page fits; ``unless_shrunk``: offered only when the same
    command asking for less (the plan's SHRINK step) fits in no size; ``last_resort``:
    offered only when no step before it found a call that fits."""

    call: Call | None = None
    candidate: Candidate | Callable[[int], Candidate | None] | None = None
    shrink: bool = False
    fit: bool = False
    unless_shrunk: bool = False
    last_resort: bool = False


class Some(NamedTuple):
    """A plan step: up to ``most`` of ``options`` (in order) whose answers fit; when none does,
    the first of ``otherwise`` that fits."""

    options: list[Alternative]
    most: int = 1
    otherwise: list[Alternative] = []


SHRINK: Literal["shrink"] = "shrink"  # a plan step: the same command asking for less
FIT: Literal["fit"] = "fit"  # a plan step: the same command with --fit, when its first page fits
# one step of a refusal's plan (see Candidate.plan)
Step: TypeAlias = 'Literal["shrink", "fit"] | Alternative | Some'


class Candidate:
    """Base class: a one-unit answer that cannot be cut (override what applies)."""

    command = ""
    code = ""  # the refusal code: head_too_large, get_in_too_large ...
    units = 1
    shrink_units = 0  # > 1: shrunk(k) exists for k in 1..shrink_units-1
    what = "this answer"  # how a refusal names it when not even its first unit fits

    def __init__(self, asked: Call, *, fit: bool = False) -> None:
        self.asked = asked
        self.fit = fit

    def page(self, k: int) -> Result[object]:
        raise NotImplementedError

    def text_price(self, k: int) -> int | None:
        return None

    def estimate(self, k: int) -> int | None:
        return None

    def about(self, k: int) -> int | None:
        """What a refusal reports as the cost of ``page(k)`` when it was refused on its
        estimate (a closer guess than the estimate, which is a floor); None: the estimate."""
        return None

    def resume(self, k: int) -> Call | None:
        return None

    def fit_call(self) -> Call | None:
        """This call with --fit (None: the command has no --fit)."""
        return None

    def fit_candidate(self) -> Candidate:
        """What ``fit_call()`` answers, when it is not this candidate cut into pages (a whole
        read's --fit pages it by lines)."""
        return self

    def shrunk(self, k: int) -> Candidate | None:
        return None

    def pieces(self) -> Candidate | None:
        """With --fit, when not even the first unit fits: the answer in smaller pieces."""
        return None

    def plan(self) -> list[Step]:
        """The suggestions of a refusal, in order: SHRINK, FIT and Alternatives."""
        return [SHRINK, FIT, *self.alternatives()]

    def alternatives(self) -> Iterable[Alternative]:
        return ()

    def details(self) -> dict[str, object]:
        """Extra fields for a refusal (total_lines, matches ...): JSON, into its details."""
        return {}

    def close(self) -> None:
        """Release what the candidate holds open (an index)."""


class Fixed(Candidate):
    """A finished answer, priced like any other but not cut: ``page(1)`` is ``result``."""

    def __init__(self, asked: Call, result: Result[object], *, code: str,
                 alternatives: Iterable[Alternative] = (),
                 details: dict[str, object] | None = None,
                 on_close: Callable[[], None] | None = None) -> None:
        super().__init__(asked)
        self.command = asked.command
        self.code = code
        self.result = result
        self._alternatives = alternatives
        self._details = details or {}
        self._on_close = on_close

    def page(self, k: int) -> Result[object]:
        return self.result

    def text_price(self, k: int) -> int | None:
        return self.result.price

    def plan(self) -> list[Step]:
        return list(self._alternatives)

    def details(self) -> dict[str, object]:
        return self._details

    def close(self) -> None:
        if self._on_close is not None:
            self._on_close()
