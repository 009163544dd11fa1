"""The proxy's SDK-free parts: extraction of a tool result, the mcpServers files it reads,
`scratch mcp wrap` and `--undo`, tool naming and error cutting."""

from __future__ import annotations

import base64
import json
import os
import subprocess
from pathlib import Path

import pytest

from scratch.mcp.proxy.config import ServerConfigError, command_name, load_servers
from scratch.mcp.proxy.extract import MalformedResult, extract
from scratch.mcp.proxy.intercept import cut_error, cut_text, list_entry, route_tools
from tests.mcp_support import SCRATCH, server_env


def test_structured_content_is_the_result_pretty_printed() -> None:
    ex = extract({"content": [{"type": "text", "text": '{"a":1}'}],
                  "structuredContent": {"b": [1, 2], "a": "x"}})
    assert ex.text == '{\n  "b": [\n    1,\n    2\n  ],\n  "a": "x"\n}\n' and ex.json_value


def test_structured_content_that_only_wraps_the_text_is_read_as_the_text() -> None:
    ex = extract({"content": [{"type": "text", "text": "[1, 2]"}],
                  "structuredContent": {"content": "[1, 2]"}})
    assert ex.text == "[1, 2]" and not ex.json_value


def test_blocks_in_order_with_resources_links_and_images() -> None:
    png = base64.b64encode(b"\x89PNG....").decode()
    ex = extract({"content": [
        {"type": "text", "text": "first"},
        {"type": "resource", "resource": {"uri": "x://a", "mimeType": "application/json",
                                          "blob": base64.b64encode(b'{"k": 1}').decode()}},
        {"type": "resource_link", "uri": "x://b", "name": "B", "mimeType": "text/plain"},
        {"type": "image", "data": png, "mimeType": "image/png"}]})
    assert ex.text == ("first\n[resource x://a (application/json)]\n{\"k\": 1}\n"
                       "[resource link: B <x://b> (text/plain)]\n"
                       "[image image/png, 8 bytes: stored as .image-1]")
    assert ex.attachments[0].data == b"\x89PNG...." and ex.links[0]["uri"] == "x://b"


def test_json_after_a_prefix_is_found() -> None:
    ex = extract({"content": [{"type": "text", "text": 'Echo: {"items": [1]}'}]})
    assert ex.prefix == "Echo: " and ex.text[ex.json_at:] == '{"items": [1]}'


@pytest.mark.parametrize("bad", [[], {"content": "x"}, {"content": [{"text": "no type"}]},
                                 {"content": [{"type": "image", "data": 5}]}])
def test_a_result_without_a_tool_results_shape_is_malformed(bad: object) -> None:
    with pytest.raises(MalformedResult):
        extract(bad)


def test_clashing_names_are_prefixed_and_output_schemas_dropped() -> None:
    listed = [("a", [{"name": "x"}, {"name": "head"}]),
              ("b", [{"name": "x"}, {"name": "y", "outputSchema": {"type": "object"}}])]
    tools, routes, renamed = route_tools(listed, {"head"})
    assert [t["name"] for t in tools] == ["a__x", "a__head", "b__x", "y"]
    assert routes["b__x"] == ("b", "x") and routes["y"] == ("b", "y")
    assert ("a", "head", "a__head") in renamed
    assert "outputSchema" not in tools[3]
    assert tools[3]["_meta"]["scratch/outputSchema"] == {"type": "object"}
    assert list_entry({"name": "z"}, "z") == {"name": "z"}


def test_a_long_error_keeps_head_and_tail_around_a_marked_cut() -> None:
    text = "h" * 10_000 + "é" * 5_000 + "t" * 10_000
    cut = cut_text(text)
    assert cut.startswith("h" * 6144) and cut.endswith("t" * 2048)
    assert "[... scratch cut 21,808 bytes of this error here ...]" in cut
    result = {"content": [{"type": "text", "text": text}], "isError": True}
    assert cut_error(result)["content"][0]["text"] == cut
    short = {"content": [{"type": "text", "text": "short"}], "isError": True}
    assert cut_error(short) is short


def test_servers_files_of_the_clients_are_read(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {
        "fs": {"command": "npx", "args": ["-y", "pkg", "${HOME_DIR:-/srv}"],
               "env": {"TOKEN": "${TOKEN}"}, "timeout": 5},
        "web": {"type": "http", "url": "https://example.test/mcp",
                "headers": {"Authorization": "Bearer ${TOKEN}"}},
        "off": {"command": "x", "disabled": True}}}))
    fs, web = load_servers(path, {"TOKEN": "t0k"})
    assert fs.args == ("-y", "pkg", "/srv") and fs.env == {"TOKEN": "t0k"} and fs.timeout == 5
    assert web.kind == "http" and web.headers == {"Authorization": "Bearer t0k"}
    with pytest.raises(ServerConfigError, match=r"\$\{TOKEN\} is not set"):
        load_servers(path, {})
    path.write_text(json.dumps({"mcpServers": {"old": {"type": "sse", "url": "http://x/sse"}}}))
    with pytest.raises(ServerConfigError, match="SSE transport"):
        load_servers(path, {})


def test_a_server_name_from_its_command() -> None:
    assert command_name(["npx", "-y", "@modelcontextprotocol/server-filesystem", "."]) == \
        "filesystem"
    assert command_name(["python", "-m", "my_server"]) == "my_server"
    assert command_name(["/usr/bin/mcp-server-git"]) == "git"


def test_wrap_then_undo_restores_the_servers(tmp_path: Path) -> None:
    home = tmp_path / "store"
    path = tmp_path / "claude_desktop_config.json"
    original = {"mcpServers": {"fs": {"command": "npx", "args": ["pkg"],
                                      "env": {"SECRET": "s"}}},
                "other": {"kept": True}}
    path.write_text(json.dumps(original))
    os.chmod(path, 0o600)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*SCRATCH, "--store", str(home), "mcp", "wrap", *args],
                              env=server_env(home), capture_output=True, text=True)

    out = run(str(path))
    assert out.returncode == 0, out.stderr
    wrapped = json.loads(path.read_text())
    assert wrapped["scratchProxy"]["mcpServers"] == original["mcpServers"]
    entry = wrapped["mcpServers"]["scratch"]
    assert entry["args"][-6:] == ["mcp", "proxy", "--config", str(path), "--store", str(home)]
    assert set(wrapped["mcpServers"]) == {"scratch"} and wrapped["other"] == {"kept": True}
    assert json.loads((tmp_path / (path.name + ".scratch-backup")).read_text()) == original
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert [s.name for s in load_servers(path, {})] == ["fs"]  # what the proxy will start
    assert "already wrapped" in run(str(path)).stdout
    undone = run("--undo", str(path))
    assert undone.returncode == 0 and "restored fs" in undone.stdout
    assert json.loads(path.read_text()) == original


def test_wrap_never_wraps_scratchs_own_server(tmp_path: Path) -> None:
    """`mcp install` then `mcp wrap` on the same file: the proxy takes the place of scratch's
    own server (it offers scratch's tools itself) instead of starting it as an upstream,
    which showed the client scratch's tools twice (scratch_grep beside grep)."""
    home = tmp_path / "store"
    path = tmp_path / "mcp.json"
    own = {"command": "/venv/bin/scratch", "args": ["mcp", "serve", "--store", str(home)]}
    original = {"mcpServers": {"scratch": own, "fs": {"command": "npx", "args": ["pkg"]}}}
    path.write_text(json.dumps(original))
    out = subprocess.run([*SCRATCH, "--store", str(home), "mcp", "wrap", str(path)],
                         env=server_env(home), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "fs now run behind entry 'scratch'" in out.stdout
    wrapped = json.loads(path.read_text())
    assert list(wrapped["mcpServers"]) == ["scratch"]
    assert wrapped["mcpServers"]["scratch"]["args"][-6:-2] == ["mcp", "proxy", "--config",
                                                             str(path)]
    assert [s.name for s in load_servers(path, {})] == ["fs"]  # never scratch itself
    undone = subprocess.run([*SCRATCH, "--store", str(home), "mcp", "wrap", "--undo",
                             str(path)], env=server_env(home), capture_output=True, text=True)
    assert undone.returncode == 0, undone.stderr
    assert json.loads(path.read_text()) == original
