"""Clients from npm against `scratch mcp serve`: the MCP Inspector's CLI mode over stdio and the
MCP conformance suite against the HTTP endpoint.

Both come from ``.ci/node`` (pinned in its package.json and lock file; ``.ci/run`` installs
them with ``npm ci``). Without Node.js or those packages the tests skip and say why.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from scratch.mcp.specs import TOOLS
from tests.mcp_support import SCRATCH, HttpServer, server_env, stdio_client

REPO = Path(__file__).resolve().parents[1]
BIN = REPO / ".ci" / "node" / "node_modules" / ".bin"
EXPECTED = Path(__file__).parent / "data" / "mcp_conformance_expected.yaml"
PODS = REPO / "scratch" / "samples" / "pods.json"


def node_tool(name: str) -> Path:
    if shutil.which("node") is None:
        pytest.skip("Node.js is not installed (the MCP Inspector and conformance suite need it)")
    path = BIN / name
    if not path.exists():
        pytest.skip(f"{name} is not installed: run .ci/run, or 'npm ci' in .ci/node")
    return path


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("mcp-node") / "store"
    client = stdio_client(store)  # an entry to list, explore and read
    try:
        assert not client.call("ingest", {"content": PODS.read_text(), "name": "pods"}).is_error
    finally:
        client.close()
    return store


def inspector(home: Path, *args: str) -> dict:
    tool = node_tool("mcp-inspector")
    # every tool, through the server's environment as the Inspector sets it (-e): it starts
    # the server with a minimal environment of its own, and reads --tools as its own option
    cmd = [str(tool), "--cli", "-e", "SCRATCH_MCP_TOOLS=all", sys.executable, "-m", "scratch",
           "--store", str(home), "mcp", "serve", "--quiet", *args]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=False,
                         env=server_env(home), cwd=home.parent)
    assert out.returncode == 0, out.stderr + out.stdout
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def test_the_inspector_lists_the_tools(home: Path) -> None:
    listed = inspector(home, "--method", "tools/list")
    tools = {t["name"]: t for t in listed["tools"]}
    assert len(tools) == len(TOOLS)
    assert tools["get_in"]["inputSchema"]["additionalProperties"] is False
    assert tools["get_in"]["annotations"]["readOnlyHint"] is True
    assert tools["sql"]["annotations"]["readOnlyHint"] is True


def test_the_inspector_calls_a_tool(home: Path) -> None:
    answer = inspector(home, "--method", "tools/call", "--tool-name", "get_in",
                       "--tool-arg", "file=pods", "--tool-arg", "path=items.0.kind")
    assert answer.get("isError") in (None, False)
    assert answer["content"][0]["text"] == "Pod\n"
    assert "structuredContent" not in answer  # text only: what the model reads is priced
    assert answer["content"][1]["text"].startswith(
        f"-- {answer['_meta']['scratch/tokens']['count']} tokens (o200k_base)")


@pytest.fixture(scope="module")
def conformance_results(home: Path, tmp_path_factory: pytest.TempPathFactory
                        ) -> Iterator[dict[str, list[dict]]]:
    tool = node_tool("conformance")
    server = HttpServer(home, "--quiet", "--rate-limit", "0")
    work = tmp_path_factory.mktemp("conformance")
    try:
        out = subprocess.run([str(tool), "server", "--url", server.url, "--suite", "all"],
                             cwd=work, capture_output=True, text=True, timeout=300, check=False)
    finally:
        server.stop()
    results: dict[str, list[dict]] = {}
    for checks in sorted((work / "results").glob("server-*/checks.json")):
        found = re.match(r"server-(.+)-\d{4}-\d\d-\d\dT", checks.parent.name)
        assert found, checks.parent.name
        scenario = found.group(1)
        results[scenario] = json.loads(checks.read_text())
    assert results, out.stdout + out.stderr
    yield results


def _passed(checks: list[dict]) -> bool:
    statuses = [c["status"] for c in checks]
    return "SUCCESS" in statuses and "FAILURE" not in statuses


def test_the_conformance_suite_passes_what_applies(conformance_results: dict) -> None:
    expected = yaml.safe_load(EXPECTED.read_text())["server"]
    unknown = sorted(set(expected) - set(conformance_results))
    assert unknown == [], f"the expected-failures file names scenarios the suite lacks: {unknown}"
    applies = {s: c for s, c in conformance_results.items() if s not in expected}
    assert {"server-initialize", "ping", "tools-list", "resources-list",
            "server-sse-multiple-streams"} <= set(applies)
    failed = {s: [c.get("errorMessage") for c in checks if c["status"] == "FAILURE"]
              for s, checks in applies.items() if not _passed(checks)}
    assert failed == {}
    listed = next(c for c in conformance_results["tools-list"] if c["status"] == "SUCCESS")
    assert listed["details"]["toolCount"] == len(TOOLS)
    resources = next(c for c in conformance_results["resources-list"]
                     if c["status"] == "SUCCESS")
    assert resources["details"]["resourceCount"] >= 1


def test_the_scenarios_named_as_not_applying_still_do_not_pass(conformance_results: dict
                                                               ) -> None:
    expected = yaml.safe_load(EXPECTED.read_text())["server"]
    assert all(reason.strip() for reason in expected.values())
    now_passing = sorted(s for s in expected if _passed(conformance_results.get(s, [])))
    assert now_passing == [], "these now pass: take them out of the expected-failures file"


def test_scratch_cli_still_reads_what_the_suite_left(home: Path) -> None:
    out = subprocess.run([*SCRATCH, "--json", "ls"], env=server_env(home), capture_output=True,
                         text=True, check=True)
    assert "pods" in [e["name"] for e in json.loads(out.stdout)["data"]["entries"]]
