"""stdin and stdout as asyncio pipes for the SDK's stdio transport: no thread per line.

The SDK's ``stdio_server()`` reads stdin and writes stdout through anyio's file wrappers, which
hand every line read and every write and flush to a worker thread: three thread hand-offs a
request, most of what a warm call costs beyond its answer. It also takes the two streams
from its caller, so this module gives it streams backed by the event loop's own pipe
transports instead, on private duplicates of fds 0 and 1, and points fds 0 and 1 at
``/dev/null`` and stderr meanwhile (as the SDK does with its own), so nothing a handler or a
child process prints can reach the wire. They stay so when serving ends: the process is
ending, and the wire's duplicates are closed with their transports (a closed descriptor's
number may already be reused, so it is not put back).

Only when stdin and stdout are pipes or sockets (as an MCP client starts a server); otherwise
:func:`pipe_streams` yields None and the SDK's own streams serve.
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, NamedTuple, cast

from scratch.mcp.framing import MAX_LINE, LineReader, LineWriter

if TYPE_CHECKING:
    from anyio import AsyncFile


class WirePipes(NamedTuple):
    """The wire's stdin and stdout on the event loop's pipes."""

    stdin: LineReader
    stdout: LineWriter

    def for_sdk(self) -> tuple[AsyncFile[str], AsyncFile[str]]:
        """As ``stdio_server(stdin, stdout)`` takes them: it only iterates over the one and
        writes to and flushes the other, which these do without being anyio files."""
        return cast("tuple[AsyncFile[str], AsyncFile[str]]", (self.stdin, self.stdout))


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@asynccontextmanager
async def pipe_streams(reader: asyncio.StreamReader | None = None,
                       ) -> AsyncIterator[WirePipes | None]:
    """:class:`WirePipes` for ``stdio_server(*pipes.for_sdk())``, or None (see the module);
    stdin is fed into ``reader`` when one is given (a :class:`TakingReader`)."""
    if sys.platform == "win32" or not (_is_pipe(0) and _is_pipe(1)):
        yield None
        return
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    loop = asyncio.get_running_loop()
    transports: list[asyncio.BaseTransport] = []
    try:
        if reader is None:
            reader = asyncio.StreamReader(limit=MAX_LINE)
        read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(wire_in, "rb", buffering=0))
        transports.append(read_transport)
        write_transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(wire_out, "wb", buffering=0))
        transports.append(write_transport)
        writer = asyncio.StreamWriter(write_transport, protocol, None, loop)
        yield WirePipes(LineReader(reader), LineWriter(writer))
    finally:
        for transport in transports:
            transport.close()
