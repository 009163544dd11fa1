"""The Python API for agent runtimes (scratch.api, ``from scratch import Scratchpad``).

Used the way a runtime uses it: a loop feeds real tool outputs through ``intercept`` and
answers questions with the read methods under a budget, following the calls the pointer and
refusals suggest with ``call_tool``; workers of a run share artifacts. Its exports and their
signatures are pinned: a change to them must change this file too.
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest

import scratch
from scratch import (
    Answer,
    BudgetExceeded,
    Intercepted,
    LimitExceeded,
    NotFound,
    ScratchError,
    Scratchpad,
    ToolCall,
    error_text,
)
from scratch import api as api_module
from tests.helpers import cli

REPO = Path(__file__).resolve().parents[1]
PODS = REPO / "scratch" / "samples" / "pods.json"


def ledger_of(home: Path, agent: str) -> list[dict[str, object]]:
    path = home / "state" / "agents" / agent / "calls.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_runtime_loop_feeds_tool_results_and_answers_under_a_budget(
        scratch_home: Path) -> None:
    """A small runtime: each tool result goes through intercept; the model's questions are
    tool calls, answered by the scratchpad; a refusal is shown to the model as it would be
    over MCP, and the model follows the call it suggests."""
    scratch_home.mkdir()
    (scratch_home / "scratch.toml").write_text("[budget]\nmax_extraction_tokens = 2000\n")
    tool_results = [("echo", "ok: 3 pods restarted\n"), ("kubectl_get_pods", PODS.read_text())]
    transcript: list[str] = []  # what the model would read, in order
    with Scratchpad(agent="worker-1", model="gpt-4o") as sp:
        start = sp.budget()
        assert (start.window, start.usable, start.used, start.tokenizer) == (
            128000, 102400, 0, "o200k_base")
        pointers: list[Intercepted] = []
        for tool, output in tool_results:
            got = sp.intercept(tool, output)
            transcript.append(got.text)
            if got.stored:
                pointers.append(got)
        small = sp.intercept("echo", "ok: 3 pods restarted\n")
        assert not small.stored and small.text == "ok: 3 pods restarted\n"
        assert (small.shown_tokens, small.intercepted, small.threshold) == (0, 0, 5120)
        [pods] = pointers
        assert pods.name is not None and pods.name.startswith("kubectl_get_pods/")
        assert pods.text.startswith(f"stored {pods.name} (version 1): json, 243,989 bytes, "
                                    "8,653 lines, 61,943 tokens (o200k_base)\n")
        assert pods.tokens == 61943 and pods.intercepted == 61943 - pods.shown_tokens
        after_pointer = sp.budget()
        assert after_pointer.used == pods.shown_tokens
        assert after_pointer.intercepted == pods.intercepted

        # the model asks with tool calls, as the pointer's menu spells them
        questions = [ToolCall("iterate_over", {"file": pods.name, "path": "items",
                                                "count_by": "status.phase"}),
                     ToolCall("get_in", {"file": pods.name, "path": "items.3.metadata.name"}),
                     ToolCall("head", {"file": pods.name, "lines": 3000})]
        spent = after_pointer.used
        for question in questions:
            try:
                answer = sp.call_tool(question.name, question.arguments)
            except LimitExceeded as refused:  # over the 2,000-token cap: the model is told
                shown = error_text(refused)
                transcript.append(shown)
                assert refused.code == "head_too_large"
                spent += refused.charged["tokens"]["count"]  # a refusal is in the context too
                suggested = json.loads(shown)["suggestions"][0]
                assert suggested == {"name": "head", "arguments": {"file": pods.name,
                                                                   "lines": 212}}
                answer = sp.call_tool(suggested["name"], suggested["arguments"])
            transcript.append(answer.text)
            assert answer.notes.endswith(f"-- {answer.tokens:,} tokens (o200k_base) · budget "
                                         f"{102400 - spent - answer.tokens:,} of 102,400 left")
            spent += answer.tokens
            assert answer.budget is not None and answer.budget.used == spent
        assert transcript[2] == "status.phase\tcount\nRunning\t53\nPending\t5\nFailed\t2\n"
        assert transcript[3] == "node-exporter-66c1a54922-bb9a24\n"
        assert transcript[-1].startswith("1:{\n2:  \"apiVersion\": \"v1\",\n")
        assert sp.budget().used == spent

        # the runtime knows the model's real usage: the estimate becomes the larger one
        reported = sp.used(101000)
        assert (reported.used, reported.remaining) == (101000, 1400)
        with pytest.raises(BudgetExceeded) as over:  # under the cap, over what is left
            sp.head(pods.name, lines=212)
        assert over.value.code == "budget_exceeded"
        usage = sp.finish()
        assert (usage.agent, usage.run, usage.tokens_intercepted) == (
            "worker-1", None, pods.intercepted)
    calls = ledger_of(scratch_home, "worker-1")
    assert {c["interface"] for c in calls} == {"api"}
    # the first budget call came before the store existed: a call never creates it to be kept
    assert [c["command"] for c in calls][:3] == ["ingest", "ingest", "ingest"]
    assert [c["outcome"] for c in calls if c["command"] == "head"] == [
        "refused", "ok", "refused"]


def test_answers_match_the_cli_and_are_priced_as_shown(scratch_home: Path) -> None:
    with Scratchpad() as sp:
        ref = sp.intercept("kubectl_get_pods", PODS.read_bytes()).name
        assert ref is not None
        for answer, line in [
                (sp.head(ref, 5), ["head", ref, "-n", "5"]),
                (sp.tail(ref, 2, numbers=False), ["tail", ref, "-n", "2", "--no-numbers"]),
                (sp.slice(ref, 10, 12), ["slice", ref, "10", "12"]),
                (sp.grep(ref, "CrashLoopBackOff", count=True),
                 ["grep", ref, "CrashLoopBackOff", "--count"]),
                (sp.schema(ref, depth=1), ["schema", ref, "--depth", "1"]),
                (sp.item_schema(ref, "items", depth=1),
                 ["item-schema", ref, "items", "--depth", "1"]),
                (sp.get_in(ref, "items", count=True), ["get-in", ref, "items", "--count"]),
                (sp.iterate_over(ref, "items", count_by="spec.nodeName"),
                 ["iterate-over", ref, "items", "--count-by", "spec.nodeName"]),
                (sp.sql(ref, "SELECT count(*) AS n FROM entry"),
                 ["sql", ref, "SELECT count(*) AS n FROM entry"]),
                (sp.summarize(ref), ["summarize", ref])]:
            assert isinstance(answer, Answer)
            assert answer.text == cli(*line).text, line
            from scratch.tokens import count_text, resolve_encoding
            priced = count_text(answer.text, resolve_encoding(None, None)) + count_text(
                answer.notes, resolve_encoding(None, None))
            assert answer.tokens == priced, line
            assert answer.notes.endswith(f"-- {answer.tokens:,} tokens (o200k_base) · budget "
                                         f"{answer.budget.remaining:,} of 102,400 left")
        sql = sp.sql(ref, "SELECT count(*) AS n FROM entry")
        assert (sql.data["columns"], sql.data["rows"]) == (["n"], [[60]])
        with pytest.raises(ScratchError) as bad:
            sp.head(ref, 5, no_such_option=True)
        assert bad.value.code == "invalid_argument"
        with pytest.raises(NotFound) as missing:
            sp.head("nosuch")
        assert missing.value.code == "entry_not_found"
        with pytest.raises(ScratchError) as unknown:
            sp.call_tool("no_such_tool", {})
        assert unknown.value.code == "unknown_tool"


def test_agents_stay_isolated(scratch_home: Path) -> None:
    with Scratchpad(agent="a") as a, Scratchpad(agent="b") as b:
        ref = a.intercept("kubectl_get_pods", PODS.read_bytes()).name
        assert ref is not None
        assert a.head(ref, 1).text == "1:{\n"
        with pytest.raises(NotFound) as hidden:
            b.head(ref, 1)
        assert hidden.value.code == "entry_not_found"


def test_workers_of_a_run_share_artifacts_in_place(scratch_home: Path) -> None:
    report = json.dumps({"pods": 60, "failed": ["a", "b"]}) + "\n"
    with Scratchpad(agent="w1", run="r1") as w1:
        put = w1.put_artifact("report.json", report)
        assert put.data["name"] == "report.json" and put.data["version"] == 1
        assert (w1.run, w1.iteration) == ("r1", 1)
    with Scratchpad(agent="w2", run="r1") as w2:
        [row] = w2.artifacts()
        assert (row.run, row.name, row.version, row.bytes) == (
            "r1", "report.json", 1, len(report))
        inline = w2.read_artifact("report.json")
        assert inline.text == report  # small: inline
        assert w2.get_in("artifact:r1/report.json", "failed.1").text == "b\n"
        assert w2.budget().run == "r1"
    big = PODS.read_text()
    with Scratchpad(agent="w1", run="r1") as w1:
        w1.put_artifact("pods.json", big)
    with Scratchpad(agent="w2", run="r1") as w2:
        pointer = w2.read_artifact("pods.json")  # over the per-call cap: a pointer to it
        assert "artifact:r1/pods.json" in pointer.text
        counted = w2.iterate_over("artifact:r1/pods.json", "items", count=True)
        assert counted.text == "60\n"
    with Scratchpad(agent="outsider", run="r2") as outsider:
        with pytest.raises(NotFound) as hidden:
            outsider.get_in("artifact:r1/report.json", "pods")
        assert hidden.value.code == "entry_not_found"
    with Scratchpad(agent="boss", run="r1", coordinator=True) as boss:
        assert boss.read_artifact("report.json").text == report


# -- stability ------------------------------------------------------------------------------

EXPORTS = ["Answer", "Artifact", "BudgetExceeded", "BudgetStatus", "Intercepted",
           "LimitExceeded", "NotFound", "ScratchError", "Scratchpad", "ToolCall", "Usage",
           "UsageError", "error_text"]

SIGNATURES = {
    "Scratchpad": "(store: 'str | os.PathLike[str] | None' = None, *, agent: 'str | None' = "
                  "None, session: 'str | None' = None, run: 'str | None' = None, iteration: "
                  "'int | None' = None, coordinator: 'bool' = False, model: 'str | None' = "
                  "None, encoding: 'str | None' = None) -> 'None'",
    "Scratchpad.intercept": "(self, tool: 'str', output: 'str | bytes', *, name: 'str | None' "
                            "= None, format: 'str | None' = None, store_always: 'bool' = "
                            "False) -> 'Intercepted'",
    "Scratchpad.head": "(self, ref: 'str', lines: 'int | None' = None, **options: 'ArgValue')"
                       " -> 'Answer'",
    "Scratchpad.tail": "(self, ref: 'str', lines: 'int | None' = None, **options: 'ArgValue')"
                       " -> 'Answer'",
    "Scratchpad.slice": "(self, ref: 'str', start: 'int', end: 'int', **options: 'ArgValue') "
                        "-> 'Answer'",
    "Scratchpad.read": "(self, ref: 'str', **options: 'ArgValue') -> 'Answer'",
    "Scratchpad.grep": "(self, ref: 'str', pattern: 'str', **options: 'ArgValue') -> 'Answer'",
    "Scratchpad.schema": "(self, ref: 'str', **options: 'ArgValue') -> 'Answer'",
    "Scratchpad.item_schema": "(self, ref: 'str', path: 'str', **options: 'ArgValue') -> "
                              "'Answer'",
    "Scratchpad.get_in": "(self, ref: 'str', path: 'str', **options: 'ArgValue') -> 'Answer'",
    "Scratchpad.iterate_over": "(self, ref: 'str', path: 'str', **options: 'ArgValue') -> "
                               "'Answer'",
    "Scratchpad.sql": "(self, ref: 'str', query: 'str', **options: 'ArgValue') -> 'Answer'",
    "Scratchpad.summarize": "(self, ref: 'str', *, by_model: 'bool' = False) -> 'Answer'",
    "Scratchpad.call_tool": "(self, name: 'str', arguments: 'Mapping[str, JSON] | None' = "
                            "None) -> 'Answer'",
    "Scratchpad.budget": "(self) -> 'BudgetStatus'",
    "Scratchpad.used": "(self, tokens: 'int') -> 'BudgetStatus'",
    "Scratchpad.put_artifact": "(self, name: 'str', content: 'str | bytes') -> 'Answer'",
    "Scratchpad.artifacts": "(self) -> 'list[Artifact]'",
    "Scratchpad.read_artifact": "(self, name: 'str') -> 'Answer'",
    "Scratchpad.finish": "(self) -> 'Usage'",
    "Scratchpad.close": "(self) -> 'None'",
    "error_text": "(error: 'ScratchError') -> 'str'",
}
PROPERTIES = ["agent", "iteration", "model", "root", "run", "session"]
FIELDS = {
    "Answer": ["command", "text", "notes", "tokens", "encoding", "budget", "next", "warnings",
               "data"],
    "Intercepted": ["stored", "text", "tool", "name", "version", "tokens", "shown_tokens",
                    "intercepted", "threshold"],
    "BudgetStatus": ["window", "usable", "used", "remaining", "intercepted", "extracted",
                     "max_extraction_tokens", "model", "tokenizer", "exact", "run",
                     "iteration"],
    "Artifact": ["run", "name", "version", "bytes", "data"],
    "Usage": ["agent", "run", "iteration", "tokens_intercepted", "tokens_extracted", "data"],
    "ToolCall": ["name", "arguments"],
}


def test_the_exports_are_pinned() -> None:
    """A change here is a change of the API: update the README, the man page and this list
    together, on purpose."""
    assert sorted(api_module.__all__) == EXPORTS
    assert sorted(n for n in scratch.__all__ if not n.startswith("__")) == EXPORTS
    for name in EXPORTS:
        assert getattr(scratch, name) is getattr(api_module, name)
    found = {}
    for name in SIGNATURES:
        owner, _, method = name.partition(".")
        target = getattr(api_module, owner)
        found[name] = str(inspect.signature(getattr(target, method) if method else target))
    assert found == SIGNATURES
    public = sorted(n for n, v in vars(Scratchpad).items() if not n.startswith("_"))
    assert public == sorted([n.split(".")[1] for n in SIGNATURES if "." in n] + PROPERTIES)
    for name, names in FIELDS.items():
        cls = getattr(api_module, name)
        assert [f.name for f in fields(cls)] == names, name
        assert cls.__dataclass_params__.frozen, name


def test_importing_and_using_it_loads_no_cli_or_mcp_stack(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from scratch import Scratchpad\n"
        f"sp = Scratchpad({str(tmp_path / 'store')!r}, agent='w')\n"
        "ref = sp.intercept('kubectl_get_pods', sys.stdin.buffer.read()).name\n"
        "sp.head(ref, 2); sp.budget(); sp.finish()\n"
        "bad = sorted({m.split('.')[0] for m in sys.modules} & {'typer', 'rich', 'click', "
        "'mcp', 'mcp_types', 'starlette', 'uvicorn', 'anyio', 'pydantic', 'httpx2'})\n"
        "print(','.join(bad))\n")
    out = subprocess.run([sys.executable, "-c", code], input=PODS.read_bytes(),
                         capture_output=True, check=True, cwd=REPO)
    assert out.stdout.decode().strip() == ""
    assert (REPO / "scratch" / "py.typed").is_file()  # typed, for the runtime's type checker
