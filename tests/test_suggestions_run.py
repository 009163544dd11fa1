"""Every suggestion and every ``next`` runs as printed, and those that claim to fit are not
refused: a set of refusal and --fit scenarios over the commands that page or refuse (head,
slice, grep, get-in, iterate-over, item-schema, read, log read, diff, and a spent budget),
each run in human mode and with --json through the real CLI.

A refusal's suggestions are run one by one, each from the budget as it stood right after the
refusal was charged (an agent reads the refusal, then runs one suggestion), exactly as printed:
the words of the line, nothing added (a suggestion sized for the --json answer says --json).
``next`` is followed from page to page until it is absent; every page is within the cap.

Every refusal kind (each ``*_too_large`` code the package can raise, and ``budget_exceeded``)
has a scenario whose first suggestion is run in a real shell, as an agent pastes it, in both
modes (issue 30, item 4: ``--json head pods -n 5000`` suggested ``head pods -n 1217``, which
the text answer refused again).
"""

from __future__ import annotations

import json
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import Run, cli, error_of, printed_of

CAP = 1500


def _ndjson(lines: int, seed: int) -> str:
    rng = random.Random(seed)
    words = ["alpha", "beta", "error", "timeout", "node", "pod"]
    return "".join(json.dumps({"i": i, "msg": " ".join(rng.choice(words) for _ in range(60)),
                               "tags": {f"k{j}": rng.choice(words) for j in range(30)}}) + "\n"
                   for i in range(lines))


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory, user_cache: Path) -> Path:
    """The scenarios' store, made once by real calls; each test gets a copy (they charge
    budgets and add calls)."""
    home = tmp_path_factory.mktemp("suggestions") / "store"
    env = {"SCRATCH_HOME": str(home), "XDG_CACHE_HOME": str(user_cache)}

    def run(*args: str, input: str) -> None:
        assert cli(*args, input=input, env=env).code == 0

    doc = {"items": [{"name": f"item-{i}", "note": "some words " * (i % 9 + 3),
                      "n": list(range(i % 5))} for i in range(300)], "kind": "List"}
    run("ingest", "doc", "--store-always", input=json.dumps(doc))
    run("ingest", "nd", "--store-always", input=_ndjson(120, 3))
    wide = [{f"field_{(i * 7 + j) % 200}": j for j in range(40)} for i in range(30)]
    run("ingest", "wide", "--store-always", input=json.dumps(wide))
    run("write", "notes", input="".join(f"line {i} stable text here\n" for i in range(900)))
    run("write", "notes", input="".join(f"line {i} stable text here\n" if i % 7 else
                                        f"changed {i}\n" for i in range(900)))
    run("log", "append", "ev", "--lines", input="".join(f"event {i} " + "word " * 40 + "\n"
                                                        for i in range(400)))
    run("artifact", "put", "r1", "doc.json", input=json.dumps(doc))
    return home


@pytest.fixture
def store(template: Path, scratch_home: Path) -> Path:
    shutil.copytree(template, scratch_home, symlinks=True)
    return scratch_home


REFUSED = [
    ["head", "doc", "-n", "2000"],
    ["slice", "nd", "3", "100"],
    ["tail", "nd", "-n", "80"],
    ["grep", "nd", "error", "-C", "1"],
    ["get-in", "doc", "items"],
    ["get-in", "doc", "."],
    ["iterate-over", "doc", "items", "--fields", "name,note"],
    ["item-schema", "wide", "."],
    ["read", "doc"],
    ["log", "read", "ev", "--limit", "400"],
    ["log", "tail", "ev", "-n", "300"],
    ["diff", "notes", "1", "2"],
    ["read", "notes", "--since-version", "1"],
]
FIT = [
    ["head", "doc", "-n", "2000", "--fit"],
    ["slice", "nd", "3", "100", "--fit"],
    ["grep", "nd", "error", "-C", "1", "--fit"],
    ["get-in", "doc", "items", "--fit"],
    ["iterate-over", "doc", "items", "--fields", "name,note", "--fit"],
    ["read", "doc", "--fit"],
    ["log", "read", "ev", "--limit", "400", "--fit"],
]
ENV = {"SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS": str(CAP)}


def run(args: list[str], json_mode: bool) -> Run:
    return cli(*args, *(["--json"] if json_mode else []), env=ENV)


def as_printed(line: str) -> tuple[Run, bool]:
    """Run a printed ``scratch ...`` line as it is (in-process), and whether it asked for
    --json."""
    words = shlex.split(line)
    assert words[0] == "scratch", line
    return cli(*words[1:], env=ENV), "--json" in words


def used() -> int:
    return int(cli("budget", "--json").json["data"]["used"])


def price(r: Run, json_mode: bool) -> int:
    if json_mode:
        return int(r.json["meta"]["tokens"]["count"])
    return int(r.err.rsplit("-- ", 1)[1].split(" token")[0].replace(",", ""))


def next_of(r: Run, json_mode: bool) -> str | None:
    if json_mode:
        nxt = r.json["data"].get("next")
        return printed_of(nxt) if nxt else None
    lines = [x for x in r.err.splitlines() if x.startswith("more: ")]
    return lines[0][len("more: "):] if lines else None


@pytest.mark.parametrize("json_mode", [True, False], ids=["json", "text"])
def test_every_suggestion_of_a_refusal_runs_and_fits(store: Path, json_mode: bool) -> None:
    ran = 0
    for args in REFUSED:
        r = run(args, json_mode)
        assert r.code == 3, (args, r.out[:200], r.err[:200])
        err = error_of(r, json_mode, printed=True)
        assert err["suggestions"], (args, err)
        after = used()  # the refusal was charged
        for line in err["suggestions"]:
            words = shlex.split(line)
            assert words[0] == "scratch" and words[1:] != args, (args, line)
            assert ("--json" in words) == json_mode, line  # the mode it was sized in
            cli("budget", "reset")
            cli("budget", "used", str(after))
            follow, follow_json = as_printed(line)
            assert follow.code == 0, (args, line, follow.out[:300], follow.err[-300:])
            assert price(follow, follow_json) <= CAP, (args, line)
            ran += 1
    assert ran >= 2 * len(REFUSED)


@pytest.mark.parametrize("json_mode", [True, False], ids=["json", "text"])
def test_next_runs_as_printed_to_the_end(store: Path, json_mode: bool) -> None:
    for args in FIT:
        cli("budget", "reset")
        r = run(args, json_mode)
        pages = 0
        while True:
            assert r.code == 0, (args, r.out[:300], r.err[-300:])
            assert price(r, json_mode) <= CAP, args
            pages += 1
            line = next_of(r, json_mode)
            if line is None:
                break
            r, was_json = as_printed(line)
            assert was_json == json_mode, line
        assert pages >= 2, args


@pytest.mark.parametrize("json_mode", [True, False], ids=["json", "text"])
def test_a_spent_budget_suggests_only_what_can_run(store: Path, json_mode: bool) -> None:
    cli("budget", "set-window", "2000")  # usable 1,600
    cli("budget", "used", "1590")
    r = run(["head", "doc", "-n", "50"], json_mode)
    assert r.code == 3
    err = error_of(r, json_mode, printed=True)
    assert err["code"] == "budget_exceeded"
    assert [[w for w in s.split() if w != "--json"][:3] for s in err["suggestions"]] == [
        ["scratch", "budget"], ["scratch", "budget", "used"], ["scratch", "budget", "reset"],
        ["scratch", "budget", "set-window"]]
    for line in err["suggestions"]:
        assert as_printed(line)[0].code == 0, line
        cli("budget", "set-window", "2000")
        cli("budget", "used", "1590")


def test_the_footer_warns_as_the_budget_runs_out(store: Path) -> None:
    cli("budget", "set-window", "10000")  # usable 8,000
    for used_before, warning in ((0, None), (4200, "52% of the budget used"),
                                 (6500, "81% of the budget used"),
                                 (7700, "96% of the budget used")):
        cli("budget", "reset")
        if used_before:
            cli("budget", "used", str(used_before))
        r = cli("head", "notes", "-n", "3")
        footer = r.err.splitlines()[-1]
        assert footer.startswith("-- ")
        if warning is None:
            assert "budget used" not in footer
        else:
            assert footer.endswith(" · " + warning), footer
        j = cli("head", "notes", "-n", "3", "--json").json["meta"]["budget"]
        assert (j.get("warning") is None) == (warning is None)


# -- every refusal kind, its first suggestion run in a real shell --------------------------

REPO = Path(__file__).resolve().parents[1]
# codes of size limits on what is stored (no answer to make smaller), and of a refusal made
# without a candidate answer (an answer built whole, then over the limit): no suggestions
NOT_ANSWER_REFUSALS = {"ingest_too_large", "write_too_large", "log_entry_too_large",
                       "answer_too_large", "extraction_too_large"}
# one scenario per refusal kind: the refused command line, and the cap it runs under
KINDS: dict[str, tuple[list[str], int]] = {
    "head_too_large": (["head", "doc", "-n", "2000"], CAP),
    "tail_too_large": (["tail", "nd", "-n", "80"], CAP),
    "slice_too_large": (["slice", "nd", "3", "100"], CAP),
    "read_too_large": (["read", "doc"], CAP),
    "grep_too_large": (["grep", "nd", "error", "-C", "1"], CAP),
    "get_in_too_large": (["get-in", "doc", "items"], CAP),
    "iterate_over_too_large": (["iterate-over", "doc", "items", "--fields", "name,note"], CAP),
    "item_schema_too_large": (["item-schema", "wide", "."], CAP),
    "schema_too_large": (["schema", "wide"], CAP),
    "diff_too_large": (["diff", "notes", "1", "2"], CAP),
    "log_read_too_large": (["log", "read", "ev", "--limit", "400"], CAP),
    "log_tail_too_large": (["log", "tail", "ev", "-n", "300"], CAP),
    "sql_too_large": (["sql", "doc", "SELECT * FROM entry"], CAP),
    "summarize_too_large": (["summarize", "nd"], 200),
    # a run's coordinator reading an artifact whole: its suggestions repeat --run and
    # --coordinator, the flags the call was given
    "artifact_too_large": (["--run", "r1", "--coordinator", "artifact", "read", "r1", "doc.json"],
                           CAP),
    "budget_exceeded": (["head", "doc", "-n", "50"], CAP),
}


def refusal_codes() -> set[str]:
    """Every ``*_too_large`` code written in the package, and the budget's refusal."""
    found: set[str] = set()
    for path in (REPO / "scratch").rglob("*.py"):
        found.update(re.findall(r"[\"']([a-z_]+_too_large)[\"']", path.read_text()))
    return (found - NOT_ANSWER_REFUSALS) | {"budget_exceeded"}


def test_every_refusal_kind_has_a_scenario() -> None:
    assert set(KINDS) == refusal_codes()


@pytest.fixture
def shell(store: Path, tmp_path: Path) -> dict[str, str]:
    """The environment of a real shell whose ``scratch`` runs this checkout on the store."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "scratch"
    shim.write_text(f"#!/bin/sh\nexec {sys.executable} -m scratch \"$@\"\n")
    shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRATCH_")}
    env.update(SCRATCH_HOME=str(store), PYTHONPATH=str(REPO), COLUMNS="100",
               PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}")
    return env


@pytest.mark.parametrize("json_mode", [True, False], ids=["json", "text"])
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_first_suggestion_of_every_refusal_runs_as_printed_in_a_shell(
        shell: dict[str, str], kind: str, json_mode: bool) -> None:
    args, cap = KINDS[kind]
    env = {"SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS": str(cap)}
    if kind == "budget_exceeded":
        cli("budget", "set-window", "2000")  # usable 1,600
        cli("budget", "used", "1590")
    r = cli(*args, *(["--json"] if json_mode else []), env=env)
    assert r.code == 3, (r.out[:300], r.err[-300:])
    err = error_of(r, json_mode, printed=True)
    assert err["code"] == kind
    first = err["suggestions"][0]
    proc = subprocess.run(["/bin/sh", "-c", first], env={**shell, **env},
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
    assert proc.returncode == 0, (first, proc.stdout[:300], proc.stderr[-500:])
    if json_mode:  # answered in the mode it was sized for
        assert json.loads(proc.stdout)["ok"] is True, first
