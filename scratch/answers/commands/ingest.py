"""ingest: a tool's output passed through below its threshold, stored with a pointer above it
(the storing itself is :mod:`scratch.answers.capture.ingest`, shared with run and the MCP proxy)."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Annotated, BinaryIO

from scratch.answers.commands._args import NO_REDACT
from scratch.answers.commands._store_args import FORMAT, OUTPUT_NAME, RAW, STORE_ALWAYS, TOOL
from scratch.declare import Arg, Command, Tool
from scratch.errors import UsageError, argument

if TYPE_CHECKING:
    from scratch.answers.capture.ingest import Companion
    from scratch.answers.kernel.context import Context
    from scratch.answers.kernel.rendering import Rendering
    from scratch.answers.kernel.result import Result

CONTENT = Arg("The output.", cli=False)


def ingest(ctx: Context, name: Annotated[str | None, OUTPUT_NAME] = None,
           tool: Annotated[str | None, TOOL] = None,
           format: Annotated[str | None, FORMAT] = None,
           raw: Annotated[bool, RAW] = False,
           store_always: Annotated[bool, STORE_ALWAYS] = False,
           content: Annotated[bytes | None, CONTENT] = None,
           no_redact: Annotated[bool, NO_REDACT] = False, *,
           stream: BinaryIO | None = None, rendering: Rendering | None = None,
           partial: bool = False,
           companions: tuple[Companion, ...] = (), info: dict[str, object] | None = None,
           notices: tuple[str, ...] = ()) -> Result[object]:
    """The output on ``stream`` (the CLI's stdin) or given as ``content``, passed through or
    stored with a pointer (``partial``, ``companions``, ``info``, ``notices``: what the MCP
    proxy adds for an upstream result, see
    :class:`scratch.answers.capture.ingest.IngestOptions`)."""
    from scratch.answers.capture.ingest import IngestOptions
    from scratch.answers.capture.ingest import ingest as store_output
    if stream is None:
        if content is None:
            raise UsageError(f"ingest needs {argument('content')}", code="no_input",
                             command="ingest", argument="content")
        stream = io.BytesIO(content)
    opts = IngestOptions(name=name, tool=tool, fmt=format, raw=raw, store_always=store_always,
                         partial=partial, companions=tuple(companions), info=info,
                         notices=tuple(notices), no_redact=no_redact)
    return store_output(ctx, stream, opts, rendering=rendering)


COMMAND = Command(
    "ingest", "Read a tool's output on stdin: below the tool's threshold pass it through "
    "untouched; above it store and index it and print a pointer (format, size in tokens, "
    "schema outline, samples, next commands).\n\n"
    "Example: kubectl get pods -A -o json | scratch ingest --tool kubectl_get_pods",
    ingest,
    tools=(Tool("ingest", "Store a big tool output and get a short pointer (format, size in "
                "tokens, schema outline, next calls) instead of the output; below the tool's "
                "threshold the content comes back as it is.",
                args=("content", "tool", "name", "store_always", "format", "raw", "no_redact"),
                required=("content",), read_only=False, idempotent=True, toolset="session"),))
