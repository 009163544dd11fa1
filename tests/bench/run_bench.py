"""The benchmark of issue 7: scratch against the tools a user would otherwise reach for.

Run from the repository root with the interpreter scratch is installed in (a regular
``pip install .`` gives the figures users get; an editable install's import hook adds a few
milliseconds to every cold start, and the table's header says which kind was measured)::

    python tests/bench/run_bench.py [--quick] [--reps N] [--data-dir DIR] [--only P1,P3]
                                    [--write-results] [--keep] [--ingest-bytes N]
                                    [--ndjson-bytes N]

Inputs come from gen_inputs.py (cached in ``--data-dir``, default tests/bench/data/, which git
ignores): a PodList and a Loghub log of 100 MB (10 MB with ``--quick``) and 100 KB, and an NDJSON
stream of 1 GB (100 MB with ``--quick``, or ``--ndjson-bytes``) that is piped straight into
``scratch ingest``. P5 (issue 32) pipes a PodList of 188 MB (10 MB with ``--quick``, or
``--ingest-bytes``) into ``scratch ingest`` and into ``git hash-object -w --stdin``: laid out
with 2 spaces, as the corpus file is (ingest stores it as it is: it is the canonical layout),
and in a note the same size laid out as kubectl prints JSON (4 spaces: re-indented).

Every measurement runs ``--reps`` times (default 5; the 1 GB ingest once), scratch and its
baseline alternating in the same run, each run a new process (cold start; the page cache is
warmed once for both sides first), and the table shows medians. Peak RSS is the child's
``ru_maxrss`` from ``wait4``. Each run uses its own store (``SCRATCH_HOME`` in a temporary
directory, with quotas, limits and the budget raised so nothing is refused), its own
tokenizer cache and its own bytecode cache (``PYTHONPYCACHEPREFIX``; without one, an editable
install under ``PYTHONDONTWRITEBYTECODE=1`` recompiles scratch on every start).

Not collected by pytest (no ``test_`` prefix) and asserts nothing: a missed target is a FAIL
in the table, and the exit code is 0 unless the harness itself broke.
``--write-results`` writes tests/bench/RESULTS.md (the table, the machine, the date).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import IO, Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import gen_inputs  # noqa: E402

RESULTS = HERE / "RESULTS.md"
GREP_PATTERNS = [("literal", "refused"), ("regex", r"Invalid user [a-z]+ from")]
LOG_APPEND_LINES = 50_000
# Limits raised through the environment (SCRATCH_<SECTION>_<KEY>), not a scratch.toml: reading
# a config file costs every cold command ~2 ms (tomllib), which a user without one never pays.
CONFIG = {
    "budget.max_extraction_tokens": 1_000_000,
    "budget.context_window": 1_000_000_000_000,
    "limits.max_write_bytes": 4 << 30,
    "limits.max_ingest_bytes": 64 << 30,
    "quota.bytes": 1_000_000_000_000,
    "quota.files": 1_000_000,
    "quota.log_entries": 1_000_000_000,
}
# Only the budget raised: `scratch write` is measured with the default limits a user has.
CONFIG_DEFAULT_LIMITS = {k: v for k, v in CONFIG.items() if k.startswith("budget.")}


class BenchError(Exception):
    """A run that should have succeeded did not (its row says so; other rows go on)."""


@dataclass
class Run:
    wall: float  # seconds, spawn to reap
    rss_mb: float  # the child's peak resident set (ru_maxrss)
    out: bytes


@dataclass
class Row:
    id: str
    what: str
    n: int
    scratch: str
    baseline: str
    ratio: str
    target: str
    ok: bool | None  # None: not measured (skipped or broken)
    notes: list[str] = field(default_factory=list)


@dataclass
class Ctx:
    args: argparse.Namespace
    root: Path  # temporary directory of this run
    scratch: str  # the scratch console script
    python: str  # the interpreter it runs on
    env: dict[str, str]  # environment of scratch runs (SCRATCH_HOME = the main store)
    git_env: dict[str, str]  # environment of git baselines
    files: dict[str, Path] = field(default_factory=dict)
    meta: dict[str, dict[str, Any]] = field(default_factory=dict)

    def store(self, name: str, config: dict[str, int] = CONFIG) -> dict[str, str]:
        """The environment of scratch with a new store ``root/name`` and ``config`` set."""
        home = self.root / name
        home.mkdir()
        settings = {"SCRATCH_" + k.replace(".", "_").upper(): str(v) for k, v in config.items()}
        return {**self.env, **settings, "SCRATCH_HOME": str(home)}


# -- running things ----------------------------------------------------------------------------

def spawn(argv: Sequence[str], env: dict[str, str], *, stdin: Path | IO[bytes] | None = None,
          cwd: Path | None = None, check: bool = True) -> Run:
    """Run ``argv`` to completion; stdout and stderr go to files (the same for both sides)."""
    if isinstance(stdin, Path):
        with open(stdin, "rb") as fin:
            return spawn(argv, env, stdin=fin, cwd=cwd, check=check)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdin=stdin if stdin is not None else subprocess.DEVNULL,
                                stdout=out, stderr=err, env=env, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)  # Popen must not reap it again
        out.seek(0)
        err.seek(0)
        data = out.read()
        if check and proc.returncode != 0:
            tail = err.read().decode(errors="replace").strip().splitlines()[-5:]
            raise BenchError(f"{' '.join(argv[:4])} ... exited {proc.returncode}: "
                             + " | ".join(tail))
    return Run(wall, usage.ru_maxrss / 1024, data)


def alternate(reps: int, sides: Sequence[Callable[[], Run]]) -> list[list[Run]]:
    """``reps`` runs of every side, the order rotated each rep so no side always goes first."""
    runs: list[list[Run]] = [[] for _ in sides]
    for r in range(reps):
        k = r % len(sides)
        for i in list(range(k, len(sides))) + list(range(k)):
            runs[i].append(sides[i]())
    return runs


def med(runs: list[Run]) -> float:
    return statistics.median(r.wall for r in runs)


def warm(*paths: Path) -> None:
    """Read files once so both sides find them in the page cache."""
    for p in paths:
        with open(p, "rb") as fh:
            while fh.read(1 << 24):
                pass


def spread(*sides: list[Run]) -> str:
    """Each side's fastest and slowest run, so a noisy median shows itself."""
    return "runs " + " / ".join(f"{fmt_s(min(r.wall for r in rs))}-{fmt_s(max(r.wall for r in rs))}"
                                for rs in sides)


def fmt_s(s: float) -> str:
    return f"{s * 1000:.0f} ms" if s < 10 else f"{s:.1f} s"


def progress(msg: str) -> None:
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


# -- setup -----------------------------------------------------------------------------------

def find_scratch() -> tuple[str, str]:
    """The scratch script next to this interpreter (else on PATH) and the Python it runs on."""
    exe = Path(sys.executable).parent / "scratch"
    if not exe.exists():
        found = shutil.which("scratch")
        if not found:
            sys.exit("scratch is not installed next to this Python nor on PATH")
        exe = Path(found)
    first = exe.read_bytes().split(b"\n", 1)[0]
    python = first[2:].strip().decode() if first.startswith(b"#!") else ""
    if not python or " " in python or not Path(python).exists():
        python = sys.executable
    return str(exe), python


def sizes(quick: bool) -> dict[str, int]:
    big = 10_000_000 if quick else 100_000_000
    return {"pods-big": big, "pods-small": 100_000, "log-big": big, "log-small": 100_000,
            "ndjson-small": 100_000, "ndjson-stream": 100_000_000 if quick else 1_000_000_000}


def prepare(ctx: Ctx, needed: set[str]) -> None:
    """Generate (or reuse) the input files and ingest the ones the measurements read."""
    sz = sizes(ctx.args.quick)
    for key in sorted(needed):
        kind, _, which = key.partition("-")
        if which == "stream":
            continue
        t0 = time.perf_counter()
        path, meta = gen_inputs.ensure(kind, sz[key], ctx.args.data_dir)
        ctx.files[key], ctx.meta[key] = path, meta
        progress(f"input {key}: {path.name}, {meta['bytes']:,} bytes "
                 f"({time.perf_counter() - t0:.1f} s)")
    for key in sorted(needed & {"pods-big", "pods-small", "log-big", "log-small"}):
        t0 = time.perf_counter()
        run = spawn([ctx.scratch, "--json", "ingest", key, "--store-always"], ctx.env,
                    stdin=ctx.files[key])
        data = json.loads(run.out)["data"]
        ctx.meta[key]["stored_lines"] = data["lines"]
        progress(f"ingested {key}: {data['lines']:,} lines, {data['tokens']:,} tokens "
                 f"({time.perf_counter() - t0:.1f} s, peak RSS {run.rss_mb:.0f} MB)")


# -- measurements ------------------------------------------------------------------------------

def probe_commands(ctx: Ctx, key: str) -> dict[str, list[str]]:
    """The P1/P2 commands on entry ``key``: the middle of the file for slice and get-in."""
    lines, items = ctx.meta[key]["stored_lines"], ctx.meta[key]["items"]
    mid = max(1, lines // 2)
    return {"head": ["head", key, "-n", "50"],
            "slice": ["slice", key, str(mid), str(mid + 49)],
            "get-in": ["get-in", key, f"items.{get_in_index(items)}.metadata"],
            "schema": ["schema", key]}


def get_in_index(items: int) -> int:
    """items.5000 as the issue says, or the middle item of a smaller (--quick) list."""
    return 5000 if items > 5000 else items // 2


def bench_p1_p2(ctx: Ctx) -> list[Row]:
    reps = ctx.args.reps
    small, big = probe_commands(ctx, "pods-small"), probe_commands(ctx, "pods-big")
    typer = [ctx.python, "-c", "import typer"]
    sides: list[Callable[[], Run]] = [partial(spawn, typer, ctx.env)]
    for name in small:
        sides.append(partial(spawn, [ctx.scratch, *small[name]], ctx.env))
        sides.append(partial(spawn, [ctx.scratch, *big[name]], ctx.env))
    for side in sides:  # warm-up, untimed
        side()
    progress(f"P1/P2: {reps} x {len(sides)} cold processes")
    runs = alternate(reps, sides)
    base = med(runs[0])
    rows = []
    p2 = []
    for i, name in enumerate(small):
        rs, rb = runs[1 + 2 * i], runs[2 + 2 * i]
        ratio = med(rs) / base
        rows.append(Row("P1", f"cold `{' '.join(small[name])}` (100 KB) vs `import typer`", reps,
                        fmt_s(med(rs)), fmt_s(base), f"{ratio:.2f}x", "<= 1.5x", ratio <= 1.5,
                        [f"peak RSS {max(r.rss_mb for r in rs):.0f} MB", spread(rs, runs[0])]))
        ratio2 = med(rb) / med(rs)
        p2.append(Row("P2", f"`{' '.join(big[name])}` ({label(ctx, 'pods-big')}) vs 100 KB",
                      reps, fmt_s(med(rb)), fmt_s(med(rs)), f"{ratio2:.2f}x", "<= 1.1x",
                      ratio2 <= 1.1, [f"big vs import typer: {med(rb) / base:.2f}x",
                                      f"peak RSS {max(r.rss_mb for r in rb):.0f} MB",
                                      spread(rb, rs)]))
    return rows + p2


def label(ctx: Ctx, key: str) -> str:
    return f"{ctx.meta[key]['bytes'] / 1e6:.0f} MB"


def bench_p3_p7b(ctx: Ctx) -> list[Row]:
    reps, items = ctx.args.reps, ctx.meta["pods-big"]["items"]
    k = get_in_index(items)
    mine = [ctx.scratch, "get-in", "pods-big", f"items.{k}.metadata"]
    def rss_row(runs: list[Run]) -> Row:
        rss = max(r.rss_mb for r in runs)
        return Row("P7", f"peak RSS of `scratch get-in pods-big items.{k}.metadata` "
                         f"({label(ctx, 'pods-big')} entry)", len(runs),
                   f"{rss:.0f} MB", "-", "-", "<= 64 MB", rss <= 64)

    def page_row() -> Row:
        # paging a whole item list: a page deep into the 100 MB subtree, read from its lines
        # --offset counts items (bytes // 100 once counted lines: past the end now)
        offset = ctx.meta["pods-big"]["items"] * 9 // 10
        page = [ctx.scratch, "get-in", "pods-big", "items", "--offset", str(offset),
                "--limit", "50"]
        progress(f"P7: {reps} x get-in pods-big items --offset {offset} --limit 50")
        runs = alternate(reps, [partial(spawn, page, ctx.env)])[0]
        rss = max(r.rss_mb for r in runs)
        return Row("P7", f"peak RSS of `scratch get-in pods-big items --offset {offset} "
                         f"--limit 50` ({label(ctx, 'pods-big')} entry)", reps,
                   f"{rss:.0f} MB", "-", "-", "<= 64 MB", rss <= 64,
                   [f"median wall {fmt_s(med(runs))}"])

    if not shutil.which("jq"):
        alone = alternate(reps, [partial(spawn, mine, ctx.env)])[0]
        return [Row("P3", "get-in vs jq", 0, "-", "-", "-", ">= 10x faster", None,
                    ["jq is not installed (apt-get install -y jq); skipped"]), rss_row(alone),
                page_row()]
    jq = ["jq", f".items[{k}].metadata", str(ctx.files["pods-big"])]
    warm(ctx.files["pods-big"])
    a, b = spawn(mine, ctx.env), spawn(jq, ctx.git_env)
    same = json.loads(a.out) == json.loads(b.out)
    progress(f"P3: {reps} x get-in and jq on {label(ctx, 'pods-big')}")
    runs = alternate(reps, [partial(spawn, mine, ctx.env), partial(spawn, jq, ctx.git_env)])
    speed = med(runs[1]) / med(runs[0])
    return [
        Row("P3", f"`scratch get-in pods-big items.{k}.metadata` vs "
                  f"`jq '.items[{k}].metadata'` ({label(ctx, 'pods-big')})", reps,
            fmt_s(med(runs[0])), fmt_s(med(runs[1])), f"{speed:.1f}x faster", ">= 10x faster",
            speed >= 10 and same, [f"same value: {same}", spread(*runs),
                                   f"jq peak RSS {max(r.rss_mb for r in runs[1]):.0f} MB"]),
        rss_row(runs[0]),
        page_row(),
    ]


def bench_p4(ctx: Ctx) -> list[Row]:
    reps, log = ctx.args.reps, ctx.files["log-big"]
    warm(log)
    rows = []
    for kind, pat in GREP_PATTERNS:
        mine = [ctx.scratch, "grep", "log-big", pat] + (["-F"] if kind == "literal" else [])
        theirs = ["grep", "-n", "-F" if kind == "literal" else "-E", pat, str(log)]
        a, b = spawn(mine, ctx.env), spawn(theirs, ctx.git_env)
        got = re.findall(rb"^(\d+):", a.out, re.M)
        want = re.findall(rb"^(\d+):", b.out, re.M)
        same = got == want
        progress(f"P4 {kind}: {len(want):,} matches, {reps} x scratch grep and grep -n")
        runs = alternate(reps, [partial(spawn, mine, ctx.env),
                                partial(spawn, theirs, ctx.git_env)])
        ratio = med(runs[0]) / med(runs[1])
        rows.append(Row("P4", f"`scratch grep log-big {pat!r}{' -F' if kind == 'literal' else ''}`"
                              f" vs `{shlex.join(theirs[:-1])}` ({label(ctx, 'log-big')} log)",
                        reps,
                        fmt_s(med(runs[0])), fmt_s(med(runs[1])), f"{ratio:.2f}x", "<= 1.5x",
                        ratio <= 1.5 and same,
                        [f"{len(want):,} matches; same line numbers: {same}"
                         + ("" if same else f" (scratch {len(got):,})"), spread(*runs)]))
    return rows


def warm_token_cache(ctx: Ctx) -> None:
    """One small ingest with the bench's cache directory, so measured runs find the
    tokenizer's cache built (as every run after a user's first does): the first run ever
    builds it from the verified ranks, ~65 MB more resident than loading it, which the peak
    RSS of a 50 MB ingest showed instead of the ingest's own (210 MB against 146 MB)."""
    doc = ctx.root / "warm-tokens.json"
    doc.write_text(json.dumps({"items": [{"name": f"warm-{i}"} for i in range(2000)]}))
    env = ctx.store(f"warm-tokens-{os.getpid()}-{time.monotonic_ns()}")
    try:
        spawn([ctx.scratch, "ingest", "warm", "--store-always"], env, stdin=doc)
    finally:
        shutil.rmtree(env["SCRATCH_HOME"])


def bench_p5(ctx: Ctx) -> list[Row]:
    """Issue 32's figure: ingest of a PodList (188 MB unless ``--ingest-bytes``) piped, against
    ``git hash-object -w --stdin`` of the same bytes piped, alternating; and ingest's peak RSS."""
    reps = ctx.args.reps
    src, meta = gen_inputs.ensure("pods", int(ctx.args.ingest_bytes), ctx.args.data_dir)
    what = f"{meta['bytes'] / 1e6:.0f} MB"
    # the same size as kubectl prints JSON (4 spaces): re-indented, where the 2-space file is
    # already the stored form and is stored as it is
    spaced, _ = gen_inputs.ensure("pods4", int(ctx.args.ingest_bytes), ctx.args.data_dir)
    warm(src)
    warm(spaced)
    warm_token_cache(ctx)
    counter = iter(range(1_000_000))

    def mine(*flags: str, given: Path = src) -> Run:
        env = ctx.store(f"p5-store-{next(counter)}")
        try:
            return spawn([ctx.scratch, "ingest", "pods", "--store-always", *flags], env,
                         stdin=given)
        finally:
            shutil.rmtree(env["SCRATCH_HOME"])

    def theirs(given: Path = src) -> Run:
        repo = ctx.root / f"p5-git-{next(counter)}"
        subprocess.run(["git", "init", "-q", str(repo)], check=True, env=ctx.git_env)
        try:
            return spawn(["git", "hash-object", "-w", "--stdin"], ctx.git_env, cwd=repo,
                         stdin=given)
        finally:
            shutil.rmtree(repo)

    without = pure_tree(ctx)

    def pure() -> Run:  # as installed where no compiler built the C accelerators
        env = {**ctx.store(f"p5-store-{next(counter)}"), "PYTHONPATH": str(without)}
        try:
            # run from the copy: a checkout in the current directory would come first
            return spawn([ctx.python, "-m", "scratch", "ingest", "pods", "--store-always"],
                         env, stdin=src, cwd=without)
        finally:
            shutil.rmtree(env["SCRATCH_HOME"])

    progress(f"P5: {reps} x ingest (C, pure Python, C without the secret scan) and git "
             f"hash-object -w --stdin of {what}")
    runs = alternate(reps, [mine, theirs, pure, partial(mine, "--no-redact"),
                            partial(mine, given=spaced), partial(theirs, spaced)])
    ratio = med(runs[0]) / med(runs[1])
    kubectl = med(runs[4]) / med(runs[5])
    rss = max(r.rss_mb for r in runs[0])
    slower = med(runs[2]) / med(runs[0])
    unscanned = med(runs[3])
    return [Row("P5", f"`scratch ingest` vs `git hash-object -w --stdin` ({what} PodList, both "
                      "piped)", reps, fmt_s(med(runs[0])), fmt_s(med(runs[1])), f"{ratio:.2f}x",
                "<= 1.5x", ratio <= 1.5,
                [f"ingest peak RSS {rss:.0f} MB", spread(*runs[:2]),
                 f"without the secret scan (--no-redact, issue 27's work): {fmt_s(unscanned)}, "
                 f"{unscanned / med(runs[1]):.2f}x",
                 f"as kubectl lays it out (4 spaces, re-indented; {spaced.stat().st_size / 1e6:.0f}"
                 f" MB): {fmt_s(med(runs[4]))} against git's {fmt_s(med(runs[5]))}, "
                 f"{kubectl:.2f}x (peak RSS {max(r.rss_mb for r in runs[4]):.0f} MB)"]),
            Row("P5", f"peak RSS of `scratch ingest` of the {what} PodList", reps,
                f"{rss:.0f} MB", "-", "-", "<= 256 MB", rss <= 256),
            Row("P5", f"pure-Python `scratch ingest` (no C accelerator) vs with it ({what})",
                reps, fmt_s(med(runs[2])), fmt_s(med(runs[0])), f"{slower:.2f}x", "<= 3x",
                slower <= 3, [f"pure-Python peak RSS {max(r.rss_mb for r in runs[2]):.0f} MB",
                              spread(runs[2], runs[0])])]


def pure_tree(ctx: Ctx) -> Path:
    """A copy of the scratch package these runs import, without its C accelerators: scratch
    as installed where no compiler built them (every caller takes its pure-Python twin). A
    copy, not an import hook, so that the child processes scratch starts (the secret scan,
    the line pass) run without them too."""
    found = subprocess.run([ctx.python, "-c", "import scratch; print(scratch.__file__)"],
                           env=ctx.env, capture_output=True, text=True, check=True)
    package = Path(found.stdout.strip()).parent
    root = ctx.root / "pure-python"
    if not (root / "scratch").is_dir():
        shutil.copytree(package, root / "scratch",
                        ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__"))
    check = subprocess.run([ctx.python, "-c", "import scratch.reindent as r; print(r.HAVE_C)"],
                           env={**ctx.env, "PYTHONPATH": str(root)}, cwd=root,
                           capture_output=True, text=True, check=True)
    if check.stdout.strip() != "False":
        raise RuntimeError(f"the copy without accelerators still finds them: {root}")
    return root


TIKTOKEN_REF = """\
import sys, time
from scratch.tokens import get_tokenizer
enc = get_tokenizer("o200k_base").encoding  # built from the verified ranks, as scratch does
with open(sys.argv[1], encoding="utf-8") as fh:
    text = fh.read()
t0 = time.perf_counter()
n = len(enc.encode_ordinary(text))  # one thread
print(n, time.perf_counter() - t0)
"""


def bench_p6(ctx: Ctx) -> list[Row]:
    reps, src = ctx.args.reps, ctx.files["pods-big"]
    warm(src)
    mine = [ctx.scratch, "tokens", str(src)]
    ref = [ctx.python, "-c", TIKTOKEN_REF, str(src)]
    spawn(mine, ctx.env)
    progress(f"P6: {reps} x scratch tokens and tiktoken on {label(ctx, 'pods-big')}")
    runs = alternate(reps, [partial(spawn, mine, ctx.env), partial(spawn, ref, ctx.env)])
    counts = {int(r.out.split()[0]) for r in runs[0]}
    ref_counts = {int(r.out.split()[0]) for r in runs[1]}
    ref_s = statistics.median(float(r.out.split()[1]) for r in runs[1])
    same = len(counts) == 1 and counts == ref_counts
    speed = ref_s / med(runs[0])
    mb = ctx.meta["pods-big"]["bytes"] / 1e6
    return [Row("P6", f"`scratch tokens` (cold process) vs tiktoken `encode_ordinary`, 1 thread, "
                      f"encoding already built ({label(ctx, 'pods-big')} JSON)", reps,
                f"{fmt_s(med(runs[0]))} ({mb / med(runs[0]):.0f} MB/s)",
                f"{fmt_s(ref_s)} ({mb / ref_s:.0f} MB/s)", f"{speed:.1f}x faster",
                ">= 5x faster", speed >= 5 and same,
                [f"count {min(counts):,}; identical to tiktoken: {same}",
                 f"scratch tokens peak RSS {max(r.rss_mb for r in runs[0]):.0f} MB",
                 spread(runs[0]) + " (tiktoken: encode time only, in-process)"])]


def bench_p7a(ctx: Ctx) -> list[Row]:
    target = int(ctx.args.ndjson_bytes or sizes(ctx.args.quick)["ndjson-stream"])
    small = ctx.files["ndjson-small"]
    warm_token_cache(ctx)
    env = ctx.store("p7-store")
    try:
        tiny = spawn([ctx.scratch, "ingest", "nd-small", "--store-always"], env, stdin=small)
        progress(f"P7: ingest of a {target / 1e9:g} GB NDJSON stream (once)")
        gen = subprocess.Popen([ctx.python, str(HERE / "gen_inputs.py"), "ndjson",
                                "--bytes", str(target)], stdout=subprocess.PIPE, env=ctx.env)
        assert gen.stdout is not None
        try:
            run = spawn([ctx.scratch, "--json", "ingest", "nd-big", "--store-always"], env,
                        stdin=gen.stdout)
        finally:
            gen.stdout.close()
            gen.wait()
        data = json.loads(run.out)["data"]
    finally:
        shutil.rmtree(env["SCRATCH_HOME"])
    return [Row("P7", f"peak RSS of `scratch ingest` of a {data['bytes'] / 1e9:.2f} GB NDJSON "
                      "stream", 1, f"{run.rss_mb:.0f} MB", "-", "-", "<= 256 MB",
                run.rss_mb <= 256,
                [f"{data['lines']:,} records, {data['tokens']:,} tokens, format "
                 f"{data['format']}, {fmt_s(run.wall)} wall ({data['bytes'] / 1e6 / run.wall:.0f}"
                 " MB/s incl. the generator)",
                 f"ingest of the 100 KB NDJSON: peak RSS {tiny.rss_mb:.0f} MB"])]


def bench_p8(ctx: Ctx) -> list[Row]:
    reps = ctx.args.reps
    lines_file = ctx.root / "append-lines.txt"
    with open(ctx.files["log-big"], "rb") as fh:
        lines = [ln for ln in (fh.readline() for _ in range(LOG_APPEND_LINES)) if ln.strip()]
    lines_file.write_bytes(b"".join(lines))
    n = len(lines)
    names = iter(range(1_000_000))
    progress(f"P8: {reps} x log append --lines of {n:,} lines")
    runs = alternate(reps, [lambda: spawn([ctx.scratch, "log", "append", f"bench{next(names)}",
                                           "--lines"], ctx.env, stdin=lines_file)])[0]
    rate = n / med(runs)
    return [Row("P8", f"`scratch log append --lines` of {n:,} log lines", reps,
                f"{rate:,.0f} entries/s", "-", "-", ">= 20,000 entries/s", rate >= 20_000,
                [f"median {fmt_s(med(runs))}", spread(runs)])]


def bench_p8_write(ctx: Ctx) -> list[Row]:
    reps = ctx.args.reps
    env = ctx.store("p8-store", CONFIG_DEFAULT_LIMITS)
    small = ctx.files["log-small"].read_bytes()[:2048]
    small = small[:small.rfind(b"\n") + 1]
    repo = ctx.root / "p8-git"
    subprocess.run(["git", "init", "-q", str(repo)], check=True, env=ctx.git_env)
    mine_file, their_file = ctx.root / "note.md", repo / "note.md"
    version = iter(range(1_000_000))

    def mine() -> Run:
        mine_file.write_bytes(b"rev %d\n" % next(version) + small)
        return spawn([ctx.scratch, "write", "notes/note.md", str(mine_file)], env)

    def theirs() -> Run:
        i = next(version)
        their_file.write_bytes(b"rev %d\n" % i + small)
        a = spawn(["git", "add", "note.md"], ctx.git_env, cwd=repo)
        b = spawn(["git", "commit", "-q", "-m", f"rev {i}"], ctx.git_env, cwd=repo)
        return Run(a.wall + b.wall, max(a.rss_mb, b.rss_mb), b"")

    mine(), theirs()  # warm-up: the first version of each
    progress(f"P8: {reps} x scratch write and git add + commit")
    runs2 = alternate(reps, [mine, theirs])
    ratio = med(runs2[0]) / med(runs2[1])
    return [Row("P8", f"cold `scratch write` of a ~{len(small):,}-byte file vs "
                      "`git add` + `git commit`", reps, fmt_s(med(runs2[0])),
                fmt_s(med(runs2[1])), f"{ratio:.2f}x", "<= 1.5x", ratio <= 1.5,
                ["store with the default limits (budget raised only)", spread(*runs2)])]


BLOCKS: list[tuple[set[str], set[str], Callable[[Ctx], list[Row]]]] = [
    ({"P1", "P2"}, {"pods-big", "pods-small"}, bench_p1_p2),
    ({"P3", "P7"}, {"pods-big"}, bench_p3_p7b),
    ({"P4"}, {"log-big"}, bench_p4),
    ({"P5"}, set(), bench_p5),
    ({"P6"}, {"pods-big"}, bench_p6),
    ({"P7"}, {"ndjson-small"}, bench_p7a),
    ({"P8"}, {"log-big"}, bench_p8),
    ({"P8"}, {"log-small"}, bench_p8_write),
]


# -- report ----------------------------------------------------------------------------------

HEAD = ["id", "what", "n", "scratch (median)", "baseline (median)", "ratio", "target", "result"]


def cells(row: Row) -> list[str]:
    res = {True: "pass", False: "FAIL", None: "skipped"}[row.ok]
    return [row.id, row.what, str(row.n), row.scratch, row.baseline, row.ratio, row.target, res]


def text_table(rows: list[Row]) -> str:
    table = [HEAD] + [cells(r) for r in rows]
    widths = [min(max(len(c[i]) for c in table), 70 if i == 1 else 40) for i in range(len(HEAD))]
    out = []
    for n, c in enumerate(table):
        out.append("  ".join(x.ljust(w) if len(x) <= w else x[:w - 1] + "…"
                             for x, w in zip(c, widths)).rstrip())
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def md_table(rows: list[Row]) -> str:
    out = ["| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
    for r in rows:
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells(r)) + " |")
    return "\n".join(out)


def machine(python: str) -> dict[str, str]:
    def first(cmd: list[str]) -> str:
        try:
            return subprocess.run(cmd, capture_output=True, text=True).stdout.splitlines()[0]
        except (OSError, IndexError):
            return "not found"

    def field_of(path: str, key: str) -> str:
        try:
            text = Path(path).read_text()
        except OSError:
            return "?"
        return next((ln.split(":", 1)[1].strip() for ln in text.splitlines()
                     if ln.startswith(key)), "?")

    mem = field_of("/proc/meminfo", "MemTotal")
    if mem.endswith(" kB"):
        mem = f"{int(mem[:-3]) / 1024 / 1024:.1f} GiB"
    cpu = field_of("/proc/cpuinfo", "model name")
    return {"cpus (nproc)": str(os.cpu_count()), "cpu": cpu, "memory": mem,
            "os": f"{platform.system()} {platform.release()}",
            "python": first([python, "-VV"]), "git": first(["git", "--version"]),
            "jq": first(["jq", "--version"]), "grep": first(["grep", "--version"]),
            "locale": os.environ.get("LC_ALL") or os.environ.get("LANG") or "unset",
            "load average at start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
            "scratch install": install_kind(python)}


def install_kind(python: str) -> str:
    """'editable' or 'regular': an editable install's import hook costs every cold start
    a few milliseconds that a `pip install .` user does not pay."""
    code = ("import importlib.metadata as m, json; t = m.distribution('scratch')"
            ".read_text('direct_url.json') or '{}'; "
            "print(json.loads(t).get('dir_info', {}).get('editable', False))")
    out = subprocess.run([python, "-c", code], capture_output=True, text=True,
                         cwd="/").stdout.strip()  # not a build tree's egg-info
    return {"True": "editable (pip install -e)", "False": "regular (pip install .)"}.get(
        out, "unknown")


def write_results(rows: list[Row], info: dict[str, str], args: argparse.Namespace,
                  elapsed: float) -> None:
    cmd = "python tests/bench/run_bench.py" + (" --quick" if args.quick else "") + \
        (f" --reps {args.reps}" if args.reps != 5 else "") + \
        (f" --only {args.only}" if args.only else "") + " --write-results"
    notes = [f"- **{r.id}** {r.what}: " + "; ".join(r.notes) for r in rows if r.notes]
    text = "\n".join([
        "# Benchmark results",
        "",
        f"Written by `{cmd}` on {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC "
        f"({elapsed / 60:.1f} min). Medians of n cold runs, scratch and baseline alternating "
        "in the same run; ratio is scratch/baseline unless it says faster "
        "(baseline/scratch). See the docstring of run_bench.py for the method.",
        "",
        md_table(rows),
        "",
        "Notes:",
        "",
        *notes,
        "",
        "Machine (shared with other work while this ran, so runs of a few hundred ms are "
        "noisy: compare the run ranges in the notes, or rerun with more --reps):",
        "",
        *[f"- {k}: {v}" for k, v in info.items()],
        "",
    ])
    RESULTS.write_text(text)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10 MB / 100 MB inputs: a smoke run")
    ap.add_argument("--reps", type=int, default=5, help="runs per measurement (default 5)")
    ap.add_argument("--data-dir", type=Path, default=HERE / "data", help="input cache")
    ap.add_argument("--only", default="", help="comma-separated ids, e.g. P1,P3")
    ap.add_argument("--write-results", action="store_true", help=f"write {RESULTS.name}")
    ap.add_argument("--keep", action="store_true", help="keep the temporary stores")
    ap.add_argument("--ingest-bytes", type=float, default=None,
                    help="P5's PodList size (default 188e6, 10e6 with --quick)")
    ap.add_argument("--ndjson-bytes", type=float, default=None,
                    help="P7's NDJSON stream size (default 1e9, 1e8 with --quick)")
    args = ap.parse_args()
    if args.ingest_bytes is None:
        args.ingest_bytes = 10e6 if args.quick else 188e6
    if args.reps < 1:
        ap.error("--reps must be at least 1")
    only = {x.strip().upper() for x in args.only.split(",") if x.strip()}
    unknown = only - {f"P{i}" for i in range(1, 9)}
    if unknown:
        ap.error(f"unknown ids: {', '.join(sorted(unknown))} (P1 .. P8)")
    gen_inputs.corpus_dir()  # exits with a message when the corpus is absent
    scratch, python = find_scratch()
    info = machine(python)
    started = time.perf_counter()
    root = Path(tempfile.mkdtemp(prefix="scratch-bench-"))
    base_env = {k: v for k, v in os.environ.items()
                if not k.startswith("SCRATCH_") and k not in ("GIT_DIR", "GIT_WORK_TREE")}
    git_env = {**base_env, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.org",
               "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.org",
               "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    # Bytecode is cached as after a normal install even where PYTHONDONTWRITEBYTECODE is set
    # (an editable install then compiles every scratch module on every start, ~50 ms); the
    # prefix keeps the .pyc files out of the checkout. Both sides use it and are warmed first.
    base_env.pop("PYTHONDONTWRITEBYTECODE", None)
    base_env["PYTHONPYCACHEPREFIX"] = str(root / "pycache")
    env = {**base_env, "NO_COLOR": "1", "XDG_CACHE_HOME": str(root / "xdg-cache")}
    ctx = Ctx(args, root, scratch, python, env, git_env)
    ctx.env = ctx.store("store")
    blocks = [b for b in BLOCKS if not only or b[0] & only]
    rows: list[Row] = []
    try:
        prepare(ctx, set().union(*(b[1] for b in blocks)))
        for ids, _, fn in blocks:
            try:
                got = fn(ctx)
            except BenchError as exc:
                got = [Row(i, "broken run", 0, "-", "-", "-", "-", False, [str(exc)])
                       for i in sorted(ids)]
            got = [r for r in got if not only or r.id in only]
            rows += got
            print(text_table(got), file=sys.stderr)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
        else:
            progress(f"stores kept in {root}")
    rows.sort(key=lambda r: r.id)
    elapsed = time.perf_counter() - started
    print(text_table(rows))
    print()
    for r in rows:
        for note in r.notes:
            print(f"{r.id}: {note}")
    print(f"\n{sum(r.ok is True for r in rows)} of {len(rows)} pass; {elapsed / 60:.1f} min")
    info["load average at end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    if args.write_results:
        write_results(rows, info, args, elapsed)
        print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
