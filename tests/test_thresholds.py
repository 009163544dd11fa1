from __future__ import annotations

import pytest

from scratch.thresholds import resolve_threshold
from tests.helpers import cli

TABLE = {"*_list_*": 512, "kubectl_get": 2000, "*": 4096, "kubectl_*": 3000, "aws_?3_*": 800,
         "gh_*_x": 100, "gh_x_*": 90}


@pytest.mark.parametrize("tool,expected,pattern", [
    ("kubectl_get", 2000, "kubectl_get"),          # exact name is longest
    ("kubectl_logs", 3000, "kubectl_*"),           # longer than "*"
    ("aws_list_buckets", 512, "*_list_*"),         # 8 chars beats "*"
    ("aws_s3_ls", 800, "aws_?3_*"),
    ("gh_x_x", 90, "gh_x_*"),                      # tie on length: smaller wins
    ("anything", 4096, "*"),
])
def test_resolution_table(tool: str, expected: int, pattern: str) -> None:
    t = resolve_threshold(tool, TABLE)
    assert (t.min_tokens, t.pattern) == (expected, pattern)


def test_no_match_default() -> None:
    t = resolve_threshold("kubectl_get", {"aws_*": 10})
    assert (t.min_tokens, t.pattern) == (5120, None)
    assert "no pattern" in t.reason
    assert resolve_threshold("x", {}).reason == "no [thresholds] configured; the default 5120 applies"


def test_tie_reason_and_brackets_are_literal() -> None:
    assert "smaller threshold" in resolve_threshold("gh_x_x", TABLE).reason
    assert resolve_threshold("a[b]", {"a[b]": 7}).min_tokens == 7
    assert resolve_threshold("ab", {"a[b]": 7}).min_tokens == 5120


def test_config_threshold_command(scratch_home) -> None:
    scratch_home.mkdir(parents=True)
    (scratch_home / "scratch.toml").write_text(
        '[thresholds]\n"*_list_*" = 512\n"kubectl_get" = 2000\n"*" = 4096\n')
    r = cli("config", "threshold", "kubectl_get", "--json")
    assert r.code == 0
    d = r.json["data"]
    assert (d["min_tokens"], d["pattern"]) == (2000, "kubectl_get")
    assert [c["pattern"] for c in d["matching_patterns"]] == ["kubectl_get", "*"]
    r = cli("config", "threshold", "aws_list_users")
    assert r.text == ("aws_list_users: min_tokens 512 from pattern '*_list_*' "
                      "('*_list_*' is the longest of 2 matching patterns)\n")


SERVER_TOML = """\
[thresholds]
"kubectl_*" = 3000

[mcp.servers.github.scratchpad]
"*_list_*" = { min_tokens = 512 }
"list_*" = { min_tokens = 700 }
"*" = { min_tokens = 4096 }

[mcp.servers.fs.scratchpad]
"read_*" = { min_tokens = 800 }
"""


def test_a_servers_own_table_decides_first_then_thresholds(scratch_home) -> None:
    from scratch.store.config import load_config
    from scratch.thresholds import resolve_server_threshold
    scratch_home.mkdir(parents=True)
    (scratch_home / "scratch.toml").write_text(SERVER_TOML)
    config = load_config(scratch_home)
    servers = config["mcp.servers"]
    assert servers == {"github": {"*_list_*": 512, "list_*": 700, "*": 4096},
                       "fs": {"read_*": 800}}

    def resolved(server: str, tool: str) -> tuple[int, str | None, str]:
        t = resolve_server_threshold(server, tool, servers, config["thresholds"])
        return t.min_tokens, t.pattern, t.table

    # "*_list_*" and "list_*" both match at length 8 (7 vs 6: "*_list_*" is longer)
    assert resolved("github", "repo_list_issues") == (512, "*_list_*", "mcp.servers.github.scratchpad")
    assert resolved("github", "list_*x") == (700, "list_*", "mcp.servers.github.scratchpad")
    assert resolved("github", "get_me") == (4096, "*", "mcp.servers.github.scratchpad")
    # no pattern of the server's table matches: [thresholds], then the default
    assert resolved("fs", "kubectl_get") == (3000, "kubectl_*", "thresholds")
    assert resolved("fs", "search") == (5120, None, "thresholds")
    assert resolved("nope", "read_x") == (5120, None, "thresholds")
    # a tie on length goes to the smaller threshold, as in [thresholds]
    tie = resolve_server_threshold("s", "ab", {"s": {"a*": 9, "*b": 7}}, {})
    assert (tie.min_tokens, tie.pattern) == (7, "*b") and "smaller" in tie.reason


def test_config_threshold_server_tool_explains(scratch_home) -> None:
    scratch_home.mkdir(parents=True)
    (scratch_home / "scratch.toml").write_text(SERVER_TOML)
    r = cli("config", "threshold", "github", "repo_list_issues")
    assert r.code == 0
    assert r.text == ("github repo_list_issues: min_tokens 512 from pattern '*_list_*' of "
                      "[mcp.servers.github.scratchpad] ([mcp.servers.github.scratchpad]: "
                      "'*_list_*' is the longest of 2 matching patterns)\n")
    d = cli("config", "threshold", "fs", "search", "--json").json["data"]
    assert d == {"server": "fs", "tool": "search", "min_tokens": 5120, "pattern": None,
                 "reason": "no pattern of [mcp.servers.fs.scratchpad] matches; [thresholds]: "
                           "no pattern in [thresholds] matches; the default 5120 applies",
                 "matching_patterns": [], "table": "thresholds"}


@pytest.mark.parametrize("toml,key", [
    ('[mcp.servers.x.scratchpad]\n"*" = { min_tokens = -1 }\n', "mcp.servers.x.scratchpad.*"),
    ('[mcp.servers.x.scratchpad]\n"*" = { tokens = 5 }\n', "mcp.servers.x.scratchpad.*"),
    ('[mcp.servers.x]\nthreshold = 5\n', "mcp.servers.x"),
    ('[mcp.servers.x]\nscratchpad = 5\n', "mcp.servers.x.scratchpad"),
])
def test_bad_server_tables_are_config_errors_naming_the_key(scratch_home, toml, key) -> None:
    scratch_home.mkdir(parents=True)
    (scratch_home / "scratch.toml").write_text(toml)
    r = cli("config", "threshold", "x", "y", "--json")
    assert r.code != 0
    assert r.json["error"]["code"] == "config_error" and r.json["error"]["key"] == key
