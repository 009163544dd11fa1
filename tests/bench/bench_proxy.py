"""What ``scratch mcp proxy`` costs on top of calling an upstream server directly (issue 13).

Run from the repository root with the interpreter scratch, the MCP SDK and (for the peer's
column) jmunch-mcp are installed in::

    python tests/bench/bench_proxy.py [--calls N] [--rounds R] [--big-mb M]

One upstream for every side: the SDK-built fixture server of the proxy's tests
(tests/data/mcp_upstreams/fixture_server.py), its ``text`` tool.

1. Pass-through: ``text(size=200)`` (far below any threshold) through the SDK's own client
   (initialize handshake) to the upstream directly, through ``scratch mcp proxy``, and through
   jmunch-mcp (``python -m jmunch_mcp``, when installed), all three open at once and each call
   made to every side in turn, so all sides share the machine's state. Shown: p50 and p90 per
   call, each proxy's p50 overhead over direct, and the CPU time each process spent per call
   (from /proc: steadier than wall time on a shared machine).
2. Interception: ``text(size=M MB)`` through the proxy (stored, pointer returned), the whole
   call from the client's side, against ``scratch ingest --store-always`` of the same bytes (a
   cold process, its median of R runs). The stored call includes the upstream making and
   sending the bytes, so the ratio is an upper bound on what intercepting costs; the same call
   direct (the client taking the whole result) is shown beside it.
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


def children() -> dict[int, list[int]]:
    """Every process's children, from /proc (empty where there is no /proc)."""
    out: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for d in names:
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            out.setdefault(int(stat[stat.rindex(")") + 2:].split()[1]), []).append(int(d))
    return out


def descendants(pid: int, kids: dict[int, list[int]]) -> list[int]:
    found = [pid]
    for k in kids.get(pid, []):
        found += descendants(k, kids)
    return found


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of one process so far (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return 0.0
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def interleaved(sides: dict[str, list[str]], env: dict[str, str], args: dict[str, Any],
                      n: int, rounds: int, out: dict[str, list[float]],
                      cpu: dict[str, list[float]]) -> None:
    """Every side's client open at once; each round, each call goes to every side in turn
    (the order rotating), so a moment of load on this machine costs every side alike.

    ``cpu[name]`` gets the CPU seconds per call of that side's processes over the timed
    calls: the server the client started first, then its children (a proxy's upstream).
    CPU time is what a process did, not what it waited for, so it is far steadier than wall
    time on a shared machine."""
    from contextlib import AsyncExitStack

    from mcp import Client, StdioServerParameters
    names = list(sides)
    procs: dict[str, list[int]] = {}
    async with AsyncExitStack() as stack:
        clients = {}
        for name in names:
            cmd = sides[name]
            before = set(descendants(os.getpid(), children()))
            clients[name] = await stack.enter_async_context(Client(StdioServerParameters(
                command=cmd[0], args=cmd[1:], env=env), mode="legacy"))
            for _ in range(20):  # warm: imports, caches, the first threshold lookups
                await clients[name].call_tool("text", args)
            kids = children()
            top = [q for q in kids.get(os.getpid(), []) if q not in before]
            procs[name] = descendants(top[0], kids) if len(top) == 1 else []
        start = {name: [cpu_seconds(q) for q in procs[name]] for name in names}
        for r in range(rounds):
            for i in range(n):
                k = (r * n + i) % len(names)
                for name in names[k:] + names[:k]:
                    t = time.perf_counter()
                    await clients[name].call_tool("text", args)
                    out[name].append(time.perf_counter() - t)
        for name in names:
            cpu[name] = [(cpu_seconds(q) - c) / (n * rounds)
                         for q, c in zip(procs[name], start[name], strict=True)]


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
    cpu: dict[str, list[float]] = {}
    anyio.run(interleaved, sides, env, {"size": 200}, opts.calls, opts.rounds, got, cpu)
    base = p(got["direct"], 0.5)
    print(f"pass-through text(size=200), {opts.rounds} x {opts.calls} calls per side:")
    print(f"  {'side':<20} {'p50 ms':>8} {'p90 ms':>8} {'p50 over direct':>16} "
          f"{'CPU us/call: server':>20} {'its upstream':>12}")
    for name, values in got.items():
        over = "" if name == "direct" else f"{p(values, 0.5) - base:+.3f} ms"
        own = f"{cpu[name][0] * 1e6:.0f}" if cpu.get(name) else "?"
        child = f"{sum(cpu[name][1:]) * 1e6:.0f}" if len(cpu.get(name, [])) > 1 else ""
        print(f"  {name:<20} {p(values, 0.5):8.3f} {p(values, 0.9):8.3f} {over:>16} "
              f"{own:>20} {child:>12}")
    print("  target: the proxy's overhead no more than jmunch-mcp's pass-through overhead "
          "(CPU per call: what each process itself spent, steadier than wall time here)")

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
    print(f"  the whole call through the proxy, stored and answered with a pointer: "
          f"{proxy_ms:.0f} ms (the upstream making and sending the bytes included)")
    print(f"  the same call direct, the client taking the whole result: {direct_ms:.0f} ms")
    print(f"  scratch ingest --store-always of the same bytes (cold process): {ingest_ms:.0f} ms")
    print(f"  ratio stored call / ingest: {proxy_ms / ingest_ms:.2f} (target <= 1.5; an upper "
          "bound on what intercepting costs)")
    against_the_peer(env, tmp)


PEER_PAYLOADS = [("kubectl pod list (JSON)", "k8s/honeycomb/pods.json", '"name": "'),
                 ("access log", "logs/app/apache_access_10k.log", "GET "),
                 ("CSV", "csv/loghub_HDFS_2k.log_structured.csv", "blk_")]
# the same pod list as the upstream's whole answer, no prefix: server-filesystem's read
PLAIN_JSON = ("pod list, plain JSON (read)", "k8s/honeycomb/pods.json", '"name": "')


def real_count(text: str) -> int:
    from scratch.tokens import count_text, resolve_encoding
    return count_text(text, resolve_encoding(None, None))


async def peer_row(side: str, cmd: list[str], env: dict[str, str], tool: str,
                   arguments: dict[str, Any], answer: str, pattern: str) -> dict[str, Any]:
    """One call through one proxy whose upstream answers ``answer``: what the pointer costs
    and carries, and what its search finds."""
    import re

    from mcp import Client, StdioServerParameters
    async with Client(StdioServerParameters(command=cmd[0], args=cmd[1:], env=env),
                      mode="legacy") as client:
        r = await client.call_tool(tool, arguments)
        pointer = "\n".join(b.text for b in r.content if getattr(b, "type", "") == "text")
        lines = [ln for ln in answer.splitlines() if len(ln.strip()) > 12]
        quoted = sum(1 for ln in set(lines) if ln.strip()[:40] in pointer)
        expected = len(re.findall(re.escape(pattern), answer))
        expected_lines = sum(1 for ln in answer.splitlines() if pattern in ln)
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
            if "handle" not in body["result"]:  # its summary of a JSON list: no search
                sample = body["result"].get("sample", body["result"].get("samples", []))
                return {"tokens": real_count(pointer), "quoted": quoted,
                        "format": body["result"].get("kind", "?"),
                        "said": body["_meta"].get("naive_tokens"),
                        "search": f"none (a summary; {len(sample)} whole sample items)"}
            fmt = body["result"].get("kind", "?")
            said = body["_meta"].get("naive_tokens")
            h = body["result"]["handle"]
            found = await client.call_tool("jmunch_search", {"handle": h, "query": pattern,
                                                            "max_results": 100000})
            res = json.loads(found.content[0].text)["result"]
            if isinstance(res, list):  # a tabular handle's search: the rows themselves
                res = {"results": res}
            got = len(res.get("results", []))
            total_said = any(k in res for k in ("total", "total_matches", "count"))
            search = f"{got:,} of {expected:,} matches" + ("" if total_said else
                                                          " (no total said)")
    return {"tokens": real_count(pointer), "quoted": quoted, "format": fmt, "said": said,
            "search": search}


def against_the_peer(env: dict[str, str], tmp: Path) -> None:
    """Section 3: real payloads through both proxies, from server-everything's echo and
    server-filesystem's read."""
    bins = REPO / ".ci" / "node" / "node_modules" / ".bin"
    everything, filesystem = bins / "mcp-server-everything", bins / "mcp-server-filesystem"
    corpus = Path(os.environ.get("SCRATCH_CORPUS", REPO.parent / "shared" / "corpus"))
    if not everything.exists() or not filesystem.exists() or not corpus.is_dir():
        print("\nagainst the peer: the npm servers (.ci/run) or the corpus are missing: left out")
        return
    try:
        import jmunch_mcp  # noqa: F401
    except ImportError:
        print("\nagainst the peer: jmunch-mcp is not installed: left out")
        return
    files = tmp / "files"
    files.mkdir()
    label, rel, pattern = PLAIN_JSON
    plain = files / Path(rel).name
    plain.write_bytes((corpus / rel).read_bytes())
    cases = [(label, [str(filesystem), str(files)], "filesystem", "read_text_file",
              {"path": str(plain)}, plain.read_text(), pattern)]
    for label, rel, pattern in PEER_PAYLOADS:
        payload = (corpus / rel).read_text()
        cases.append((label, [str(everything), "stdio"], "everything", "echo",
                      {"message": payload}, "Echo: " + payload, pattern))
    print("\nagainst the peer: real payloads as an upstream's answer (server-everything's echo "
          "adds 'Echo: ')")
    print(f"  {'payload':<28} {'side':<10} {'pointer tok':>11} {'lines quoted':>12} "
          f"{'read as':>8} {'count said / real':>22}  search")
    for n, (label, upstream, name, tool, arguments, answer, pattern) in enumerate(cases):
        cfg = tmp / f"jmunch-{n}.json"
        cfg.write_text(json.dumps({"upstream": {"command": upstream[0], "args": upstream[1:]},
                                   "threshold_tokens": 2000}))
        sides = {"scratch": [sys.executable, "-m", "scratch", "mcp", "proxy", "--name", name,
                             "--", *upstream],
                 "jmunch-mcp": [sys.executable, "-m", "jmunch_mcp", "--config", str(cfg)]}
        real = real_count(answer)
        for side, cmd in sides.items():
            row = anyio.run(peer_row, side, cmd, env, tool, arguments, answer, pattern)
            said = row["said"]
            acc = f"{said:,} / {real:,} ({said / real:.3f})" if said else "-"
            print(f"  {label:<28} {side:<10} {row['tokens']:>11,} {row['quoted']:>12,} "
                  f"{row['format']:>8} {acc:>22}  {row['search']}")
    print("  pointer tokens and the real count in scratch's tokenizer (o200k_base unless "
          "configured); 'lines quoted': answer lines whose first 40 characters the pointer "
          "shows; scratch's search asked for 5 lines, saying how many there are")


if __name__ == "__main__":
    main()
