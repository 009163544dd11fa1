"""`scratch mcp install CLIENT`: the entry that starts `scratch mcp serve` on this store, in
each client's own file and shape; backups, refusals and --force. HOME is a temporary
directory in every test: the real client files are never read."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from scratch.clientfiles import scratch_command
from tests.helpers import cli

CMD = scratch_command()
FILES = {  # where each client keeps its servers, under HOME (vscode: the current directory)
    "claude-code": ".claude.json",
    "claude-desktop": ".config/Claude/claude_desktop_config.json",
    "cursor": ".cursor/mcp.json",
}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    return home


def _entry(client: str, store: Path, *extra: str, tools: str = "all") -> dict[str, object]:
    entry: dict[str, object] = {"command": CMD[0],
                                "args": [*CMD[1:], "mcp", "serve", "--store", str(store), *extra,
                                         "--tools", tools]}
    return {"type": "stdio", **entry} if client in ("claude-code", "vscode") else entry


@pytest.mark.parametrize("client, table", [("claude-code", "mcpServers"),
                                           ("claude-desktop", "mcpServers"),
                                           ("cursor", "mcpServers"), ("vscode", "servers")])
def test_print_shows_the_exact_entry(home: Path, scratch_home: Path, client: str,
                                     table: str) -> None:
    run = cli("mcp", "install", client, "--print")
    assert run.code == 0, run.err
    assert run.text == json.dumps({table: {"scratch": _entry(client, scratch_home)}},
                                  indent=2) + "\n"
    assert not any(home.rglob("*")) and not (home.parent / ".vscode").exists()


def test_print_names_a_non_default_agent(home: Path, scratch_home: Path) -> None:
    run = cli("--agent", "ops", "mcp", "install", "cursor", "--print")
    assert json.loads(run.out)["mcpServers"]["scratch"] == _entry(
        "cursor", scratch_home, "--agent", "ops")


@pytest.mark.parametrize("client", ["claude-code", "claude-desktop", "cursor", "vscode"])
def test_install_writes_the_clients_own_file(home: Path, scratch_home: Path,
                                             client: str) -> None:
    path = home / FILES[client] if client in FILES else home.parent / ".vscode" / "mcp.json"
    run = cli("mcp", "install", client)
    assert run.code == 0, run.err
    table = "servers" if client == "vscode" else "mcpServers"
    assert json.loads(path.read_text()) == {table: {"scratch": _entry(client, scratch_home)}}
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert run.text.startswith(f"{path}: added 'scratch' (scratch mcp serve --tools all on "
                               f"store {scratch_home}, agent 'default'); restart ")
    again = cli("mcp", "install", client)
    assert (again.code, again.text) == (0, f"{path}: already has this 'scratch' entry (store "
                                           f"{scratch_home})\n")


def test_existing_servers_are_kept_and_the_file_backed_up(home: Path, scratch_home: Path
                                                          ) -> None:
    path = home / ".claude.json"
    original = {"numStartups": 7, "mcpServers": {"fs": {"command": "npx", "args": ["fs"]}},
                "projects": {"/p": {"mcpServers": {}}}}
    path.write_text(json.dumps(original))
    os.chmod(path, 0o644)
    run = cli("mcp", "install", "claude-code")
    assert run.code == 0, run.err
    backup = home / ".claude.json.scratch-backup"
    assert json.loads(backup.read_text()) == original
    assert f"; backup: {backup}; restart Claude Code to load it\n" in run.text
    now = json.loads(path.read_text())
    assert now == {**original, "mcpServers": {**original["mcpServers"],
                                              "scratch": _entry("claude-code", scratch_home)}}
    assert oct(path.stat().st_mode & 0o777) == "0o644"


def test_a_different_scratch_entry_is_refused_without_force(home: Path, scratch_home: Path,
                                                            tmp_path: Path) -> None:
    path = tmp_path / "project" / ".mcp.json"
    path.parent.mkdir()
    theirs = {"mcpServers": {"scratch": {"command": "scratch", "args": ["mcp", "serve"]}}}
    path.write_text(json.dumps(theirs))
    run = cli("--json", "mcp", "install", "claude-code", "--config", str(path))
    assert run.code == 2
    assert run.json["error"] == {
        "code": "entry_exists", "path": str(path), "entry": "scratch",
        "message": f"{path} already has an MCP server named 'scratch' (scratch mcp serve); "
                   "--force replaces it (the file is backed up first)"}
    assert json.loads(path.read_text()) == theirs
    assert not (path.parent / ".mcp.json.scratch-backup").exists()
    run = cli("mcp", "install", "claude-code", "--config", str(path), "--force")
    assert run.code == 0, run.err
    assert run.text.startswith(f"{path}: replaced 'scratch' ")
    assert json.loads(path.read_text()) == {
        "mcpServers": {"scratch": _entry("claude-code", scratch_home)}}
    assert json.loads((path.parent / ".mcp.json.scratch-backup").read_text()) == theirs


@pytest.mark.parametrize("content, says", [
    ('{"mcpServers": {"fs": {}},', "is not valid JSON"),
    ('["a list"]', "is not a JSON object"),
    ('{"mcpServers": []}', "'mcpServers' is not a JSON object"),
])
def test_a_malformed_file_is_refused_and_left_as_it_was(home: Path, content: str,
                                                        says: str) -> None:
    path = home / ".cursor" / "mcp.json"
    path.parent.mkdir()
    path.write_text(content)
    run = cli("mcp", "install", "cursor", "--force")
    assert run.code == 2
    assert "error [server_config_error]: " in run.err and says in run.err and str(path) in run.err
    assert path.read_text() == content
    assert [p.name for p in path.parent.iterdir()] == ["mcp.json"]


def test_an_unknown_client_is_a_usage_error(home: Path) -> None:
    run = cli("mcp", "install", "emacs")
    assert run.code == 2
    assert ("unknown MCP client 'emacs': use one of claude-code, claude-desktop, cursor, vscode, "
            "codex, gemini-cli, windsurf" in run.err)


@pytest.mark.parametrize("client, where", [("gemini-cli", ".gemini/settings.json"),
                                           ("windsurf", ".codeium/windsurf/mcp_config.json")])
def test_gemini_cli_and_windsurf(home: Path, scratch_home: Path, client: str,
                                 where: str) -> None:
    run = cli("mcp", "install", client, "--tools", "explore")
    assert run.code == 0, run.err
    assert json.loads((home / where).read_text()) == {
        "mcpServers": {"scratch": _entry(client, scratch_home, tools="explore")}}


CODEX = """# my Codex settings
model = "o3"  # the one I like

[mcp_servers.fs]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "."]
env = { "DEBUG" = "1" }

[profiles.fast]
model = "o4-mini"
"""


def test_codex_config_toml_keeps_the_users_file(home: Path, scratch_home: Path) -> None:
    tomllib = pytest.importorskip("tomllib")
    path = home / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(CODEX)
    run = cli("mcp", "install", "codex")
    assert run.code == 0, run.err
    text = path.read_text()
    # every line of the user's file is still there, comments included, in order
    mine = [line for line in CODEX.splitlines() if line]
    assert [line for line in text.splitlines() if line in mine] == mine
    parsed = tomllib.loads(text)
    assert parsed["mcp_servers"]["scratch"] == _entry("codex", scratch_home)
    assert parsed["mcp_servers"]["fs"]["env"] == {"DEBUG": "1"}
    assert parsed["profiles"] == {"fast": {"model": "o4-mini"}}
    assert (path.parent / "config.toml.scratch-backup").read_text() == CODEX
    again = cli("mcp", "install", "codex")
    assert again.text.startswith(f"{path}: already has this 'scratch' entry")
    refused = cli("--json", "mcp", "install", "codex", "--tools", "explore")
    assert refused.code == 2 and refused.json["error"]["code"] == "entry_exists"
    assert cli("mcp", "install", "codex", "--tools", "explore", "--force").code == 0
    assert tomllib.loads(path.read_text())["mcp_servers"]["scratch"] == _entry(
        "codex", scratch_home, tools="explore")


def test_codex_print_and_a_new_file(home: Path, scratch_home: Path) -> None:
    tomllib = pytest.importorskip("tomllib")
    run = cli("mcp", "install", "codex", "--print")
    assert tomllib.loads(run.text) == {"mcp_servers": {"scratch": _entry("codex",
                                                                         scratch_home)}}
    assert cli("mcp", "install", "codex").code == 0
    path = home / ".codex" / "config.toml"
    assert tomllib.loads(path.read_text()) == {"mcp_servers": {"scratch": _entry(
        "codex", scratch_home)}}
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    path.write_text("model = [unclosed\n")
    bad = cli("mcp", "install", "codex", "--force")
    assert bad.code == 2 and "is not valid TOML" in bad.err
    assert path.read_text() == "model = [unclosed\n"


def test_a_bad_tools_set_is_refused(home: Path) -> None:
    run = cli("--json", "mcp", "install", "cursor", "--tools", "everything")
    assert run.code == 2 and run.json["error"]["code"] == "invalid_argument"
    assert not (home / ".cursor").exists()
