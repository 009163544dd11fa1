"""Summaries written by a model (``summarize --by-model``), cached per version and model.

Where the model comes from is the interface's business: over MCP the client's own model,
through sampling, when the client declared the ``sampling`` capability
(:mod:`scratch.mcp.serve.sampling`); otherwise the user's model through the ``llm`` library
(:mod:`scratch.answers.llm_model`, the ``llm`` extra). A :class:`SummaryModel` is either;
:class:`Unavailable` says why one cannot be had, and the caller then gives the deterministic
summary with that reason.

Invariants:
- Nothing is sent to a model unless a caller asks for a model summary: nothing in this module
  runs otherwise, and the deterministic summary never imports it.
- The content is cut at line ends into parts of at most :func:`part_tokens` tokens (the
  model's window less its answer, the prompt and a margin for the model's own tokenizer,
  counted in the agent's). One part: one call. Several: one call per part and one that
  combines their summaries, so at most ``summarize.max_model_calls`` calls in all (parts past
  that many are not read, and the answer says which lines the model read). Every part's
  answer is held to its share of the combining call's window.
- Written to ``cache/summaries/<content key>-model-<source>-<model>-<settings>.json`` only
  once the last call has answered: a refused, failed or timed-out call stores nothing. The
  model in the key is the one that wrote the summary (as the client or llm reports it).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypedDict

from scratch.errors import ScratchError

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from scratch.answers.kernel.context import Context
    from scratch.answers.kernel.target import Target

PROMPT_VERSION = "p1"  # of the prompts below; in the cache key
PROMPT_TOKENS = 400  # room kept for the instructions around a part
MARGIN = 0.85  # share of the room a part may fill: the model's tokenizer is not the agent's
MIN_PART_TOKENS = 200
MIN_ANSWER_TOKENS = 64

SYSTEM = ("You summarize a stored tool output for an AI agent that decides what to read next. "
          "State what it is, its structure, counts, notable values, errors and warnings, and "
          "time ranges; quote names exactly; do not guess beyond the text.")


@dataclass(frozen=True, slots=True)
class Prompt:
    """One request to a model: its instructions, the text and the longest answer asked."""

    system: str
    text: str
    max_tokens: int


@dataclass(frozen=True, slots=True)
class Written:
    """A model's answer and the model that wrote it (as the client or library reports it)."""

    text: str
    model: str


class SummaryModel(Protocol):
    """A model that writes summaries: the client's (sampling) or the user's (llm)."""

    @property
    def source(self) -> str:
        """``sampling`` or ``llm``."""
        ...

    def expected_model(self) -> str | None:
        """The model expected to answer (the cache is looked up under it), when known."""
        ...

    def write(self, prompts: Sequence[Prompt]) -> list[Written]:
        """Each prompt's answer, in order; a refusal, a timeout or a failure raises a
        :class:`~scratch.errors.ScratchError` (``sampling_refused``, ``sampling_timeout``,
        ``summary_model_failed``) and nothing is kept of the others."""
        ...


@dataclass(frozen=True, slots=True)
class Unavailable:
    """Why no model can write the summary: ``code``, the reason, and the next step."""

    code: str
    reason: str
    next: str


class ModelSummary(TypedDict):
    """What a model summary holds, cached and in ``summarize``'s data."""

    summary: str
    model: str
    source: str
    model_calls: int
    parts: int
    lines_read: list[int]  # [first, last] line the model read
    lines: int
    complete: bool


def settings(ctx: Context, model: str | None) -> tuple[int, int, int]:
    """(window, largest answer, most calls) for ``model``: its window from the budget's table
    (``budget.windows``, else the built-in one, else ``budget.context_window``)."""
    from scratch.tokens.models import context_window
    window = context_window(model or ctx.config["model"] or None,
                            ctx.config["budget.windows"], ctx.config["budget.context_window"])
    return (window, max(MIN_ANSWER_TOKENS, int(ctx.config["summarize.max_summary_tokens"])),
            max(1, int(ctx.config["summarize.max_model_calls"])))


def part_tokens(window: int, answer: int) -> int:
    """The most tokens of content one call may carry."""
    return max(MIN_PART_TOKENS, int((window - answer - PROMPT_TOKENS) * MARGIN))


def _slug(text: str) -> str:
    clean = re.sub(r"[^A-Za-z0-9._-]+", "_", text)[:48]
    return f"{clean}.{hashlib.sha1(text.encode()).hexdigest()[:8]}"


def cache_path(target: Target, source: str, model: str, knobs: tuple[int, int, int]) -> Path:
    settings_hash = hashlib.sha1(repr((PROMPT_VERSION, knobs)).encode()).hexdigest()[:10]
    name = f"{target.key}-model-{source}-{_slug(model)}-{settings_hash}.json"
    return target.store.cache_dir / "summaries" / name


def cached(ctx: Context, target: Target, model: SummaryModel) -> ModelSummary | None:
    """The summary of ``target`` the expected model wrote before, if it is cached."""
    expected = model.expected_model()
    if not expected:
        return None
    path = cache_path(target, model.source, expected, settings(ctx, expected))
    if not path.is_file():
        return None
    import orjson
    try:
        found: ModelSummary = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None  # rewritten below
    return found if isinstance(found, dict) and "summary" in found else None


def _pieces(target: Target, size: int, most: int) -> tuple[list[tuple[bytes, int, int]], bool]:
    """The first ``most`` parts of the content, each (bytes, first line, last line), and
    whether they are the whole of it."""
    from scratch.tokens import split_stream

    def chunks() -> Iterator[bytes]:
        with open(target.path, "rb") as fh:
            while block := fh.read(1 << 20):
                yield block

    out: list[tuple[bytes, int, int]] = []
    line = 1
    complete = True
    for piece in split_stream(chunks(), size, target.spec):
        if len(out) == most:
            complete = False
            break
        newlines = piece.count(b"\n")
        last = line + newlines - (1 if piece.endswith(b"\n") else 0)
        out.append((piece, line, max(line, last)))
        line += newlines
    return out, complete


def _cut(text: str, tokens: int, target: Target) -> str:
    """``text`` held to ``tokens`` tokens (its head, marked when cut)."""
    from scratch.tokens import count_text
    count = count_text(text, target.spec)
    while count > tokens:  # a few rounds: each keeps the share of characters that fits
        text = text[:max(1, int(len(text) * tokens / count * 0.9)) - 1]
        count = count_text(text, target.spec)
        if count <= tokens:
            return text.rstrip() + " …"
    return text


def write_summary(ctx: Context, target: Target, model: SummaryModel, tokens: int
                  ) -> ModelSummary:
    """Ask ``model`` for a summary of ``target`` (``tokens`` long), in parts when it does not
    fit one call, and cache it under the model that wrote it."""
    knobs = settings(ctx, model.expected_model())
    window, answer, most = knobs
    size = part_tokens(window, answer)
    pieces, complete = _pieces(target, size, most - 1 if most > 1 else 1)
    total = target.index.line_count
    if not pieces:
        raise ScratchError(f"{target.name} is empty: there is nothing to summarize",
                           code="summary_model_failed", name=target.name)
    read = f"lines 1-{pieces[-1][2]:,}" + ("" if complete else f" of {total:,}")
    head = (f"Stored output {target.name!r}: {target.format}, {total:,} lines, "
            f"{tokens:,} tokens.")
    words = max(50, answer * 3 // 4)
    if len(pieces) == 1:  # one call (with one call allowed, on the part it can hold)
        part = "" if complete else f" You are shown its {read} only."
        first = model.write([Prompt(
            SYSTEM, f"{head}{part}\nSummarize it in at most {words} words.\n\n"
            + pieces[0][0].decode("utf-8", errors="replace"), answer)])[0]
        text, writer, calls = first.text.strip(), first.model, 1
    else:
        share = max(MIN_ANSWER_TOKENS, (window - answer - PROMPT_TOKENS) // len(pieces))
        part_answer = min(answer, share)
        part_words = max(30, part_answer * 3 // 4)
        parts = model.write([
            Prompt(SYSTEM, f"{head}\nThis is part {i} of {len(pieces)} (lines {a:,}-{b:,}). "
                   f"Summarize this part in at most {part_words} words.\n\n"
                   + piece.decode("utf-8", errors="replace"), part_answer)
            for i, (piece, a, b) in enumerate(pieces, start=1)])
        joined = "\n\n".join(
            f"[part {i}, lines {a:,}-{b:,}]\n{_cut(w.text.strip(), share, target)}"
            for i, ((_, a, b), w) in enumerate(zip(pieces, parts, strict=True), start=1))
        combined = model.write([Prompt(
            SYSTEM, f"{head}\nBelow are summaries of its parts ({read}). Combine them into one "
            f"summary of at most {words} words.\n\n{joined}", answer)])[0]
        text, writer, calls = combined.text.strip(), combined.model, len(parts) + 1
    out: ModelSummary = {"summary": text + "\n", "model": writer, "source": model.source,
                         "model_calls": calls, "parts": len(pieces),
                         "lines_read": [1, pieces[-1][2]], "lines": total,
                         "complete": complete}
    import orjson

    from scratch.store.locking import atomic_write
    atomic_write(cache_path(target, model.source, writer, settings(ctx, writer)),
                 orjson.dumps(out), fsync=False)
    return out
