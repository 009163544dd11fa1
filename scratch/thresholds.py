"""Which token threshold applies to a tool's output.

``[thresholds]`` in scratch.toml maps glob patterns over tool names (``*`` any run of
characters, ``?`` one character, matched case-sensitively against the whole name) to
``min_tokens``. Resolution: the longest matching pattern wins; on a length tie the smaller
threshold wins; with no match the default is 5120. The explanation names the pattern and why.

For a tool of an MCP server behind ``scratch mcp proxy``, the server's own table
(``[mcp.servers.NAME.scratchpad]``, Mezmo Aura's shape) is asked first, by the same rule over
the upstream tool's name; when none of its patterns matches, ``[thresholds]`` decides.
"""

from __future__ import annotations

import re
from typing import NamedTuple, TypedDict

DEFAULT_MIN_TOKENS = 5120


class MatchingPattern(TypedDict):
    """A pattern of the table that matches the tool, and its threshold."""

    pattern: str
    min_tokens: int


class Threshold(NamedTuple):
    """(A NamedTuple, not a dataclass: ``scratch hook`` decides on it for every tool call a
    client makes, and importing dataclasses costs that path more than the rest of it.)"""

    tool: str
    min_tokens: int
    pattern: str | None
    reason: str
    candidates: list[MatchingPattern]
    server: str | None = None  # an MCP server's tool: the table that decided is
    table: str = "thresholds"  # "thresholds" or "mcp.servers.NAME.scratchpad"

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "tool": self.tool, "min_tokens": self.min_tokens, "pattern": self.pattern,
            "reason": self.reason, "matching_patterns": self.candidates}
        if self.server is not None:
            out = {"server": self.server, **out, "table": self.table}
        return out


def glob_matches(pattern: str, tool: str) -> bool:
    """Whether ``pattern`` (``*`` and ``?`` only, whole name, case-sensitive) matches
    ``tool``: the rule of every tool-name table (thresholds, ``[redact.tools]``)."""
    return _matches(pattern, tool)


def _matches(pattern: str, tool: str) -> bool:
    # only * and ? are special (fnmatch would also take [...] classes, which tool names
    # containing brackets would trip over)
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, tool, flags=re.DOTALL) is not None


def resolve_threshold(tool: str, table: dict[str, int]) -> Threshold:
    matching = [(p, n) for p, n in table.items() if _matches(p, tool)]
    candidates: list[MatchingPattern] = [
        {"pattern": p, "min_tokens": n}
        for p, n in sorted(matching, key=lambda pn: (-len(pn[0]), pn[1]))]
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


def resolve_server_threshold(server: str, tool: str, servers: dict[str, dict[str, int]],
                             table: dict[str, int]) -> Threshold:
    """The threshold of ``tool`` of MCP server ``server``: its ``[mcp.servers.SERVER.
    scratchpad]`` patterns first, then ``[thresholds]`` (see the module docstring)."""
    own = servers.get(server) or {}
    where = f"mcp.servers.{server}.scratchpad"
    if own:
        found = resolve_threshold(tool, own)
        if found.pattern is not None:
            return Threshold(tool, found.min_tokens, found.pattern,
                             f"[{where}]: {found.reason}", found.candidates, server, where)
    fallback = resolve_threshold(tool, table)
    why = (f"no pattern of [{where}] matches" if own else f"no [{where}] table")
    return Threshold(tool, fallback.min_tokens, fallback.pattern,
                     f"{why}; [thresholds]: {fallback.reason}", fallback.candidates, server,
                     "thresholds")


__all__ = ["DEFAULT_MIN_TOKENS", "Threshold", "glob_matches", "resolve_server_threshold",
           "resolve_threshold"]
