"""Every suggestion and every ``next`` runs as printed, and those that claim to fit are not
refused: a set of refusal and --fit scenarios over the commands that page or refuse (head,
slice, grep, get-in, iterate-over, item-schema, read, log read, diff, and a spent budget),
each run in human mode and with --json through the real CLI.

A refusal's suggestions are run one by one, each from the budget as it stood right after the
refusal was charged (an agent reads the refusal, then runs one suggestion). ``next`` is
followed from page to page until it is absent; every page is within the cap.
"""

from __future__ import annotations

import json
import random
import shlex
from pathlib import Path

import pytest

from tests.helpers import Run, cli, error_of, shell_of

CAP = 1500


def _ndjson(lines: int, seed: int) -> str:
    rng = random.Random(seed)
    words = ["alpha", "beta", "error", "timeout", "node", "pod"]
    return "".join(json.dumps({"i": i, "msg": " ".join(rng.choice(words) for _ in range(60)),
                               "tags": {f"k{j}": rng.choice(words) for j in range(30)}}) + "\n"
                   for i in range(lines))


@pytest.fixture
def store(scratch_home: Path) -> Path:
    doc = {"items": [{"name": f"item-{i}", "note": "some words " * (i % 9 + 3),
                      "n": list(range(i % 5))} for i in range(300)], "kind": "List"}
    assert cli("ingest", "doc", "--store-always", input=json.dumps(doc)).code == 0
    assert cli("ingest", "nd", "--store-always", input=_ndjson(120, 3)).code == 0
    wide = [{f"field_{(i * 7 + j) % 200}": j for j in range(40)} for i in range(30)]
    assert cli("ingest", "wide", "--store-always", input=json.dumps(wide)).code == 0
    cli("write", "notes", input="".join(f"line {i} stable text here\n" for i in range(900)))
    cli("write", "notes", input="".join(f"line {i} stable text here\n" if i % 7 else
                                        f"changed {i}\n" for i in range(900)))
    cli("log", "append", "ev", "--lines", input="".join(f"event {i} " + "word " * 40 + "\n"
                                                        for i in range(400)))
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


def used() -> int:
    return int(cli("budget", "--json").json["data"]["used"])


def price(r: Run, json_mode: bool) -> int:
    if json_mode:
        return int(r.json["meta"]["tokens"]["count"])
    return int(r.err.rsplit("-- ", 1)[1].split(" token")[0].replace(",", ""))


def next_of(r: Run, json_mode: bool) -> str | None:
    if json_mode:
        nxt = r.json["data"].get("next")
        return shell_of(nxt) if nxt else None
    lines = [x for x in r.err.splitlines() if x.startswith("more: ")]
    return lines[0][len("more: "):] if lines else None


@pytest.mark.parametrize("json_mode", [True, False], ids=["json", "text"])
def test_every_suggestion_of_a_refusal_runs_and_fits(store: Path, json_mode: bool) -> None:
    ran = 0
    for args in REFUSED:
        r = run(args, json_mode)
        assert r.code == 3, (args, r.out[:200], r.err[:200])
        err = error_of(r, json_mode)
        assert err["suggestions"], (args, err)
        after = used()  # the refusal was charged
        for line in err["suggestions"]:
            words = shlex.split(line)
            assert words[0] == "scratch" and words[1:] != args, (args, line)
            cli("budget", "reset")
            cli("budget", "used", str(after))
            follow = run(words[1:], json_mode)
            assert follow.code == 0, (args, line, follow.out[:300], follow.err[-300:])
            assert price(follow, json_mode) <= CAP, (args, line)
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
            words = shlex.split(line)
            assert words[0] == "scratch", line
            r = run(words[1:], json_mode)
        assert pages >= 2, args


@pytest.mark.parametrize("json_mode", [True, False], ids=["json", "text"])
def test_a_spent_budget_suggests_only_what_can_run(store: Path, json_mode: bool) -> None:
    cli("budget", "set-window", "2000")  # usable 1,600
    cli("budget", "used", "1590")
    r = run(["head", "doc", "-n", "50"], json_mode)
    assert r.code == 3
    err = error_of(r, json_mode)
    assert err["code"] == "budget_exceeded"
    assert [s.split()[:3] for s in err["suggestions"]] == [
        ["scratch", "budget"], ["scratch", "budget", "used"], ["scratch", "budget", "reset"],
        ["scratch", "budget", "set-window"]]
    for line in err["suggestions"]:
        assert cli(*shlex.split(line)[1:]).code == 0, line
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
