"""Log operations: append, read with a cursor, tail. Each returns a Result.

``read`` and ``tail`` are priced like every other answer (see :mod:`scratch.pricing`).
Invariants:
- The price is the exact token count of what the agent reads: the printed entry lines, or with
  ``--json`` the envelope (checked here on its data, charged exactly once it is built).
- Over the per-call cap or what is left of the budget the answer is refused (exit 3,
  ``log_read_too_large`` / ``log_tail_too_large``) and nothing is charged; the suggestions are
  pages measured to fit (a smaller ``--limit``/``-n``, the ``--since`` cursor form) and ``--fit``.
- ``--fit`` shows the longest run of entries from the start of the requested ones that fits,
  plus ``next``: ``scratch log read NAME --since <last shown id> --limit <the rest> --fit``.
  Ids only grow, so following ``next`` until it is absent shows every requested entry once.
- Cursor fields keep their meaning: ``next_since`` is the id of the last entry shown and
  ``has_more`` says whether entries follow it.
- Only the entries needed to decide are tokenized: counting stops once the cap is passed, and a
  refusal's ``estimated_tokens`` is extrapolated from the counted part by length.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import Any

from scratch import logs
from scratch.context import Context
from scratch.result import Result, compact_json

Entries = list[dict[str, Any]]
DataOf = Callable[[Entries], dict[str, Any]]


def _line(rec: dict[str, Any]) -> str:
    value = rec["entry"]
    shown = value if isinstance(value, str) else compact_json(value)
    return f"{rec['id']}\t{rec['ts']}\t{shown}\n"


def _text(entries: Entries) -> str:
    return "".join(_line(rec) for rec in entries)


def append(ctx: Context, name: str, entries: list[bytes]) -> Result:
    rec = logs.append(ctx.store(), name, entries)
    what = (f"entry {rec['first_id']}" if rec["count"] == 1
            else f"{rec['count']} entries, ids {rec['first_id']}-{rec['last_id']}")
    return Result("log append", data=rec, text=f"{name}: appended {what}\n")


# -- pricing ------------------------------------------------------------------------------------

def _cost(spec: Any, shown: Entries, data_of: DataOf, warnings: tuple[str, ...],
          json_form: bool) -> int:
    """Tokens of answering with ``shown``: its lines, or (--json) its data plus the envelope."""
    from scratch.tokens import count_text
    if not json_form:
        return count_text(_text(shown), spec)
    from scratch.pricing import ENVELOPE_TOKENS
    data = data_of(shown)
    # meta repeats "next" and carries the warnings: count them on top of the usual envelope
    extra = count_text(compact_json([data.get("next", ""), *warnings]), spec)
    return count_text(compact_json(data), spec) + ENVELOPE_TOKENS + extra


def _measure(spec: Any, entries: Entries, cap: int, data_of: DataOf, warnings: tuple[str, ...],
             json_form: bool, *, from_end: bool = False) -> tuple[int, int, int]:
    """``(k, estimate, cost)``: the most entries from the start (with ``from_end``, the end)
    whose answer (printed lines, or with ``json_form`` the --json document) costs at most
    ``cap``, checked on the exact count; the estimated cost of all of them (exact when they
    all fit); and the cost of the ``k`` entries."""
    from scratch.tokens import count_lines

    def pick(k: int) -> Entries:
        return entries[len(entries) - k:] if from_end else entries[:k]

    if not entries:
        return 0, 0, _cost(spec, [], data_of, warnings, json_form)
    ordered = entries[::-1] if from_end else entries
    if json_form:  # each record and its comma; the data around them and the envelope
        pieces = [compact_json(rec) + "," for rec in ordered]
        overhead = _cost(spec, [], data_of, warnings, json_form)
    else:
        pieces = [_line(rec) for rec in ordered]
        overhead = 0
    room = spec.base_limit(max(0, cap - overhead))
    # lines start with their id, so no token spans two of them: per-entry counts add up
    counted = total = k = 0
    batch = 64
    while counted < len(pieces) and total <= room:
        for c in count_lines(pieces[counted:counted + batch], spec.base):
            total += c
            if total <= room:
                k += 1
        counted = min(len(pieces), counted + batch)
        batch *= 2
    if counted < len(pieces):
        share = sum(len(p) for p in pieces) / max(1, sum(len(p) for p in pieces[:counted]))
        total = int(total * share)
    estimate = spec.scale(total) + overhead
    cost = _cost(spec, pick(k), data_of, warnings, json_form) if k else 0
    if k == len(entries):
        estimate = cost
    while k > 0 and cost > cap:  # counts of separate pieces can be off by a token here and there
        k = min(k - 1, int(k * cap / cost))
        cost = _cost(spec, pick(k), data_of, warnings, json_form) if k else 0
    return k, estimate, cost


def _charge(ctx: Context, cost: int, *, code: str, suggestions: list[str],
            details: dict[str, Any]) -> dict[str, Any]:
    from scratch.pricing import ENVELOPE_TOKENS, charge_answer
    # --json: check the data alone now; the envelope is priced exactly once it is built
    tokens = max(0, cost - ENVELOPE_TOKENS) if ctx.json_mode else cost
    return charge_answer(ctx, tokens, code=code, suggestions=suggestions, details=details)


# -- read ---------------------------------------------------------------------------------------

def _skip(q: str, entry_id: int, rest: int) -> str:
    """The command that pages on past entry ``entry_id`` (when it alone does not fit)."""
    return f"scratch log read {q} --since {entry_id} --limit {max(1, rest)} --fit"


def read(ctx: Context, name: str, since: int, limit: int, *, fit: bool = False) -> Result:
    from scratch.explore.lines import fit_cap, too_big_to_fit

    rec = logs.read(ctx.store(), name, since, limit)
    warnings = tuple(rec.pop("warnings"))
    entries: Entries = rec["entries"]
    code = "log_read_too_large"
    q = shlex.quote(name)
    spec = ctx.encoding()
    cap = fit_cap(ctx)

    def data_of(shown: Entries) -> dict[str, Any]:
        data: dict[str, Any] = {"name": name, "entries": shown,
                                "has_more": rec["has_more"] or len(shown) < len(entries),
                                "next_since": shown[-1]["id"] if shown else since}
        if fit and shown and len(shown) < len(entries):
            data["next"] = (f"scratch log read {q} --since {shown[-1]['id']} "
                            f"--limit {limit - len(shown)} --fit")
        return data

    k, estimate, cost = _measure(spec, entries, cap, data_of, warnings, ctx.json_mode)
    again = f"scratch log read {q} --since {since} --limit {limit} --fit"
    suggestions = [again]
    if entries and not k:
        suggestions = [_skip(q, entries[0]["id"], limit - 1)]
    if fit:
        if entries and not k:
            raise too_big_to_fit(ctx, code, f"log entry {entries[0]['id']} alone",
                                 _cost(spec, entries[:1], data_of, warnings, ctx.json_mode),
                                 suggestions)
        shown = entries[:k]
    else:
        shown, cost = entries, estimate
        if 0 < k < len(entries):
            # measured as --json documents, the dearer form, so the page fits either way
            fits = k if ctx.json_mode else _measure(spec, entries, cap, data_of, warnings,
                                                     True)[0]
            if fits:
                suggestions.insert(0, f"scratch log read {q} --since {since} --limit {fits}")
    meta = _charge(ctx, cost, code=code, suggestions=suggestions,
                   details={"entries": len(entries), "since": since})
    data = data_of(shown)
    notices: tuple[str, ...] = ()
    if "next" in data:
        meta["next"] = data["next"]
        notices = (f"more: {data['next']}",)
    elif data["has_more"]:
        notices = (f"more entries: scratch log read {name} --since {data['next_since']}"
                   f" --limit {limit}",)
    return Result("log read", data=data, text=_text(shown), meta=meta, notices=notices,
                  warnings=warnings)


# -- tail ---------------------------------------------------------------------------------------

def tail(ctx: Context, name: str, n: int, *, fit: bool = False) -> Result:
    from scratch.explore.lines import fit_cap, too_big_to_fit

    rec = logs.tail(ctx.store(), name, n)
    warnings = tuple(rec.pop("warnings"))
    entries: Entries = rec["entries"]
    code = "log_tail_too_large"
    q = shlex.quote(name)
    spec = ctx.encoding()
    cap = fit_cap(ctx)

    def data_of(shown: Entries) -> dict[str, Any]:
        data: dict[str, Any] = {"name": name, "entries": shown, "total": rec["total"]}
        if fit and shown and len(shown) < len(entries):
            data["next"] = (f"scratch log read {q} --since {shown[-1]['id']} "
                            f"--limit {len(entries) - len(shown)} --fit")
        return data

    def read_data_of(shown: Entries) -> dict[str, Any]:  # what the cursor form answers
        return {"name": name, "entries": shown, "has_more": True,
                "next_since": shown[-1]["id"] if shown else 0}

    first = entries[0]["id"] if entries else 0
    skip = _skip(q, first, len(entries) - 1)
    again = f"scratch log tail {q} -n {n} --fit"
    if fit:
        k, _, cost = _measure(spec, entries, cap, data_of, warnings, ctx.json_mode)
        if entries and not k:
            raise too_big_to_fit(ctx, code, f"log entry {first} alone",
                                 _cost(spec, entries[:1], data_of, warnings, ctx.json_mode),
                                 [skip])
        shown = entries[:k]
        suggestions = [again]
    else:
        k, cost, _ = _measure(spec, entries, cap, data_of, warnings, ctx.json_mode,
                              from_end=True)
        shown = entries
        suggestions = [again]
        if k < len(entries):  # refused: offer pages measured (as --json, the dearer form) to fit
            last = k if ctx.json_mode else _measure(spec, entries, cap, data_of, warnings, True,
                                                    from_end=True)[0]
            start = _measure(spec, entries, cap, read_data_of, warnings, True)[0]
            suggestions = [f"scratch log tail {q} -n {last}"] if last else []
            if start:
                suggestions += [f"scratch log read {q} --since {first - 1} --limit {start}",
                                again]
            else:
                suggestions.append(skip)
    meta = _charge(ctx, cost, code=code, suggestions=suggestions,
                   details={"entries": len(entries), "total": rec["total"]})
    data = data_of(shown)
    notices: tuple[str, ...] = ()
    if "next" in data:
        meta["next"] = data["next"]
        notices = (f"more: {data['next']}",)
    return Result("log tail", data=data, text=_text(shown), meta=meta, notices=notices,
                  warnings=warnings)
