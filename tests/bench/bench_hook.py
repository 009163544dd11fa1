"""What `scratch hook` costs a client (issue 28, Speed).

Run from the repository root::

    python tests/bench/bench_hook.py [--runs N] [--mb M]

In one run, on temporary stores:

1. The pass-through path: ``scratch hook claude-code`` with a small Bash payload (the path of
   almost every tool call), against ``python3 -c pass``, in alternating runs; p50 of each and
   their ratio (the goal: at most 2x).
2. Storing a result of M MB (default 100): ``scratch hook claude-code`` with that text as a
   Bash result in the payload, against ``scratch ingest --tool Bash`` of the same bytes from a
   file, each into a fresh store, in alternating rounds; the best of each and their ratio (the
   goal: at most 1.3x). Beside the times, each process's peak resident set (``ru_maxrss`` of
   that one child, from ``wait4``) and the hook's less the size of its payload: what reading
   the payload costs above ingest's own (the payload is parsed once, its text streamed to the
   spool a slice at a time and let go).

Both are run as a client runs them: a new process with the payload on stdin, the command
being this checkout's ``python -m scratch``. Not collected by pytest; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRATCH = [sys.executable, "-m", "scratch"]
SID = "00893aaf-19fa-41d2-8238-13269b9b3ca0"


def payload(stdout: str) -> bytes:
    base = json.loads((REPO / "tests" / "data" / "hooks" / "claude-code-bash.json").read_text())
    base["tool_response"]["stdout"] = stdout
    return json.dumps(base).encode()


def timed(argv: list[str], data: bytes | None, env: dict[str, str],
          stdin_file: Path | None = None) -> float:
    return measured(argv, data, env, stdin_file)[0]


def measured(argv: list[str], data: bytes | None, env: dict[str, str],
             stdin_file: Path | None = None) -> tuple[float, float]:
    """(seconds, peak resident set in MB) of one run of ``argv``: the payload written to its
    stdin from a thread (or a file as its stdin), the process reaped with ``wait4`` so the
    peak is this child's alone."""
    with tempfile.TemporaryFile() as err, (open(stdin_file, "rb") if stdin_file is not None
                                           else open(os.devnull, "rb")) as given:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdin=given if stdin_file is not None else
                                subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=err,
                                env=env)
        writer = None
        if stdin_file is None:
            def feed() -> None:
                assert proc.stdin is not None
                with proc.stdin:
                    proc.stdin.write(data or b"")
            writer = threading.Thread(target=feed)
            writer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        took = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if writer is not None:
            writer.join()
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(f"{argv} failed: {err.read().decode()[-500:]}")
    return took, usage.ru_maxrss / 1024  # Linux reports KiB


def big_text(mb: int) -> str:
    """M MB of access-log-like lines (text that ingest indexes as lines)."""
    line = ('10.0.{a}.{b} - - [06/Dec/2026:10:{m:02d}:{s:02d} +0000] "GET /api/v1/items/{i} '
            'HTTP/1.1" {code} {size} "-" "curl/8.5.0"\n')
    out = []
    size = 0
    i = 0
    while size < mb * 1_000_000:
        text = line.format(a=i % 256, b=i // 256 % 256, m=i // 60 % 60, s=i % 60, i=i,
                           code=500 if i % 97 == 0 else 200, size=1000 + i % 5000)
        out.append(text)
        size += len(text)
        i += 1
    return "".join(out)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    opts = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRATCH_")}
    env["PYTHONPATH"] = str(REPO)
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        small = payload("NAME READY STATUS\nweb-0 1/1 Running\n")
        hook = [*SCRATCH, "hook", "claude-code", "--store", str(store)]
        floor, ours = [], []
        for _ in range(opts.runs):
            floor.append(timed([sys.executable, "-c", "pass"], None, env))
            ours.append(timed(hook, small, env))
        f50, o50 = statistics.median(floor), statistics.median(ours)
        print(f"pass-through: p50 {o50 * 1000:.1f} ms; python3 -c pass p50 {f50 * 1000:.1f} ms;"
              f" ratio {o50 / f50:.2f} (goal <= 2)")

        text = big_text(opts.mb)
        raw = Path(tmp) / "output.txt"
        raw.write_text(text)
        data = payload(text)
        del text
        hooked, ingested, hook_rss, ingest_rss = [], [], [], []
        for r in range(opts.rounds):
            s1, s2 = Path(tmp) / f"h{r}", Path(tmp) / f"i{r}"
            took, rss = measured([*SCRATCH, "hook", "claude-code", "--timeout", "3600",
                                  "--store", str(s1)], data, env)
            hooked.append(took)
            hook_rss.append(rss)
            took, rss = measured([*SCRATCH, "--store", str(s2), "ingest", "--tool", "Bash"],
                                 None, env, stdin_file=raw)
            ingested.append(took)
            ingest_rss.append(rss)
        h, i = min(hooked), min(ingested)
        payload_mb = len(data) / 2**20
        print(f"store {len(data) / 1e6:.0f} MB payload ({raw.stat().st_size / 1e6:.0f} MB of "
              f"output): hook {h:.2f} s; scratch ingest {i:.2f} s; ratio {h / i:.2f} "
              "(goal <= 1.3)")
        print(f"peak RSS: hook {max(hook_rss):.0f} MB; scratch ingest {max(ingest_rss):.0f} MB"
              f"; the hook above ingest {max(hook_rss) - max(ingest_rss):.0f} MB for a "
              f"{payload_mb:.0f} MB payload ({(max(hook_rss) - max(ingest_rss)) / payload_mb:.2f}"
              " x its size)")


if __name__ == "__main__":
    main()
