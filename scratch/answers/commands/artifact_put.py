"""artifact put: store an artifact of a run, versioned like an entry, for every worker of it.

Invariants:
- An artifact is stored through the store's one write path (:meth:`scratch.store.Store.write`
  on the run's namespace, :class:`scratch.runs.RunStore`): limits, quotas, journal, one commit
  naming it, the agent and the run; identical content makes no new version.
- The run id and the name are checked before any input is read; a refusal stores nothing.
- A worker puts into its own run only; the version records who put it, in which iteration.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from scratch.answers.commands._run_args import ARTIFACT, RUN, own_run, run_iteration
from scratch.answers.commands.write import ALLOW_EMPTY, CONTENT, SOURCE, version_answer
from scratch.declare import Command, Param, Tool

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context
    from scratch.answers.kernel.result import Result


def artifact_put(ctx: Context, run: Annotated[str | None, RUN],
                 name: Annotated[str, ARTIFACT],
                 content: Annotated[bytes | None, CONTENT] = None,
                 source: Annotated[str | None, SOURCE] = None,
                 allow_empty: Annotated[bool, ALLOW_EMPTY] = False) -> Result[dict[str, object]]:
    """Store ``content`` (or the bytes of the file ``source``) as the next version of artifact
    NAME of RUN, held to the limits ``write`` is held to."""
    from scratch.runs import RunStore, check_artifact_name
    from scratch.store.names import artifact_ref
    run = own_run(ctx, run, "artifact put")
    check_artifact_name(name)
    from scratch.answers.capture.inputs import content_to_store
    content = content_to_store(content, source, limit=ctx.config["limits.max_write_bytes"],
                               allow_empty=allow_empty, noun="artifact")
    iteration = run_iteration(ctx, run)
    space = RunStore.open_run(ctx.root, run, ctx.agent, ctx.config)
    from scratch.answers.capture.redaction import policy_for, redact
    content, redaction = redact(ctx, content, policy_for(ctx, None))
    rec = space.write(name, content, redaction=redaction, info={"run": run, "agent": ctx.agent,
                                           "iteration": iteration},
                      verb="Put artifact", note=f" Run {run}, iteration {iteration}.")
    ref = artifact_ref(run, name)
    return version_answer("artifact put", ref, rec, redaction, run=run, name=name, ref=ref)


COMMAND = Command(
    "artifact put", "Store artifact ARTIFACT of run RUN from FILE or stdin, for every worker of "
    "the run to read in place.\n\n"
    "Versioned like an entry (identical content makes no new version); read back with "
    "'artifact read RUN ARTIFACT' or any read command as artifact:RUN/ARTIFACT.\n\n"
    "Example: scratch artifact put r1 results/task-1.json out.json",
    artifact_put,
    tools=(Tool("write_artifact", "Store an artifact of this run for every worker of it to "
                "read (versioned; identical content makes no new version).",
                own=(Param("content", "bytes", False, True, None, CONTENT),),
                read_only=False, idempotent=True, toolset="run"),))
