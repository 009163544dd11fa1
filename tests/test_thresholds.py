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
