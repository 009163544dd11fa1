"""Redaction on the way into the store: the one helper every capture command uses.

A capture (ingest, run, write, log append, the proxy's interception, hooks) asks
:func:`policy_for` whether to redact and, for content it holds in memory, :func:`redact` for
the bytes to store and their :class:`~scratch.redact.Redaction` (the store takes none without
one). Big outputs are redacted as files by :mod:`scratch.answers.capture.ingest` itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scratch.redact.records import Finding, Redaction

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context
    from scratch.redact.policy import Policy


def policy_for(ctx: Context, tool: str | None, *, no_redact: bool = False) -> Policy:
    from scratch.redact.policy import resolve_policy
    return resolve_policy(ctx.config, tool, no_redact=no_redact)


def redact(ctx: Context, data: bytes, policy: Policy) -> tuple[bytes, Redaction]:
    """``data`` as it is to be stored, and the record of it."""
    if not policy.enabled:
        return data, Redaction.skipped(policy.reason)
    from scratch.redact.core import redact_bytes
    from scratch.redact.markers import store_key
    done = redact_bytes(data, store_key(ctx.root), allowed=policy.allowed())
    return done.data, done.redaction


def redact_entries(ctx: Context, entries: list[bytes], policy: Policy
                   ) -> tuple[list[bytes], Redaction]:
    """Log entries as they are to be stored; each finding's ``line`` is its entry's place in
    the batch (1-based)."""
    if not policy.enabled:
        return entries, Redaction.skipped(policy.reason)
    out: list[bytes] = []
    findings: list[Finding] = []
    missed: list[str] = []
    rule_set = ""
    for i, entry in enumerate(entries, start=1):
        done, red = redact(ctx, entry, policy)
        out.append(done)
        findings.extend({**f, "line": i} for f in red.findings)
        missed.extend(red.missed)
        rule_set = red.rule_set
    return out, Redaction(tuple(findings), missed=tuple(missed), rule_set=rule_set)


def said(redaction: Redaction) -> dict[str, object] | None:
    """What an answer says of a capture's redaction (None when there is nothing to say)."""
    if redaction.unredacted is not None:
        return {"count": 0, "unredacted": redaction.unredacted}
    if redaction.count:
        return {"count": redaction.count, "rules": redaction.by_rule()}
    return None


def sentence(summary: dict[str, object]) -> str:
    """``3 values redacted (aws-access-token 1, secret-field 2)`` or ``not redacted (...)``."""
    if "unredacted" in summary:
        return f"stored unredacted ({summary['unredacted']})"
    rules = summary.get("rules") or {}
    n = int(str(summary.get("count", 0)))
    listed = ", ".join(f"{r} {c}" for r, c in rules.items()) if isinstance(rules, dict) else ""
    return f"{n} value{'' if n == 1 else 's'} redacted at capture ({listed})"


__all__ = ["policy_for", "redact", "redact_entries", "said", "sentence"]
