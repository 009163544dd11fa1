"""`scratch mcp serve` over stdio, driven by the MCP SDK's own client (one server per module)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scratch.mcp.specs import TOOLS
from tests.mcp_support import (
    SCRATCH,
    McpClient,
    RawServer,
    charged,
    next_of,
    notes_of,
    server_env,
    shown_tokens,
    stdio_client,
    text_of,
)

PODS = Path(__file__).resolve().parents[1] / "scratch" / "samples" / "pods.json"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mcp-stdio") / "store"


# the per-call cap stays at its default (10,000); the window is raised so that paging whole
# entries in several tests does not run the session's budget out
WIDE = {"SCRATCH_BUDGET_CONTEXT_WINDOW": "100000000"}


@pytest.fixture(scope="module")
def client(home: Path) -> Iterator[McpClient]:
    """The default server: answers as text blocks, no structuredContent."""
    c = stdio_client(home, env=server_env(home, **WIDE))
    yield c
    c.close()


@pytest.fixture(scope="module")
def sclient(home: Path) -> Iterator[McpClient]:
    """A --structured server on the same store: answers as {data, meta} too."""
    c = stdio_client(home, env=server_env(home, **WIDE), structured=True)
    yield c
    c.close()


@pytest.fixture(scope="module")
def pods(sclient: McpClient) -> str:
    data = sclient.data("ingest", {"content": PODS.read_text(), "name": "pods"})
    return str(data["data"]["name"])


def cli(home: Path, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SCRATCH, *args], env=server_env(home), input=input,
                          capture_output=True, text=True, check=False)



def test_lists_every_tool_with_a_closed_schema_and_annotations(client: McpClient) -> None:
    tools = {t.name: t for t in client.tools()}
    assert len(tools) == len(TOOLS) and {"head", "get_in", "write_file", "ingest", "budget"} <= set(tools)
    assert all(t.input_schema["additionalProperties"] is False for t in tools.values())
    assert tools["head"].input_schema["properties"]["lines"]["default"] == 50
    assert tools["head"].annotations.read_only_hint is True
    assert tools["delete_file"].annotations.destructive_hint is True
    assert tools["write_file"].annotations.idempotent_hint is True


def test_write_read_since_version_append_read_log_round_trip(sclient: McpClient) -> None:
    first = sclient.data("write_file", {"path": "notes/plan.md", "content": "step 1\n"})
    assert first["data"] == {"name": "notes/plan.md", "version": 1, "bytes": 7, "lines": 1,
                             "unchanged": False}
    second = sclient.data("write_file", {"path": "notes/plan.md",
                                         "content": "step 1\nstep 2\n"})
    assert second["data"]["version"] == 2
    again = sclient.data("write_file", {"path": "notes/plan.md",
                                        "content": "step 1\nstep 2\n"})
    assert again["data"]["unchanged"] is True
    whole = sclient.data("read_file", {"path": "notes/plan.md"})
    assert whole["data"]["content"] == "step 1\nstep 2\n"
    old = sclient.data("read_file", {"path": "notes/plan.md@1"})
    assert old["data"]["content"] == "step 1\n"
    since = sclient.data("read_file", {"path": "notes/plan.md", "since_version": 1})
    assert since["data"]["ops"] == [{"op": "equal", "count": 1},
                                    {"op": "add", "lines": ["step 2"], "line": 2}]
    assert sclient.data("append_log", {"path": "events", "entry": '{"step": 3}'})["data"][
        "first_id"] == 1
    sclient.data("append_log", {"path": "events", "entry": "plain text"})
    log = sclient.data("read_log", {"path": "events", "since_entry": 1})["data"]
    assert [e["entry"] for e in log["entries"]] == ["plain text"]
    first_two = sclient.data("read_log", {"path": "events"})["data"]["entries"]
    assert [e["entry"] for e in first_two] == [{"step": 3}, "plain text"]
    history = sclient.data("history", {"path": "notes/plan.md"})["data"]["versions"]
    assert [v["version"] for v in history] == [1, 2]
    restored = sclient.data("restore", {"path": "notes/plan.md", "version": 1})["data"]
    assert restored == {"name": "notes/plan.md", "restored_from": 1, "version": 3,
                        "unchanged": False}
    diff = sclient.data("diff", {"path": "notes/plan.md", "a": 2, "b": 3})["data"]
    assert diff["removed"] == 1 and diff["added"] == 0


def test_text_answers_are_the_clis_answers(client: McpClient, home: Path, pods: str) -> None:
    assert text_of(client.call("write_file", {"path": "t.md", "content": "a\n"})) == (
        "t.md: version 1 (2 bytes, 1 line)\n")
    assert text_of(client.call("write_file", {"path": "t.md", "content": "a\n"})) == (
        "t.md: unchanged (version 1)\n")
    result = client.call("head", {"file": pods, "lines": 12})
    assert result.structured_content is None
    assert text_of(result) == cli(home, "head", pods, "-n", "12").stdout
    budget = result.meta["scratch/budget"]
    assert notes_of(result) == (f"-- {charged(result):,} tokens (o200k_base) · budget "
                                f"{budget['remaining']:,} of {budget['usable']:,} left")
    schema = client.call("schema", {"file": pods, "max_depth": 2})
    assert text_of(schema) == cli(home, "schema", pods, "--depth", "2").stdout
    # its own file: tests of this module may run on other workers, each with its own store
    client.call("write_file", {"path": "notes/diffed.md", "content": "step 1\n"})
    client.call("write_file", {"path": "notes/diffed.md", "content": "step 1\nstep 2\n"})
    diff = client.call("diff", {"path": "notes/diffed.md", "a": 1, "b": 2})
    assert "+step 2" in text_of(diff)
    assert text_of(diff) == cli(home, "diff", "notes/diffed.md", "1", "2").stdout


@pytest.mark.parametrize(("tool", "args"), [
    ("head", {"lines": 40}), ("tail", {"lines": 7, "numbers": False}),
    ("grep", {"pattern": "Running", "max_count": 5}), ("schema", {}),
    ("get_in", {"path": "items.3.metadata"}), ("summarize", {}),
    ("iterate_over", {"path": "items", "fields": "metadata.name,status.phase", "limit": 9}),
    ("item_schema", {"path": "items"}),
])
def test_an_answer_is_charged_exactly_what_its_text_blocks_cost(client: McpClient, pods: str,
                                                                 tool: str, args: dict) -> None:
    result = client.call(tool, {"file": pods, **args})
    assert not result.is_error, text_of(result)
    assert charged(result) == shown_tokens(result) > 0
    assert f"-- {charged(result):,} tokens (o200k_base)" in notes_of(result)


def test_structured_answers_carry_the_same_json_as_their_text(sclient: McpClient,
                                                               pods: str) -> None:
    result = sclient.call("head", {"file": pods, "lines": 3})
    assert len(result.content) == 1
    assert json.loads(text_of(result)) == result.structured_content
    assert result.structured_content["data"]["lines"] == ["{", '  "apiVersion": "v1",',
                                                          '  "kind": "List",']
    assert charged(result) == shown_tokens(result)
    assert result.structured_content["meta"]["tokens"]["count"] == charged(result)


def test_ingest_returns_a_pointer_with_tool_calls_and_a_resource_link(client: McpClient,
                                                                      pods: str) -> None:
    again = client.call("ingest", {"content": PODS.read_text(), "tool": "kubectl_get_pods"})
    text = text_of(again)
    assert text.startswith("stored kubectl_get_pods/") and "\nnext:\n" in text
    name = text.split(" ", 2)[1]
    menu = text.split("\nnext:\n", 1)[1].splitlines()
    calls = [json.loads(line) for line in menu]
    assert calls[0] == {"name": "schema", "arguments": {"file": name}}
    assert len(calls) >= 5
    for call in calls:  # every call of the menu runs as given
        assert not client.call(call["name"], call["arguments"]).is_error, call
    links = [c for c in again.content if c.type == "resource_link"]
    assert len(links) == 1 and str(links[0].uri) == f"scratch://default/{name}@1"
    assert links[0].mime_type == "application/json"
    assert links[0].size == len(json.dumps(json.loads(PODS.read_text()), indent=2)) + 1
    assert charged(again) == shown_tokens(again) < 800
    items = json.loads(PODS.read_text())["items"]
    failed = client.text("iterate_over", {"file": pods, "path": "items",
                                          "fields": "metadata.name,status.phase",
                                          "where": "@.status.phase == 'Failed'"})
    names = [i["metadata"]["name"] for i in items if i["status"]["phase"] == "Failed"]
    assert names and all(n in failed for n in names)
    assert client.text("get_in", {"file": pods, "path": "items.0.metadata.name"}) == (
        items[0]["metadata"]["name"] + "\n")


def test_a_refusal_is_charged_what_it_prints_and_its_suggestions_run(client: McpClient,
                                                                     pods: str) -> None:
    before = client.call("head", {"file": pods, "lines": 1}).meta["scratch/budget"]["used"]
    refused = client.call("head", {"file": pods, "lines": 3000})
    assert refused.is_error
    error = refused.structured_content
    assert json.loads(text_of(refused)) == error and len(refused.content) == 1
    assert error["code"] == "head_too_large" and error["limit"] == 10000
    assert error["estimated_tokens"] > 10000
    assert error["suggestions"] == [
        {"name": "head", "arguments": {"file": pods, "lines": error["suggestions"][0][
            "arguments"]["lines"]}},
        {"name": "head", "arguments": {"file": pods, "lines": 3000, "fit": True}}]
    assert charged(refused) == shown_tokens(refused)
    assert refused.meta["scratch/budget"]["used"] == before + charged(refused)
    for call in error["suggestions"]:
        assert not client.call(call["name"], call["arguments"]).is_error


@pytest.mark.parametrize("structured", [False, True])
def test_fit_and_next_page_the_whole_entry_without_gap_or_overlap(
        client: McpClient, sclient: McpClient, pods: str, structured: bool) -> None:
    c = sclient if structured else client
    total = len(PODS.read_text().splitlines())
    call: dict[str, Any] | None = {"name": "head", "arguments": {
        "file": pods, "lines": total, "fit": True, "numbers": False}}
    text = ""
    pages = 0
    while call is not None:
        result = c.call(call["name"], call["arguments"])
        assert not result.is_error, text_of(result)
        assert charged(result) <= 10000
        if structured:
            data = result.structured_content["data"]
            text += "".join(line + "\n" for line in data["lines"])
            call = data.get("next")
            assert call == next_of(result) or call is None
        else:
            text += text_of(result)
            call = next_of(result)
            if call is not None:
                assert f"more: {json.dumps(call, separators=(',', ':'))}" in notes_of(result)
        pages += 1
    assert pages > 3 and text == json.dumps(json.loads(PODS.read_text()), indent=2) + "\n"


def test_bad_calls_get_clear_errors_and_the_server_keeps_serving(client: McpClient,
                                                                pods: str) -> None:
    from mcp.shared.exceptions import MCPError
    wrong = client.call("head", {"file": pods, "lines": "many"})
    assert wrong.is_error and wrong.structured_content["code"] == "invalid_arguments"
    assert wrong.structured_content["message"] == ("head: argument 'lines' must be an "
                                                   "integer, not str")
    assert wrong.structured_content["input_schema"]["properties"]["lines"]["type"] == "integer"
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


def test_writes_are_held_to_the_cores_limits(home: Path) -> None:
    small = stdio_client(home, env=server_env(home, SCRATCH_LIMITS_MAX_WRITE_BYTES="10"))
    try:
        over = small.call("write_file", {"path": "big", "content": "x" * 11})
        assert over.structured_content["code"] == "write_too_large"
        assert over.structured_content["limit_value"] == 10
        empty = small.call("write_file", {"path": "big", "content": ""})
        assert empty.structured_content["code"] == "empty_input"
        assert not small.call("write_file", {"path": "big", "content": "x" * 10}).is_error
    finally:
        small.close()
    assert cli(home, "--json", "head", "big").returncode == 0


def test_binary_content_is_shown_as_text_only_when_asked(client: McpClient, home: Path) -> None:
    blob = b"\x00\x01binary\xff\xfe\n"
    out = subprocess.run([*SCRATCH, "write", "bin"], env=server_env(home), input=blob,
                         capture_output=True, check=False)
    assert out.returncode == 0, out.stderr
    notice = client.text("read", {"file": "bin"})
    assert notice == ('bin@1: binary content (11 bytes) not shown as text; '
                      '{"name":"read","arguments":{"file":"bin","raw":true}} shows it anyway\n')
    raw = client.call("read", {"file": "bin", "raw": True})
    assert text_of(raw) == blob.decode("utf-8", errors="replace")
    assert charged(raw) == shown_tokens(raw)


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
    client.text("write_file", {"path": "two", "content": "one\n"})
    client.text("write_file", {"path": "two", "content": "two\n"})
    assert client.read("scratch://default/two@1").contents[0].text == "one\n"
    assert client.read("scratch://default/two").contents[0].text == "two\n"
    client.text("write_file", {"path": "empty", "content": "", "allow_empty": True})
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
    client.text("write_file", {"path": "shared.txt", "content": "from mcp\n"})
    assert client.text("read", {"file": "shared.txt"}) == "from mcp\n"  # now kept open
    assert cli(home, "write", "shared.txt", input="from the cli\n").returncode == 0
    assert client.text("read", {"file": "shared.txt"}) == "from the cli\n"
    assert client.text("head", {"file": "shared.txt", "numbers": False}) == "from the cli\n"
    assert cli(home, "log", "append", "ev2", "one").returncode == 0
    one = client.text("tail", {"file": "ev2", "numbers": False}).splitlines()
    assert [json.loads(line)["entry"] for line in one] == ["one"]
    assert cli(home, "log", "append", "ev2", "two").returncode == 0
    two = client.text("tail", {"file": "ev2", "numbers": False}).splitlines()
    assert [json.loads(line)["entry"] for line in two] == ["one", "two"]
    (home / "scratch.toml").write_text("[budget]\nmax_extraction_tokens = 5\n")
    try:
        refused = client.call("read", {"file": "shared.txt"})
        assert refused.structured_content["code"] == "read_too_large"
        assert refused.structured_content["limit"] == 5
    finally:
        (home / "scratch.toml").unlink()
    assert not client.call("read", {"file": "shared.txt"}).is_error


def test_usage_counters_reach_get_usage_stats_and_scratch_stats(sclient: McpClient,
                                                               home: Path, pods: str) -> None:
    sclient.data("head", {"file": pods, "lines": 5})
    usage = sclient.data("get_usage_stats")["data"]
    assert usage["agent"] == "default" and usage["operations"]["head"] >= 1
    assert usage["tokens_intercepted"] > 50_000 and usage["tokens_extracted"] > 0
    assert usage["session"]["calls"] >= 1 and usage["session"]["session"].startswith("mcp-")
    assert "other" not in json.dumps(usage)  # no other agent's name or counts
    assert str(home) not in json.dumps(usage)  # nor where the store is
    stats = json.loads(cli(home, "--json", "stats").stdout)["data"]["agents"]
    mine = next(a for a in stats if a["agent"] == "default")
    assert mine["operations"]["ingest"] >= 1 and mine["operations"]["head"] >= 1
    assert mine["operations"]["stats"] >= 1


def test_each_connection_has_its_own_budget(sclient: McpClient, home: Path, pods: str) -> None:
    first = sclient.data("budget")["data"]
    second_client = stdio_client(home, env=server_env(home, **WIDE), structured=True)
    try:
        second = second_client.data("budget")["data"]
        assert second["session"] != first["session"] and second["used"] == 0
        second_client.data("head", {"file": pods, "lines": 20})
        assert sclient.data("budget")["data"]["used"] == first["used"]
    finally:
        second_client.close()


def test_a_shared_session_and_the_clients_model(home: Path, pods: str) -> None:
    a = stdio_client(home, "--session", "team", client_name="claude-code", structured=True)
    b = stdio_client(home, "--session", "team", structured=True)
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
    flagged = stdio_client(home, "--model", "gpt-4", client_name="claude-code", structured=True)
    try:
        assert flagged.data("budget")["data"]["tokenizer"] == "cl100k_base"
    finally:
        flagged.close()


@pytest.mark.corpus
def test_ingest_a_corpus_log_then_explore_it(sclient: McpClient, corpus_dir: Path) -> None:
    log = sorted((corpus_dir / "logs" / "loghub").glob("*.log"))[0]
    content = log.read_text(errors="replace")
    data = sclient.data("ingest", {"content": content, "tool": "loghub",
                                   "store_always": True})["data"]
    assert data["stored"] is True and data["format"] == "log"
    first = content.splitlines()[0]
    word = next(w for w in first.split() if w.isalpha() and len(w) > 3)
    hits = sclient.data("grep", {"file": data["name"], "pattern": word, "fixed": True,
                                 "context": 0, "max_count": 3})["data"]
    assert hits["matches"] >= 1
    assert hits["regions"][0]["lines"][0]["text"] in content
    tail = sclient.call("tail", {"file": data["name"], "lines": 2, "numbers": False})
    assert tail.structured_content["data"]["lines"] == content.splitlines()[-2:]


def test_requests_from_a_file_are_answered_too(home: Path, tmp_path: Path) -> None:
    """stdin that is not a pipe (a file) is served by the SDK's own stdio streams (the
    handshake is answered inline; calls still running at end of input are dropped, as the
    SDK drops them when a client closes stdin)."""
    requests = tmp_path / "requests.jsonl"
    requests.write_text(json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "file", "version": "1"}}}) + "\n")
    with open(requests, "rb") as stdin:
        out = subprocess.run([*SCRATCH, "mcp", "serve", "--quiet"], env=server_env(home),
                             stdin=stdin, capture_output=True, timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    reply = json.loads(out.stdout)
    assert reply["id"] == 1 and reply["result"]["protocolVersion"] == "2025-06-18"
    assert reply["result"]["serverInfo"]["name"] == "scratch"


def test_only_stdio_reads_seen_quick_run_on_the_event_loop() -> None:
    from scratch.mcp.serve import server
    args = {"file": "inline-probe", "lines": 5}
    assert not server.runs_inline("head", args, "stdio")  # never seen: on a thread
    server.took("head", args, 0.002)
    assert server.runs_inline("head", args, "stdio")
    assert not server.runs_inline("head", args, "http")  # other clients must not wait
    assert not server.runs_inline("tail", args, "stdio")  # another tool: not seen yet
    server.took("head", args, 0.5)  # slow last time (an index built, a whole scan)
    assert not server.runs_inline("head", args, "stdio")
    server.took("write_file", {"file": "inline-probe"}, 0.001)
    assert not server.runs_inline("write_file", {"file": "inline-probe"}, "stdio")
    assert not server.runs_inline("head", ["not", "an", "object"], "stdio")


# Wire shapes through the SDK's server, for a legacy handshake client and a 2026-07-28 one
# (JSON-RPC lines written by hand). Each call three times in a row: the first runs on a worker
# thread (nothing is known of it yet), the next ones on the event loop when the first was fast
# (runs_inline); all three answers must be the same.
WIRE_DOC = {"items": [{"id": i, "name": f"pod-{i}", "phase": "Running" if i % 5 else "Failed",
                       "big": 12345678901234567890123 if i == 3 else i} for i in range(400)]}
WIRE_LOG = "".join(f"2026-12-01 10:{i // 60:02d}:{i % 60:02d} "
                   f"{'ERROR' if i % 9 == 0 else 'INFO'} worker-{i % 4} step {i}\n"
                   for i in range(3000))
REPEAT = 3
WIRE_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("head", {"file": "log", "lines": 5}),
    ("tail", {"file": "log", "lines": 3}),
    ("grep", {"file": "log", "pattern": "ERROR", "context": 0, "max_count": 4}),
    ("get_in", {"file": "doc", "path": "items.3"}),
    ("get_in", {"file": "doc", "path": "items", "offset": 10, "limit": 2}),
    ("schema", {"file": "doc"}),
    ("iterate_over", {"file": "doc", "path": "items", "fields": "id,phase", "limit": 5}),
    ("head", {"file": "log", "lines": 3000}),  # over the cap: a refusal with suggestions
    ("head", {"file": "log", "lines": 3000, "fit": True}),  # a fitted page and next
    ("get_in", {"file": "doc", "path": "items.9999"}),  # an error
    ("head", {"file": "log", "lines": "five"}),  # wrong argument type
]
MODERN_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientInfo": {"name": "wire-test", "version": "1"},
               "io.modelcontextprotocol/clientCapabilities": {}}


@pytest.fixture(scope="module")
def wire_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("mcp-wire") / "store"
    env = server_env(home)
    subprocess.run([*SCRATCH, "init"], env=env, check=True, capture_output=True)
    for entry, text in (("doc", json.dumps(WIRE_DOC)), ("log", WIRE_LOG)):
        subprocess.run([*SCRATCH, "ingest", entry, "--store-always"], input=text.encode(),
                       env=env, check=True, capture_output=True)
    return home


@pytest.mark.parametrize("protocol", ["legacy", "modern"])
def test_tool_results_on_the_wire(wire_home: Path, protocol: str) -> None:
    server = RawServer(wire_home)
    answers = []
    try:
        extra: dict[str, Any] = {}
        if protocol == "legacy":
            server.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                          "clientInfo": {"name": "wire-test", "version": "1"}})
            server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        else:
            extra = {"_meta": MODERN_META}
        for name, arguments in WIRE_CALLS:
            for _ in range(REPEAT):
                answers.append(server.request("tools/call", {"name": name,
                                                             "arguments": arguments, **extra}))
    finally:
        log = server.close()
    results = [a["result"] for a in answers]
    for n in range(len(WIRE_CALLS)):  # the loop's answer is the worker thread's
        first = results[REPEAT * n]
        for r in results[REPEAT * n + 1:REPEAT * n + REPEAT]:  # the budget left aside
            assert r["content"][0] == first["content"][0], WIRE_CALLS[n]
            assert sorted(r) == sorted(first) and r.get("isError") == first.get("isError")
            assert r.get("structuredContent") == first.get("structuredContent")
    by_call = {n: results[REPEAT * n] for n in range(len(WIRE_CALLS))}
    for n in (0, 1, 2, 3, 4, 5, 6, 8):
        assert by_call[n]["isError"] is False
        assert [b["type"] for b in by_call[n]["content"]][0] == "text"
        assert "structuredContent" not in by_call[n]
    assert "12345678901234567890123" in by_call[3]["content"][0]["text"]  # exact integers
    assert by_call[7]["isError"] is True
    assert by_call[7]["structuredContent"]["code"] == "head_too_large"
    assert by_call[7]["structuredContent"]["suggestions"]
    assert "next" in json.dumps(by_call[8])
    assert by_call[9]["isError"] is True
    assert by_call[9]["structuredContent"]["code"] == "key_path_not_found"
    assert by_call[10]["isError"] is True
    if protocol == "modern":
        assert all(r["resultType"] == "complete" for r in results)
        assert all(r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "scratch"
                   for r in results)
    else:
        assert not any("resultType" in r for r in results)
    calls = [r for r in log if r.get("method") == "tools/call"]
    assert [r["tool"] for r in calls] == [name for name, _ in WIRE_CALLS for _ in range(REPEAT)]
    assert [r["outcome"] for r in calls][7 * REPEAT] == "tool_error"
    assert not any("quick" in r for r in log)
