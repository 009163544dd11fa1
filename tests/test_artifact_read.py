"""artifact read and artifact:RUN/NAME through the CLI (issue 29 points 1-2): two workers and a
coordinator of one run share artifacts in place; an agent outside the run cannot see them; a
worker's read of a big artifact is a pointer that head, grep and sql then explore, charged to
that worker's own budget; a coordinator gets artifacts whole, held to the per-call cap."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.helpers import Run, cli, shell_of

REPO = Path(__file__).resolve().parents[1]
PODS = REPO / "scratch" / "samples" / "pods.json"  # 60 pods, 62k tokens: over the 10k cap
REPORT = b'{"pods": 60, "failed": ["cert-manager-5d7b", "loki-0"], "restarts": 185}\n'


def as_(agent: str, *args: str, run: str | None = "r1", coordinator: bool = False,
        input: bytes | None = None) -> Run:
    """``scratch ARGS --json`` as agent ``agent`` of ``run`` (None: in no run)."""
    extra = ["--agent", agent, "--json"] + (["--run", run] if run else []) \
        + (["--coordinator"] if coordinator else [])
    return cli(*args, *extra, input=input)


def data(r: Run) -> Any:
    assert r.code == 0, (r.code, r.text)
    return r.json["data"]


def error(r: Run, code: int) -> dict[str, Any]:
    assert r.code == code, (r.code, r.text)
    return r.json["error"]  # type: ignore[no-any-return]


def tokens(r: Run) -> int:
    return int(r.json["meta"]["tokens"]["count"])


def commits(home: Path) -> int:
    out = subprocess.run(["git", "-C", str(home), "rev-list", "--count", "HEAD"],
                         capture_output=True, text=True, check=True)
    return int(out.stdout)


def budget_used(agent: str, run: str | None = "r1", coordinator: bool = False) -> int:
    return int(data(as_(agent, "budget", run=run, coordinator=coordinator))["used"])


@pytest.fixture
def shared(scratch_home: Path) -> Path:
    """Run r1: worker w1 put report.json (small) and pods.json (big)."""
    put = data(as_("w1", "artifact", "put", "r1", "report.json", input=REPORT))
    assert put == {"run": "r1", "name": "report.json", "ref": "artifact:r1/report.json",
                   "version": 1, "bytes": len(REPORT), "lines": 1, "unchanged": False}
    big = data(as_("w1", "artifact", "put", "r1", "pods.json", str(PODS)))
    assert (big["version"], big["bytes"]) == (1, PODS.stat().st_size)
    return scratch_home


def test_two_workers_and_a_coordinator_share_one_stored_copy(shared: Path) -> None:
    # the other worker, and the coordinator, read the small one whole
    for agent, coordinator in (("w2", False), ("boss", True)):
        got = data(as_(agent, "artifact", "read", "r1", "report.json", coordinator=coordinator))
        assert got == {"artifact": "report.json", "run": "r1", "ref": "artifact:r1/report.json",
                       "inline": True, "version": 1, "lines": 1,
                       "content": REPORT.decode()}
    listed = data(as_("boss", "artifact", "ls", "r1", coordinator=True))
    assert [(a["name"], a["agent"], a["iteration"], a["ref"]) for a in listed["artifacts"]] == [
        ("pods.json", "w1", 1, "artifact:r1/pods.json"),
        ("report.json", "w1", 1, "artifact:r1/report.json")]
    # one stored copy: the run's namespace holds it once; no worker's scratchpad has it
    tracked = subprocess.run(["git", "-C", str(shared), "ls-files"], capture_output=True,
                             text=True, check=True).stdout.split()
    assert sorted(p for p in tracked if "pods.json" in p) == [
        "runs/r1/files/pods.json", "runs/r1/meta/pods.json.json"]
    assert not (shared / "agents" / "w2").exists() and not (shared / "agents" / "boss").exists()
    # the same bytes put again make no new version
    again = data(as_("w2", "artifact", "put", "r1", "report.json", input=REPORT))
    assert (again["version"], again["unchanged"]) == (1, True)


def test_a_big_artifact_is_a_pointer_the_read_commands_explore_on_the_readers_budget(
        shared: Path) -> None:
    before_w1 = budget_used("w1")
    charged = []
    r = as_("w2", "artifact", "read", "r1", "pods.json")
    pointer = data(r)
    charged.append(tokens(r))
    assert pointer["inline"] is False and pointer["ref"] == "artifact:r1/pods.json"
    assert pointer["over"] == "per_call_cap"
    assert (pointer["name"], pointer["format"], pointer["lines"]) == (
        "artifact:r1/pods.json", "json", 8653)
    assert pointer["tokens"] > 10_000 >= charged[0]
    nxt = [shell_of(c) for c in pointer["next"]]
    assert nxt and all("artifact:r1/pods.json" in c for c in nxt), nxt
    # every read command takes the reference, answered from the run's copy
    head = as_("w2", "head", "artifact:r1/pods.json", "-n", "3")
    assert data(head)["name"] == "pods.json"
    assert data(head)["lines"] == ["{", '    "apiVersion": "v1",', '    "kind": "List",']
    charged.append(tokens(head))
    grep = as_("w2", "grep", "artifact:r1/pods.json", "CrashLoopBackOff", "--count")
    assert data(grep)["count"] == 4
    charged.append(tokens(grep))
    sql = as_("w2", "sql", "artifact:r1/pods.json",
              "SELECT status.phase AS phase, count(*) AS n FROM entry GROUP BY 1 ORDER BY 2 DESC")
    assert data(sql)["rows"] == [["Running", 53], ["Pending", 5], ["Failed", 2]]
    charged.append(tokens(sql))
    rows = as_("w2", "iterate-over", "artifact:r1/pods.json", "items", "--count-by",
               "status.phase")
    assert [(v["value"], v["count"]) for v in data(rows)["values"]] == [
        ("Running", 53), ("Pending", 5), ("Failed", 2)]
    charged.append(tokens(rows))
    # the ledger names the artifact by its reference, the run and iteration by theirs
    from scratch.store import ledger
    recs = ledger.read(shared, agent="w2")
    assert {(r["entry"], r["version"], r["run"], r["iteration"]) for r in recs} == {
        ("artifact:r1/pods.json", 1, "r1", 1)}
    # all of it charged to w2's budget of the run, nothing to w1's, nothing outside the run
    assert budget_used("w2") == sum(charged)
    assert [r["tokens"] for r in recs] == charged
    assert budget_used("w1") == before_w1
    assert budget_used("w2", run=None) == 0


def test_an_artifact_reference_names_a_version(shared: Path) -> None:
    data(as_("w1", "artifact", "put", "r1", "report.json", input=b'{"pods": 61}\n'))
    old = data(as_("w2", "read", "artifact:r1/report.json@1"))
    assert old["content"] == REPORT.decode() and old["version"] == 1
    assert data(as_("w2", "read", "artifact:r1/report.json"))["content"] == '{"pods": 61}\n'


def test_an_agent_outside_the_run_is_told_not_found_as_for_another_agents_entry(
        shared: Path) -> None:
    data(as_("w1", "write", "notes.md", input=b"w1's own\n", run=None))
    other_agent = error(as_("outsider", "head", "notes.md", run=None), 4)
    assert other_agent["code"] == "entry_not_found"
    seen = {}
    for name in ("pods.json", "no-such.json"):  # one exists, one does not: the same answer
        for args in (("artifact", "read", "r1", name), ("head", f"artifact:r1/{name}"),
                     ("schema", f"artifact:r1/{name}")):
            err = error(as_("outsider", *args, run="r2"), 4)
            assert err["code"] == "entry_not_found"
            seen.setdefault(args[0], set()).add(err["message"].replace(name, "NAME"))
    assert all(len(messages) == 1 for messages in seen.values()), seen
    assert seen["head"] == {"no artifact 'artifact:r1/NAME' for agent 'outsider' in run 'r2'"}
    listing = error(as_("outsider", "artifact", "ls", "r1", run="r2"), 4)
    assert listing["code"] == "entry_not_found"
    # nor does it write into a run not its own
    put = error(as_("outsider", "artifact", "put", "r1", "x.json", input=b"{}\n", run="r2"), 2)
    assert put["code"] == "not_in_run"
    assert [a["name"] for a in data(as_("w1", "artifact", "ls", "r1"))["artifacts"]] == [
        "pods.json", "report.json"]


def test_a_coordinator_has_no_scratchpad_and_gets_artifacts_whole_within_the_cap(
        shared: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    err = error(as_("boss", "ls", coordinator=True), 2)
    assert err["code"] == "coordinator_has_no_scratchpad"
    # the flags the call was given are repeated, so the line runs as printed
    assert [shell_of(s) for s in err["suggestions"]] == [
        "scratch artifact ls r1 --agent boss --run r1 --coordinator"]
    # over the cap: refused with the next step, charged nothing to anyone's pad
    big = error(as_("boss", "artifact", "read", "r1", "pods.json", coordinator=True), 3)
    assert big["code"] == "artifact_too_large" and big["per_call_limit"] == 10_000
    assert big["estimated_tokens"] > 10_000
    assert [shell_of(s) for s in big["suggestions"]] == [
        "scratch schema artifact:r1/pods.json --agent boss --run r1 --coordinator",
        "scratch head artifact:r1/pods.json -n 50 --agent boss --run r1 --coordinator"]
    # its budget never binds: with the budget spent it still reads what fits the cap
    data(as_("boss", "budget", "used", "200000", coordinator=True))
    got = data(as_("boss", "artifact", "read", "r1", "report.json", coordinator=True))
    assert got["inline"] is True


def test_a_huge_artifact_asked_by_a_coordinator_is_refused_before_it_is_read(
        shared: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 1 GB artifact, driven by a limit: with a cap of 50 tokens, any artifact over
    50 x 256 bytes is refused from its size alone, its content never read nor indexed."""
    monkeypatch.setenv("SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS", "50")
    index = shared / "cache" / "index"
    before = sorted(p.name for p in index.iterdir()) if index.exists() else []
    head_commit = commits(shared)
    err = error(as_("boss", "artifact", "read", "r1", "pods.json", coordinator=True), 3)
    assert err["code"] == "artifact_too_large"
    assert (err["bytes"], err["per_call_limit"]) == (PODS.stat().st_size, 50)
    assert "estimated_tokens" not in err
    assert "have a worker of the run read it" in err["message"]
    after = sorted(p.name for p in index.iterdir()) if index.exists() else []
    assert after == before and commits(shared) == head_commit


@pytest.mark.parametrize("run, rule", [
    ("../r1", "'..' is not allowed"),
    ("r1/x", "'/' is not allowed: a run id is one name, not a path"),
    ("r\x071", "control characters are not allowed"),
    ("", "the run id is empty"),
])
def test_a_bad_run_id_is_refused_and_nothing_is_stored(shared: Path, run: str,
                                                       rule: str) -> None:
    head_commit = commits(shared)
    for args in (("artifact", "put", run, "x.json"), ("artifact", "read", run, "x.json"),
                 ("artifact", "ls", run)):
        err = error(as_("w1", *args, run=None, input=b"{}\n"), 2)
        assert (err["code"], err["rule"]) == ("invalid_run", rule)
    if run:
        err = error(as_("w1", "ls", run=run), 2)
        assert err["code"] == "invalid_run"
    if run and "/" not in run:  # artifact:r1/x/x.json is artifact x/x.json of run r1
        assert error(as_("w1", "head", f"artifact:{run}/x.json", run=None), 2)["code"] == (
            "invalid_run")
    assert commits(shared) == head_commit
    assert sorted(p.name for p in (shared / "runs").iterdir()) == ["r1"]


def test_an_iteration_the_run_has_not_started_is_refused_with_how_to_start_it(
        shared: Path) -> None:
    head_commit = commits(shared)
    err = error(cli("ls", "--json", "--run", "r1", "--iteration", "2"), 4)
    refused = error(cli("artifact", "put", "r1", "x.json", "--json", "--run", "r1",
                        "--iteration", "2", input=b"{}\n"), 4)
    assert refused["code"] == "iteration_not_found" and commits(shared) == head_commit
    assert (err["code"], err["latest"], err["iteration"]) == ("iteration_not_found", 1, 2)
    assert [shell_of(s) for s in err["suggestions"]][0].startswith("scratch runs iterate r1")
    assert data(cli("runs", "iterate", "r1", "--json")) == {"run": "r1", "iteration": 2}
    assert data(cli("budget", "--json", "--run", "r1", "--iteration", "2"))["iteration"] == 2
    # without --iteration a worker joins the latest; its artifacts say so
    put = data(as_("w3", "artifact", "put", "r1", "late.txt", input=b"late\n"))
    assert put["version"] == 1
    rows = {a["name"]: a["iteration"] for a in data(as_("w3", "artifact", "ls", "r1"))[
        "artifacts"]}
    assert rows == {"late.txt": 2, "pods.json": 1, "report.json": 1}
    assert error(cli("ls", "--json", "--run", "r1", "--iteration", "0"), 2)["code"] == (
        "invalid_iteration")
    not_a_number = cli("ls", "--json", "--run", "r1", "--iteration", "x")  # the parser's
    assert not_a_number.code == 2 and "'x' is not a valid int" in not_a_number.err
    assert error(cli("ls", "--json", "--iteration", "1"), 2)["code"] == "not_in_run"
    assert error(cli("ls", "--json", "--coordinator"), 2)["code"] == "not_in_run"


def test_the_runs_own_log_is_no_artifact(shared: Path) -> None:
    err = error(as_("w1", "artifact", "put", "r1", "events", input=b"x\n"), 2)
    assert (err["code"], err["rule"]) == ("invalid_name", "reserved")
    assert error(as_("w1", "artifact", "read", "r1", "events"), 4)["code"] == "entry_not_found"


def test_the_environment_names_the_run(shared: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCRATCH_RUN", "r1")
    monkeypatch.setenv("SCRATCH_AGENT", "w2")
    r = cli("head", "artifact:r1/report.json", "--json")
    assert r.code == 0 and orjson.loads(r.out)["data"]["name"] == "report.json"
    monkeypatch.setenv("SCRATCH_ITERATION", "5")
    assert error(cli("ls", "--json"), 4)["code"] == "iteration_not_found"


def test_what_is_left_of_the_workers_budget_decides_too(shared: Path) -> None:
    medium = PODS.read_bytes()[:20_000]  # ~5k tokens: under the per-call cap
    data(as_("w1", "artifact", "put", "r1", "medium.txt", input=medium))
    usable = int(data(as_("w2", "budget"))["usable"])
    data(as_("w2", "budget", "used", str(usable - 3000)))
    pointer = data(as_("w2", "artifact", "read", "r1", "medium.txt"))
    assert pointer["inline"] is False and pointer["name"] == "artifact:r1/medium.txt"
    assert pointer["over"] == "budget"
    shown = as_("w2", "artifact", "read", "r1", "medium.txt")
    assert shown.code == 0
    # nothing left: even the pointer does not fit, refused as any answer, with the budget's
    # own commands
    data(as_("w2", "budget", "used", str(usable)))
    spent = error(as_("w2", "artifact", "read", "r1", "medium.txt"), 3)
    assert spent["code"] == "budget_exceeded"
    assert [shell_of(s) for s in spent["suggestions"]][:1] == ["scratch budget --agent w2 --run r1"]
    # and the other worker's budget is its own
    assert data(as_("w3", "artifact", "read", "r1", "medium.txt"))["inline"] is True


EXTRA = ("artifact", "run", "ref", "inline", "over", "pointer_tokens")


def test_the_pointer_is_sized_on_what_each_rendering_shows(scratch_home: Path) -> None:
    # one fitting for ingest and artifact read (answers.pointer.fit_shown): a rendering that
    # shows the text (the shell's, an MCP tool result's) is sized on that text, head line
    # included; one that shows the data (--json, --structured) on the data's JSON. Over MCP's
    # default text, artifact read once sized the JSON it never shows.
    from scratch.answers.kernel.context import Context
    from scratch.answers.kernel.execution import execute
    from scratch.answers.kernel.rendering import PlainCalls
    from scratch.answers.pointer.build import pointer_cap, pointer_json
    from scratch.calls import call
    from scratch.cli.render import JsonEnvelope, ShellText
    from scratch.mcp.rendering import ToolJson, ToolText
    from scratch.tokens import count_text
    execute(Context.build(agent="w1", run="r1"), PlainCalls(),
            call("artifact put", run="r1", name="pods.json", content=PODS.read_bytes()))
    sized = {}
    for rendering in (ShellText(), ToolText(), JsonEnvelope(), ToolJson()):
        ctx = Context.build(agent="w2", run="r1")
        got = execute(ctx, rendering, call("artifact read", run="r1", name="pods.json"))
        assert isinstance(got.data, dict) and isinstance(got.text, str)
        spec = ctx.encoding()
        assert got.text.startswith("artifact 'pods.json' of run 'r1' is ~")
        pointer = {k: v for k, v in got.data.items() if k not in EXTRA}
        shown = (count_text(pointer_json(pointer, rendering.call_data), spec)  # type: ignore[arg-type]
                 if rendering.shows_data else count_text(got.text, spec))
        assert got.data["pointer_tokens"] == shown <= pointer_cap(got.data["tokens"])
        sized[rendering.name] = shown
    assert sorted(sized) == ["json", "mcp", "mcp-json", "text"]
