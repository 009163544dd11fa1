"""Each call answered, appended to its agent's call ledger (:mod:`scratch.store.ledger`).

:func:`scratch.answers.kernel.execution.execute` calls :func:`record_call` once per call, from
every interface (the interface's name is :attr:`Context.interface`), whether it answered, was
refused or failed.

Invariants:
- Arguments are previews (:func:`scratch.store.ledger.preview_args`): what a write stores (the
  content, a log entry, an input stream) is never copied, only its size; values an interface
  hands in-process (streams, callbacks, companions) are named by their kind.
- Recording never fails a call and never creates a store: a call answered where there is no
  store (it failed before making one) leaves no record.
- ``tokens`` is what the call charged to the context (an answer's price, or a refusal's own
  when it was charged); ``intercepted`` the tokens of an output stored instead of shown.
- ``answer`` is what the agent got back, as the interface's rendering shows it
  (:meth:`Rendering.shown`), cut to the ledger's bound for the per-call cap
  (:func:`scratch.store.ledger.answer_preview`); a refusal or an error has none (its code, message
  and suggestions are the record's).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from scratch.errors import UsageError
from scratch.store import ledger
from scratch.store.names import ARTIFACT_PREFIX, split_ref

if TYPE_CHECKING:
    from scratch.answers.kernel.candidate import Candidate
    from scratch.answers.kernel.context import Context
    from scratch.answers.kernel.rendering import Rendering
    from scratch.answers.kernel.result import Meta, Result
    from scratch.calls import Call

# what a write stores: never copied into the ledger
BODIES = frozenset({"content", "entry", "entries", "stream"})
# refusals: over a cap, a limit or the budget (exit 3), or a quota (exit 5)
REFUSAL_EXITS = frozenset({3, 5})


def _plain(value: object) -> object:
    """An in-process value as the ledger shows it: JSON-like values as they are (previewed
    later), bytes by their size, anything else (a stream, a callback) by its kind."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"<{len(value)} bytes>"
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return f"<{len(value)} items>"
    return f"<{type(value).__name__}>"


def _body(value: object) -> str:
    if isinstance(value, str):
        return f"<{len(value)} chars>"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"<{len(value)} bytes>"
    if isinstance(value, (list, tuple)):
        return f"<{len(value)} entries>"
    return f"<{type(value).__name__}>"


def args_preview(call: Call) -> dict[str, ledger.ArgPreview]:
    """``call``'s arguments as the ledger keeps them (see the module docstring)."""
    shown = {k: (_body(v) if k in BODIES else _plain(v))
             for k, v in call.args.items() if v is not None}
    return ledger.preview_args(shown)


def _touched(call: Call, produced: Candidate | Result[object] | None,
             result: Result[object] | None) -> tuple[str | None, int | None]:
    """The entry and version a call touched: the target an answer read, what a write stored,
    else the entry its arguments name."""
    target = getattr(produced, "target", None)
    name = getattr(target, "name", None)
    # an artifact's answers name it in its run; the ledger keeps its reference
    ref = call.args.get("ref")
    prefix = ""
    if isinstance(ref, str) and ref.startswith(ARTIFACT_PREFIX):
        prefix = ref[:ref.find("/") + 1] if "/" in ref else ""
    if isinstance(name, str):
        version = getattr(target, "version", None)
        return prefix + name, version if isinstance(version, int) else None
    data = result.data if result is not None else None
    if isinstance(data, Mapping) and isinstance(data.get("name"), str):
        version = data.get("version")
        named = data["name"] if data["name"].startswith(ARTIFACT_PREFIX) else \
            prefix + data["name"]
        return named, version if isinstance(version, int) and not isinstance(
            version, bool) else None
    for key in ("ref", "name"):
        value = call.args.get(key)
        if isinstance(value, str) and value:
            try:
                base, number = split_ref(value)
            except UsageError:  # a bad REF: the call said so; keep it as given
                return value[:255], None
            return base[:255], number
    return None, None


def redaction_meta(ctx: Context, call: Call, produced: Candidate | Result[object] | None,
                   result: Result[object]) -> Result[object]:
    """``result`` with ``meta["redacted"]`` when the entry it answered about had values
    redacted at capture (or was stored unredacted) and nothing said so yet."""
    if "redacted" in result.meta or not ctx.has_store():
        return result
    data = result.data
    if isinstance(data, Mapping) and "redacted" in data:
        return result  # a capture's own answer says it in its data
    try:
        entry, version = _touched(call, produced, result)
        if entry is None:
            return result
        meta = ctx.store().load_meta(entry)
        if meta is None:
            return result
        from scratch.answers.kernel.fitting import redaction_summary
        if meta["kind"] == "log":
            cursor = meta.get("log")
            told = redaction_summary({"redaction": cursor.get("redaction") if cursor else None})
        else:
            versions = meta["versions"]
            if not versions:
                return result
            chosen = versions[version - 1] if version and 0 < version <= len(versions) \
                else versions[-1]
            told = redaction_summary(chosen.get("info"))
    except Exception:  # noqa: BLE001 - said when it can be; the answer stands regardless
        return result
    return result if told is None else result.with_meta({"redacted": told})


def _unredacted(result: Result[object] | None) -> str | None:
    """Why a capture was stored without redaction (its answer says so under ``redacted``)."""
    data = result.data if result is not None else None
    told = data.get("redacted") if isinstance(data, Mapping) else None
    if isinstance(told, Mapping) and "unredacted" in told:
        return str(told["unredacted"])
    return None


def charged(meta: Meta | None) -> int:
    """The tokens a call charged to the context: its price, when the budget was charged."""
    if not meta or "budget" not in meta:
        return 0
    tokens = meta.get("tokens") or {}
    return int(tokens.get("count", 0))


def intercepted(meta: Meta | None) -> int:
    """The tokens of an output a call stored instead of showing."""
    return int((meta or {}).get("intercepted") or 0)


def _answer(ctx: Context, result: Result[object], rendering: Rendering | None) -> str | None:
    """What the agent got back, as the ledger keeps it (None when it cannot be shown: the
    record is kept without it)."""
    if rendering is None:
        return None
    try:
        cap = int(ctx.config.get("budget.max_extraction_tokens", ledger.ANSWER_CAP_DEFAULT))
        return ledger.answer_preview(rendering.shown(result), cap)
    except Exception:  # noqa: BLE001 - the answer's text is lost, never the record
        return None


def record_call(ctx: Context, call: Call, started: float, *, result: Result[object] | None = None,
                error: BaseException | None = None,
                produced: Candidate | Result[object] | None = None,
                rendering: Rendering | None = None) -> None:
    """Append the record of ``call`` (answered with ``result`` as ``rendering`` shows it, or
    failed with ``error``)."""
    try:
        if not ctx.has_store():
            return
        from scratch.errors import ScratchError
        ms = (time.perf_counter() - started) * 1000
        outcome, code, message = "ok", None, None
        suggestions: list[ledger.Suggestion] = []
        meta: Meta | None = result.meta if result is not None else None
        if error is not None:
            if isinstance(error, ScratchError):
                code = error.code
                outcome = "refused" if int(error.exit_code) in REFUSAL_EXITS else "error"
                message = error.message
                meta = error.charged
                from scratch.calls import Call
                for s in error.detail_list("suggestions"):
                    command = getattr(s, "command", None)
                    if isinstance(s, Call) and isinstance(command, str):
                        suggestions.append({"command": command, "args": args_preview(s)})
            else:
                outcome, code = "error", "internal_error"
                message = f"unexpected {type(error).__name__}: {error}"
        entry, version = _touched(call, produced, result)
        answer = _answer(ctx, result, rendering) if result is not None else None
        rec = ledger.make(interface=ctx.interface, agent=ctx.agent, session=ctx.session,
                          command=call.command, args=args_preview(call), outcome=outcome,
                          code=code, message=message, suggestions=suggestions,
                          tokens=charged(meta), intercepted=intercepted(meta),
                          entry=entry, version=version, ms=ms, answer=answer, run=ctx.run,
                          iteration=ctx.iteration, coordinator=ctx.coordinator)
        unredacted = _unredacted(result)
        if unredacted is not None:
            rec["unredacted"] = unredacted
        ledger.append(ctx.root, rec, max_bytes=int(ctx.config.get(
            "ledger.max_bytes", ledger.DEFAULT_MAX_BYTES)))
    except Exception:  # noqa: BLE001,S110 - the record is lost, never the answer
        pass
