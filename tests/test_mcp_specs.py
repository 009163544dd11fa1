"""The MCP tool table: schemas, annotations, argument checks and tool calls from core calls."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from scratch.calls import Call, call
from scratch.mcp.rendering import error_object, spell_call
from scratch.mcp.specs import BY_NAME, TOOLS, ArgumentError, to_core_args, to_tool_call, tool_for

REPO = Path(__file__).resolve().parents[1]
# every command of the core contract (the CLI's spelling)
CONTRACT = ["head", "tail", "slice", "read", "grep", "schema", "get-in", "item-schema",
            "iterate-over", "sql", "summarize", "log read", "log tail", "log append", "diff", "history",
            "restore", "rm", "ls", "write", "ingest", "stats", "budget", "budget used",
            "budget reset", "budget set-window"]


def test_tool_names_follow_aura_and_scratchpad_mcp() -> None:
    # by toolset (explore, files, session, run), then by command: the order of the declarations
    assert [t.name for t in TOOLS] == [
        "get_in", "grep", "head", "item_schema", "iterate_over", "read", "schema",
        "slice", "sql", "summarize", "tail",
        "diff", "grep_all", "history", "append_log", "read_log", "tail_log", "list_files", "read_file",
        "restore", "delete_file", "summarize_file", "write_file",
        "budget", "budget_reset", "budget_set_window", "budget_used", "list_calls", "ingest",
        "redactions", "get_usage_stats", "sync", "sync_status",
        "list_artifacts", "write_artifact", "read_artifact", "finish"]
    params = {t.name: [p.name for p in t.params] for t in TOOLS}
    assert params["head"][:2] == ["file", "lines"]
    assert params["slice"][:3] == ["file", "start", "end"]
    assert params["grep"][:3] == ["file", "pattern", "context"]
    assert params["schema"] == ["file", "path", "max_depth"]
    assert params["item_schema"][:4] == ["file", "path", "offset", "limit"]
    assert params["get_in"][:4] == ["file", "path", "offset", "limit"]
    assert params["iterate_over"][:3] == ["file", "path", "fields"]
    assert params["sql"][:2] == ["file", "query"]
    assert params["write_file"][:2] == ["path", "content"]
    assert params["read_file"][:2] == ["path", "since_version"]
    assert params["append_log"] == ["path", "entry", "no_redact"]
    assert params["read_log"][:2] == ["path", "since_entry"]


def test_every_schema_is_closed_and_every_default_documented() -> None:
    for tool in TOOLS:
        schema = tool.input_schema()
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        for p in tool.params:
            assert schema["properties"][p.name]["type"] in ("string", "integer", "boolean")
            assert schema["properties"][p.name]["description"], (tool.name, p.name)
        assert tool.description.endswith(".")


def test_annotations_mark_readers_deletes_and_idempotent_writes() -> None:
    readers = {t.name for t in TOOLS if t.annotations()["readOnlyHint"]}
    assert {"head", "grep", "get_in", "read_file", "list_files", "budget", "history",
            "get_usage_stats"} <= readers
    assert not readers & {"write_file", "append_log", "delete_file", "ingest", "restore",
                          "budget_reset"}
    destructive = {t.name for t in TOOLS if t.annotations().get("destructiveHint")}
    assert destructive == {"delete_file"}
    assert BY_NAME["write_file"].annotations()["idempotentHint"] is True
    assert BY_NAME["append_log"].annotations()["idempotentHint"] is False
    assert "idempotentHint" not in BY_NAME["head"].annotations()
    assert all(t.annotations()["openWorldHint"] is False for t in TOOLS)


def test_arguments_become_core_arguments_with_defaults_filled_in() -> None:
    assert to_core_args(BY_NAME["head"], {"file": "pods"}) == {
        "ref": "pods", "lines": 50, "numbers": True, "fit": False}
    assert to_core_args(BY_NAME["schema"], {"file": "p", "max_depth": 2}) == {
        "ref": "p", "depth": 2}
    assert to_core_args(BY_NAME["grep"], {"file": "p", "pattern": "x"})["context"] == 3
    assert to_core_args(BY_NAME["iterate_over"], {
        "file": "p", "path": "items", "fields": "a, b.c,"})["fields"] == ["a", "b.c"]
    assert to_core_args(BY_NAME["restore"], {"path": "notes", "version": 2}) == {
        "ref": "notes@2"}
    assert to_core_args(BY_NAME["append_log"], {"path": "ev", "entry": "x"}) == {
        "name": "ev", "entries": [b"x"], "no_redact": False}
    assert to_core_args(BY_NAME["grep_all"], {"pattern": "x"})["all"] is True
    assert to_core_args(BY_NAME["get_in"], {"file": "p", "path": ".", "limit": None}) == {
        "ref": "p", "path": ".", "offset": 0, "fit": False, "keys": False, "count": False}
    assert to_core_args(BY_NAME["iterate_over"], {
        "file": "p", "path": ".", "count_by": "status, method"}) == {
        "ref": "p", "path": ".", "count_by": ["status", "method"], "offset": 0, "desc": False,
        "count": False, "fit": False}
    assert to_core_args(BY_NAME["sql"], {"file": "a", "query": "SELECT 1",
                                         "tables": "u=users.csv,o=orders@2"}) == {
        "ref": "a", "query": "SELECT 1", "table": ["u=users.csv", "o=orders@2"],
        "describe": False, "offset": 0, "fit": False}


def test_grep_context_defaults_to_3_for_matches_and_to_none_for_counts() -> None:
    """Aura's context=3 shows lines around matches; a count has none, and the core refuses a
    count with context, so the default is not passed when count or count_by is given."""
    grep = BY_NAME["grep"]
    assert to_core_args(grep, {"file": "p", "pattern": "x"})["context"] == 3
    assert "context" not in to_core_args(grep, {"file": "p", "pattern": "x", "count": True})
    assert "context" not in to_core_args(grep, {"file": "p", "pattern": "(x)", "count_by": "1"})
    assert to_core_args(grep, {"file": "p", "pattern": "x", "count": False})["context"] == 3
    assert to_core_args(grep, {"file": "p", "pattern": "x", "count": True,
                               "context": 2})["context"] == 2  # given: the core says no


@pytest.mark.parametrize(("tool", "args", "message"), [
    ("head", {"file": "p", "lines": "20"}, "head: argument 'lines' must be an integer, not str"),
    ("head", {"file": "p", "lines": True}, "head: argument 'lines' must be an integer, not bool"),
    ("head", {"file": "p", "lines": 0}, "head: argument 'lines' must be >= 1, not 0"),
    ("head", {}, "head: missing required argument 'file'"),
    ("head", {"file": "p", "n": 3}, "head: unknown argument 'n'; it takes file, lines, fit, "
                                    "numbers"),
    ("head", {"file": ""}, "head: argument 'file' must not be empty"),
    ("grep", {"file": "p", "pattern": "a" * 1025},
     "grep: argument 'pattern' is 1,025 characters, over its limit of 1,024"),
    ("grep", {"file": "p", "pattern": "x", "fit": "yes"},
     "grep: argument 'fit' must be true or false, not str"),
    ("ingest", {"content": "x", "format": "xml"}, "ingest: argument 'format' must be one of "
                                                  "json, ndjson, yaml, csv, tsv, markdown, log, "
                                                  "text, not 'xml'"),
    ("budget", {"x": 1}, "budget: unknown argument 'x'; it takes no arguments"),
])
def test_bad_arguments_are_refused_by_name(tool: str, args: dict, message: str) -> None:
    with pytest.raises(ArgumentError) as err:
        to_core_args(BY_NAME[tool], args)
    assert err.value.message == message and err.value.code == "invalid_arguments"


def test_negative_offsets_reach_the_core_where_it_counts_from_the_end() -> None:
    for tool in ("get_in", "item_schema", "iterate_over", "sql", "grep"):
        schema = BY_NAME[tool].input_schema()["properties"]["offset"]
        assert "minimum" not in schema and "negative" in schema["description"], tool
    assert to_core_args(BY_NAME["iterate_over"], {"file": "p", "path": "items", "fields": "a",
                                                  "offset": -20})["offset"] == -20
    with pytest.raises(ArgumentError, match="'lines' must be >= 1"):
        to_core_args(BY_NAME["head"], {"file": "p", "lines": -20})


def test_arguments_must_be_an_object() -> None:
    with pytest.raises(ArgumentError, match="arguments must be an object"):
        to_core_args(BY_NAME["head"], ["pods"])


@pytest.mark.parametrize(("core", "tool_call"), [
    (call("head", ref="pods", lines=20), {"name": "head", "arguments": {"file": "pods",
                                                                      "lines": 20}}),
    (call("head", ref="pods", lines=400, fit=True),
     {"name": "head", "arguments": {"file": "pods", "lines": 400, "fit": True}}),
    (call("tail", ref="app", lines=7, numbers=False),
     {"name": "tail", "arguments": {"file": "app", "lines": 7, "numbers": False}}),
    (call("slice", ref="a b", start=3, end=9, from_byte=120, fit=True),
     {"name": "slice", "arguments": {"file": "a b", "start": 3, "end": 9, "fit": True,
                                     "from_byte": 120}}),
    (call("grep", ref="pods", pattern="error|fail", ignore_case=True, max_count=20, fit=True),
     {"name": "grep", "arguments": {"file": "pods", "pattern": "error|fail", "context": 0,
                                    "ignore_case": True, "max_count": 20, "fit": True}}),
    (call("grep", ref="pods", pattern="x", context=3),
     {"name": "grep", "arguments": {"file": "pods", "pattern": "x"}}),
    (call("grep", pattern="timeout", all=True, max_count=5),
     {"name": "grep_all", "arguments": {"pattern": "timeout", "context": 0, "max_count": 5}}),
    (call("schema", ref="pods", depth=2),
     {"name": "schema", "arguments": {"file": "pods", "max_depth": 2}}),
    (call("get-in", ref="pods", path='metadata.labels."app.kubernetes.io/name"', offset=10,
          limit=5),
     {"name": "get_in", "arguments": {"file": "pods",
                                      "path": 'metadata.labels."app.kubernetes.io/name"',
                                      "offset": 10, "limit": 5}}),
    (call("item-schema", ref="pods", path="items", depth=2),
     {"name": "item_schema", "arguments": {"file": "pods", "path": "items", "max_depth": 2}}),
    (call("iterate-over", ref="pods", path="items", fields=["metadata.name", "status.phase"],
          where="@.status.phase == 'Failed'", limit=20),
     {"name": "iterate_over", "arguments": {"file": "pods", "path": "items",
                                            "fields": "metadata.name,status.phase",
                                            "where": "@.status.phase == 'Failed'",
                                            "limit": 20}}),
    (call("read", ref="notes@2", since_version=1),
     {"name": "read", "arguments": {"file": "notes@2", "since_version": 1}}),
    (call("log read", name="events", since=100, limit=50, fit=True),
     {"name": "read_log", "arguments": {"path": "events", "since_entry": 100, "limit": 50,
                                        "fit": True}}),
    (call("log tail", name="events", lines=5),
     {"name": "tail_log", "arguments": {"path": "events", "lines": 5}}),
    (call("diff", name="notes", a=1, b=3),
     {"name": "diff", "arguments": {"path": "notes", "a": 1, "b": 3}}),
    (call("restore", ref="notes@2"),
     {"name": "restore", "arguments": {"path": "notes", "version": 2}}),
    (call("ls"), {"name": "list_files", "arguments": {}}),
    (call("ls", prefix="kubectl_get/"),
     {"name": "list_files", "arguments": {"prefix": "kubectl_get/"}}),
    (call("budget"), {"name": "budget", "arguments": {}}),
    (call("budget reset"), {"name": "budget_reset", "arguments": {}}),
    (call("budget used", tokens=48210), {"name": "budget_used", "arguments": {"tokens": 48210}}),
    (call("budget set-window", tokens=1000000),
     {"name": "budget_set_window", "arguments": {"tokens": 1000000}}),
    (call("summarize", ref="pods"), {"name": "summarize", "arguments": {"file": "pods"}}),
    # issue 11's counting, sorting and SQL, as the pointer and next build them
    (call("iterate-over", ref="access", path=".", count_by=["status"]),
     {"name": "iterate_over", "arguments": {"file": "access", "path": ".",
                                            "count_by": "status"}}),
    (call("iterate-over", ref="pods", path="items", where="@.spec.nodeName", count=True),
     {"name": "iterate_over", "arguments": {"file": "pods", "path": "items",
                                            "where": "@.spec.nodeName", "count": True}}),
    (call("iterate-over", ref="pods", path="items", fields=["metadata.name"],
          sort="metadata.creationTimestamp", desc=True, offset=40, limit=20, fit=True),
     {"name": "iterate_over", "arguments": {"file": "pods", "path": "items",
                                            "fields": "metadata.name", "offset": 40,
                                            "limit": 20, "sort": "metadata.creationTimestamp",
                                            "desc": True, "fit": True}}),
    (call("iterate-over", ref="a", path=".", count_by=["status", "method"], offset=10,
          limit=10, fit=True),
     {"name": "iterate_over", "arguments": {"file": "a", "path": ".", "offset": 10,
                                            "limit": 10, "count_by": "status,method",
                                            "fit": True}}),
    (call("get-in", ref="pods", path="items.0", keys=True),
     {"name": "get_in", "arguments": {"file": "pods", "path": "items.0", "keys": True}}),
    (call("get-in", ref="pods", path="$.items[?@.status.phase=='Failed']",
          fields=["metadata.name", "status.reason"]),
     {"name": "get_in", "arguments": {"file": "pods",
                                      "path": "$.items[?@.status.phase=='Failed']",
                                      "fields": "metadata.name,status.reason"}}),
    (call("get-in", ref="pods", path="$.items[*]", count=True),
     {"name": "get_in", "arguments": {"file": "pods", "path": "$.items[*]", "count": True}}),
    (call("grep", ref="access", pattern='" (\\d{3}) ', count_by="1"),
     {"name": "grep", "arguments": {"file": "access", "pattern": '" (\\d{3}) ',
                                    "count_by": "1"}}),
    (call("grep", ref="app", pattern="ERROR", count=True, max_count=100),
     {"name": "grep", "arguments": {"file": "app", "pattern": "ERROR", "max_count": 100,
                                    "count": True}}),
    (call("grep", ref="app", pattern="(?P<lvl>[A-Z]+)", count_by="lvl", offset=10, limit=5,
          fit=True),
     {"name": "grep", "arguments": {"file": "app", "pattern": "(?P<lvl>[A-Z]+)",
                                    "count_by": "lvl", "offset": 10, "limit": 5,
                                    "fit": True}}),
    (call("sql", ref="access", query="SELECT path, count(*) AS n FROM entry GROUP BY path"),
     {"name": "sql", "arguments": {"file": "access",
                                   "query": "SELECT path, count(*) AS n FROM entry GROUP BY "
                                            "path"}}),
    (call("sql", ref="pods", describe=True),
     {"name": "sql", "arguments": {"file": "pods", "describe": True}}),
    (call("sql", ref="a", query="SELECT * FROM entry JOIN u USING (id)", table=["u=users"],
          path="items", offset=100, limit=50, fit=True),
     {"name": "sql", "arguments": {"file": "a", "query": "SELECT * FROM entry JOIN u USING (id)",
                                   "tables": "u=users", "path": "items", "offset": 100,
                                   "limit": 50, "fit": True}}),
    (call("history", name="notes"), {"name": "history", "arguments": {"path": "notes"}}),
])
def test_core_calls_become_tool_calls_and_back(core: Call, tool_call: dict) -> None:
    assert to_tool_call(core.command, core.args) == tool_call
    # and back: the tool call runs the same core call, defaults filled in
    back = to_core_args(BY_NAME[tool_call["name"]], tool_call["arguments"])
    for key, value in core.args.items():
        assert back[key] == value, key


def test_a_call_inside_text_is_its_tool_calls_json() -> None:
    assert spell_call(call("head", ref="pods", lines=20)) == (
        '{"name":"head","arguments":{"file":"pods","lines":20}}')
    # no tool runs a write from a file on disk: written as the core call, and never offered
    assert spell_call(call("write", name="x", source="/tmp/x")) == 'write name="x" source="/tmp/x"'
    from scratch.errors import EntryNotFound
    refusal = EntryNotFound("no entry named 'x'", suggestions=[
        call("write", name="x", source="/tmp/x"), call("ls"), "advice stays text"])
    assert error_object(refusal)["suggestions"] == [{"name": "list_files", "arguments": {}},
                                                    "advice stays text"]


def test_content_with_a_lone_surrogate_is_refused_by_name() -> None:
    with pytest.raises(ArgumentError, match=r"lone surrogate \(U\+D800\) at character 1"):
        to_core_args(BY_NAME["write_file"], {"path": "p", "content": "a\ud800b"})
    assert to_core_args(BY_NAME["write_file"], {"path": "p", "content": "é\n"})["content"] == (
        "é\n".encode())


def test_every_core_command_has_a_tool() -> None:
    for command in CONTRACT:
        tool = tool_for(command, {})
        assert tool is not None and tool.primary, command


def test_every_command_the_core_suggests_has_a_tool() -> None:
    """Scan the answers layer and the store for the calls they build (suggestions, next, the
    pointer's menu): each names a command a tool spells, except those only a person runs."""
    seen = set()
    for path in [*(REPO / "scratch" / "answers").rglob("*.py"),
                 *(REPO / "scratch" / "store").rglob("*.py"),
                 *(REPO / "scratch" / "tokens").rglob("*.py")]:
        for m in re.finditer(r'call\("([a-z][a-z -]*)"', path.read_text()):
            seen.add(m.group(1))
    assert seen >= {"head", "tail", "slice", "grep", "schema", "get-in", "item-schema",
                    "iterate-over", "read", "ls", "log read", "budget", "budget reset"}
    for command in seen - {"write", "export"}:  # from a file on disk: not for a tool
        assert tool_for(command, {}) is not None, command


# core arguments no tool takes, and why: each is decided by the interface or the session, or
# reads a file on disk (see scratch.mcp.dispatch)
NOT_TOOL_ARGUMENTS = {
    ("iterate-over", "preview_chars"),  # the core's cell cut; the CLI has no option for it
    # the CLI's name for a map's key column: over MCP rows carry _key (the tool lists' price)
    ("iterate-over", "key_field"), ("item-schema", "key_field"), ("get-in", "key_field"),
    ("sql", "key_field"),
    ("read", "terminal"),  # set by dispatch: the answer goes into a model
    ("stats", "agent"),  # set by dispatch: the session's own agent
    # set by dispatch: the session's own run (the command line names it: RUN)
    ("artifact put", "run"), ("artifact ls", "run"), ("artifact read", "run"),
    ("artifact put", "source"),  # a file on the server's disk
    ("sync", "all"),  # every agent's namespace: an agent must not act on other agents
    ("sync", "replace_history"),  # force-pushing a remote's history is the person's choice
    ("write", "source"),  # a file on the server's disk
    ("log append", "lines"),  # the CLI's one ENTRY or stdin split at newlines
    ("ingest", "stream"), ("ingest", "progress"),  # the CLI's stdin and its progress line
    # set by the MCP proxy for the upstream result it stores (scratch.mcp.proxy.intercept)
    ("ingest", "partial"), ("ingest", "companions"), ("ingest", "info"), ("ingest", "notices"),
}


def test_every_core_argument_has_a_parameter() -> None:
    """What a core command takes, some tool of it takes too (else a suggestion or next that
    sets it could not be a tool call: the pointer's count_by once fell back to plain text)."""
    from scratch.answers.kernel.catalogue import declaration
    from scratch.declare import params

    def core_args(command: str) -> set[str]:
        return {p.name for p in params(declaration(command))}

    for command in {t.command for t in TOOLS}:
        taken = set()
        for tool in TOOLS:
            if tool.command == command:
                shape = to_core_args(tool, {p.name: _sample(p) for p in tool.params})
                taken |= set(shape) | {p.core for p in tool.params} | set(tool.fixed)
        core = core_args(command)
        missing = {(command, a) for a in core - taken} - NOT_TOOL_ARGUMENTS
        assert not missing, missing


def _sample(p: Any) -> Any:
    kind = p.schema["type"]
    if kind == "integer":
        return max(1, p.schema.get("minimum", 1))
    if kind == "boolean":
        return False
    return p.schema.get("enum", ["x"])[0]
