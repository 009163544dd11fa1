"""What the pointer's next calls cost, so each one it offers fits the per-call cap.

A pointer suggests calls an agent runs as offered; one that is refused wastes a turn. At
ingest the new version's index knows the token count of every line, so the size of a line
window, of the stored lines of any JSON/YAML value, and of the schema answer can be known
without running the calls: each is described as the command would answer it and measured by
the answers pipeline (:class:`~scratch.answers.kernel.fitting.Meter`), in the rendering the agent
reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scratch.calls import Call

if TYPE_CHECKING:
    from scratch.answers.kernel.candidate import Candidate
    from scratch.answers.kernel.fitting import Meter
    from scratch.answers.kernel.target import Target

RENDER_LIMIT_TOKENS = 200_000  # values bigger than this are not rendered to be measured


class EntrySizer:
    """Costs of answers over one stored version (an open target), measured by ``meter``."""

    def __init__(self, meter: Meter, target: Target) -> None:
        self.meter = meter
        self.target = target

    def _sized(self, c: Candidate) -> Call | None:
        """``c``'s call when its answer fits, else the largest smaller one that does."""
        try:
            return c.asked if self.meter.fits(c) else self.meter.largest_shrunk(c)
        finally:
            c.close()

    def first_lines(self, most: int = 40) -> Call | None:
        """``slice REF 1 K`` with the most of the first ``most`` lines that fit."""
        from scratch.answers.lines.ranges import LineRange
        total = self.target.index.line_count
        if not total:
            return None
        return self._sized(LineRange(self.target, 1, min(most, total), command="slice",
                                     numbers=True, fit=False, owner=False))

    def last_lines(self, most: int = 40) -> Call | None:
        """``tail REF -n K`` with the most of the last ``most`` lines that fit."""
        from scratch.answers.lines.ranges import LineRange
        total = self.target.index.line_count
        if not total:
            return None
        return self._sized(LineRange(self.target, max(1, total - most + 1), total,
                                     command="tail", numbers=True, fit=False, owner=False))

    def schema_call(self) -> Call | None:
        """``schema REF`` at the deepest --depth whose answer fits; None if none does."""
        from scratch.answers.commands.schema import schema_candidate
        return self._sized(schema_candidate(self.target))

    def value_tokens(self, path: str) -> int | None:
        """Tokens of the stored lines of the value at ``path`` (about what get-in prints), or
        None when the index cannot tell."""
        from scratch.errors import ScratchError
        from scratch.query.paths import parse_path

        index, spec = self.target.index, self.target.spec
        try:
            parsed = parse_path(path)
            if not parsed.singular:
                return None
            info = index.node(list(parsed.names or ()))
        except (ScratchError, OSError):
            return None
        if info is None or not info.complete:
            return None
        if getattr(index, "layout", None) == "canonical":
            # stored exactly as get-in prints it, give or take indentation
            tokens = index.range_tokens(info.start_line, info.end_line, spec.base)
            return None if tokens is None else int(spec.scale(tokens))
        # NDJSON, YAML, raw JSON: get-in prints 2-space JSON, often far longer than the
        # stored text, so render a value of reasonable size and count it
        span = index.range_tokens(info.start_line, info.end_line, spec.base)
        if span is not None and span > RENDER_LIMIT_TOKENS:
            return int(spec.scale(span))  # over any sensible cap already
        from scratch.answers.values.rendered import render_value
        from scratch.tokens import count_text
        try:
            return count_text(render_value(index.value_at(list(parsed.names or ()))), spec)
        except (ScratchError, OSError, ValueError):
            return None

    def fits(self, path: str) -> bool:
        """Whether ``get-in REF PATH`` answers within the cap: judged on the value's stored
        lines first, then measured as the answer the agent would read."""
        tokens = self.value_tokens(path)
        if tokens is None:
            return True
        if tokens > self.meter.cap:
            return False
        from scratch.answers.commands.get_in import get_in_of
        c = get_in_of(self.target, path)
        try:
            return bool(self.meter.fits(c))
        finally:
            c.close()
