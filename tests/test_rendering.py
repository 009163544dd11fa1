"""One JSON envelope for every interface (scratch.answers.kernel.rendering.envelope): the CLI's
``--json`` and MCP's ``--structured`` answers are built in the same place, and differ only in
how a call is written and in what each interface adds by declaration (the version fields; a
text answer's text and the notices, which the CLI prints on stderr)."""

from __future__ import annotations

from scratch.answers.kernel.rendering import ENVELOPE_VERSION, error_envelope
from scratch.answers.kernel.result import Result
from scratch.calls import call
from scratch.cli.render import envelope_error, envelope_ok
from scratch.errors import EntryNotFound
from scratch.mcp.rendering import ToolJson

ANSWER = Result("head", data={"name": "pods", "lines": ["a"], "see": call("schema", ref="pods")},
                next=call("head", ref="pods", lines=5), warnings=("w1",), notices=("n1",),
                meta={"cached": True})


def test_the_cli_and_mcp_envelopes_have_one_shape() -> None:
    cli = envelope_ok(ANSWER)
    mcp = ToolJson().envelope(ANSWER)
    assert list(cli) == ["scratch", "ok", "command", "data", "meta"]
    assert (cli["scratch"], cli["ok"], cli["command"]) == (ENVELOPE_VERSION, True, "head")
    assert list(mcp) == ["data", "meta"]
    assert cli["data"] == {
        "name": "pods", "lines": ["a"],
        "see": {"command": "schema", "args": {"ref": "pods"}, "shell": "scratch schema pods --json"},
        "next": {"command": "head", "args": {"ref": "pods", "lines": 5},
                 "shell": "scratch head pods -n 5 --json"}}
    assert mcp["data"] == {
        "name": "pods", "lines": ["a"], "see": {"name": "schema", "arguments": {"file": "pods"}},
        "next": {"name": "head", "arguments": {"file": "pods", "lines": 5}}}
    assert cli["meta"] == {"cached": True, "warnings": ["w1"]}
    assert mcp["meta"] == {"cached": True, "warnings": ["w1"], "notices": ["n1"]}


def test_a_text_answer_and_a_failure() -> None:
    text = Result("head", text="hello\n")
    assert envelope_ok(text) == {"scratch": 1, "ok": True, "command": "head", "data": None,
                                 "meta": {}}
    assert ToolJson().envelope(text) == {"data": {"text": "hello\n"}, "meta": {}}
    failed = envelope_error("read", EntryNotFound("no entry named 'x'", name="x"))
    assert failed == error_envelope("read", failed["error"])  # type: ignore[arg-type]
    assert failed == {"scratch": 1, "ok": False, "command": "read",
                      "error": {"code": "entry_not_found", "message": "no entry named 'x'",
                                "name": "x"}}
