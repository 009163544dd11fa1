"""scratch.answers.store_admin through the core API (no interface): write's limits, one agent's stats."""

from __future__ import annotations

from pathlib import Path

import pytest

from scratch.answers.kernel.context import Context
from scratch.answers.kernel.execution import execute
from scratch.answers.kernel.rendering import PlainCalls
from scratch.calls import call
from scratch.errors import LimitExceeded, UsageError


def run(command: str, *, agent: str = "default", **args: object):
    ctx = Context.build(agent=agent)
    return execute(ctx, PlainCalls(), call(command, **args))


def test_write_holds_given_content_to_max_write_bytes(monkeypatch: pytest.MonkeyPatch,
                                                      scratch_home: Path) -> None:
    monkeypatch.setenv("SCRATCH_LIMITS_MAX_WRITE_BYTES", "10")
    with pytest.raises(LimitExceeded) as over:
        run("write", name="big", content=b"x" * 11)
    assert over.value.code == "write_too_large"
    assert over.value.details["limit_value"] == 10
    assert over.value.details["attempted_at_least"] == 11
    assert not (scratch_home / "agents" / "default" / "files" / "big").exists()
    assert run("write", name="big", content=b"x" * 10).data["version"] == 1


def test_write_refuses_empty_content_unless_allowed(scratch_home: Path) -> None:
    with pytest.raises(UsageError) as empty:
        run("write", name="e", content=b"")
    assert empty.value.code == "empty_input"
    assert run("write", name="e", content=b"", allow_empty=True).data["bytes"] == 0


def test_stats_of_one_agent_name_no_other(scratch_home: Path) -> None:
    run("write", name="a.txt", content=b"a\n", agent="alice")
    run("write", name="b.txt", content=b"bb\n", agent="bob")
    run("head", ref="a.txt", agent="alice")
    every = run("stats").data
    assert [r["agent"] for r in every["agents"]] == ["alice", "bob"]
    own = execute(Context.build(agent="alice", session="s1"), PlainCalls(),
                  call("stats", agent="alice"))
    assert own.data["agent"] == "alice" and own.data["files"] == 1 and own.data["bytes"] == 2
    assert own.data["operations"] == {"write": 1, "head": 1}
    assert own.data["session"]["session"] == "s1" and own.data["session"]["calls"] == 0
    assert "bob" not in str(own.data) and str(scratch_home) not in str(own.data)
    assert own.text.startswith("agent: alice\nfiles: 1\n")
    other = execute(Context.build(agent="alice"), PlainCalls(), call("stats", agent="bob"))
    assert [r["agent"] for r in other.data["agents"]] == ["bob"]
    assert "session" not in other.data
