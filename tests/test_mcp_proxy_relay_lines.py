"""How the proxy's relay cuts pipes into lines: the client's stdin (scratch.mcp.serve.stdio's
TakingReader) and an upstream's stdout
(scratch.mcp.proxy.relay's _UpstreamPipes) arrive in reads of any size; every
line must reach exactly one place — taken by the relay, or passed on in order — whole."""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from scratch.mcp.framing import TakingReader  # noqa: E402
from scratch.mcp.proxy.relay import Channel, _UpstreamPipes  # noqa: E402


class Taker:
    """A Front that takes the lines holding ``take`` and keeps them."""

    out = object()

    def __init__(self) -> None:
        self.taken: list[bytes] = []

    def offer(self, line: bytes) -> bool:
        if b"take" in line:
            self.taken.append(line)
            return True
        return False


LINES = [b'{"n": 1, "take": true}\n', b'{"n": 2}\n', b'{"n": 3, "take": 1}\n',
         b'{"n": 4, "x": "' + b"y" * 5000 + b'"}\n', b'{"n": 5, "take": 2}\n', b'{"n": 6}\n']
WIRE = b"".join(LINES)


def chunked(data: bytes, size: int) -> list[bytes]:
    return [data[i:i + size] for i in range(0, len(data), size)]


@pytest.mark.parametrize("size", [1, 7, 64, 4096, len(WIRE)])
def test_the_clients_lines_are_taken_or_passed_on_in_order_whatever_the_reads(size: int) -> None:
    async def run() -> tuple[list[bytes], list[bytes]]:
        front = Taker()
        reader = TakingReader(front.offer)
        for chunk in chunked(WIRE, size):
            reader.feed_data(chunk)
        reader.feed_eof()
        passed = []
        while line := await reader.readline():
            passed.append(line)
        return front.taken, passed

    taken, passed = asyncio.run(run())
    assert taken == [LINES[0], LINES[2], LINES[4]]
    assert passed == [LINES[1], LINES[3], LINES[5]]


def test_a_last_line_without_its_newline_reaches_the_sdk_at_the_end() -> None:
    async def run() -> list[bytes]:
        reader = TakingReader(Taker().offer)
        reader.feed_data(b'{"n": 1}\n{"n": 2')
        reader.feed_eof()
        return [line async for line in reader]

    assert asyncio.run(run()) == [b'{"n": 1}\n', b'{"n": 2']


class Owner:
    _eof = False


class Pipe:
    def is_closing(self) -> bool:
        return False

    def write(self, data: bytes) -> None:
        pass


@pytest.mark.parametrize("size", [1, 13, 4096, 1 << 20])
def test_an_upstreams_lines_go_to_the_relay_or_the_session_whole(size: int) -> None:
    answers = [b'{"jsonrpc": "2.0", "id": "scratch~1", "result": {"content": []}}\n',
               b'{"jsonrpc": "2.0", "id": "scratch~2", "result": {"content": ['
               b'{"type": "text", "text": "' + b"z" * 300_000 + b'"}]}}\n']
    session = [b'{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}\n',
               b'{"jsonrpc": "2.0", "id": 7, "result": {}}\n']
    wire = session[0] + answers[0] + b"\n" + session[1] + answers[1]

    async def run() -> tuple[list[Any], list[Any], bool]:
        to_session, from_pipe = anyio.create_memory_object_stream[Any](100)
        owner = Owner()
        pipes = _UpstreamPipes(owner, to_session)
        channel = Channel(Pipe())  # type: ignore[arg-type]
        pipes.channel = channel
        got: list[Any] = []

        class Call:
            def __init__(self, uid: str) -> None:
                channel.pending[uid] = self  # type: ignore[assignment]

            def answered(self, msg: dict[str, Any]) -> None:
                got.append(msg)

        Call("scratch~1")
        Call("scratch~2")
        for chunk in chunked(wire, size):
            pipes.pipe_data_received(1, chunk)
        pipes.pipe_connection_lost(1, None)
        items = [item async for item in from_pipe]
        return got, items, owner._eof

    got, items, eof = asyncio.run(run())
    assert [m["id"] for m in got] == ["scratch~1", "scratch~2"]
    assert len(got[1]["result"]["content"][0]["text"]) == 300_000
    assert [getattr(i.message, "method", None) or i.message.id for i in items] == [
        "notifications/tools/list_changed", 7]  # the blank line is dropped
    assert eof
