"""What ``scratch mcp proxy`` costs on top of calling an upstream server directly (issue 13).

Run from the repository root with the interpreter scratch, the MCP SDK and (for the peer's
column) jmunch-mcp are installed in::

    python tests/bench/bench_proxy.py [--calls N] [--rounds R] [--big-mb M]

One upstream for every side: the SDK-built fixture server of the proxy's tests
(tests/data/mcp_upstreams/fixture_server.py), its ``text`` tool.

1. Pass-through: ``text(size=200)`` (far below any threshold) through the SDK's own client
   (initialize handshake) to the upstream directly, through ``scratch mcp proxy``, and through
   jmunch-mcp (``python -m jmunch_mcp``, when installed), all three open at once and each call
   made to every side in turn, so all sides share the machine's state. Shown: p50 and p90 per call, and each proxy's p50 overhead over
   direct.
2. Interception: ``text(size=M MB)`` through the proxy (stored, pointer returned) against the
   same call direct (the upstream and the transport's cost alone); the difference is what
   intercepting costs, shown beside ``scratch ingest --store-always`` of the same bytes (a
   cold process, its median of R runs).

Not collected by pytest and asserts nothing; the targets are printed next to the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "data" / "mcp_upstreams" / "fixture_server.py"


def env_for(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRATCH_")}
    env.update(SCRATCH_HOME=str(home), SCRATCH_BUDGET_CONTEXT_WINDOW="1000000000",
               PYTHONPATH=str(REPO))
    return env


async def interleaved(sides: dict[str, list[str]], env: dict[str, str], args: dict[str, Any],
                      n: int, rounds: int, out: dict[str, list[float]]) -> None:
    """Every side's client open at once; each round, each call goes to every side in turn
    (the order rotating), so a moment of load on this machine costs every side alike."""
    from contextlib import AsyncExitStack

    from mcp import Client, StdioServerParameters
    names = list(sides)
    async with AsyncExitStack() as stack:
        clients = {}
        for name in names:
            cmd = sides[name]
            clients[name] = await stack.enter_async_context(Client(StdioServerParameters(
                command=cmd[0], args=cmd[1:], env=env), mode="legacy"))
            for _ in range(20):  # warm: imports, caches, the first threshold lookups
                await clients[name].call_tool("text", args)
        for r in range(rounds):
            for i in range(n):
                k = (r * n + i) % len(names)
                for name in names[k:] + names[:k]:
                    t = time.perf_counter()
                    await clients[name].call_tool("text", args)
                    out[name].append(time.perf_counter() - t)


async def timed_calls(command: list[str], env: dict[str, str], args: dict[str, Any], n: int,
                      rounds: int, out: list[float], warm: bool = True) -> None:
    from mcp import Client, StdioServerParameters
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    async with Client(params, mode="legacy") as client:
        if warm:  # not for a big result: the same bytes again would find them stored
            await client.call_tool("text", args)
        for _ in range(rounds):
            for _ in range(n):
                t = time.perf_counter()
                await client.call_tool("text", args)
                out.append(time.perf_counter() - t)
            await anyio.sleep(0)


def p(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--big-mb", type=float, default=10)
    opts = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-proxy-"))
    home = tmp / "store"
    env = env_for(home)
    subprocess.run([sys.executable, "-m", "scratch", "init"], env=env, check=True,
                   capture_output=True)
    upstream = [sys.executable, str(FIXTURE)]
    sides: dict[str, list[str]] = {
        "direct": upstream,
        "scratch mcp proxy": [sys.executable, "-m", "scratch", "mcp", "proxy", "--name", "fx",
                              "--", *upstream]}
    try:
        import jmunch_mcp  # noqa: F401
        cfg = tmp / "jmunch.json"
        cfg.write_text(json.dumps({"upstream": {"command": upstream[0], "args": upstream[1:]},
                                   "threshold_tokens": 2000}))
        sides["jmunch-mcp"] = [sys.executable, "-m", "jmunch_mcp", "--config", str(cfg)]
    except ImportError:
        print("jmunch-mcp is not installed: its column is left out")

    # 1. pass-through, call by call in turn between the sides
    got: dict[str, list[float]] = {k: [] for k in sides}
    anyio.run(interleaved, sides, env, {"size": 200}, opts.calls, opts.rounds, got)
    base = p(got["direct"], 0.5)
    print(f"pass-through text(size=200), {opts.rounds} x {opts.calls} calls per side:")
    print(f"  {'side':<20} {'p50 ms':>8} {'p90 ms':>8} {'p50 over direct':>16}")
    for name, values in got.items():
        over = "" if name == "direct" else f"{p(values, 0.5) - base:+.3f} ms"
        print(f"  {name:<20} {p(values, 0.5):8.3f} {p(values, 0.9):8.3f} {over:>16}")
    print("  target: the proxy's overhead no more than jmunch-mcp's pass-through overhead")

    # 2. interception of a big result, against `scratch ingest` of the same bytes
    size = int(opts.big_mb * 1_000_000)
    sys.path.insert(0, str(FIXTURE.parent))
    from fixture_server import text_of
    big: dict[str, list[float]] = {"direct": [], "scratch mcp proxy": []}
    ingest: list[float] = []
    rounds = max(3, opts.rounds)
    for i in range(rounds):
        # other bytes each round (one more byte per size), so no side finds them stored
        # or indexed already; the proxy's call and the ingest get the same bytes
        n = size + i
        for name in big:
            anyio.run(timed_calls, sides[name], env, {"size": n}, 1, 1, big[name], False)
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "scratch", "ingest", "--store-always",
                        f"bench/ingest-{i}"], input=text_of(n + rounds).encode(), env=env,
                       check=True, capture_output=True)
        ingest.append(time.perf_counter() - t)
    direct_ms = statistics.median(big["direct"]) * 1000
    proxy_ms = statistics.median(big["scratch mcp proxy"]) * 1000
    ingest_ms = statistics.median(ingest) * 1000
    print(f"\nintercepting text(size={size:,}), median of {rounds}:")
    print(f"  direct call {direct_ms:.0f} ms; through the proxy (stored) {proxy_ms:.0f} ms; "
          f"intercepting costs {proxy_ms - direct_ms:.0f} ms")
    print(f"  scratch ingest --store-always of the same bytes (cold process): {ingest_ms:.0f} ms")
    print(f"  ratio intercept / ingest: {(proxy_ms - direct_ms) / ingest_ms:.2f} "
          "(target <= 1.5)")


if __name__ == "__main__":
    main()
