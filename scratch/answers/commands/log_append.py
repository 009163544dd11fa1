"""log append: one entry (or one a line) at the end of a log; ids start at 1, never reused."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from scratch.answers.commands._args import NAME, NO_REDACT
from scratch.answers.kernel.result import Result
from scratch.declare import Arg, Command, Param, Tool
from scratch.errors import UsageError, argument
from scratch.store import logs

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context
    from scratch.calls import ArgValue
    from scratch.store.logs import Appended

ENTRY = Arg("The entry text; stdin when omitted or '-'.", metavar="[ENTRY|-]", max_length=1 << 20,
            mcp=False, show_default=False)
LINES = Arg("Append each non-empty line as its own entry.", flags=("--lines",), mcp=False)


def append(ctx: Context, name: Annotated[str, NAME], entry: Annotated[str | None, ENTRY] = None,
           lines: Annotated[bool, LINES] = False,
           no_redact: Annotated[bool, NO_REDACT] = False, *,
           entries: list[bytes] | list[str] | None = None) -> Result[Appended]:
    """Append ``entry`` (each non-empty line of it with ``lines``), or ``entries`` as the
    interface read them (the CLI's stdin, the tool's entry)."""
    if entries is None:
        if entry is None:
            raise UsageError(f"log append needs {argument('entry')}", code="no_input",
                             argument="entry")
        entries = [entry.encode("utf-8", errors="surrogateescape")]
        if lines:
            entries = [line for line in entries[0].splitlines() if line.strip()]
    raw = [e.encode("utf-8", errors="surrogateescape") if isinstance(e, str) else e
           for e in entries]
    from scratch.answers.capture.redaction import policy_for, redact_entries, said, sentence
    raw, redaction = redact_entries(ctx, raw, policy_for(ctx, None, no_redact=no_redact))
    rec = logs.append(ctx.store(), name, raw, redaction=redaction)
    what = (f"entry {rec['first_id']}" if rec["count"] == 1
            else f"{rec['count']} entries, ids {rec['first_id']}-{rec['last_id']}")
    text = f"{name}: appended {what}\n"
    told = said(redaction)
    if told is not None:
        rec["redacted"] = told
        text += f"{name}: {sentence(told)}\n"
    return Result("log append", data=rec, text=text)


def _to_core(args: dict[str, ArgValue]) -> dict[str, ArgValue]:
    """The tool's one entry (its UTF-8 bytes) as the core's list of entries."""
    entry = args["entry"]
    entries = [entry if isinstance(entry, bytes)
               else str(entry).encode("utf-8", errors="surrogateescape")]
    out: dict[str, ArgValue] = {"name": args["name"], "entries": entries}
    if args.get("no_redact") is not None:
        out["no_redact"] = args["no_redact"]
    return out


def _from_core(args: dict[str, ArgValue]) -> dict[str, ArgValue]:
    entries = args.get("entries")
    first = entries[0] if isinstance(entries, list) and entries else ""
    out: dict[str, ArgValue] = {"name": args.get("name"), "entry": first}
    if args.get("no_redact"):
        out["no_redact"] = args["no_redact"]
    return out


COMMAND = Command(
    "log append", "Append ENTRY (or stdin) to log NAME as one entry; --lines appends each "
    "line.\n\nEntries that parse as JSON are stored as JSON values.\n\n"
    "Example: scratch log append events '{\"step\": 3, \"ok\": true}'",
    append,
    tools=(Tool("append_log", "Append one entry to a log (JSON text is stored as JSON); ids "
                "start at 1 and are never reused.", names={"name": "path"},
                # one entry, always given: text, stored as its UTF-8 bytes
                own=(Param("entry", "bytes", False, True, None,
                           Arg("The entry.", max_length=1 << 20)),),
                args=("name", "entry", "no_redact"), reshape=(_to_core, _from_core),
                read_only=False,
                toolset="files"),))
