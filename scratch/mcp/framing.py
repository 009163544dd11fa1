"""Lines of JSON-RPC over pipes, as ``scratch mcp serve`` and ``scratch mcp proxy`` both read
and write them: one message per line (MCP's stdio framing).

- :class:`LineReader` and :class:`LineWriter` are what the SDK's stdio transport iterates over
  and writes to, backed by the event loop's pipes (:mod:`scratch.mcp.serve.stdio`).
- :class:`LineSplitter` cuts the bytes of a pipe into whole lines; :class:`TakingReader` offers
  each whole line of a client's stdin to a callback before the SDK's reader sees it (the
  proxy's relay takes the tool calls it relays so, :mod:`scratch.mcp.proxy.relay`).
- :func:`loads_line`, :func:`handshake_of` and :func:`tool_call_of` are the one reading of a
  client's JSON-RPC lines outside the SDK.

No SDK here; a line is never changed, only taken or passed on, in order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import NamedTuple, SupportsIndex

from scratch.mcp.wire import JSON, JSONObject

MAX_LINE = 1 << 30  # one JSON-RPC message per line; the HTTP body limit has no stdio twin


class LineReader:
    """The lines of a pipe as ``str`` (what the SDK's reader iterates over)."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader

    def __aiter__(self) -> LineReader:
        return self

    async def __anext__(self) -> str:
        try:
            line = await self.reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:  # the last line, without its newline
            if not exc.partial:
                raise StopAsyncIteration from None
            line = exc.partial
        return line.decode("utf-8", errors="replace")


class Handshake(NamedTuple):
    """What a client's ``initialize`` request says of it."""

    version: str | None  # the protocol version it asks for
    client_name: str | None  # clientInfo.name


def loads_line(line: bytes | str) -> JSON:
    """A JSON-RPC line parsed; :class:`ValueError` when it is not JSON."""
    import orjson
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:  # an integer beyond 64 bits, say: the slow parser takes it
        import json
        return json.loads(line)


def handshake_of(line: bytes) -> Handshake | None:
    """The :class:`Handshake` an ``initialize`` request line carries; None when the line is
    not one (or its params are not an object)."""
    try:
        msg = loads_line(line)
    except ValueError:
        return None
    if not isinstance(msg, dict) or msg.get("method") != "initialize":
        return None
    params = msg.get("params")
    if not isinstance(params, dict):
        return None
    version, info = params.get("protocolVersion"), params.get("clientInfo")
    name = info.get("name") if isinstance(info, dict) else None
    return Handshake(version if isinstance(version, str) else None,
                     name if isinstance(name, str) else None)


def tool_call_of(line: bytes) -> tuple[JSON, JSONObject] | None:
    """``(id, params)`` of a ``tools/call`` request line whose params name a tool; None for
    any other line."""
    try:
        msg = loads_line(line)
    except ValueError:
        return None
    if not isinstance(msg, dict) or msg.get("method") != "tools/call" or "id" not in msg:
        return None
    params = msg.get("params")
    if not isinstance(params, dict) or not isinstance(params.get("name"), str):
        return None
    return msg["id"], params


class LineSplitter:
    """Bytes as a pipe gives them, cut into whole lines (each with its newline); the start of
    a line not yet complete is kept for the next read."""

    def __init__(self) -> None:
        self.partial = bytearray()
        self.scanned = 0  # bytes of it known to hold no newline

    def __len__(self) -> int:
        return len(self.partial)

    def feed(self, data: bytes) -> list[bytes]:
        """The lines ``data`` completes, in order."""
        if not self.partial and data.endswith(b"\n") and data.count(b"\n") == 1:
            return [data]  # the common case: one whole message in one read
        partial = self.partial
        partial += data
        lines: list[bytes] = []
        start = 0
        while (at := partial.find(b"\n", max(start, self.scanned))) >= 0:
            lines.append(bytes(partial[start:at + 1]))
            start = at + 1
        del partial[:start]
        self.scanned = len(partial)
        return lines

    def rest(self) -> bytes:
        """The incomplete line kept so far, taken out (at the end of the input, or to hand a
        line past the limit to a reader that refuses it)."""
        line = bytes(self.partial)
        self.partial.clear()
        self.scanned = 0
        return line


class TakingReader(asyncio.StreamReader):
    """A pipe's lines as the SDK's line reader reads them, minus the lines ``offer`` takes
    (it is called with each whole line, in order, in the pipe's own callback, and says
    whether it took it). The proxy relays tool calls so (:mod:`scratch.mcp.proxy.relay`): no
    task to wake between a request and its answer."""

    def __init__(self, offer: Callable[[bytes], bool]) -> None:
        super().__init__(limit=MAX_LINE)
        self.offer = offer
        self.lines = LineSplitter()

    def feed_data(self, data: Iterable[SupportsIndex]) -> None:
        if not isinstance(data, bytes):  # the pipe gives bytes; the base class takes any
            data = bytes(data)
        passed = [line for line in self.lines.feed(data) if not self.offer(line)]
        if len(self.lines) > MAX_LINE:  # no line this long is taken: the SDK's reader refuses it
            passed.append(self.lines.rest())
        if passed:
            super().feed_data(passed[0] if len(passed) == 1 else b"".join(passed))

    def feed_eof(self) -> None:
        if self.lines:  # the last line, without its newline
            super().feed_data(self.lines.rest())
        super().feed_eof()


class LineWriter:
    """Text written to a pipe (what the SDK's writer writes and flushes)."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer

    async def write(self, text: str) -> None:
        self.writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self.writer.drain()
