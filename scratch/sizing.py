"""What the pointer's next commands cost, so each one it prints fits the per-call cap.

A pointer suggests commands an agent runs as printed; one that is refused wastes a turn. At
ingest the new version's index knows the token count of every line, so the size of a line
window, of the stored lines of any JSON/YAML value, and of the schema answer can be known
without running the commands. Costs are in the agent's encoding (``spec``); line windows
allow a few tokens per line for the ``N:`` numbers head/slice/tail print.
"""

from __future__ import annotations

from typing import Any

LINE_NUMBER_TOKENS = 2  # "1234:" costs one or two tokens
MAX_SCHEMA_DEPTH = 4  # `scratch schema`'s default --depth
RENDER_LIMIT_TOKENS = 200_000  # values bigger than this are not rendered to be measured


class EntrySizer:
    """Costs of answers over one indexed version, against ``cap`` tokens."""

    def __init__(self, index: Any, spec: Any, cap: int) -> None:
        self.index = index
        self.spec = spec
        self.cap = cap
        self._base_cap = spec.base_limit(cap)

    def head_lines(self) -> int:
        """How many lines from line 1 a numbered slice can show within the cap (0: not even
        the first line)."""
        ix = self.index
        if not ix.line_count or not ix.has_base(self.spec.base):
            return 0
        return int(ix.lines_fitting(1, self._base_cap, self.spec.base, LINE_NUMBER_TOKENS))

    def tail_lines(self) -> int:
        """How many lines ending at the last one a numbered tail can show within the cap."""
        ix = self.index
        last = ix.line_count
        if not last or not ix.has_base(self.spec.base):
            return 0
        lo, hi = 0, last  # the most lines n with cost(last - n + 1 .. last) <= cap
        while lo < hi:
            n = (lo + hi + 1) // 2
            cost = ix.range_tokens(last - n + 1, last, self.spec.base) + LINE_NUMBER_TOKENS * n
            if cost <= self._base_cap:
                lo = n
            else:
                hi = n - 1
        return lo

    def value_tokens(self, path: str) -> int | None:
        """Tokens of the stored lines of the value at ``path`` (about what get-in prints), or
        None when the index cannot tell."""
        from scratch.errors import ScratchError
        from scratch.query.paths import parse_path

        try:
            parsed = parse_path(path)
            if not parsed.singular:
                return None
            info = self.index.node(list(parsed.segments or ()))
        except (ScratchError, OSError):
            return None
        if info is None or not info.complete:
            return None
        if getattr(self.index, "layout", None) == "canonical":
            # stored exactly as get-in prints it, give or take indentation
            tokens = self.index.range_tokens(info.start_line, info.end_line, self.spec.base)
            return None if tokens is None else int(self.spec.scale(tokens))
        # NDJSON, YAML, raw JSON: get-in prints 2-space JSON, often far longer than the
        # stored text, so render a value of reasonable size and count it
        span = self.index.range_tokens(info.start_line, info.end_line, self.spec.base)
        if span is not None and span > RENDER_LIMIT_TOKENS:
            return int(self.spec.scale(span))  # over any sensible cap already
        from scratch.explore.structure import render_value
        from scratch.tokens import count_text
        try:
            return count_text(render_value(self.index.value_at(list(parsed.segments or ()))),
                              self.spec)
        except (ScratchError, OSError, ValueError):
            return None

    def fits(self, path: str) -> bool:
        tokens = self.value_tokens(path)
        return tokens is None or tokens <= self.cap

    def schema_depth(self, info: dict[str, Any]) -> int | None:
        """The deepest ``--depth`` (at most the default) whose schema answer fits; None when
        not even depth 1 does."""
        from scratch.explore.structure import schema_text
        from scratch.tokens import count_text

        for depth in range(MAX_SCHEMA_DEPTH, 0, -1):
            if count_text(schema_text(info, depth), self.spec) <= self.cap:
                return depth
        return None
