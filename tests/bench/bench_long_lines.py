"""Benchmark: answers on one 50 MB line cost what they show (issue 21, point 1).

Run from the repository root:  python tests/bench/bench_long_lines.py [--mb 50] [--small-kb 100]
[--repeat 3] [--timeout 120] [--code DIR]

Generates its inputs (no corpus needed): a one-line text entry of words and spaces only (no
safe cut anywhere in the line: the worst case for cutting), and a JSON document that is one
object holding one string of the same words (stored reindented: the string is line 2), each at
``--mb`` MB and at ``--small-kb`` KB, with one NEEDLE word at 90% of the line for grep to find.
Every answer (a refusal counts as an answer) runs as a fresh ``python -m scratch`` process;
its wall time and peak RSS come from ``os.wait4`` (the child's own rusage). Prints, side by
side, the median time and the peak RSS on the small and on the big entry, their ratio, and
whether the big one is within the targets (1 s and 200 MB). ``--code DIR`` measures the
checkout at DIR instead (e.g. an older commit unpacked with ``git archive``). Not collected by
pytest (no ``test_`` prefix).

As an installed copy would run: the children may write bytecode (to a cache in the bench's
temporary directory, never into the checkout, whatever PYTHONDONTWRITEBYTECODE says), and one
untimed call warms that cache and the tokenizer's rank table before anything is measured.
The inputs are generated in a child process and kept in files, so no child inherits a big
parent (a forked child's peak RSS starts at its parent's).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SYLLABLES = ["lo", "rem", "ip", "sum", "do", "lor", "sit", "am", "et", "con", "sec", "te",
             "tur", "ad", "pi", "sc", "ing", "el", "it"]
TARGET_S = 1.0
TARGET_MB = 200


def words(size: int, seed: int) -> str:
    """~``size`` bytes of space-separated made-up words (no punctuation: no in-line safe cut),
    with ``NEEDLE`` at 90% of it."""
    rng = random.Random(seed)
    vocab = ["".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 4)))
             for _ in range(5000)]
    out: list[str] = []
    n = 0
    needle_at = int(size * 0.9)
    while n < size:
        w = rng.choice(vocab)
        if needle_at is not None and n >= needle_at:
            w, needle_at = "NEEDLE", None  # type: ignore[assignment]
        out.append(w)
        n += len(w) + 1
    return " ".join(out)


def commands(name: str, kind: str, line_bytes: int) -> list[list[str]]:
    mid = str(line_bytes // 2)
    if kind == "text":
        return [["head", name, "-n", "1"], ["head", name, "-n", "1", "--fit"],
                ["tail", name, "-n", "1"], ["tail", name, "-n", "1", "--fit"],
                ["slice", name, "1", "1", "--fit"],
                ["slice", name, "1", "1", "--from-byte", mid, "--fit"],
                ["slice", name, "1", "1", "--from-byte", mid, "--fit", "--json"],
                ["grep", name, "NEEDLE", "-m", "1"], ["grep", name, "NEEDLE", "-m", "1", "--json"],
                ["grep", name, "s[a-z]+NEEDLE|NEEDLE", "-m", "1"]]
    return [["slice", name, "2", "2"], ["slice", name, "2", "2", "--fit"],
            ["head", name, "-n", "3", "--fit"], ["tail", name, "-n", "2", "--fit"],
            ["slice", name, "2", "2", "--from-byte", mid, "--fit", "--json"],
            ["grep", name, "NEEDLE", "-m", "1"], ["grep", name, "NEEDLE", "-m", "1", "--json"]]


def generate(size: int, folder: Path) -> None:
    """The four inputs of one size, written by a child process (see the module)."""
    code = (f"import json, sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
            f"from bench_long_lines import words; "
            f"open({str(folder / 'text')!r}, 'w').write(words({size}, 1) + '\\n'); "
            f"open({str(folder / 'json')!r}, 'w').write(json.dumps({{'s': words({size}, 2)}}))")
    subprocess.run([sys.executable, "-c", code], check=True)


def run(code: Path, env: dict[str, str], args: list[str], timeout: float,
        stdin: Path | None = None) -> tuple[float, float, int, str]:
    """(seconds, peak RSS in MB, exit code, first stderr/stdout line) of one fresh process."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            open(stdin or os.devnull, "rb") as inp:
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "scratch", *args], cwd=code, env=env,
                                stdin=inp, stdout=out, stderr=err)
        deadline = t0 + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                return timeout, usage.ru_maxrss / 1024, -9, "timed out"
            time.sleep(0.005)
        took = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        first = (out.read(200) or err.read(200)).decode("utf-8", "replace").splitlines()
    return took, usage.ru_maxrss / 1024, proc.returncode, (first[0][:70] if first else "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=50)
    ap.add_argument("--small-kb", type=float, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--code", type=Path, default=REPO, help="the checkout to measure")
    ap.add_argument("--only", default="", help="run only the answers whose command line "
                    "contains one of these comma-separated strings")
    opts = ap.parse_args()
    code = opts.code.resolve()
    with tempfile.TemporaryDirectory(prefix="bench-long-lines-") as tmp:
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("SCRATCH_")
                  and k != "PYTHONDONTWRITEBYTECODE"},
               "PYTHONPYCACHEPREFIX": str(Path(tmp) / "pycache"),
               "SCRATCH_HOME": str(Path(tmp) / "store"), "PYTHONPATH": str(code),
               "SCRATCH_BUDGET_CONTEXT_WINDOW": "1000000000", "XDG_CACHE_HOME":
               str(Path(tmp) / "cache")}
        rows: list[tuple[str, list[str], str]] = []
        sizes = {"small": int(opts.small_kb * 1000), "big": int(opts.mb * 1_000_000)}
        for size_name, size in sizes.items():
            folder = Path(tmp) / size_name
            folder.mkdir()
            generate(size, folder)
            for kind, fmt in (("text", "text"), ("json", "json")):
                name = f"{kind}-{size_name}"
                took, rss, rc, first = run(code, env, ["ingest", name, "--store-always",
                                                       "--format", fmt],
                                           opts.timeout * 5, stdin=folder / kind)
                print(f"ingest {name}: {(folder / kind).stat().st_size:,} bytes, rc {rc}, "
                      f"{took:.1f} s, {rss:.0f} MB", file=sys.stderr)
                if rc != 0:
                    sys.exit(f"ingest of {name} failed: {first}")
                if size_name == "big":
                    rows += [(kind, c, name) for c in commands(name, kind, size)]
        run(code, env, ["slice", "text-small", "1", "1", "--fit"], opts.timeout)  # warm-up
        rows.append(("all", ["grep", "--all", "(a+)+$"], ""))
        rows.append(("all", ["grep", "--all", "NEEDLE", "-m", "1"], ""))
        print(f"{'answer':58} | {'100 KB s':>8} {'MB':>5} | {'50 MB s':>8} {'MB':>5} | "
              f"{'x time':>6} {'x RSS':>6} | within 1 s, 200 MB")
        print("-" * 120)
        fails = 0
        for _kind, big_args, _name in rows:
            line = " ".join(big_args).replace("-big", "")
            if opts.only and not any(w in line for w in opts.only.split(",")):
                continue
            small_args = [a.replace("-big", "-small") for a in big_args]
            if "--from-byte" in small_args:  # the middle of the small line
                i = small_args.index("--from-byte") + 1
                small_args[i] = str(sizes["small"] // 2)
            res = {}
            for label, args in (("small", small_args), ("big", big_args)):
                times, rsss, shown = [], [], ""
                for _ in range(opts.repeat):
                    took, rss, rc, first = run(code, env, args, opts.timeout)
                    times.append(took)
                    rsss.append(rss)
                    shown = f"rc {rc}: {first}"
                    if rc == -9:
                        break
                res[label] = (statistics.median(times), max(rsss), shown)
            s_t, s_m, _ = res["small"]
            b_t, b_m, b_shown = res["big"]
            ok = b_t <= TARGET_S and b_m <= TARGET_MB
            fails += not ok
            what = " ".join(big_args).replace("-big", "")
            print(f"{what[:58]:58} | {s_t:8.2f} {s_m:5.0f} | {b_t:8.2f} {b_m:5.0f} | "
                  f"{b_t / s_t:6.2f} {b_m / s_m:6.2f} | {'yes' if ok else 'NO'}  ({b_shown})",
                  flush=True)
        print(f"\n{fails} answer(s) outside the targets (median of {opts.repeat} cold runs; the "
              f"machine's load counts too: compare the 100 KB column)")


if __name__ == "__main__":
    main()
