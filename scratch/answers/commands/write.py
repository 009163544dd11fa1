"""write: store a new version of an entry, held to the same limits on every interface."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from scratch.answers.commands._args import NAME, NO_REDACT
from scratch.answers.kernel.result import Result
from scratch.declare import Arg, Command, Param, Tool
from scratch.store.names import validate_name

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context
    from scratch.redact.records import Redaction
    from scratch.store.records import WrittenVersion

CONTENT = Arg("The whole new content.", cli=False)
SOURCE = Arg("Read from FILE; stdin when omitted or '-'.", metavar="[FILE|-]", mcp=False,
             show_default=False)
ALLOW_EMPTY = Arg("Store empty content instead of refusing it.", flags=("--allow-empty",))


def write(ctx: Context, name: Annotated[str, NAME],
          content: Annotated[bytes | None, CONTENT] = None,
          source: Annotated[str | None, SOURCE] = None,
          allow_empty: Annotated[bool, ALLOW_EMPTY] = False,
          no_redact: Annotated[bool, NO_REDACT] = False) -> Result[dict[str, object]]:
    """Store ``content`` (or the bytes of the file ``source``) as the next version of NAME.

    Every interface is held to the same limits here: content over ``limits.max_write_bytes``
    and empty content (unless ``allow_empty``) are refused before anything is stored."""
    validate_name(name)
    from scratch.answers.capture.inputs import content_to_store
    content = content_to_store(content, source, limit=ctx.config["limits.max_write_bytes"],
                               allow_empty=allow_empty, noun="file")
    from scratch.answers.capture.redaction import policy_for, redact
    content, redaction = redact(ctx, content, policy_for(ctx, None, no_redact=no_redact))
    rec = ctx.store().write(name, content, redaction=redaction)
    return version_answer("write", name, rec, redaction, name=rec["name"])


def version_answer(command: str, shown: str, rec: WrittenVersion, redaction: Redaction,
                   **named: object) -> Result[dict[str, object]]:
    """The answer of a command that stored a version (``write``, ``artifact put``): ``named``
    first (the entry's name; ``artifact put``'s run and reference too), then the version's
    figures and what redaction did; the text ``SHOWN: version N (B bytes, L lines)``
    (``SHOWN: unchanged (version N)`` when the content was there already), then a line saying
    what redaction replaced, if anything."""
    from scratch.answers.capture.redaction import said, sentence
    from scratch.words import plural
    out: dict[str, object] = {**named, **{k: rec[k] for k in ("version", "bytes", "lines",
                                                              "unchanged")}}
    told = said(redaction)
    if told is not None:
        out["redacted"] = told
    if rec["unchanged"]:
        text = f"{shown}: unchanged (version {rec['version']})\n"
    else:
        size = (f"{plural(rec['bytes'] or 0, 'byte', grouped=True)}, "
                f"{plural(rec['lines'] or 0, 'line', grouped=True)}")
        text = f"{shown}: version {rec['version']} ({size})\n"
    if told is not None:
        text += f"{shown}: {sentence(told)}\n"
    return Result(command, data=out, text=text)


COMMAND = Command(
    "write", "Store a new version of NAME from FILE or stdin.\n\n"
    "Identical content makes no new version and says 'unchanged'.\n\n"
    "Example: echo 'step 1' | scratch write notes/plan.md",
    write,
    tools=(Tool("write_file", "Store a new version of a file; identical content makes no new "
                "version.", names={"name": "path"},
                # the CLI gives a FILE or stdin instead; a tool call always gives the content
                own=(Param("content", "bytes", False, True, None, CONTENT),),
                read_only=False, idempotent=True, toolset="files"),))
