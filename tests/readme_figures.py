"""Every figure the README states, made by this script (and checked by tests/test_readme.py).

    python tests/readme_figures.py            # print each figure as the README should say it
    python tests/readme_figures.py --check    # exit 1 (and say where) when the README differs
    python tests/readme_figures.py --write    # put the figures into the README

A figure is a piece of README text between ``<!-- figure:NAME -->`` and ``<!-- /figure -->``
(the markers are invisible on a rendered page). Each is made here from what it describes:
the included sample, a fresh store running the README's own commands, the declared commands
and toolsets, and the corpus (``../shared/corpus`` or ``$SCRATCH_CORPUS``) for the pointer
table. A figure that needs the corpus is left as it is when the corpus is absent, and its
test skips.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
SAMPLE = REPO / "scratch" / "samples" / "pods.json"
ENCODING = "o200k_base"
FIGURE = re.compile(r"<!-- figure:([a-z-]+) -->(.*?)<!-- /figure -->", re.DOTALL)


def corpus_dir() -> Path:
    """The corpus, as the tests find it (tests/conftest.py): ``$SCRATCH_CORPUS`` first."""
    given = os.environ.get("SCRATCH_CORPUS")
    return Path(given) if given else REPO.parent / "shared" / "corpus"


def _tokens(text: str) -> int:
    from scratch.tokens.models import EncodingSpec
    from scratch.tokens.tokenizer import count_text
    return count_text(text, EncodingSpec(ENCODING, None, ENCODING))


def _scratch(home: Path, *args: str, data: bytes | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRATCH_")}
    env.update(SCRATCH_HOME=str(home), PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "scratch", *args], input=data and
                          data.decode("utf-8", "surrogateescape"), capture_output=True,
                          text=True, env=env, cwd=REPO, check=False, timeout=300)


def _thousands(n: int) -> str:
    return f"{round(n / 1000):,}k"


def sample() -> str:
    """The included sample: how many pods, how many tokens."""
    pods = len(json.loads(SAMPLE.read_bytes())["items"])
    return (f"a {pods}-pod `kubectl get pods -A -o json` listing, "
            f"{_thousands(_tokens(SAMPLE.read_text()))} tokens")


def footer() -> str:
    """The footer of the tour's second command, in a fresh store, after its first."""
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "store"
        stored = _scratch(home, "ingest", "--tool", "kubectl_get_pods", data=SAMPLE.read_bytes())
        assert stored.returncode == 0, stored.stderr
        shown = _scratch(home, "schema", "kubectl_get_pods", "--depth", "2")
        assert shown.returncode == 0, shown.stderr
    line = [x for x in shown.stderr.splitlines() if x.startswith("-- ")][-1]
    return f"`{line}`"


def toolsets() -> str:
    """What the default toolset of ``scratch mcp serve`` costs the client's context."""
    sys.path.insert(0, str(REPO / "tests" / "bench"))
    from bench_tool_list import tool_list_tokens
    tools, tokens = tool_list_tokens("explore", ENCODING)
    return f"`--tools explore` by default ({tools} tools, {tokens:,} tokens)"


def guide() -> str:
    """The length of the guide handed to an agent."""
    with tempfile.TemporaryDirectory() as tmp:
        out = _scratch(Path(tmp) / "store", "guide")
    assert out.returncode == 0, out.stderr
    return f"`scratch guide` prints a guide to hand to an agent ({_tokens(out.stdout):,} tokens)"


# The README's pointer table: label, corpus path, format as ingest names it
POINTER_ROWS = [
    ("kubelet's pods (Sonobuoy, kube-system)", "k8s/sonobuoy/kube-system_Pods.json"),
    ("GitHub issues API, paginated", "github/octokit-fixtures/paginate-issues.raw-fixture.json"),
    ("OpenSSH auth log, 2,000 lines", "logs/loghub/OpenSSH_2k.log"),
    ("country codes", "csv/country-codes.csv"),
    ("journald export", "ndjson/journald_ip-10-0-9-206.ndjson"),
    ("Kubernetes OpenAPI spec, one 3 MB line",
     "json/minified/kubernetes-openapi-v1.14-aggregated.json"),
]


def pointer_table() -> str | None:
    """Tokens of each output as received against tokens of the pointer ``scratch ingest``
    prints instead (stdout, as the agent reads it). None without the corpus."""
    corpus = corpus_dir()
    if not corpus.is_dir():
        return None
    rows = ["| output | format | output tokens | pointer tokens | share |",
            "| --- | --- | ---: | ---: | ---: |"]
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "store"
        for i, (label, rel) in enumerate(POINTER_ROWS):
            data = (corpus / rel).read_bytes()
            out = _scratch(home, "ingest", "--store-always", "--tool", f"t{i}", data=data)
            assert out.returncode == 0, out.stderr
            raw = _tokens(data.decode("utf-8", "replace"))
            pointer = _tokens(out.stdout)
            fmt = out.stdout.split(": ", 1)[1].split(",", 1)[0]
            share = 100 * pointer / raw
            rows.append(f"| {label} | {fmt} | {raw:,} | {pointer:,} | "
                        f"{share:.2f}% |" if share < 0.1 else
                        f"| {label} | {fmt} | {raw:,} | {pointer:,} | {share:.1f}% |")
    return "\n" + "\n".join(rows) + "\n"


def commands() -> str:
    """The command table: every visible command of the declarations, in the README's groups
    (a command in no group fails: a new command must be placed)."""
    from scratch.docs.tree import walk
    declared = [" ".join(d.path) for d in walk()
                if d.path and (not d.is_group or d.runs_alone)]
    rows = ["| command | answers |", "| --- | --- |"]
    placed: set[str] = set()
    for names, says in COMMAND_GROUPS:
        here = [n for n in names if n in declared]
        missing = [n for n in names if n not in declared]
        if missing:
            raise SystemExit(f"README group names no such command: {', '.join(missing)}")
        placed.update(here)
        rows.append(f"| {', '.join(f'`{n}`' for n in here)} | {says} |")
    unplaced = sorted(set(declared) - placed)
    if unplaced:
        raise SystemExit(f"commands in no README group: {', '.join(unplaced)} "
                         "(add them to COMMAND_GROUPS in tests/readme_figures.py)")
    return "\n" + "\n".join(rows) + "\n"


COMMAND_GROUPS: list[tuple[list[str], str]] = [
    (["ingest", "run"], "store a tool's output (stdin, or a command's stdout); print the pointer"),
    (["schema", "item-schema"], "the shape of an entry; the keys across an array's items"),
    (["get-in"], "the value at a dot path, JSON Pointer or JSONPath"),
    (["iterate-over"], "one row per item; `--where` (RFC 9535), `--sort`, `--count-by`"),
    (["grep"], "matching lines with context (RE2, linear time)"),
    (["sql"], "one read-only DuckDB query over an entry (and others as tables)"),
    (["head", "tail", "slice", "read"], "lines and whole entries, priced; `--fit` pages them"),
    (["summarize"], "a local summary, or one by the agent's own model (`--by-model`)"),
    (["write", "history", "diff", "restore", "rm", "ls", "export"], "versioned files"),
    (["log append", "log read", "log tail"], "append-only logs with cursors"),
    (["budget", "budget used", "budget reset", "budget set-window"], "the context budget"),
    (["tokens", "stats", "calls", "config", "config threshold"],
     "token counts, figures, the call ledger, settings"),
    (["redactions", "purge", "gc"], "what redaction replaced; removal from history; retention"),
    (["artifact put", "artifact ls", "artifact read", "finish", "runs", "runs show",
      "runs iterate"], "runs: shared artifacts, iterations, usage events"),
    (["ui"], "a local, read-only web page over the store and the ledger"),
    (["sync", "remote add", "remote list", "remote remove"], "share the store through git"),
    (["mcp serve", "mcp proxy", "mcp install", "mcp wrap", "mcp token add", "mcp token list",
      "mcp token remove"], "MCP: serve, proxy, register with a client, HTTP tokens"),
    (["hook", "hooks install", "hooks uninstall"], "capture a client's big results"),
    (["guide", "completions", "init", "git"],
     "the agent's guide, completion, a store here, plain git"),
]

FIGURES: dict[str, Callable[[], str | None]] = {
    "sample": sample, "footer": footer, "toolsets": toolsets, "guide": guide,
    "pointer-table": pointer_table, "commands": commands,
}


def in_readme(text: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for m in FIGURE.finditer(text):
        if m.group(1) in found:
            raise SystemExit(f"figure {m.group(1)} is twice in the README")
        found[m.group(1)] = m.group(2)
    return found


def main(argv: list[str]) -> int:
    text = README.read_text()
    shown = in_readme(text)
    unknown = sorted(set(shown) - set(FIGURES))
    if unknown:
        print(f"README names figures this script does not make: {unknown}")
        return 1
    made = {name: FIGURES[name]() for name in shown}
    if "--write" in argv:
        new = FIGURE.sub(lambda m: m.group(0) if made[m.group(1)] is None else
                         f"<!-- figure:{m.group(1)} -->{made[m.group(1)]}<!-- /figure -->", text)
        README.write_text(new)
        return 0
    drift = [n for n, v in made.items() if v is not None and v != shown[n]]
    for name in shown:
        value = made[name]
        print(f"{name}: {'(needs the corpus)' if value is None else value.strip()}")
    if "--check" in argv and drift:
        print(f"README differs from the figures: {', '.join(drift)} "
              "(python tests/readme_figures.py --write)")
        return 1
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    raise SystemExit(main(sys.argv[1:]))
