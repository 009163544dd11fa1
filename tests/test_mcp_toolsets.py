"""What a server offers: ``--tools`` toolsets, the price of tools/list, suggestions that name only
offered tools, and the proxy renaming scratch's tool where an upstream has the name."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from scratch.calls import Call
from scratch.errors import UsageError
from scratch.mcp import specs
from tests.mcp_support import SCRATCH, server_env, stdio_client

FIXTURE = Path(__file__).parent / "data" / "mcp_upstreams" / "fixture_server.py"
# issue 22: what the default tool list of `mcp serve`, and scratch's addition to its upstreams'
# in `mcp proxy`, may cost (o200k_base tokens of the tools/list JSON)
BOUNDS = {"explore": 2500, "proxy": 1500}
AURA = {"head", "tail", "slice", "grep", "schema", "item_schema", "get_in", "iterate_over"}


def listed_tokens(choice: str) -> int:
    from scratch.mcp.serve.server import tool_of
    from scratch.tokens.models import EncodingSpec
    from scratch.tokens.tokenizer import count_text
    listed = [tool_of(spec).model_dump(by_alias=True, mode="json", exclude_none=True)
              for spec in specs.toolset(choice)]
    return count_text(orjson.dumps({"tools": listed}).decode(),
                      EncodingSpec("o200k_base", None, "o200k_base"))


@pytest.fixture
def serving() -> Iterator[None]:
    yield
    specs.serve(None)  # every tool again, for the other tests of this process


@pytest.mark.parametrize("choice", sorted(BOUNDS))
def test_the_default_tool_lists_stay_within_their_price(choice: str) -> None:
    assert listed_tokens(choice) <= BOUNDS[choice]


def test_explore_is_auras_tools_plus_sql_read_and_summarize() -> None:
    names = {t.name for t in specs.toolset("explore")}
    assert names == AURA | {"sql", "read", "summarize"}
    assert {t.name for t in specs.toolset("proxy")} <= names
    files = {t.name for t in specs.toolset("files")}
    assert {"read_file", "write_file", "append_log", "read_log", "grep_all"} <= files
    assert not files & names
    assert [t.name for t in specs.toolset("all")] == [t.name for t in specs.tools()]
    with pytest.raises(UsageError):
        specs.toolset("everything")


def test_a_suggestion_to_a_tool_outside_the_set_is_not_offered(serving: None) -> None:
    from scratch.mcp.rendering import calls_data, error_object
    read = Call("read", {"ref": "notes"})
    log = Call("log read", {"name": "build"})
    assert specs.to_tool_call("log read", {"name": "build"}) is not None  # every tool: offered
    specs.serve(specs.offer("explore"))
    assert specs.to_tool_call("log read", {"name": "build"}) is None
    assert specs.not_offered("log read", {"name": "build"})
    assert not specs.not_offered("read", {"ref": "notes"})
    error = UsageError("no such thing", code="not_found", suggestions=[read, log, "advice"])
    shown = error_object(error)["suggestions"]
    assert shown == [{"name": "read", "arguments": {"file": "notes"}}, "advice"]
    assert calls_data([read, log]) == [{"name": "read", "arguments": {"file": "notes"}}]
    assert specs.spec_of("read_log") is None and specs.spec_of("head") is not None


def test_a_renamed_tool_is_named_as_offered_in_suggestions(serving: None) -> None:
    offered = specs.offer("all", {"read_file", "head"})
    assert offered["read_file"] == "scratch_read_file" and offered["head"] == "scratch_head"
    assert offered["slice"] == "slice"
    specs.serve(offered)
    call = specs.to_tool_call("head", {"ref": "notes", "lines": 5})
    assert call == {"name": "scratch_head", "arguments": {"file": "notes", "lines": 5}}
    spec = specs.spec_of("scratch_head")
    assert spec is not None and spec.name == "head"
    assert specs.spec_of("head") is None  # the upstream's name: not scratch's tool


def test_tools_all_lists_every_declared_tool_and_the_default_only_explore(
        tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    every = stdio_client(tmp_path / "store", tools="all")
    try:
        assert [t.name for t in every.tools()] == [t.name for t in specs.tools()]
    finally:
        every.close()
    default = stdio_client(tmp_path / "store", tools="explore")
    try:
        assert {t.name for t in default.tools()} == {t.name for t in specs.toolset("explore")}
        from mcp.shared.exceptions import MCPError
        with pytest.raises(MCPError, match="Unknown tool: read_log"):
            default.call("read_log", {"name": "build"})
    finally:
        default.close()


def test_the_toolset_is_a_setting_refused_when_unknown(tmp_path: Path) -> None:
    env = server_env(tmp_path / "store", SCRATCH_MCP_TOOLS="everything")
    done = subprocess.run([*SCRATCH, "mcp", "serve"], env=env, capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert "mcp.tools must be one of explore, files, run, all, not 'everything'" in done.stderr


def test_the_proxy_renames_scratchs_tool_where_an_upstream_has_the_name(
        tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from mcp import StdioServerParameters

    from tests.mcp_support import McpClient
    params = StdioServerParameters(
        command=SCRATCH[0], args=[*SCRATCH[1:], "mcp", "proxy", "--name", "fx", "--",
                                  sys.executable, str(FIXTURE)],
        env=server_env(tmp_path / "store"))
    client = McpClient(params)
    try:
        names = [t.name for t in client.tools()]
        # the fixture's own head keeps its name; scratch's is the one renamed
        assert "head" in names and "scratch_head" in names and "fx__head" not in names
        assert client.text("head") == "the fixture's own head"
        from tests.data.mcp_upstreams.fixture_server import TOOLS
        own = set(names) - {t.name for t in TOOLS}
        assert own == {"scratch_head", *specs.PROXY_TOOLS} - {"head"}
        # scratch's head, as offered, explores a stored output
        stored = client.call("text", {"size": 200_000}).meta["scratch"]["stored"]
        assert client.text("scratch_head", {"file": stored, "lines": 1}).startswith("1:")
    finally:
        client.close()
