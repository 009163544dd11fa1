"""Whether a capture is redacted, and which values the user keeps: from the settings.

``redact.enabled`` (default true) is the switch; ``[redact.tools]`` maps tool-name globs to
true/false with the rules of ``[thresholds]`` (``*`` and ``?`` only, the longest matching
pattern wins; on a tie, redaction wins); ``redact.allow`` lists RE2 patterns: a value one of
them finds (searched in the value alone) is kept. ``--no-redact`` on one capture beats all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, cast

from scratch.redact.scan import Allowed


@dataclass(frozen=True)
class Policy:
    enabled: bool
    reason: str  # what decided: "default", "redact.enabled", "redact.tools['x*']", "--no-redact"
    allow: tuple[str, ...] = ()

    def allowed(self) -> Allowed | None:
        """The user's allowlist as a test on a value (None when empty)."""
        if not self.allow:
            return None
        return _allow_test(self.allow)


_ALLOW_CACHE: dict[tuple[str, ...], Allowed] = {}


def _allow_test(patterns: tuple[str, ...]) -> Allowed:
    found = _ALLOW_CACHE.get(patterns)
    if found is None:
        from scratch.redact.rules import _compile
        compiled = [_compile(p) for p in patterns]

        def found(value: bytes) -> bool:
            return any(c.search(value) is not None for c in compiled)

        _ALLOW_CACHE[patterns] = found
    return found


def check_allow(patterns: Sequence[str]) -> None:
    """Refuse a pattern RE2 cannot compile (ConfigError naming it)."""
    from scratch.errors import ConfigError
    from scratch.redact.rules import _compile
    for p in patterns:
        try:
            _compile(p)
        except Exception as exc:  # noqa: BLE001 - re2.error
            raise ConfigError(f"redact.allow: {p!r} is not a valid RE2 pattern ({exc})",
                              key="redact.allow") from None


class Settings(Protocol):
    """What the policy reads of a configuration (:class:`scratch.store.config.Config`): values
    that config has checked against their settings' types."""

    def get(self, key: str, /) -> object: ...


def resolve_policy(config: Settings, tool: str | None, *, no_redact: bool = False) -> Policy:
    """The policy for one capture of ``tool``'s output (see the module docstring)."""
    allow = tuple(cast("Sequence[str]", config.get("redact.allow") or ()))
    if no_redact:
        return Policy(False, "--no-redact", allow)
    table = cast("Mapping[str, bool]", config.get("redact.tools") or {})
    if tool and table:
        from scratch.thresholds import glob_matches
        matching = [(p, v) for p, v in table.items() if glob_matches(p, tool)]
        if matching:
            best = max(len(p) for p, _ in matching)
            longest = [(p, v) for p, v in matching if len(p) == best]
            pattern, value = max(longest, key=lambda pv: (bool(pv[1]), pv[0]))
            return Policy(bool(value), f"redact.tools[{pattern!r}]", allow)
    enabled = config.get("redact.enabled") is not False  # on unless set off
    source = "redact.enabled" if getattr(config, "sources", {}).get(
        "redact.enabled", "default") != "default" else "default"
    return Policy(enabled, source, allow)


__all__ = ["Policy", "check_allow", "resolve_policy"]
