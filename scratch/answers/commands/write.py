"""write: store a new version of an entry, held to the same limits on every interface."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from scratch.answers.commands._args import NAME, NO_REDACT
from scratch.answers.kernel.result import Result
from scratch.declare import Arg, Command, Param, Tool
from scratch.errors import UsageError, argument
from scratch.names import validate_name

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context

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
    limit = ctx.config["limits.max_write_bytes"]
    if content is None:
        if source is None:
            raise UsageError(f"no content given: {argument('content')} or "
                             f"{argument('source')}", code="no_input", argument="content")
        from scratch.answers.inputs import read_file
        content = read_file(source, limit=limit, what="content", allow_empty=allow_empty)
    elif len(content) > limit:
        from scratch.errors import LimitExceeded
        raise LimitExceeded(f"the content is {len(content):,} bytes, over "
                            f"limits.max_write_bytes ({limit:,} bytes)", code="write_too_large",
                            limit="limits.max_write_bytes", limit_value=limit,
                            attempted_at_least=len(content))
    elif not content and not allow_empty:
        raise UsageError(f"the content was empty: nothing to store ({argument('allow_empty')} "
                         "stores an empty file)", code="empty_input", argument="allow_empty")
    from scratch.answers.capture import policy_for, redact, said, sentence
    content, redaction = redact(ctx, content, policy_for(ctx, None, no_redact=no_redact))
    rec = ctx.store().write(name, content, redaction=redaction)
    out: dict[str, object] = {k: rec[k] for k in ("name", "version", "bytes", "lines",
                                                  "unchanged")}
    told = said(redaction)
    if told is not None:
        out["redacted"] = told
    if rec["unchanged"]:
        text = f"{name}: unchanged (version {rec['version']})\n"
    else:
        size = (f"{rec['bytes']:,} byte{'' if rec['bytes'] == 1 else 's'}, "
                f"{rec['lines']:,} line{'' if rec['lines'] == 1 else 's'}")
        text = f"{name}: version {rec['version']} ({size})\n"
    if told is not None:
        text += f"{name}: {sentence(told)}\n"
    return Result("write", data=out, text=text)


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
