"""What the call ledger adds to a warm call (issue 23 point 1).

Run from the repository root::

    python tests/bench/bench_ledger.py [--calls N] [--rounds R]

In one run, side by side in alternating rounds on one temporary store:

1. ``ledger.append`` of a typical record (its lock, its open, the read of the file's tail for
   the last ``seq``, one ``write``), against the floor: one ``os.write`` of the same line to a
   descriptor kept open with ``O_APPEND``; and beside ``stats.record``, the per-call counter
   every answer already paid before the ledger.
2. :func:`scratch.answers.kernel.recording.record_call`: everything the ledger adds to a call
   (the arguments' previews, the record, the append).
3. A warm MCP call (``head -n 5`` through :func:`scratch.mcp.dispatch.run_tool`, the path of
   every tool call of ``scratch mcp serve``) with the ledger, and the same call with the
   ledger's record replaced by a no-op: the difference is what the ledger costs a warm call.

Shown: p50 per operation in microseconds and the ratios. Not collected by pytest; asserts
nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def p50(fn: Callable[[], object], n: int) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    opts = parser.parse_args()

    import orjson

    from scratch.answers.kernel import recording
    from scratch.mcp.dispatch import run_tool
    from scratch.mcp.serve.session import ServerState
    from scratch.store import ledger, stats

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "store"
        os.environ["SCRATCH_HOME"] = str(home)
        for key in [k for k in os.environ if k.startswith("SCRATCH_") and k != "SCRATCH_HOME"]:
            del os.environ[key]
        os.environ["SCRATCH_BUDGET_CONTEXT_WINDOW"] = str(10**15)
        state = ServerState()
        session = state.session_for(("bench",), "default", None, "bench")
        body = "\n".join(f"line {i} " + "x" * 60 for i in range(200)) + "\n"
        assert run_tool("ingest", {"name": "notes", "content": body, "store_always": True},
                        session).ok
        (home / "state" / "floor").mkdir(parents=True, exist_ok=True)

        rec = ledger.make(interface="mcp-stdio", agent="default", session="mcp-0123456789abcdef",
                          command="get-in", args={"ref": "pods", "path": "items.7.metadata"},
                          tokens=123, entry="pods", version=3, ms=1.5)
        line = orjson.dumps({**rec, "seq": 1234}) + b"\n"
        floor_fd = os.open(home / "state" / "floor" / "calls.jsonl",
                           os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        real = recording.record_call

        def noop(*args: object, **kwargs: object) -> None:
            return None

        def call() -> None:
            assert run_tool("head", {"file": "notes", "lines": 5}, session).ok

        from scratch.answers.kernel.execution import execute
        from scratch.calls import Call
        ctx = session.context()
        asked = Call("head", {"ref": "notes", "lines": 5})
        answered = execute(ctx, session.rendering(), asked)

        def record() -> None:
            real(ctx, asked, time.perf_counter(), result=answered)

        rows: dict[str, list[float]] = {k: [] for k in (
            "floor", "stats", "append", "record", "call_on", "call_off")}
        for _ in range(5):  # warm: the tokenizer, the store, the pages
            call()
        for _ in range(opts.rounds):
            rows["floor"].append(p50(lambda: os.write(floor_fd, line), opts.calls))
            rows["stats"].append(p50(lambda: stats.record(home, "bench", "head",
                                                          tokens_extracted=10), opts.calls))
            rows["append"].append(p50(lambda: ledger.append(home, dict(rec)),  # type: ignore
                                      opts.calls))
            rows["record"].append(p50(record, opts.calls))
            # on and off in turn, one call each, so both see the same machine
            on: list[float] = []
            off: list[float] = []
            for _ in range(opts.calls // 5):
                for which, fn in ((on, real), (off, noop)):
                    recording.record_call = fn  # type: ignore[assignment]
                    t = time.perf_counter()
                    call()
                    which.append(time.perf_counter() - t)
            recording.record_call = real
            rows["call_on"].append(statistics.median(on) * 1e6)
            rows["call_off"].append(statistics.median(off) * 1e6)
        os.close(floor_fd)
        m = {k: statistics.median(v) for k, v in rows.items()}
        print(f"ledger bench: {opts.rounds} rounds of {opts.calls} appends, "
              f"{opts.calls // 5} warm MCP calls (p50, microseconds)")
        print(f"  floor: os.write of one line (fd kept open) {m['floor']:8.1f}")
        print(f"  stats.record (the counter every call pays) {m['stats']:8.1f}"
              f"   x{m['stats'] / m['floor']:.1f} the floor")
        print(f"  ledger.append                              {m['append']:8.1f}"
              f"   x{m['append'] / m['floor']:.1f} the floor, "
              f"x{m['append'] / m['stats']:.2f} stats.record")
        print(f"  record_call (all execute adds per call)    {m['record']:8.1f}"
              f"   x{m['record'] / m['floor']:.1f} the floor")
        print(f"  warm MCP head -n 5, ledger off             {m['call_off']:8.1f}")
        print(f"  warm MCP head -n 5, ledger on              {m['call_on']:8.1f}"
              f"   +{m['call_on'] - m['call_off']:.1f} us "
              f"(x{m['call_on'] / m['call_off']:.3f})")
        print(f"  records appended: {ledger.count(home, agent='default')}")


if __name__ == "__main__":
    main()
