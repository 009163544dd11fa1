"""`scratch mcp proxy` in front of the npm reference servers (server-everything and
server-filesystem, from .ci/node), driven by the SDK's client and by the MCP Inspector's CLI.
Without Node.js or those packages every test here skips and says why."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.mcp_support import SCRATCH, McpClient, server_env

REPO = Path(__file__).resolve().parents[1]
MODULES = REPO / ".ci" / "node" / "node_modules"
WIDE = {"SCRATCH_BUDGET_CONTEXT_WINDOW": "100000000"}


def node_bin(name: str) -> str:
    if shutil.which("node") is None:
        pytest.skip("Node.js is not installed (the npm reference MCP servers need it)")
    path = MODULES / ".bin" / name
    if not path.exists():
        pytest.skip(f"{name} is not installed: run .ci/run, or 'npm ci' in .ci/node")
    return str(path)


def everything() -> list[str]:
    return [node_bin("mcp-server-everything"), "stdio"]


def client_of(command: list[str], **kwargs: Any) -> McpClient:
    from mcp import StdioServerParameters
    return McpClient(StdioServerParameters(command=command[0], args=command[1:],
                                           env=kwargs.pop("env", None)), **kwargs)


def proxied(home: Path, command: list[str], name: str) -> list[str]:
    """The proxy in front of ``command``, offering every scratch tool (the tests use them)."""
    return [*SCRATCH, "--store", str(home), "mcp", "proxy", "--tools", "all", "--name", name,
            "--", *command]


def dump(result: Any) -> dict[str, Any]:
    return result.model_dump(by_alias=True, mode="json", exclude_none=True)  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("proxy-node") / "store"
    store.mkdir()
    (store / "scratch.toml").write_text(
        "[mcp.servers.everything.scratchpad]\n"
        '"get-resource-*" = { min_tokens = 5 }\n"get-tiny-image" = { min_tokens = 5 }\n')
    return store


@pytest.fixture(scope="module")
def direct() -> Iterator[McpClient]:
    c = client_of(everything(), mode="legacy")
    yield c
    c.close()


@pytest.fixture(scope="module")
def proxy(home: Path) -> Iterator[McpClient]:
    c = client_of(proxied(home, everything(), "everything"), mode="legacy",
                  env=server_env(home, **WIDE))
    yield c
    c.close()


def test_a_short_echo_passes_through_exactly_as_the_server_sent_it(
        direct: McpClient, proxy: McpClient) -> None:
    args = {"message": "hello through the proxy ✓"}
    assert dump(proxy.call("echo", args)) == dump(direct.call("echo", args))


def test_a_200_kb_echo_is_stored_and_explored(proxy: McpClient) -> None:
    message = "".join(f"pod-{i:05d} Running 10.0.{i % 250}.{i % 7}\n" for i in range(7000))
    assert len(message) > 150_000
    result = proxy.call("echo", {"message": message})
    scratch = result.meta["scratch"]
    assert scratch["stored"].startswith("everything.echo/")
    assert scratch["tokens"] > 20_000 and scratch["pointer_tokens"] < 1000
    found = proxy.text("grep", {"file": scratch["stored"], "pattern": "pod-04321 "})
    assert "pod-04321 Running 10.0.71.2" in found


def test_structured_content_keeps_passing_without_an_output_schema(
        direct: McpClient, proxy: McpClient) -> None:
    listed = {t.name: t for t in proxy.tools()}["get-structured-content"]
    assert listed.output_schema is None and "scratch/outputSchema" in listed.meta
    assert {t.name: t for t in direct.tools()}["get-structured-content"].output_schema
    result = proxy.call("get-structured-content", {"location": "Chicago"})
    assert not result.is_error and set(result.structured_content) >= {"temperature"}


def test_resource_links_are_listed_in_the_stored_text_and_readable(proxy: McpClient) -> None:
    result = proxy.call("get-resource-links", {"count": 3})
    name = result.meta["scratch"]["stored"]
    text = proxy.text("read", {"file": name})
    assert ("[resource link: Text Resource 2 <demo://resource/dynamic/text/2> (text/plain)]"
            in text)
    page = proxy.read("demo://resource/dynamic/text/2")  # routed to the upstream
    assert "Resource 2" in page.contents[0].text


def test_an_embedded_resource_is_stored_as_its_text(proxy: McpClient) -> None:
    result = proxy.call("get-resource-reference", {"resourceType": "Text", "resourceId": 1})
    text = proxy.text("read", {"file": result.meta["scratch"]["stored"]})
    assert "[resource demo://resource/dynamic/text/1 (text/plain)]" in text
    assert "Resource 1: This is a plaintext resource" in text


def test_the_tiny_image_is_stored_as_a_png_companion(proxy: McpClient) -> None:
    result = proxy.call("get-tiny-image")
    name = result.meta["scratch"]["stored"]
    assert f"{name}.image-1" in proxy.text("list_files", {"prefix": name})
    assert "[image image/png, " in proxy.text("read", {"file": name})


def test_progress_of_a_long_operation_passes_through(proxy: McpClient) -> None:
    seen: list[float] = []

    async def on_progress(p: float, total: float | None, message: str | None) -> None:
        seen.append(p)

    result = proxy.portal.call(lambda: proxy.client.call_tool(
        "trigger-long-running-operation", {"duration": 1, "steps": 3},
        progress_callback=on_progress))
    assert not result.is_error and seen == [1, 2, 3]


@pytest.mark.corpus
def test_a_3_mb_json_file_read_through_server_filesystem_is_stored_then_explored(
        corpus_dir: Path, tmp_path: Path, home: Path) -> None:
    source = corpus_dir / "json" / "large" / "gsoc-2018.json"
    files = tmp_path / "files"
    files.mkdir()
    shutil.copy(source, files / "gsoc.json")
    data = json.loads(source.read_bytes())
    key = next(iter(data))
    field, value = next((k, v) for k, v in data[key].items() if isinstance(v, str))
    c = client_of(proxied(home, [node_bin("mcp-server-filesystem"), str(files)], "filesystem"),
                  env=server_env(home, **WIDE))
    try:
        names = {t.name for t in c.tools()}
        # issue 22: the server's own read_file keeps its name; scratch's is the one renamed
        assert {"read_file", "read_text_file", "scratch_read_file"} <= names
        assert "filesystem__read_file" not in names
        result = c.call("read_text_file", {"path": str(files / "gsoc.json")})
        name = result.meta["scratch"]["stored"]
        assert "json" in result.content[0].text.split("\n")[0]
        assert value in c.text("get_in", {"file": name, "path": f"{key}.{field}"})
    finally:
        c.close()


def inspector(*args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    tool = node_bin("mcp-inspector")
    out = subprocess.run([tool, "--cli", *args], capture_output=True, text=True, timeout=180,
                         check=False, env=env)
    assert out.returncode == 0, out.stderr + out.stdout
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def test_the_inspector_lists_and_calls_through_the_proxy(home: Path) -> None:
    env = server_env(home, **WIDE)
    cmd = proxied(home, everything(), "everything")
    tools = {t["name"] for t in inspector(*cmd, "--method", "tools/list", env=env)["tools"]}
    assert {"echo", "get-tiny-image", "get_in", "head"} <= tools
    call = ["--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hi there"]
    through = inspector(*cmd, *call, env=env)
    straight = inspector(*everything(), *call, env=env)
    assert through == straight == {"content": [{"type": "text", "text": "Echo: hi there"}]}


def _listed_tokens(tools: list[Any]) -> int:
    """o200k_base tokens of a tools/list result holding ``tools``, as compact JSON."""
    import orjson

    from scratch.tokens.models import EncodingSpec
    from scratch.tokens.tokenizer import count_text
    return count_text(orjson.dumps({"tools": [dump(t) for t in tools]}).decode(),
                      EncodingSpec("o200k_base", None, "o200k_base"))


def test_behind_the_proxy_an_unknown_entry_says_which_upstream_tool_makes_one(
        tmp_path: Path, home: Path) -> None:
    """Issue 30 item 1, as an agent met it: behind the proxy (its default tools) with
    server-filesystem, ``schema file=movies.json`` was entry_not_found with a hint naming
    ingest and write, tools the proxy does not offer. The query tools' entry argument and the
    error say how an entry comes to be, naming the upstream's tools; and the proxy's own tools
    add at most 1,500 tokens to the upstream's list (item 3)."""
    from mcp import StdioServerParameters

    from scratch.mcp.specs import PROXY_TOOLS
    files = tmp_path / "files"
    files.mkdir()
    movies = [{"title": f"movie {i}", "year": 1950 + i % 70, "genres": ["drama", "comedy"]}
              for i in range(3000)]
    (files / "movies.json").write_text(json.dumps(movies))
    cmd = [*SCRATCH, "--store", str(home), "mcp", "proxy", "--name", "fs", "--",
           node_bin("mcp-server-filesystem"), str(files)]
    # run where the file is, as the agent's proxy did (the checkout imported, not a copy)
    c = McpClient(StdioServerParameters(command=cmd[0], args=cmd[1:], cwd=str(files),
                                        env=server_env(home, PYTHONPATH=str(REPO))),
                  mode="legacy")
    try:
        tools = c.tools()
        upstream = [t for t in tools if t.name not in PROXY_TOOLS]
        upstream_names = {t.name for t in upstream}
        assert {"read_text_file", "read_file", "write_file"} <= upstream_names
        own = [t for t in tools if t.name in PROXY_TOOLS]
        assert sorted(t.name for t in own) == sorted(PROXY_TOOLS)
        for tool in own:
            text = tool.input_schema["properties"]["file"]["description"]
            assert text == ("Entry a pointer names: a big result of a fs tool (e.g. read_file) "
                            "is stored, its pointer returned."), (tool.name, text)
        added = _listed_tokens(tools) - _listed_tokens(upstream)
        assert 0 < added <= 1500, added
        refused = c.call("schema", {"file": "movies.json"})
        assert refused.is_error
        error = json.loads(refused.content[0].text)
        assert error["code"] == "entry_not_found"
        message = error["message"]
        assert message.endswith(
            "; that is a path on disk, not an entry; entries are stored tool outputs: call a "
            "tool of fs (read_file, read_text_file, read_media_file, read_multiple_files, "
            "list_directory, list_directory_with_sizes, directory_tree, search_files, … 6 "
            "more): a result over its threshold is stored as an entry, and the pointer you "
            "get instead names it"), message
        assert "ingest" not in message and "write stores" not in message
        # what the message says works: the upstream's read stores the file, its pointer names
        # the entry, and the query that failed answers
        read = c.call("read_text_file", {"path": str(files / "movies.json")})
        name = read.meta["scratch"]["stored"]
        assert name.startswith("fs.read_text_file/")
        shape = c.text("schema", {"file": name})
        assert "array[3000]" in shape
    finally:
        c.close()
