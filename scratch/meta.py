"""What an answer, or a refusal once charged, carries under ``"meta"`` in JSON.

Foundation module (standard library only): the errors (a refusal's own price) and the answers
layer's results (:mod:`scratch.answers.kernel.result`) both hold a :class:`Meta`.
"""

from __future__ import annotations

from typing import TypedDict


class TokenMeta(TypedDict, total=False):
    """``meta["tokens"]``: what was printed costs ``count`` tokens in ``encoding`` (all three
    are always set; not total so that a reader's ``meta.get("tokens") or {}`` types)."""

    count: int
    encoding: str
    exact: bool  # False: the encoding is an estimate (a Claude model's factor)


class BudgetMeta(TypedDict, total=False):
    """``meta["budget"]``: the session's budget once the answer is charged."""

    window: int
    usable: int
    used: int
    remaining: int
    warning: str  # once 50% or more of it is used (see scratch.answers.kernel.prices)


class Meta(TypedDict, total=False):
    """What a result carries under ``"meta"`` in JSON; every key any command sets is here."""

    tokens: TokenMeta  # set by the pipeline on every priced answer
    budget: BudgetMeta  # likewise
    intercepted: int  # tokens an output stored instead of shown kept out of the context
    cached: bool  # summarize: the summary was read from the cache
    total_matches: int  # grep -m: the matching lines in all, when it stopped early
    command_exit: int  # run: the command's exit status (128 + N when killed by signal N)
    interrupted: str  # run: the signal that interrupted scratch (SIGINT, SIGTERM)
    redacted: dict[str, object]  # an entry's values redacted at capture: count, per rule


__all__ = ["BudgetMeta", "Meta", "TokenMeta"]
