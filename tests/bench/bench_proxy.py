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
3. Against the peer: server-everything's ``echo`` of a kubectl pod list, an access log and a
   CSV from the corpus ($SCRATCH_CORPUS) through scratch's proxy and jmunch-mcp: the pointer's
   tokens (scratch's tokenizer), how many payload lines it shows, whether the JSON behind
   ``Echo: `` is read as JSON, the token count each side says against the real one, and
   what a search for a frequent string finds (all of it, or a silent cap).

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
    against_the_peer(env, tmp)


PEER_PAYLOADS = [("kubectl pod list (JSON)", "k8s/honeycomb/pods.json", '"name": "'),
                 ("access log", "logs/app/apache_access_10k.log", "GET "),
                 ("CSV", "csv/loghub_HDFS_2k.log_structured.csv", "blk_")]


def real_count(text: str) -> int:
    from scratch.tokens import count_text, resolve_encoding
    return count_text(text, resolve_encoding(None, None))


async def peer_row(side: str, cmd: list[str], env: dict[str, str], payload: str,
                   pattern: str) -> dict[str, Any]:
    """One payload echoed through one proxy: what its pointer costs and carries, and what
    its search finds."""
    import re

    from mcp import Client, StdioServerParameters
    async with Client(StdioServerParameters(command=cmd[0], args=cmd[1:], env=env),
                      mode="legacy") as client:
        r = await client.call_tool("echo", {"message": payload})
        pointer = "\n".join(b.text for b in r.content if getattr(b, "type", "") == "text")
        lines = [ln for ln in payload.splitlines() if len(ln.strip()) > 12]
        quoted = sum(1 for ln in set(lines) if ln.strip()[:40] in pointer)
        expected = len(re.findall(re.escape(pattern), "Echo: " + payload))
        expected_lines = sum(1 for ln in ("Echo: " + payload).splitlines() if pattern in ln)
        if side == "scratch":
            meta = r.meta["scratch"]
            fmt = pointer.split("\n")[0].split(": ")[1].split(",")[0]
            said = meta["tokens"]
            found = await client.call_tool("grep", {"file": meta["stored"], "pattern":
                                                    re.escape(pattern), "context": 0,
                                                    "max_count": 5})
            ftext = "\n".join(b.text for b in found.content if b.type == "text")
            m = re.search(r"([\d,]+) matching lines in the whole entry", ftext)
            total = int(m.group(1).replace(",", "")) if m else -1
            search = f"{total:,} of {expected_lines:,} lines (total said)"
        else:
            body = json.loads(pointer)
            fmt = body["result"].get("kind", "?")
            said = body["_meta"].get("naive_tokens")
            h = body["result"]["handle"]
            found = await client.call_tool("jmunch_search", {"handle": h, "query": pattern,
                                                            "max_results": 100000})
            res = json.loads(found.content[0].text)["result"]
            got = len(res.get("results", []))
            total_said = any(k in res for k in ("total", "total_matches", "count"))
            search = f"{got:,} of {expected:,} matches" + ("" if total_said else
                                                          " (no total said)")
    return {"tokens": real_count(pointer), "quoted": quoted, "format": fmt, "said": said,
            "search": search}


def against_the_peer(env: dict[str, str], tmp: Path) -> None:
    """Section 3: server-everything's echo of real payloads through both proxies."""
    everything = REPO / ".ci" / "node" / "node_modules" / ".bin" / "mcp-server-everything"
    corpus = Path(os.environ.get("SCRATCH_CORPUS", REPO.parent / "shared" / "corpus"))
    if not everything.exists() or not corpus.is_dir():
        print("\nagainst the peer: server-everything or the corpus is missing: left out")
        return
    try:
        import jmunch_mcp  # noqa: F401
    except ImportError:
        print("\nagainst the peer: jmunch-mcp is not installed: left out")
        return
    upstream = [str(everything), "stdio"]
    cfg = tmp / "jmunch-everything.json"
    cfg.write_text(json.dumps({"upstream": {"command": upstream[0], "args": upstream[1:]},
                               "threshold_tokens": 2000}))
    sides = {"scratch": [sys.executable, "-m", "scratch", "mcp", "proxy", "--name", "everything",
                         "--", *upstream],
             "jmunch-mcp": [sys.executable, "-m", "jmunch_mcp", "--config", str(cfg)]}
    print("\nagainst the peer: server-everything's echo (it adds 'Echo: ') of real payloads")
    print(f"  {'payload':<24} {'side':<10} {'pointer tok':>11} {'lines quoted':>12} "
          f"{'read as':>8} {'count said / real':>22}  search")
    for label, rel, pattern in PEER_PAYLOADS:
        payload = (corpus / rel).read_text()
        real = real_count("Echo: " + payload)
        for side, cmd in sides.items():
            row = anyio.run(peer_row, side, cmd, env, payload, pattern)
            said = row["said"]
            acc = f"{said:,} / {real:,} ({said / real:.3f})" if said else "-"
            print(f"  {label:<24} {side:<10} {row['tokens']:>11,} {row['quoted']:>12,} "
                  f"{row['format']:>8} {acc:>22}  {row['search']}")
    print("  pointer tokens and the real count in scratch's tokenizer (o200k_base unless "
          "configured); 'lines quoted': payload lines whose first 40 characters the pointer "
          "shows; scratch's search asked for 5 lines, saying how many there are")


if __name__ == "__main__":
    main()
