"""artifact read: an artifact of the reader's run, in place: whole when it fits, else a pointer.

Invariants:
- One stored copy: the artifact is read from the run's namespace (its index keyed by its blob,
  built once whoever reads it first); nothing is copied into the reader's scratchpad.
- A worker gets the whole artifact when it fits its per-call cap and what is left of its own
  budget, priced and charged as ``read`` is; otherwise a pointer to the artifact itself (the
  shape of its data and calls that fit, each naming ``artifact:RUN/NAME``): every read command
  then explores it with the worker's own budget. The pointer is charged like any answer, so
  one the budget left cannot hold is refused (``budget_exceeded``, with the budget commands).
- A coordinator (no scratchpad) gets the whole artifact, held to the per-call cap alone; one
  over it is refused (``artifact_too_large``, with the next step), sized from its bytes
  before anything is read when even its bytes are far over the cap.
- A reader outside the run: ``entry_not_found``, as for another agent's entry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from scratch.answers.commands._run_args import ARTIFACT, RUN
from scratch.answers.commands.read import WholeEntry
from scratch.calls import Call, call
from scratch.declare import Command, Tool

if TYPE_CHECKING:
    from scratch.answers.kernel.candidate import Candidate
    from scratch.answers.kernel.context import Context
    from scratch.answers.kernel.fitting import Meter
    from scratch.answers.kernel.rendering import Rendering
    from scratch.answers.kernel.result import Payload, Result
    from scratch.answers.kernel.target import Target

# No token of a tokenizer scratch prices with covers more bytes than this: an artifact with
# more than cap * this many bytes is over the cap whatever it holds, known without reading it.
MAX_TOKEN_BYTES = 256


def artifact_read(ctx: Context, run: Annotated[str | None, RUN],
                  name: Annotated[str, ARTIFACT], *, rendering: Rendering | None = None,
                  asked: Call) -> Candidate | Result[Payload]:
    from scratch.answers.kernel.target import open_target
    from scratch.runs import not_in_run
    from scratch.store.names import artifact_ref, validate_name, validate_run
    if run is None:
        raise not_in_run("artifact read")
    validate_run(run)
    validate_name(name)
    ref = artifact_ref(run, name)
    asked = asked.with_args(run=run)  # the run the context gave, when the call named none
    if ctx.coordinator:
        _too_big_to_open(ctx, run, name, ref)
    target = open_target(ctx, ref)  # a reader of another run: entry_not_found here
    from scratch.answers.kernel.fitting import Meter
    whole = Whole(target, asked)
    meter = Meter(ctx, _rendering(rendering))
    if meter.fits(whole):
        return whole
    if ctx.coordinator:
        tokens = whole.estimate(1) or 0
        whole.close()
        raise _too_large(ref, run, name, tokens, meter.cap)
    try:
        # the pointer is an answer too: one the budget left cannot hold is refused as any is
        from scratch.answers.kernel.candidate import Fixed
        return Fixed(asked, _pointer(ctx, target, _rendering(rendering), meter),
                     code="read_too_large")
    finally:
        whole.close()


def _rendering(rendering: Rendering | None) -> Rendering:
    if rendering is not None:
        return rendering
    from scratch.answers.kernel.rendering import PlainCalls
    return PlainCalls()


class Whole(WholeEntry):
    """The whole artifact, shown as ``read`` shows an entry, said to be inline."""

    command = "artifact read"

    def page(self, k: int) -> Result[Payload]:
        from dataclasses import replace
        shown = super().page(k)
        data = shown.data if isinstance(shown.data, dict) else {}
        run = self.target.prefix[len("artifact:"):-1]
        return replace(shown, command="artifact read", data={
            "artifact": self.target.name, "run": run, "ref": self.target.ref, "inline": True,
            **{k: v for k, v in data.items() if k != "name"}})


def _too_big_to_open(ctx: Context, run: str, name: str, ref: str) -> None:
    """A coordinator's artifact whose bytes alone are far over its cap is refused before it is
    read or indexed (a 1 GB artifact costs one stat)."""
    from scratch.runs import RunStore, artifact_not_found, check_member
    check_member(ctx.run, run, name, ctx.agent)
    cap = int(ctx.config["budget.max_extraction_tokens"])
    if cap <= 0:
        return
    space = RunStore.open_run(ctx.root, run, ctx.agent, ctx.config)
    meta = space.load_meta(name)
    if meta is None or meta.get("deleted") or meta["kind"] == "log" or not meta["versions"]:
        raise artifact_not_found(run, name, ctx.agent, ctx.run)
    size = int(meta["versions"][-1].get("bytes") or 0)
    if size > cap * MAX_TOKEN_BYTES:
        raise _too_large(ref, run, name, None, cap, size=size)


def _too_large(ref: str, run: str, name: str, tokens: int | None, cap: int, *,
               size: int | None = None) -> Exception:
    from scratch.errors import LimitExceeded
    how = (f"~{tokens:,} tokens" if tokens is not None
           else f"{size:,} bytes, so far more than {cap:,} tokens")
    return LimitExceeded(
        f"artifact {name!r} of run {run!r} is {how}, over the per-call cap of {cap:,} "
        "(budget.max_extraction_tokens); a coordinator gets artifacts whole, so: have a "
        "worker of the run read it (it gets a pointer to explore in place) and report, or "
        f"read a part of it: schema {ref}, head {ref} -n 50, grep {ref} PATTERN",
        code="artifact_too_large", run=run, name=name, estimated_tokens=tokens,
        bytes=size, per_call_limit=cap,
        # its shape first: a 50-line head of a one-line JSON artifact is the whole of it
        suggestions=[call("schema", ref=ref), call("head", ref=ref, lines=50)])


def _pointer(ctx: Context, target: Target, rendering: Rendering, meter: Meter
             ) -> Result[dict[str, object]]:
    """The pointer to the artifact in place, fitted as ingest fits the pointer it shows
    (:func:`scratch.answers.pointer.build.fit_shown`), after a line saying why it is one."""
    from scratch.answers.kernel.result import Charge, Result
    from scratch.answers.pointer.build import build_pointer, fit_shown
    from scratch.answers.pointer.grep import error_lines_for
    from scratch.answers.pointer.sizing import EntrySizer
    spec = ctx.encoding()
    index = target.index
    base_total = index.total_tokens(spec.base)
    total = spec.scale(base_total) if base_total is not None else 0
    version = target.version or 0
    size = target.path.stat().st_size
    pointer = build_pointer(
        name=target.ref, version=version, fmt=target.format, size=size,
        lines=index.line_count, tokens=total, encoding=spec.name, exact=spec.exact,
        info=index.info, companions=[], warnings=[], partial=False, existing=True,
        sizer=EntrySizer(meter, target),
        error_lines=error_lines_for(target, target.format, index.info))
    pointer.pop("already_stored", None)
    limit = meter.limits
    why = (f"over the per-call cap of {limit.per_call:,}" if not limit.budget_binds
           else f"over the {int(limit.view['remaining']):,} tokens left of this budget")
    run = target.prefix[len("artifact:"):-1]
    head = (f"artifact {target.name!r} of run {run!r} is ~{total:,} tokens, {why}: explore "
            f"it in place as {target.ref} (one stored copy; each call charged to this "
            "budget)\n")
    extra = {"artifact": target.name, "run": run, "ref": target.ref, "inline": False,
             "over": "budget" if limit.budget_binds else "per_call_cap"}
    shown = fit_shown(pointer, total, rendering, spec, head=head)
    out = {**extra, **shown.data, "pointer_tokens": shown.tokens}
    return Result("artifact read", data=out, text=shown.text, style="pointer",
                  charge=Charge(kind="pointer"))


COMMAND = Command(
    "artifact read", "Read artifact ARTIFACT of run RUN in place: whole when it fits the per-call "
    "cap and what is left of the budget, else a pointer that read commands explore as "
    "artifact:RUN/NAME (one stored copy, each call charged to this budget).\n\n"
    "A coordinator (--coordinator) gets it whole, held to the per-call cap alone. "
    "Example: scratch artifact read r1 results/task-1.json --run r1 --agent w2",
    artifact_read,
    tools=(Tool("read_artifact", "Read an artifact of this run: whole if it fits, else a "
                "pointer to explore it in place (file=artifact:RUN/NAME).", toolset="run"),))
