"""An MCP agent is never told a CLI flag or a shell command line (issue 19, point 3).

The error paths of the exploring tools (schema, get_in, item_schema, iterate_over, grep,
grep_all, summarize, summarize_file, sql) are swept through the real MCP dispatch
(:func:`scratch.mcp.dispatch.run_tool` with a server session): no text of the answer names a
``--flag`` or spells ``scratch COMMAND ...``. The same errors over the CLI name the flags, as a
shell user types them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from scratch.mcp.dispatch import ToolOutcome, run_tool
from scratch.mcp.serve.session import ServerState
from tests.helpers import cli

FLAG = re.compile(r"(?<![\w-])--[a-z]")
COMMANDS = ("head", "tail", "slice", "read", "grep", "schema", "get-in", "get_in",
            "item-schema", "item_schema", "iterate-over", "iterate_over", "sql", "summarize",
            "log", "diff", "history", "restore", "rm", "ls", "write", "ingest", "stats",
            "budget", "export", "tokens", "config")
COMMAND_LINE = re.compile(r"\bscratch (" + "|".join(re.escape(c) for c in COMMANDS) + r")\b")

PODS = {"kind": "List", "items": [
    {"metadata": {"name": f"pod-{i}"}, "status": {"phase": "Failed" if i % 3 else "Running"},
     "message": "x" * 40} for i in range(30)]}
ACCESS = "".join(f'10.0.0.{i % 7} - - [01/Dec/2026:10:{i % 60:02d}:00 +0000] "GET /api/{i % 4} '
                 f'HTTP/1.1" {200 if i % 5 else 404} {100 + i}\n' for i in range(200))
TABLE = "id,name,score\n" + "".join(f"{i},n{i},{i * 3}\n" for i in range(40))

# (tool, MCP arguments, CLI words, what the CLI's message names; "" when nothing particular)
CASES: list[tuple[str, dict[str, Any], list[str], str]] = [
    # iterate-over
    ("iterate_over", {"file": "pods", "path": "items", "count": True,
                      "count_by": "status.phase"},
     ["iterate-over", "pods", "items", "--count", "--count-by", "status.phase"], "--count-by"),
    ("iterate_over", {"file": "pods", "path": "items", "fields": "metadata.name",
                      "desc": True},
     ["iterate-over", "pods", "items", "--fields", "metadata.name", "--desc"], "--sort"),
    ("iterate_over", {"file": "pods", "path": "items", "count": True, "sort": "metadata.name"},
     ["iterate-over", "pods", "items", "--count", "--sort", "metadata.name"], "--sort"),
    ("iterate_over", {"file": "pods", "path": "items", "fields": "a", "where": "  "},
     ["iterate-over", "pods", "items", "--fields", "a", "--where", "  "], "--where"),
    ("iterate_over", {"file": "pods", "path": "items", "fields": "a", "where": "@.x =="},
     ["iterate-over", "pods", "items", "--fields", "a", "--where", "@.x =="], ""),
    ("iterate_over", {"file": "pods", "path": "items",
                      "fields": ",".join(f"f{i}" for i in range(101))},
     ["iterate-over", "pods", "items", "--fields", ",".join(f"f{i}" for i in range(101))],
     "--fields"),
    ("iterate_over", {"file": "pods", "path": "items", "fields": "a", "limit": 0},
     ["iterate-over", "pods", "items", "--fields", "a", "--limit", "0"], "--limit"),
    ("iterate_over", {"file": "pods", "path": "nosuch", "fields": "a"},
     ["iterate-over", "pods", "nosuch", "--fields", "a"], ""),
    ("iterate_over", {"file": "nosuch", "path": "items", "fields": "a"},
     ["iterate-over", "nosuch", "items", "--fields", "a"], ""),
    # get-in
    ("get_in", {"file": "pods", "path": "items", "keys": True, "count": True},
     ["get-in", "pods", "items", "--keys", "--count"], "--keys"),
    ("get_in", {"file": "table", "path": ".", "fields": "id"},
     ["get-in", "table", ".", "--fields", "id"], "--fields"),
    ("get_in", {"file": "pods", "path": "$.items[*]", "keys": True},
     ["get-in", "pods", "$.items[*]", "--keys"], "--keys"),
    ("get_in", {"file": "pods", "path": "kind", "offset": 5},
     ["get-in", "pods", "kind", "--offset", "5"], "--offset"),
    ("get_in", {"file": "pods", "path": "items.0.nosuch"},
     ["get-in", "pods", "items.0.nosuch"], ""),
    ("get_in", {"file": "pods", "path": "items[?"}, ["get-in", "pods", "items[?"], ""),
    ("get_in", {"file": "pods", "path": "items", "limit": 0},
     ["get-in", "pods", "items", "--limit", "0"], "--limit"),
    ("get_in", {"file": "nosuch", "path": "items"}, ["get-in", "nosuch", "items"], ""),
    # grep
    ("grep", {"file": "access", "pattern": "(GET)", "count": True, "count_by": "1"},
     ["grep", "access", "(GET)", "--count", "--count-by", "1"], "--count-by"),
    ("grep", {"file": "access", "pattern": "GET", "count": True, "context": 2},
     ["grep", "access", "GET", "--count", "-C", "2"], "--context"),
    ("grep", {"file": "access", "pattern": "GET", "count": True, "fit": True},
     ["grep", "access", "GET", "--count", "--fit"], "--fit"),
    ("grep", {"file": "access", "pattern": "GET", "offset": 3},
     ["grep", "access", "GET", "--offset", "3"], "--offset"),
    ("grep", {"file": "access", "pattern": "(GET)", "count_by": "1", "max_count": 3},
     ["grep", "access", "(GET)", "--count-by", "1", "-m", "3"], "--max-count"),
    ("grep", {"file": "access", "pattern": "(GET)", "count_by": "1", "invert": True},
     ["grep", "access", "(GET)", "--count-by", "1", "-v"], "--invert-match"),
    ("grep", {"file": "access", "pattern": "(GET)", "count_by": "9"},
     ["grep", "access", "(GET)", "--count-by", "9"], ""),
    ("grep", {"file": "access", "pattern": "a(b"}, ["grep", "access", "a(b"], ""),
    ("grep", {"file": "access", "pattern": "(a)\\1"}, ["grep", "access", "(a)\\1"], ""),
    ("grep", {"file": "access", "pattern": "GET", "max_count": 0},
     ["grep", "access", "GET", "-m", "0"], "--max-count"),
    ("grep", {"file": "access", "pattern": "GET", "from_line": 0},
     ["grep", "access", "GET", "--from-line", "0"], "--from-line"),
    ("grep", {"file": "nosuch", "pattern": "GET"}, ["grep", "nosuch", "GET"], ""),
    ("grep", {"file": "access"}, ["grep", "access"], "PATTERN"),
    ("grep_all", {"pattern": "a(b"}, ["grep", "--all", "a(b"], ""),
    ("grep_all", {}, ["grep", "--all"], "PATTERN"),
    # schema, item-schema
    ("schema", {"file": "pods", "max_depth": 0}, ["schema", "pods", "--depth", "0"], "--depth"),
    ("schema", {"file": "nosuch"}, ["schema", "nosuch"], ""),
    ("item_schema", {"file": "pods", "path": "items", "max_depth": 0},
     ["item-schema", "pods", "items", "--depth", "0"], "--depth"),
    ("item_schema", {"file": "pods", "path": "kind"}, ["item-schema", "pods", "kind"], ""),
    ("item_schema", {"file": "pods", "path": "items", "limit": 0},
     ["item-schema", "pods", "items", "--limit", "0"], "--limit"),
    # summarize
    ("summarize", {"file": "small"}, ["summarize", "small"], ""),
    ("summarize_file", {"path": "small"}, ["summarize", "small"], ""),
    ("summarize", {"file": "nosuch"}, ["summarize", "nosuch"], ""),
    # sql
    ("sql", {"file": "pods"}, ["sql", "pods"], "--describe"),
    ("sql", {"file": "pods", "query": "SELECT 1", "describe": True},
     ["sql", "pods", "SELECT 1", "--describe"], "--describe"),
    ("sql", {"file": "pods", "query": "SELECT 1", "tables": "bad"},
     ["sql", "pods", "SELECT 1", "--table", "bad"], "--table"),
    ("sql", {"file": "pods", "query": "SELECT 1", "limit": 0},
     ["sql", "pods", "SELECT 1", "--limit", "0"], "--limit"),
    ("sql", {"file": "scalar", "query": "SELECT 1"}, ["sql", "scalar", "SELECT 1"], "--path"),
    ("sql", {"file": "pods", "query": "SELECT nosuch FROM entry"},
     ["sql", "pods", "SELECT nosuch FROM entry"], ""),
    ("sql", {"file": "pods", "query": "DELETE FROM entry"},
     ["sql", "pods", "DELETE FROM entry"], ""),
    ("sql", {"file": "nosuch", "query": "SELECT 1"}, ["sql", "nosuch", "SELECT 1"], ""),
]


@pytest.fixture
def store(scratch_home: Path) -> Path:
    assert cli("write", "pods", input=json.dumps(PODS, indent=2) + "\n").code == 0
    assert cli("write", "access", input=ACCESS).code == 0
    assert cli("write", "table", input=TABLE).code == 0
    assert cli("write", "scalar", input='{"a": 1, "b": {"c": 2}}\n').code == 0
    assert cli("write", "small", input="one line\n").code == 0
    return scratch_home


def _texts(out: ToolOutcome) -> list[str]:
    """Every text an agent reads of an outcome: the content blocks, the structured content and
    the metadata (suggestions, next)."""
    texts = list(out.texts)
    if out.structured is not None:
        texts.append(json.dumps(out.structured))
    texts.append(json.dumps(out.meta))
    return texts


def test_no_mcp_error_names_a_cli_flag_or_a_command_line(store: Path) -> None:
    session = ServerState().session_for("conn", "default", None, "test")
    seen = 0
    for tool, args, _words, _flag in CASES:
        out = run_tool(tool, args, session)
        assert not out.ok, (tool, args, out.text)
        assert out.code not in (None, "internal_error"), (tool, args, out.text)
        for text in _texts(out):
            assert not FLAG.search(text), (tool, args, text)
            assert not COMMAND_LINE.search(text), (tool, args, text)
        seen += 1
    assert seen == len(CASES)


def test_mcp_errors_name_the_tools_own_parameters(store: Path) -> None:
    session = ServerState().session_for("conn", "default", None, "test")
    out = run_tool("iterate_over", CASES[0][1], session)
    message = json.loads(out.text)["message"]
    assert message == "'count' and 'count_by' are two answers: give one"
    assert json.loads(out.text)["argument"] == "count_by"
    out = run_tool("schema", {"file": "pods", "max_depth": 0}, session)
    assert "'max_depth'" in json.loads(out.text)["message"]
    out = run_tool("sql", {"file": "pods"}, session)
    error = json.loads(out.text)
    assert "'query'" in error["message"] and "'describe'" in error["message"]
    assert error["suggestions"] == [{"name": "sql", "arguments": {"file": "pods",
                                                                  "describe": True}}]


@pytest.mark.parametrize(("words", "flag"), [(w, f) for _, _, w, f in CASES if f],
                         ids=[" ".join(w[:4]) for _, _, w, f in CASES if f])
def test_the_same_errors_on_the_cli_name_its_flags(store: Path, words: list[str],
                                                   flag: str) -> None:
    r = cli(*words, "--json")
    assert r.code != 0, r.text
    message = r.json["error"]["message"]
    assert flag in message, message
    assert "\x1f" not in message
