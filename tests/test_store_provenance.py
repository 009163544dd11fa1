"""Which store and agent a command used, and why, where it matters: the line `scratch mcp
serve` and `scratch mcp proxy` print at start, and every entry-not-found error (CLI and MCP).

An MCP client starts its servers with an environment of its own, so the store a server opens
is not always the one its user's shell would give: both say which one it was."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from scratch.store.names import find_agent, find_store_root, how_chosen, where
from tests.conftest import REPO
from tests.helpers import cli


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    # no XDG_DATA_HOME (the default store is under HOME); the test's XDG_CACHE_HOME is kept
    # (derived tokenizer files only: without it every server here rebuilt them)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SCRATCH_", "XDG_")) or k == "XDG_CACHE_HOME"}
    env.update(HOME=str(tmp_path / "home"), PYTHONPATH=str(REPO), **extra)
    return env


def _scratch(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scratch", *args], env=_env(tmp_path, **env),
                          cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=120)


def test_how_each_choice_reads() -> None:
    assert [how_chosen(s) for s in ("--store", "env SCRATCH_HOME", "XDG data directory",
                                    "nearest .scratch/ above the current directory")] == [
        "from --store", "from $SCRATCH_HOME", "SCRATCH_HOME unset: default",
        "SCRATCH_HOME unset: nearest .scratch/ above the current directory"]
    assert [how_chosen(find_agent(flag, env)[1]) for flag, env in (
        ("a", {"SCRATCH_AGENT": "b"}), (None, {"SCRATCH_AGENT": "b"}), (None, {}))] == [
        "from --agent", "from $SCRATCH_AGENT", "SCRATCH_AGENT unset: default"]


def test_where_names_the_latest_choice_of_that_store(tmp_path: Path) -> None:
    root, _ = find_store_root(None, {"SCRATCH_HOME": str(tmp_path / "s")})
    assert where(root, "ops") == f"for agent 'ops' in store {root} (from $SCRATCH_HOME)"
    find_store_root(str(root), {})
    assert where(root, "ops") == f"for agent 'ops' in store {root} (from --store)"
    assert where(tmp_path / "never-found", "a") == f"for agent 'a' in store {tmp_path}/never-found"


def test_entry_not_found_names_the_store_and_how_it_was_chosen(scratch_home: Path) -> None:
    run = cli("head", "nope")
    assert run.code == 4
    assert (f"no entry named 'nope' for agent 'default' in store {scratch_home} "
            "(from $SCRATCH_HOME)") in run.err
    assert cli("write", "x", input="1\n").code == 0
    run = cli("--json", "--agent", "ops", "history", "x")
    error = run.json["error"]
    assert error["message"] == (f"no entry named 'x' for agent 'ops' in store {scratch_home} "
                                "(from $SCRATCH_HOME)")
    assert error["store"] == str(scratch_home)


def test_the_default_store_says_scratch_home_was_unset(tmp_path: Path) -> None:
    run = _scratch(tmp_path, "head", "63eae3")
    store = tmp_path / "home" / ".local" / "share" / "scratch"
    assert run.returncode == 4, run.stderr
    assert (f"no entry named '63eae3' for agent 'default' in store {store} "
            "(SCRATCH_HOME unset: default)") in run.stderr


@pytest.mark.parametrize("args, env, line", [
    (("mcp", "serve", "--quiet"), {}, "scratch mcp serve: store {home}/.local/share/scratch "
     "(SCRATCH_HOME unset: default), agent 'default' (SCRATCH_AGENT unset: default)"),
    (("--agent", "bob", "mcp", "serve"), {"SCRATCH_HOME": "{tmp}/s", "SCRATCH_AGENT": "ops"},
     "scratch mcp serve: store {tmp}/s (from $SCRATCH_HOME), agent 'bob' (from --agent)"),
    (("mcp", "serve", "--store", "{tmp}/t"), {"SCRATCH_AGENT": "ops"},
     "scratch mcp serve: store {tmp}/t (from --store), agent 'ops' (from $SCRATCH_AGENT)"),
    (("mcp", "proxy", "--", sys.executable, "-c", "pass"), {"SCRATCH_HOME": "{tmp}/s"},
     "scratch mcp proxy: store {tmp}/s (from $SCRATCH_HOME), agent 'default' "
     "(SCRATCH_AGENT unset: default)"),
])
def test_servers_say_where_they_are_at_start(tmp_path: Path, args, env, line) -> None:
    fill = {"tmp": str(tmp_path), "home": str(tmp_path / "home")}
    run = _scratch(tmp_path, *(a.format(**fill) for a in args),
                   **{k: v.format(**fill) for k, v in env.items()})
    assert run.stderr.splitlines()[0] == line.format(**fill), run.stderr


def test_over_mcp_the_same_error_names_the_store(tmp_path: Path) -> None:
    from tests.mcp_support import server_env, stdio_client, text_of
    home = tmp_path / "store"
    client = stdio_client(home, env=server_env(home))
    try:
        result = client.call("head", {"file": "nope"})
    finally:
        client.close()
    assert result.is_error
    assert (f"no entry named 'nope' for agent 'default' in store {home} (from $SCRATCH_HOME)"
            in text_of(result))
