"""What the proxy's pointer tells a model, on the points where jmunch-mcp (the peer of issue
13, compared in tests/bench/bench_proxy.py) falls short: JSON behind a prefix is read as
JSON, token counts are the real tokenizer's, a search says its total beyond any cap, and the
pointer shows data (not only sizes). The upstream is the fixture server's ``echo``."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.mcp_support import McpClient
from tests.test_mcp_proxy import fixture_entry, proxy_client, servers_file

PODS = {"kind": "List", "items": [{"metadata": {"name": f"pod-{i:04d}", "namespace": "prod"},
                                   "status": {"phase": "Failed" if i % 9 == 0 else "Running"}}
                                  for i in range(400)]}
LOG = "".join(f'10.0.0.{i % 250} - - [17/May/2015:10:{i % 60:02d}:03 +0000] "GET /p/{i} '
              f'HTTP/1.1" {200 if i % 13 else 404} {100 + i}\n' for i in range(1500))


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpClient]:
    tmp = tmp_path_factory.mktemp("pointer")
    home = tmp / "store"
    home.mkdir()
    (home / "scratch.toml").write_text('[mcp.servers.fx.scratchpad]\n"*" = { min_tokens = 500 }\n')
    c = proxy_client(home, servers_file(tmp, {"fx": fixture_entry()}), mode="legacy")
    yield c
    c.close()


def _count(text: str) -> int:
    from scratch.tokens import count_text, resolve_encoding
    return count_text(text, resolve_encoding(None, None))


def test_json_behind_a_prefix_is_stored_as_json_and_explored_by_path(client: McpClient) -> None:
    result = client.call("echo", {"message": json.dumps(PODS, indent=2)})
    pointer = result.content[0].text
    name = result.meta["scratch"]["stored"]
    assert pointer.startswith(f"stored {name} (version 1): json, ")
    shown = "\n".join(b.text for b in result.content if b.type == "text")
    assert "the result's text began with 'Echo:' before the JSON stored here" in shown
    assert client.text("get_in", {"file": name, "path": "items.9.status.phase"}) == "Failed\n"
    assert client.text("get_in", {"file": name, "path": "items.399.metadata.name"}) \
        == "pod-0399\n"


def test_the_token_count_is_the_real_tokenizers_not_chars_over_four(client: McpClient) -> None:
    result = client.call("echo", {"message": LOG})
    scratch = result.meta["scratch"]
    assert scratch["tokens"] == _count("Echo: " + LOG)
    assert scratch["tokens"] != len("Echo: " + LOG) // 4
    shown = "\n".join(b.text for b in result.content if b.type == "text")
    assert f"-- {scratch['pointer_tokens']:,} tokens (o200k_base)" in shown


def test_the_pointer_shows_data_from_the_result(client: McpClient) -> None:
    result = client.call("echo", {"message": LOG})
    pointer = "\n".join(b.text for b in result.content if b.type == "text")
    assert "Echo: 10.0.0.0 - - [17/May/2015:10:00:03 +0000]" in pointer  # its first line
    assert "GET /p/1499 " in pointer  # its last line
    # a summary of the records (the first line, behind "Echo: ", is not one)
    # two status codes: shown exactly, not as classes
    assert "records (common): 1,499 of 1,500 lines parsed, 1 not\n  status: 200 1,384, 404 115" \
        in pointer


def test_a_search_says_its_total_beyond_any_cap(client: McpClient) -> None:
    name = client.call("echo", {"message": LOG + "\n\n"}).meta["scratch"]["stored"]
    answer = client.call("grep", {"file": name, "pattern": "GET /p/", "context": 0,
                                  "max_count": 5})
    text = "\n".join(b.text for b in answer.content if b.type == "text")
    assert "1,500 matching lines in the whole entry; this search stops at the first 5" in text
    assert text.count("GET /p/") == 5
