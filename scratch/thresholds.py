"""Which token threshold applies to a tool's output.

``[thresholds]`` in scratch.toml maps glob patterns over tool names (``*`` any run of
characters, ``?`` one character, matched case-sensitively against the whole name) to
``min_tokens``. Resolution: the longest matching pattern wins; on a length tie the smaller
threshold wins; with no match the default is 5120. The explanation names the pattern and why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

DEFAULT_MIN_TOKENS = 5120


@dataclass(frozen=True)
class Threshold:
    tool: str
    min_tokens: int
    pattern: str | None
    reason: str
    candidates: list[dict[str, Any]]

    def as_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "min_tokens": self.min_tokens, "pattern": self.pattern,
                "reason": self.reason, "matching_patterns": self.candidates}


def _matches(pattern: str, tool: str) -> bool:
    # only * and ? are special (fnmatch would also take [...] classes, which tool names
    # containing brackets would trip over)
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, tool, flags=re.DOTALL) is not None


def resolve_threshold(tool: str, table: dict[str, int]) -> Threshold:
    matching = [(p, n) for p, n in table.items() if _matches(p, tool)]
    candidates = [{"pattern": p, "min_tokens": n} for p, n in
                  sorted(matching, key=lambda pn: (-len(pn[0]), pn[1]))]
    if not matching:
        why = ("no pattern in [thresholds] matches" if table else "no [thresholds] configured")
        return Threshold(tool, DEFAULT_MIN_TOKENS, None,
                         f"{why}; the default {DEFAULT_MIN_TOKENS} applies", candidates)
    best_len = max(len(p) for p, _ in matching)
    longest = [(p, n) for p, n in matching if len(p) == best_len]
    pattern, number = min(longest, key=lambda pn: pn[1])
    if len(matching) == 1:
        reason = f"only pattern {pattern!r} matches"
    elif len(longest) > 1:
        reason = (f"{len(longest)} patterns of length {best_len} match; the smaller threshold "
                  f"of {pattern!r} wins")
    else:
        reason = f"{pattern!r} is the longest of {len(matching)} matching patterns"
    return Threshold(tool, number, pattern, reason, candidates)


__all__ = ["DEFAULT_MIN_TOKENS", "Threshold", "resolve_threshold"]
