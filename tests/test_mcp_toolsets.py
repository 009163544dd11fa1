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
    with specs.serving():  # what the test serves ends with it: every tool again after
        yield


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


# issue 30 items 1 and 3: how an entry comes to be, said from the tools a server offers, and
# the price of what the proxy adds to its upstreams' list

def _tokens(tools: list[object]) -> int:
    from scratch.tokens.models import EncodingSpec
    from scratch.tokens.tokenizer import count_text
    return count_text(orjson.dumps({"tools": tools}).decode(),
                      EncodingSpec("o200k_base", None, "o200k_base"))


def _wire(tool: object) -> object:
    return tool.model_dump(by_alias=True, mode="json", exclude_none=True)  # type: ignore[attr-defined]


def test_the_proxy_adds_at_most_1500_tokens_and_says_how_an_entry_comes_to_be(
        tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from mcp import StdioServerParameters

    from tests.data.mcp_upstreams.fixture_server import TOOLS
    from tests.mcp_support import McpClient
    params = StdioServerParameters(
        command=SCRATCH[0], args=[*SCRATCH[1:], "mcp", "proxy", "--name", "fx", "--",
                                  sys.executable, str(FIXTURE)],
        env=server_env(tmp_path / "store"))
    client = McpClient(params, mode="legacy")
    try:
        tools = client.tools()
        theirs = {t.name for t in TOOLS}
        upstream = [_wire(t) for t in tools if t.name in theirs]
        added = _tokens([_wire(t) for t in tools]) - _tokens(upstream)
        assert 0 < added <= BOUNDS["proxy"], added
        own = [t for t in tools if t.name not in theirs]
        assert {t.name for t in own} == {"scratch_head", *specs.PROXY_TOOLS} - {"head"}
        for tool in own:
            assert tool.input_schema["properties"]["file"]["description"] == (
                "Entry a pointer names: a big result of a fx tool (e.g. text) is stored, its "
                "pointer returned.")
        refused = client.call("schema", {"file": "nope"})
        assert refused.is_error
        message = orjson.loads(refused.content[0].text)["message"]
        assert message.endswith(
            "(from $SCRATCH_HOME); entries are stored tool outputs: call a tool of fx (text, "
            "head, json_doc, structured, image, error, progress, add_tool, … 12 more): a "
            "result over its threshold is stored as an entry, and the pointer you get "
            "instead names it"), message
    finally:
        client.close()


def test_the_proxys_own_tools_stay_within_the_bound_whatever_the_upstreams_are_named(
        serving: None) -> None:
    """The longest names an entry argument gives for example (3 tokens of server, 3 of tool):
    the addition still fits, with room left; longer names are not given."""
    pytest.importorskip("mcp")
    from scratch.mcp.proxy.server import own_tools
    specs.serve(specs.offer("proxy"))
    specs.serve_upstream([specs.UpstreamTool("kube-ro", "list_namespaced_custom_objects_x",
                                             True),
                          specs.UpstreamTool("kube-ro", "describe_pod", True)])
    longest = own_tools()
    assert "a kube-ro tool (e.g. describe_pod)" in orjson.dumps(longest).decode()
    assert _tokens(longest) <= BOUNDS["proxy"] - 50
    specs.serve_upstream([specs.UpstreamTool("x1y2z3w4", "q7z9x8w6v5t4r3p2", True)])
    text = own_tools()[0]["inputSchema"]["properties"]["file"]["description"]
    assert text == "Entry a pointer names: a big result of an upstream tool is stored, its " \
        "pointer returned."


@pytest.mark.parametrize("tools, said", [
    ("files", "entries are stored tool outputs: write_file stores text you pass as a "
              "versioned entry"),
    ("all", "entries are stored tool outputs: ingest stores a tool's output you pass as "
            "content; write_file stores text you pass as a versioned entry"),
])
def test_an_unknown_entry_says_how_this_servers_tools_make_one(tmp_path: Path, tools: str,
                                                              said: str) -> None:
    pytest.importorskip("mcp")
    home = tmp_path / "store"
    client = stdio_client(home, env=server_env(home), tools=tools)
    try:
        tool = "read_file" if tools == "files" else "head"
        refused = client.call(tool, {"path" if tools == "files" else "file": "nope"})
    finally:
        client.close()
    assert refused.is_error
    assert orjson.loads(refused.content[0].text)["message"].endswith(
        f"(from $SCRATCH_HOME); {said}")


def test_a_server_whose_tools_store_nothing_says_so_and_names_none(tmp_path: Path,
                                                                   serving: None) -> None:
    """In-process, a server offering explore only (today's default): no ingest, no write."""
    from scratch.mcp.dispatch import run_tool
    from scratch.mcp.serve.session import ServerState
    specs.serve(specs.offer("explore"))
    state = ServerState(store=str(tmp_path / "store"))
    session = state.session_for(("stdio",), "default", None, "stdio")
    (tmp_path / "movies.json").write_text("[]")
    import os
    before = os.getcwd()
    os.chdir(tmp_path)
    try:
        out = run_tool("schema", {"file": "movies.json"}, session)
    finally:
        os.chdir(before)
    message = orjson.loads(out.text)["message"]
    assert message.endswith(
        "(from --store); that is a path on disk, not an entry; entries are stored tool "
        "outputs, and no tool of this server stores one: a big output is stored by 'scratch "
        "ingest' or 'scratch run' at a shell, or by 'scratch mcp proxy' in front of the "
        "server that returns it"), message
    assert orjson.loads(out.text)["suggestions"] == []
