"""Per-agent settings: ``[agents.NAME]`` tables in scratch.toml override any setting for that
agent, and ``scratch config --agent NAME`` says what holds and where it came from."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import cli

TOML = """\
model = "gpt-4o"
[budget]
max_extraction_tokens = 5000
[thresholds]
"*" = 100
[agents.ops]
model = "claude-sonnet-4"
budget.max_extraction_tokens = 300
[agents.ops.thresholds]
"kubectl*" = 50
[agents.batch.budget]
context_window = 1000000
"""


def settings(*args: str) -> dict[str, tuple[object, str]]:
    rows = cli("config", *args, "--json").json["data"]["settings"]
    return {r["key"]: (r["value"], r["source"]) for r in rows}


def test_an_agents_table_overrides_for_that_agent_only(scratch_home: Path) -> None:
    cli("init", str(scratch_home.parent))  # a store whose scratch.toml we write
    home = scratch_home.parent / ".scratch"
    (home / "scratch.toml").write_text(TOML)
    ops = settings("--store", str(home), "--agent", "ops")
    assert ops["model"] == ("claude-sonnet-4", "scratch.toml [agents.ops]")
    assert ops["budget.max_extraction_tokens"] == (300, "scratch.toml [agents.ops]")
    assert ops["thresholds"] == ({"*": 100, "kubectl*": 50}, "scratch.toml [agents.ops]")
    other = settings("--store", str(home), "--agent", "other")
    assert other["model"] == ("gpt-4o", "scratch.toml")
    assert other["budget.max_extraction_tokens"] == (5000, "scratch.toml")
    assert other["thresholds"] == ({"*": 100}, "scratch.toml")
    batch = settings("--store", str(home), "--agent", "batch")
    assert batch["budget.context_window"] == (1000000, "scratch.toml [agents.batch]")


def test_the_agents_cap_is_the_one_that_refuses(scratch_home: Path) -> None:
    cli("init", str(scratch_home.parent))
    home = scratch_home.parent / ".scratch"
    (home / "scratch.toml").write_text(TOML)
    text = "".join(f"line {i} with some words to count\n" for i in range(200))
    for agent in ("ops", "other"):
        assert cli("--store", str(home), "--agent", agent, "write", "doc", input=text).code == 0
    r = cli("--store", str(home), "--agent", "ops", "head", "doc", "-n", "200", "--json")
    assert r.code == 3 and r.json["error"]["limit"] == 300
    # ops is priced with the Claude estimate, the others with gpt-4o's tokenizer
    assert r.json["error"]["encoding"] == "claude"
    r = cli("--store", str(home), "--agent", "other", "head", "doc", "-n", "200", "--json")
    assert r.code == 0 and r.json["meta"]["tokens"]["encoding"] == "o200k_base"


def test_the_environment_still_wins_over_an_agents_table(scratch_home: Path) -> None:
    cli("init", str(scratch_home.parent))
    home = scratch_home.parent / ".scratch"
    (home / "scratch.toml").write_text(TOML)
    s = settings("--store", str(home), "--agent", "ops")
    assert s["budget.max_extraction_tokens"][0] == 300
    r = cli("--store", str(home), "--agent", "ops", "config", "--json",
            env={"SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS": "42"})
    row = next(x for x in r.json["data"]["settings"] if x["key"] == "budget.max_extraction_tokens")
    assert (row["value"], row["source"]) == (42, "env SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS")


def test_a_bad_agents_table_is_an_error_naming_it(scratch_home: Path) -> None:
    cli("init", str(scratch_home.parent))
    home = scratch_home.parent / ".scratch"
    for toml, key in (('[agents.ops]\nbudget.nope = 1\n', "agents.ops.budget.nope"),
                      ('[agents.ops]\nmodel = 3\n', "model"),
                      ('[agents."bad name"]\nmodel = "x"\n', 'agents.bad name'),
                      ('agents = 3\n', "agents")):
        (home / "scratch.toml").write_text(toml)
        r = cli("--store", str(home), "config", "--json")
        assert r.code == 2 and r.json["error"]["code"] == "config_error", toml
        assert r.json["error"].get("key") == key, (toml, r.json["error"])
