"""The MCP tool table: schemas, annotations, argument checks and tool calls from core calls."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scratch.mcp.shellcalls import GRAMMARS, parse_cli_line
from scratch.mcp.specs import BY_NAME, TOOLS, ArgumentError, to_core_args, to_tool_call, tool_for

REPO = Path(__file__).resolve().parents[1]
# every command of the core contract (the CLI's spelling)
CONTRACT = ["head", "tail", "slice", "read", "grep", "schema", "get-in", "item-schema",
            "iterate-over", "summarize", "log read", "log tail", "log append", "diff", "history",
            "restore", "rm", "ls", "write", "ingest", "stats", "budget", "budget used",
            "budget reset", "budget set-window"]


def test_tool_names_follow_aura_and_scratchpad_mcp() -> None:
    assert [t.name for t in TOOLS] == [
        "head", "tail", "slice", "grep", "grep_all", "schema", "item_schema", "get_in",
        "iterate_over", "read", "summarize", "write_file", "read_file", "append_log",
        "read_log", "tail_log", "list_files", "delete_file", "summarize_file",
        "get_usage_stats", "history", "diff", "restore", "ingest", "budget", "budget_used",
        "budget_reset", "budget_set_window"]
    params = {t.name: [p.name for p in t.params] for t in TOOLS}
    assert params["head"][:2] == ["file", "lines"]
    assert params["slice"][:3] == ["file", "start", "end"]
    assert params["grep"][:3] == ["file", "pattern", "context"]
    assert params["schema"] == ["file", "max_depth"]
    assert params["item_schema"][:4] == ["file", "path", "offset", "limit"]
    assert params["get_in"][:4] == ["file", "path", "offset", "limit"]
    assert params["iterate_over"][:3] == ["file", "path", "fields"]
    assert params["write_file"][:2] == ["path", "content"]
    assert params["read_file"][:2] == ["path", "since_version"]
    assert params["append_log"] == ["path", "entry"]
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
        "name": "ev", "entries": ["x"]}
    assert to_core_args(BY_NAME["grep_all"], {"pattern": "x"})["all"] is True
    assert to_core_args(BY_NAME["get_in"], {"file": "p", "path": ".", "limit": None}) == {
        "ref": "p", "path": ".", "offset": 0, "fit": False}


@pytest.mark.parametrize(("tool", "args", "message"), [
    ("head", {"file": "p", "lines": "20"}, "head: argument 'lines' must be an integer, not str"),
    ("head", {"file": "p", "lines": True}, "head: argument 'lines' must be an integer, not bool"),
    ("head", {"file": "p", "lines": 0}, "head: argument 'lines' must be >= 1, not 0"),
    ("head", {}, "head: missing required argument 'file'"),
    ("head", {"file": "p", "n": 3}, "head: unknown argument 'n'; it takes file, lines, numbers, "
                                    "fit"),
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


def test_arguments_must_be_an_object() -> None:
    with pytest.raises(ArgumentError, match="arguments must be an object"):
        to_core_args(BY_NAME["head"], ["pods"])


@pytest.mark.parametrize(("line", "call"), [
    ("scratch head pods -n 20", {"name": "head", "arguments": {"file": "pods", "lines": 20}}),
    ("scratch head pods -n 400 --fit",
     {"name": "head", "arguments": {"file": "pods", "lines": 400, "fit": True}}),
    ("scratch tail app -n 7 --no-numbers",
     {"name": "tail", "arguments": {"file": "app", "lines": 7, "numbers": False}}),
    ("scratch slice 'a b' 3 9 --from-byte 120 --fit",
     {"name": "slice", "arguments": {"file": "a b", "start": 3, "end": 9, "fit": True,
                                     "from_byte": 120}}),
    ("scratch grep pods 'error|fail' -i -m 20 --fit",
     {"name": "grep", "arguments": {"file": "pods", "pattern": "error|fail", "context": 0,
                                    "ignore_case": True, "max_count": 20, "fit": True}}),
    ("scratch grep pods x -C 3", {"name": "grep", "arguments": {"file": "pods", "pattern": "x"}}),
    ("scratch grep --all timeout -m 5",
     {"name": "grep_all", "arguments": {"pattern": "timeout", "context": 0, "max_count": 5}}),
    ("scratch schema pods --depth 2",
     {"name": "schema", "arguments": {"file": "pods", "max_depth": 2}}),
    ("scratch get-in pods 'metadata.labels.\"app.kubernetes.io/name\"' --offset 10 --limit 5",
     {"name": "get_in", "arguments": {"file": "pods",
                                      "path": 'metadata.labels."app.kubernetes.io/name"',
                                      "offset": 10, "limit": 5}}),
    ("scratch item-schema pods items --depth 2",
     {"name": "item_schema", "arguments": {"file": "pods", "path": "items", "max_depth": 2}}),
    ("scratch iterate-over pods items --fields metadata.name,status.phase --where "
     "\"@.status.phase == 'Failed'\" --limit 20",
     {"name": "iterate_over", "arguments": {"file": "pods", "path": "items",
                                            "fields": "metadata.name,status.phase",
                                            "where": "@.status.phase == 'Failed'",
                                            "limit": 20}}),
    ("scratch read notes@2 --since-version 1",
     {"name": "read", "arguments": {"file": "notes@2", "since_version": 1}}),
    ("scratch log read events --since 100 --limit 50 --fit",
     {"name": "read_log", "arguments": {"path": "events", "since_entry": 100, "limit": 50,
                                        "fit": True}}),
    ("scratch log tail events -n 5", {"name": "tail_log", "arguments": {"path": "events",
                                                                        "lines": 5}}),
    ("scratch diff notes 1 3", {"name": "diff", "arguments": {"path": "notes", "a": 1, "b": 3}}),
    ("scratch restore notes@2", {"name": "restore", "arguments": {"path": "notes",
                                                                  "version": 2}}),
    ("scratch ls", {"name": "list_files", "arguments": {}}),
    ("scratch ls kubectl_get/", {"name": "list_files", "arguments": {"prefix": "kubectl_get/"}}),
    ("scratch budget", {"name": "budget", "arguments": {}}),
    ("scratch budget reset", {"name": "budget_reset", "arguments": {}}),
    ("scratch budget used 48210", {"name": "budget_used", "arguments": {"tokens": 48210}}),
    ("scratch summarize pods", {"name": "summarize", "arguments": {"file": "pods"}}),
])
def test_cli_suggestions_become_tool_calls(line: str, call: dict) -> None:
    parsed = parse_cli_line(line)
    assert parsed is not None
    assert to_tool_call(*parsed) == call
    # and back: the tool call runs the same core call, defaults filled in
    core = to_core_args(BY_NAME[call["name"]], call["arguments"])
    for key, value in parsed[1].items():
        assert core[key] == value, key


@pytest.mark.parametrize("line", ["ask for less: fewer lines", "scratch frobnicate x",
                                  "scratch head pods --bogus", "scratch slice pods 1",
                                  "scratch head 'unterminated"])
def test_lines_that_are_not_commands_stay_text(line: str) -> None:
    assert parse_cli_line(line) is None


def test_every_core_command_has_a_tool_and_a_grammar() -> None:
    for command in CONTRACT:
        tool = tool_for(command, {})
        assert tool is not None and tool.primary, command
        if command not in ("write", "ingest"):  # content on stdin: never a suggestion
            assert command in GRAMMARS, command


def test_every_command_the_core_suggests_has_a_tool() -> None:
    """Scan the core for the CLI lines it builds (suggestions, next, pointer menus)."""
    seen = set()
    for path in (REPO / "scratch").rglob("*.py"):
        if path.parts[-2] in ("cli", "docs", "mcp"):
            continue
        for m in re.finditer(r'"scratch ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?', path.read_text()):
            first, second = m.group(1), m.group(2)
            if first == "agent":  # the git author name, not a command
                continue
            seen.add(f"{first} {second}" if first in ("log", "budget") and second else first)
    assert seen >= {"head", "tail", "slice", "grep", "schema", "get-in", "item-schema",
                    "iterate-over", "read", "ls", "log read", "log tail", "budget"}
    for command in seen:
        assert tool_for(command, {}) is not None, command
