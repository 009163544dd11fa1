"""What the pointer's next commands cost, so each one it prints fits the per-call cap.

A pointer suggests commands an agent runs as printed; one that is refused wastes a turn. At
ingest the new version's index knows the token count of every line, so the size of a line
window, of the stored lines of any JSON/YAML value, and of the schema answer can be known
without running the commands; the exploration commands' own fitting helpers do the pricing,
so a suggestion is measured exactly as the command will be.
"""

from __future__ import annotations

from typing import Any

RENDER_LIMIT_TOKENS = 200_000  # values bigger than this are not rendered to be measured


class EntrySizer:
    """Costs of answers over one stored version, against ``cap`` tokens, priced the way this
    context's mode prices them (human text, or the --json envelope)."""

    def __init__(self, ctx: Any, target: Any, cap: int) -> None:
        self.ctx = ctx
        self.target = target
        self.index = target.index
        self.spec = ctx.encoding()
        self.cap = cap

    def head_lines(self, most: int = 40) -> int:
        """How many lines from line 1 (at most ``most``) a slice shows within the cap."""
        from scratch.explore.lines import fitting_lines

        total = self.index.line_count
        if not total:
            return 0
        return fitting_lines(self.ctx, self.target, 1, min(most, total), self.cap,
                             command="slice", numbers=True)

    def tail_lines(self, most: int = 40) -> int:
        """How many of the last lines (at most ``most``) a tail shows within the cap."""
        from scratch.explore.lines import fitting_lines

        total = self.index.line_count
        if not total:
            return 0
        return fitting_lines(self.ctx, self.target, max(1, total - most + 1), total, self.cap,
                             command="tail", numbers=True, from_end=True)

    def schema_command(self) -> str | None:
        """``scratch schema REF`` at the deepest --depth whose answer fits; None if none does."""
        from scratch.explore.structure import fitting_schema

        return fitting_schema(self.ctx, self.target)

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
