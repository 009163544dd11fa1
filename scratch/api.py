"""The Python API for agent runtimes: ``from scratch import Scratchpad``.

A runtime (Mezmo Aura is one) holds one :class:`Scratchpad` per worker: it feeds every tool
result through :meth:`Scratchpad.intercept`, which hands back the output itself below the
tool's threshold and a short pointer above it, and answers the model's questions about what
was stored with the read methods, each priced in the worker's tokenizer and held to the
per-call cap and the worker's context budget.

Invariants:
- Every method runs a call of the answers layer through its one registry
  (:func:`scratch.answers.kernel.execution.execute`) on a
  :class:`~scratch.answers.kernel.context.Context` built as the CLI builds one, so budgets,
  caps, quotas, redaction, per-agent isolation, runs and the call ledger (interface ``api``)
  hold exactly as on the command line and over MCP.
- Answers are shown and priced as an MCP tool result shows them to a model
  (:class:`~scratch.mcp.rendering.ToolText`): :attr:`Answer.text`, then :attr:`Answer.notes`
  (warnings, ``more: NEXT``, the cost footer); both are what :attr:`Answer.tokens` prices.
  Calls inside them are tool calls ``{"name", "arguments"}``, the shape function calling
  uses: :meth:`Scratchpad.call_tool` runs one as the model wrote it.
- A refusal (over the cap or the budget) or an error raises a
  :class:`~scratch.errors.ScratchError` with its stable ``code``; a refusal was charged like
  an answer, and :func:`error_text` is what the model should be shown for it (its
  suggestions as tool calls).
- Results are frozen dataclasses; ``data`` fields hold the answer's JSON (what ``--json``
  prints under ``data``), calls spelled as tool calls.
- Importing this module (or ``scratch.Scratchpad``) imports neither typer, rich nor the MCP
  SDK: it uses only the parts of :mod:`scratch.mcp` that are plain data.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scratch.calls import Call
from scratch.errors import (
    BudgetExceeded,
    LimitExceeded,
    NotFound,
    ScratchError,
    UsageError,
)
from scratch.jsonvalues import Incoming

if TYPE_CHECKING:
    from types import TracebackType

    from scratch.answers.kernel.context import Context
    from scratch.answers.kernel.result import Result
    from scratch.calls import ArgValue
    from scratch.mcp.rendering import ToolText

__all__ = ["Answer", "Artifact", "BudgetExceeded", "BudgetStatus", "Intercepted",
           "LimitExceeded", "NotFound", "Scratchpad", "ScratchError", "ToolCall", "Usage",
           "UsageError", "error_text"]

# JSON as an answer's data holds it (the JSON edge of this API)
JSON = Incoming


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A call as a model makes it: a tool's name and its arguments."""

    name: str
    arguments: Mapping[str, JSON]


@dataclass(frozen=True, slots=True)
class Remaining:
    """The worker's budget once an answer is charged."""

    window: int
    usable: int
    used: int
    remaining: int
    warning: str | None = None  # once half or more of it is used


@dataclass(frozen=True, slots=True)
class Answer:
    """A read command's answer, priced and charged."""

    command: str
    text: str  # the answer, as the model reads it
    notes: str  # warnings, "more: NEXT" and the cost footer: shown (and priced) too
    tokens: int  # what it cost and was charged (0: not priced, e.g. a listing)
    encoding: str | None
    budget: Remaining | None
    next: ToolCall | None  # with fit=True: the call that continues after this answer
    warnings: tuple[str, ...]
    data: JSON  # the answer's JSON (the CLI's --json "data")

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class Intercepted:
    """What :meth:`Scratchpad.intercept` hands the model instead of (or as) a tool's output."""

    stored: bool  # False: below the tool's threshold, ``text`` is the output itself
    text: str  # the pointer, or the output
    tool: str
    name: str | None  # the entry it was stored as
    version: int | None
    tokens: int | None  # the output's tokens (None: too short to need counting)
    shown_tokens: int  # what ``text`` costs the context (the pointer's price, charged)
    intercepted: int  # tokens kept out of the context
    threshold: int | None  # the tool's threshold, when the output passed through

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class BudgetStatus:
    """The worker's context budget (``scratch budget``)."""

    window: int
    usable: int
    used: int
    remaining: int
    intercepted: int
    extracted: int
    max_extraction_tokens: int
    model: str | None
    tokenizer: str
    exact: bool
    run: str | None
    iteration: int | None


@dataclass(frozen=True, slots=True)
class Artifact:
    """One artifact of the worker's run, as ``artifact ls`` lists it."""

    run: str
    name: str
    version: int
    bytes: int
    data: JSON  # the whole row (who put it, in which iteration, when)


@dataclass(frozen=True, slots=True)
class Usage:
    """The usage event :meth:`Scratchpad.finish` recorded (``scratchpad_usage``)."""

    agent: str
    run: str | None
    iteration: int | None
    tokens_intercepted: int
    tokens_extracted: int
    data: JSON


def error_text(error: ScratchError) -> str:
    """What a model should be shown for ``error``: the error object as compact JSON, its
    suggestions as tool calls (exactly what an MCP tool result carries, and was priced)."""
    from scratch.mcp.rendering import error_text as text
    return text(error)


def _spelled(value: object) -> JSON:
    """``value`` with every call in it written as a tool call."""
    from scratch.mcp.rendering import spell_call, tool_call
    if isinstance(value, Call):
        return tool_call(value) or spell_call(value)
    if isinstance(value, Mapping):
        return {str(k): _spelled(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_spelled(v) for v in value]
    return value


def _tool_call(call: Call | None) -> ToolCall | None:
    if call is None:
        return None
    from scratch.mcp.rendering import tool_call
    found = tool_call(call)
    if found is None:
        return ToolCall(call.command, dict(call.args))
    args = found["arguments"]
    return ToolCall(str(found["name"]), dict(args) if isinstance(args, Mapping) else {})


class Scratchpad:
    """One worker's scratchpad in a store: its agent, budget session, run and model.

    ``store``: the store's directory (default: as the CLI finds it: ``SCRATCH_HOME``, the
    nearest ``.scratch/``, the user's data directory). ``agent``, ``session``, ``run``,
    ``iteration``, ``coordinator``, ``model``, ``encoding``: as the global options of the
    same names (each defaults to its ``SCRATCH_*`` variable, then the store's settings). The
    store is created on the first write. Use it as a context manager, or call
    :meth:`close`.
    """

    def __init__(self, store: str | os.PathLike[str] | None = None, *,
                 agent: str | None = None, session: str | None = None,
                 run: str | None = None, iteration: int | None = None,
                 coordinator: bool = False, model: str | None = None,
                 encoding: str | None = None) -> None:
        from scratch.answers.kernel.context import Context
        from scratch.mcp.rendering import ToolText
        self._ctx: Context = Context.build(
            store=os.fspath(store) if store is not None else None, agent=agent,
            session=session, model=model, encoding=encoding, run=run, iteration=iteration,
            coordinator=coordinator)
        self._ctx.interface = "api"
        self._rendering: ToolText = ToolText()

    def __repr__(self) -> str:
        return (f"Scratchpad(store={str(self.root)!r}, agent={self.agent!r}, "
                f"session={self.session!r}, run={self.run!r})")

    def __enter__(self) -> Scratchpad:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Let go of the store (nothing is pending: every call's changes are committed)."""
        self._ctx._store = None

    # -- who and where ------------------------------------------------------------------

    @property
    def root(self) -> os.PathLike[str]:
        """The store's directory."""
        return self._ctx.root

    @property
    def agent(self) -> str:
        return self._ctx.agent

    @property
    def session(self) -> str:
        return self._ctx.session

    @property
    def run(self) -> str | None:
        return self._ctx.run

    @property
    def iteration(self) -> int | None:
        return self._ctx.iteration

    @property
    def model(self) -> str | None:
        """The model whose tokenizer prices every answer (None: o200k_base)."""
        return self._ctx.config["model"] or None

    # -- the one way in -----------------------------------------------------------------

    def _execute(self, command: str, **args: ArgValue) -> Result[object]:
        from scratch.answers.kernel.execution import execute
        from scratch.calls import call
        return execute(self._ctx, self._rendering, call(command, **args))

    def _answer(self, result: Result[object]) -> Answer:
        shown = self._rendering.show(result)
        tokens = result.meta.get("tokens") or {}
        left = result.meta.get("budget")
        budget = None if not left else Remaining(
            window=left["window"], usable=left["usable"], used=left["used"],
            remaining=left["remaining"], warning=left.get("warning"))
        return Answer(command=result.command, text=shown.texts[0],
                      notes=shown.texts[1] if len(shown.texts) > 1 else "",
                      tokens=int(tokens.get("count", 0)), encoding=tokens.get("encoding"),
                      budget=budget, next=_tool_call(result.next),
                      warnings=tuple(result.warnings), data=_spelled(result.data))

    def _read(self, command: str, ref: str, options: Mapping[str, ArgValue],
              **args: ArgValue) -> Answer:
        return self._answer(self._execute(command, ref=ref, **args, **options))

    # -- storing --------------------------------------------------------------------------

    def intercept(self, tool: str, output: str | bytes, *, name: str | None = None,
                  format: str | None = None, store_always: bool = False) -> Intercepted:
        """A tool's ``output`` as the model should get it: itself below the tool's threshold
        (``thresholds`` in scratch.toml, else 5,120 tokens), else stored (once per content)
        and replaced by a pointer, whose price is charged to the budget."""
        content = output.encode("utf-8") if isinstance(output, str) else bytes(output)
        result = self._execute("ingest", content=content, tool=tool, name=name, format=format,
                               store_always=store_always or None)
        data = result.data if isinstance(result.data, Mapping) else {}
        shown = self._rendering.show(result)
        if not data.get("stored"):
            text = shown.texts[0] if isinstance(output, bytes) else output
            return Intercepted(stored=False, text=text, tool=tool, name=None, version=None,
                               tokens=data.get("tokens"), shown_tokens=0, intercepted=0,
                               threshold=data.get("threshold"))
        price = (result.meta.get("tokens") or {}).get("count", 0)
        return Intercepted(stored=True, text="\n".join(shown.texts), tool=tool,
                           name=data.get("name"), version=data.get("version"),
                           tokens=data.get("tokens"), shown_tokens=int(price),
                           intercepted=int(result.meta.get("intercepted") or 0),
                           threshold=None)

    # -- reading (REF: NAME, NAME@VERSION, a hash prefix, or artifact:RUN/NAME) -----------

    def head(self, ref: str, lines: int | None = None, **options: ArgValue) -> Answer:
        """The first ``lines`` lines (options: fit, numbers)."""
        return self._read("head", ref, options, lines=lines)

    def tail(self, ref: str, lines: int | None = None, **options: ArgValue) -> Answer:
        """The last ``lines`` lines (options: fit, numbers)."""
        return self._read("tail", ref, options, lines=lines)

    def slice(self, ref: str, start: int, end: int, **options: ArgValue) -> Answer:
        """Lines ``start`` to ``end``, 1-based, inclusive (options: fit, numbers)."""
        return self._read("slice", ref, options, start=start, end=end)

    def read(self, ref: str, **options: ArgValue) -> Answer:
        """The whole entry, when it fits (options: since_version, fit, raw)."""
        return self._read("read", ref, options, terminal=True)

    def grep(self, ref: str, pattern: str, **options: ArgValue) -> Answer:
        """Lines matching the RE2 ``pattern`` (options: context, ignore_case, fixed, invert,
        max_count, count, count_by, offset, limit, fit)."""
        return self._read("grep", ref, options, pattern=pattern)

    def schema(self, ref: str, **options: ArgValue) -> Answer:
        """The entry's shape (options: path, depth)."""
        return self._read("schema", ref, options)

    def item_schema(self, ref: str, path: str, **options: ArgValue) -> Answer:
        """The union of keys across the items at ``path`` (options: offset, limit, depth)."""
        return self._read("item-schema", ref, options, path=path)

    def get_in(self, ref: str, path: str, **options: ArgValue) -> Answer:
        """The value at ``path`` (options: keys, fields, count, offset, limit, fit)."""
        return self._read("get-in", ref, options, path=path)

    def iterate_over(self, ref: str, path: str, **options: ArgValue) -> Answer:
        """One row per item at ``path`` (options: fields, where, sort, desc, count,
        count_by, offset, limit, fit)."""
        return self._read("iterate-over", ref, options, path=path)

    def sql(self, ref: str, query: str, **options: ArgValue) -> Answer:
        """One read-only DuckDB query over the entry as table ``entry`` (options: table,
        path, offset, limit, fit)."""
        return self._read("sql", ref, options, query=query)

    def summarize(self, ref: str, *, by_model: bool = False) -> Answer:
        """The local summary, or with ``by_model`` one written by the llm library's model
        (the ``llm`` extra), else the local one with the reason."""
        return self._read("summarize", ref, {}, by_model=by_model or None)

    def call_tool(self, name: str, arguments: Mapping[str, JSON] | None = None) -> Answer:
        """Run a tool call as the model wrote it (the MCP tool names and arguments:
        ``{"name": "head", "arguments": {"file": "x", "lines": 20}}``), e.g. one of the
        calls a pointer or a refusal suggests."""
        from scratch.mcp.dispatch import core_call
        from scratch.mcp.specs import spec_of, to_core_args
        spec = spec_of(name)
        if spec is None:
            raise UsageError(f"unknown tool {name!r}", code="unknown_tool", tool=name)
        args = to_core_args(spec, dict(arguments or {}))
        from scratch.answers.kernel.execution import execute
        return self._answer(execute(self._ctx, self._rendering,
                                    core_call(spec, args, self._ctx)))

    # -- the budget ----------------------------------------------------------------------

    def budget(self) -> BudgetStatus:
        """The worker's budget now."""
        return self._budget(self._execute("budget"))

    def used(self, tokens: int) -> BudgetStatus:
        """Record that the model's context holds ``tokens`` tokens (as its API reported):
        the budget's estimate becomes the larger of its own and ``tokens``."""
        return self._budget(self._execute("budget used", tokens=tokens))

    @staticmethod
    def _budget(result: Result[object]) -> BudgetStatus:
        d = result.data if isinstance(result.data, Mapping) else {}
        return BudgetStatus(window=d["window"], usable=d["usable"], used=d["used"],
                            remaining=d["remaining"], intercepted=d["intercepted"],
                            extracted=d["extracted"],
                            max_extraction_tokens=d["max_extraction_tokens"],
                            model=d.get("model"), tokenizer=d["tokenizer"], exact=d["exact"],
                            run=d.get("run"), iteration=d.get("iteration"))

    # -- a run's artifacts (scratch.runs) ------------------------------------------------

    def put_artifact(self, name: str, content: str | bytes) -> Answer:
        """Store ``content`` as the next version of artifact ``name`` of this worker's run,
        for every worker of the run to read in place."""
        data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
        return self._answer(self._execute("artifact put", run=self.run, name=name,
                                          content=data, allow_empty=not data or None))

    def artifacts(self) -> list[Artifact]:
        """The artifacts of this worker's run."""
        result = self._execute("artifact ls", run=self.run)
        rows = result.data.get("artifacts", []) if isinstance(result.data, Mapping) else []
        return [Artifact(run=str(self.run), name=r["name"], version=r["version"],
                         bytes=r["bytes"], data=_spelled(r)) for r in rows]

    def read_artifact(self, name: str) -> Answer:
        """Artifact ``name`` of this worker's run: whole when it fits the per-call cap and the
        budget, else a pointer the read methods explore as ``artifact:RUN/NAME``."""
        return self._answer(self._execute("artifact read", run=self.run, name=name))

    def finish(self) -> Usage:
        """Say this worker is done: its usage event (``scratchpad_usage``) is recorded."""
        result = self._execute("finish")
        d = result.data if isinstance(result.data, Mapping) else {}
        return Usage(agent=d.get("agent", self.agent), run=d.get("run"),
                     iteration=d.get("iteration"),
                     tokens_intercepted=int(d.get("tokens_intercepted", 0)),
                     tokens_extracted=int(d.get("tokens_extracted", 0)), data=_spelled(d))

