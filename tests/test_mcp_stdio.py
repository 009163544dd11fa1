"""`scratch mcp serve` over stdio, driven by the MCP SDK's own client (one server per module)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.mcp_support import SCRATCH, McpClient, server_env, stdio_client, text_of

PODS = Path(__file__).resolve().parents[1] / "scratch" / "samples" / "pods.json"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mcp-stdio") / "store"


# the per-call cap stays at its default (10,000); the window is raised so that paging whole
# entries in several tests does not run the session's budget out
WIDE = {"SCRATCH_BUDGET_CONTEXT_WINDOW": "100000000"}


@pytest.fixture(scope="module")
def client(home: Path) -> Iterator[McpClient]:
    c = stdio_client(home, env=server_env(home, **WIDE))
    yield c
    c.close()


@pytest.fixture(scope="module")
def pods(client: McpClient) -> str:
    data = client.data("ingest", {"content": PODS.read_text(), "name": "pods"})
    return str(data["data"]["name"])


def cli(home: Path, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SCRATCH, *args], env=server_env(home), input=input,
                          capture_output=True, text=True, check=False)


def test_lists_every_tool_with_a_closed_schema_and_annotations(client: McpClient) -> None:
    tools = {t.name: t for t in client.tools()}
    assert len(tools) == 28 and {"head", "get_in", "write_file", "ingest", "budget"} <= set(tools)
    assert all(t.input_schema["additionalProperties"] is False for t in tools.values())
    assert tools["head"].input_schema["properties"]["lines"]["default"] == 50
    assert tools["head"].annotations.read_only_hint is True
    assert tools["delete_file"].annotations.destructive_hint is True
    assert tools["write_file"].annotations.idempotent_hint is True


def test_write_read_since_version_append_read_log_round_trip(client: McpClient) -> None:
    first = client.data("write_file", {"path": "notes/plan.md", "content": "step 1\n"})
    assert first["data"] == {"name": "notes/plan.md", "version": 1, "bytes": 7, "lines": 1,
                             "unchanged": False}
    second = client.data("write_file", {"path": "notes/plan.md",
                                        "content": "step 1\nstep 2\n"})
    assert second["data"]["version"] == 2
    again = client.call("write_file", {"path": "notes/plan.md", "content": "step 1\nstep 2\n"})
    assert again.structured_content["data"]["unchanged"] is True
    assert text_of(again) == "notes/plan.md: unchanged (version 2)\n"
    whole = client.call("read_file", {"path": "notes/plan.md"})
    assert text_of(whole) == "step 1\nstep 2\n"
    old = client.call("read_file", {"path": "notes/plan.md@1"})
    assert text_of(old) == "step 1\n"
    since = client.data("read_file", {"path": "notes/plan.md", "since_version": 1})
    assert since["data"]["ops"] == [{"op": "equal", "count": 1},
                                    {"op": "add", "lines": ["step 2"], "line": 2}]
    assert client.data("append_log", {"path": "events", "entry": '{"step": 3}'})["data"][
        "first_id"] == 1
    client.data("append_log", {"path": "events", "entry": "plain text"})
    log = client.data("read_log", {"path": "events", "since_entry": 1})["data"]
    assert [e["entry"] for e in log["entries"]] == ["plain text"]
    first_two = client.data("read_log", {"path": "events"})["data"]["entries"]
    assert [e["entry"] for e in first_two] == [{"step": 3}, "plain text"]
    history = client.data("history", {"path": "notes/plan.md"})["data"]["versions"]
    assert [v["version"] for v in history] == [1, 2]
    restored = client.data("restore", {"path": "notes/plan.md", "version": 1})["data"]
    assert restored == {"name": "notes/plan.md", "restored_from": 1, "version": 3,
                        "unchanged": False}
    diff = client.call("diff", {"path": "notes/plan.md", "a": 2, "b": 3})
    assert "-step 2" in text_of(diff)


def test_answers_are_the_clis_answers(client: McpClient, home: Path, pods: str) -> None:
    result = client.call("head", {"file": pods, "lines": 12})
    assert text_of(result) == cli(home, "head", pods, "-n", "12").stdout
    meta = result.structured_content["meta"]
    assert meta["tokens"]["encoding"] == "o200k_base" and meta["tokens"]["count"] > 0
    assert result.content[1].text.startswith(f"-- {meta['tokens']['count']} tokens (o200k_base)")
    schema = client.call("schema", {"file": pods, "max_depth": 2})
    assert text_of(schema) == cli(home, "schema", pods, "--depth", "2").stdout


def test_ingest_returns_a_pointer_with_tool_calls_and_a_resource_link(client: McpClient,
                                                                      pods: str) -> None:
    again = client.call("ingest", {"content": PODS.read_text(), "tool": "kubectl_get_pods"})
    text = text_of(again)
    assert text.startswith("stored kubectl_get_pods/") and "\nnext:\n" in text
    menu = text.split("\nnext:\n", 1)[1].splitlines()
    calls = [json.loads(line) for line in menu]
    assert calls[0] == {"name": "schema", "arguments": {
        "file": again.structured_content["data"]["name"]}}
    for call in calls:  # every call of the menu runs as given
        assert not client.call(call["name"], call["arguments"]).is_error, call
    links = [c for c in again.content if c.type == "resource_link"]
    data = again.structured_content["data"]
    assert len(links) == 1 and links[0].uri == f"scratch://default/{data['name']}@1"
    assert links[0].mime_type == "application/json" and links[0].size == data["bytes"]
    items = json.loads(PODS.read_text())["items"]
    rows = client.data("iterate_over", {"file": pods, "path": "items",
                                        "fields": "metadata.name,status.phase",
                                        "where": "@.status.phase == 'Failed'"})["data"]["rows"]
    assert [r["metadata.name"] for r in rows] == [
        i["metadata"]["name"] for i in items if i["status"]["phase"] == "Failed"]
    name = client.data("get_in", {"file": pods, "path": "items.0.metadata.name"})["data"]
    assert name["text"] == items[0]["metadata"]["name"] + "\n"


def test_a_refusal_carries_suggestions_that_run_as_tool_calls(client: McpClient,
                                                             pods: str) -> None:
    refused = client.call("head", {"file": pods, "lines": 3000})
    assert refused.is_error
    error = refused.structured_content
    assert json.loads(text_of(refused)) == error
    assert error["code"] == "head_too_large" and error["limit"] == 10000
    assert error["estimated_tokens"] > 10000
    assert error["suggestions"] == [
        {"name": "head", "arguments": {"file": pods, "lines": error["suggestions"][0][
            "arguments"]["lines"]}},
        {"name": "head", "arguments": {"file": pods, "lines": 3000, "fit": True}}]
    for call in error["suggestions"]:
        assert not client.call(call["name"], call["arguments"]).is_error


def test_fit_and_next_page_the_whole_entry_without_gap_or_overlap(client: McpClient,
                                                                 pods: str) -> None:
    total = len(PODS.read_text().splitlines())
    call: dict[str, Any] | None = {"name": "head", "arguments": {"file": pods, "lines": total,
                                                                 "fit": True}}
    lines: list[str] = []
    pages = 0
    while call is not None:
        answer = client.data(call["name"], call["arguments"])
        data = answer["data"]
        assert data["start"] == len(lines) + 1
        lines += data["lines"]
        assert answer["meta"]["tokens"]["count"] <= 10000
        call = data.get("next")
        pages += 1
    assert pages > 3 and lines == json.dumps(json.loads(PODS.read_text()), indent=2).splitlines()


def test_bad_calls_get_clear_errors_and_the_server_keeps_serving(client: McpClient,
                                                                pods: str) -> None:
    from mcp.shared.exceptions import MCPError
    wrong = client.call("head", {"file": pods, "lines": "many"})
    assert wrong.is_error and wrong.structured_content["code"] == "invalid_arguments"
    assert wrong.structured_content["message"] == ("head: argument 'lines' must be an "
                                                   "integer, not str")
    with pytest.raises(MCPError) as unknown:
        client.call("frobnicate", {})
    assert unknown.value.code == -32602 and "Unknown tool: frobnicate" in str(unknown.value)
    huge = client.call("grep", {"file": pods, "pattern": "x" * 100_000})
    assert huge.is_error and "over its limit of 1,024" in huge.structured_content["message"]
    missing = client.call("read", {"file": "nope"})
    assert missing.structured_content["code"] == "entry_not_found"
    assert missing.structured_content["suggestions"] == [{"name": "list_files",
                                                          "arguments": {}}]
    bad_regex = client.call("grep", {"file": pods, "pattern": "(unclosed"})
    assert bad_regex.structured_content["code"] == "invalid_pattern"
    assert not client.call("head", {"file": pods, "lines": 1}).is_error


def test_resources_are_listed_and_read_in_pages(client: McpClient, pods: str) -> None:
    listed = {r.name: r for r in client.resources().resources}
    entry = listed[pods]
    assert entry.uri == f"scratch://default/{pods}" and entry.mime_type == "application/json"
    assert entry.size == len(json.dumps(json.loads(PODS.read_text()), indent=2)) + 1
    assert entry.meta["scratch/format"] == "json" and entry.meta["scratch/tokens"] > 50_000
    assert "tokens (o200k_base)" in entry.description
    uri: str | None = entry.uri
    text = ""
    while uri is not None:
        page = client.read(uri).contents[0]
        text += page.text
        assert page.meta["scratch/tokens"] <= 10000
        uri = page.meta.get("scratch/next")
    assert text == json.dumps(json.loads(PODS.read_text()), indent=2) + "\n"
    client.data("write_file", {"path": "two", "content": "one\n"})
    client.data("write_file", {"path": "two", "content": "two\n"})
    assert client.read("scratch://default/two@1").contents[0].text == "one\n"
    assert client.read("scratch://default/two").contents[0].text == "two\n"
    client.data("write_file", {"path": "empty", "content": "", "allow_empty": True})
    assert client.read("scratch://default/empty").contents[0].text == ""
    refused = client.call("write_file", {"path": "empty2", "content": ""})
    assert refused.structured_content["code"] == "empty_input"


def test_another_agents_resources_are_not_found(client: McpClient, home: Path) -> None:
    from mcp.shared.exceptions import MCPError
    assert cli(home, "--agent", "other", "write", "secret", input="hidden\n").returncode == 0
    with pytest.raises(MCPError) as err:
        client.read("scratch://other/secret")
    assert err.value.code == -32002
    assert "secret" not in {r.name for r in client.resources().resources}
    assert client.call("read", {"file": "secret"}).structured_content["code"] == "entry_not_found"


def test_the_warm_server_sees_cli_writes_and_config_at_once(client: McpClient,
                                                            home: Path) -> None:
    client.data("write_file", {"path": "shared.txt", "content": "from mcp\n"})
    assert cli(home, "write", "shared.txt", input="from the cli\n").returncode == 0
    assert text_of(client.call("read", {"file": "shared.txt"})) == "from the cli\n"
    (home / "scratch.toml").write_text("[budget]\nmax_extraction_tokens = 5\n")
    try:
        refused = client.call("read", {"file": "shared.txt"})
        assert refused.structured_content["code"] == "read_too_large"
        assert refused.structured_content["limit"] == 5
    finally:
        (home / "scratch.toml").unlink()
    assert not client.call("read", {"file": "shared.txt"}).is_error


def test_usage_counters_reach_get_usage_stats_and_scratch_stats(client: McpClient,
                                                               home: Path, pods: str) -> None:
    client.data("head", {"file": pods, "lines": 5})
    usage = client.data("get_usage_stats")["data"]
    assert usage["agent"] == "default" and usage["operations"]["head"] >= 1
    assert usage["tokens_intercepted"] > 50_000 and usage["tokens_extracted"] > 0
    assert usage["session"]["calls"] >= 1 and usage["session"]["session"].startswith("mcp-")
    assert "other" not in json.dumps(usage)  # no other agent's name or counts
    stats = json.loads(cli(home, "--json", "stats").stdout)["data"]["agents"]
    mine = next(a for a in stats if a["agent"] == "default")
    assert mine["operations"]["ingest"] >= 1 and mine["operations"]["head"] >= 1


def test_each_connection_has_its_own_budget(client: McpClient, home: Path, pods: str) -> None:
    first = client.data("budget")["data"]
    second_client = stdio_client(home, env=server_env(home, **WIDE))
    try:
        second = second_client.data("budget")["data"]
        assert second["session"] != first["session"] and second["used"] == 0
        second_client.data("head", {"file": pods, "lines": 20})
        assert client.data("budget")["data"]["used"] == first["used"]
    finally:
        second_client.close()


def test_a_shared_session_and_the_clients_model(home: Path, pods: str) -> None:
    a = stdio_client(home, "--session", "team", client_name="claude-code")
    b = stdio_client(home, "--session", "team")
    try:
        one = a.data("budget")["data"]
        assert one["session"] == "team" and one["tokenizer"] == "claude"
        assert one["model"] == "claude" and one["window"] == 200_000
        a.data("budget_reset")
        a.data("head", {"file": pods, "lines": 10})
        assert b.data("budget")["data"]["used"] == a.data("budget")["data"]["used"] > 0
        assert b.data("budget")["data"]["tokenizer"] == "o200k_base"  # b declared no name
    finally:
        a.close()
        b.close()
    flagged = stdio_client(home, "--model", "gpt-4", client_name="claude-code")
    try:
        assert flagged.data("budget")["data"]["tokenizer"] == "cl100k_base"
    finally:
        flagged.close()


@pytest.mark.corpus
def test_ingest_a_corpus_log_then_explore_it(client: McpClient, corpus_dir: Path) -> None:
    log = sorted((corpus_dir / "logs" / "loghub").glob("*.log"))[0]
    content = log.read_text(errors="replace")
    data = client.data("ingest", {"content": content, "tool": "loghub",
                                  "store_always": True})["data"]
    assert data["stored"] is True and data["format"] == "log"
    first = content.splitlines()[0]
    word = next(w for w in first.split() if w.isalpha() and len(w) > 3)
    hits = client.data("grep", {"file": data["name"], "pattern": word, "fixed": True,
                                "context": 0, "max_count": 3})["data"]
    assert hits["matches"] >= 1
    assert hits["regions"][0]["lines"][0]["text"] in content
    tail = client.call("tail", {"file": data["name"], "lines": 2, "numbers": False})
    assert text_of(tail).splitlines() == content.splitlines()[-2:]
