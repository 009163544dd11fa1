"""What redaction reports: one finding per value, one record per capture.

A :class:`Redaction` goes with every piece of content handed to the store
(:meth:`scratch.store.Store.write`, :class:`scratch.store.Pending`, log appends): the content
was redacted (``findings``, possibly none), or it was not, and ``unredacted`` says why (the
user's flag or setting), or it came from the store itself (``carried``: a restore). The store
refuses content without one, so a new way into the store cannot skip redaction unnoticed.

Invariants:
- A finding never holds the value: the rule, where it was (line, the JSON/YAML path when
  known, the key it sat under) and its marker.
- A version's info keeps :meth:`Redaction.info`: the count, the count per rule and the first
  :data:`MAX_KEPT` findings (``truncated`` says when there were more).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict, cast

from scratch.jsonvalues import JSON

MAX_KEPT = 1000


class Finding(TypedDict, total=False):
    rule: str
    line: int
    path: str
    key: str
    marker: str


@dataclass(frozen=True)
class Redaction:
    """What redaction did to one piece of content (see the module docstring)."""

    findings: tuple[Finding, ...] = ()
    unredacted: str | None = None  # why this content was stored as given
    carried: bool = False  # content already in the store (a restore), not captured anew
    missed: tuple[str, ...] = ()  # Secret values seen in the document but not found in text
    rule_set: str = ""
    extra: dict[str, JSON] = field(default_factory=dict)

    @classmethod
    def skipped(cls, reason: str) -> Redaction:
        """Stored as given, because the user said so (``reason`` names the flag or setting)."""
        return cls(unredacted=reason)

    @classmethod
    def from_store(cls) -> Redaction:
        """Content read from this store's own versions (already redacted when captured)."""
        return cls(carried=True)

    @property
    def count(self) -> int:
        return len(self.findings)

    def by_rule(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for f in self.findings:
            out[f["rule"]] = out.get(f["rule"], 0) + 1
        return dict(sorted(out.items()))

    def info(self) -> dict[str, JSON]:
        """The record kept in the version's info."""
        if self.unredacted is not None:
            return {"redacted": False, "unredacted": self.unredacted}
        if self.carried:
            return {"redacted": True, "carried": True}
        out: dict[str, JSON] = {"redacted": True, "count": self.count, "rules": self.by_rule()}
        if self.findings:  # a Finding's fields are strings and numbers
            out["findings"] = [cast("dict[str, JSON]", dict(f)) for f in self.findings[:MAX_KEPT]]
            if self.count > MAX_KEPT:
                out["truncated"] = True
        if self.missed:
            out["missed"] = list(self.missed)
        if self.rule_set:
            out["rule_set"] = self.rule_set
        return out

    def merged(self, other: Redaction) -> Redaction:
        """This record and ``other``'s findings (a capture and its companions, a batch)."""
        if other.unredacted is not None and self.unredacted is None and not self.findings:
            return other
        return Redaction((*self.findings, *other.findings), self.unredacted, self.carried,
                         (*self.missed, *other.missed), self.rule_set or other.rule_set)


def summary(info: object) -> dict[str, object] | None:
    """The short form said with a pointer or an answer's meta: ``{"count", "rules"}`` or
    ``{"unredacted": reason}``; None for versions stored before redaction existed."""
    if not isinstance(info, dict):
        return None
    if info.get("redacted") is False:
        return {"count": 0, "unredacted": str(info.get("unredacted", ""))}
    if "count" in info:
        return {"count": int(info["count"]), "rules": dict(info.get("rules") or {})}
    if info.get("carried"):
        return {"count": 0, "carried": True}
    return None


__all__ = ["MAX_KEPT", "Finding", "Redaction", "summary"]
