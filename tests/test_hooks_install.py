"""`scratch hooks install/uninstall CLIENT`: scratch's hook in each client's own settings file,
beside the user's own hooks; backups, refusals, --force, --print, --tools, and the round trip.
Claude Code's settings are checked against its published JSON Schema (SchemaStore's
claude-code-settings.json: the hooks part, tests/data/hooks, see MANIFEST.md). HOME is a
temporary directory in every test: the real settings are never read."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import cli

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "tests" / "data" / "hooks" / "claude-code-settings.schema.json"
PY = [sys.executable, "-m", "scratch"]
USERS = {  # a user's own settings: hooks of theirs on several events, other keys
    "model": "claude-sonnet-4-5",
    "permissions": {"allow": ["Bash(git status)"], "deny": ["Read(./.env)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "$CLAUDE_PROJECT_DIR/.claude/hooks/block-rm.sh"}]}],
        "PostToolUse": [{"matcher": "Edit|Write", "hooks": [
            {"type": "command", "command": "prettier --write", "timeout": 5}]}],
    },
    "env": {"BASH_MAX_OUTPUT_LENGTH": "60000"},
}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / "project").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    monkeypatch.chdir(home / "project")
    monkeypatch.setattr("scratch.hooks.settings.scratch_command", lambda: list(PY))
    return home


def validate(settings: dict[str, Any]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft7Validator(json.loads(SCHEMA.read_text())).validate(settings)


def command(store: Path, *extra: str, client: str = "claude-code", timeout: str = "60") -> str:
    return shlex.join([*PY, "hook", client, "--timeout", timeout, "--store", str(store),
                       *extra])


def test_install_then_uninstall_gives_the_users_file_back(home: Path,
                                                          scratch_home: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    original = json.dumps(USERS, indent=2) + "\n"
    path.write_text(original)
    os.chmod(path, 0o640)
    run = cli("hooks", "install", "claude-code")
    assert run.code == 0, run.err
    assert run.text == (f"{path}: added scratch's PostToolUse hook for "
                        f"Bash|Read|WebFetch|Grep|mcp__.* (store {scratch_home}, agent "
                        f"'claude-code'); backup: {path}.scratch-backup\n")
    settings = json.loads(path.read_text())
    validate(settings)
    assert settings == {**USERS, "hooks": {
        "PreToolUse": USERS["hooks"]["PreToolUse"],
        "PostToolUse": [*USERS["hooks"]["PostToolUse"], {
            "matcher": "Bash|Read|WebFetch|Grep|mcp__.*",
            "hooks": [{"type": "command", "command": command(scratch_home), "timeout": 60}]}]}}
    assert list(settings) == list(USERS)  # the keys keep their order
    assert (path.parent / "settings.json.scratch-backup").read_text() == original
    assert oct(path.stat().st_mode & 0o777) == "0o640"
    again = cli("hooks", "install", "claude-code")
    assert (again.code, again.text) == (0, f"{path}: already runs this scratch hook\n")
    gone = cli("hooks", "uninstall", "claude-code")
    assert gone.code == 0 and gone.text.startswith(f"{path}: removed scratch's PostToolUse")
    assert json.loads(path.read_text()) == USERS
    assert path.read_text() == original
    nothing = cli("hooks", "uninstall", "claude-code")
    assert (nothing.code, nothing.text) == (0, f"{path}: no scratch hook\n")


def test_a_new_settings_file_is_made_and_emptied_cleanly(home: Path,
                                                        scratch_home: Path) -> None:
    path = home / ".claude" / "settings.json"
    assert cli("hooks", "install", "claude-code").code == 0
    validate(json.loads(path.read_text()))
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert cli("hooks", "uninstall", "claude-code").code == 0
    assert json.loads(path.read_text()) == {}


def test_another_scratch_hook_is_replaced_only_with_force(home: Path,
                                                          scratch_home: Path) -> None:
    path = home / ".claude" / "settings.json"
    assert cli("hooks", "install", "claude-code").code == 0
    run = cli("hooks", "install", "claude-code", "--tools", "Bash", "--json")
    assert run.code == 2
    err = run.json["error"]
    assert err["code"] == "hook_exists" and "--force replaces it" in err["message"]
    forced = cli("hooks", "install", "claude-code", "--tools", "Bash,mcp__github__.*",
                 "--timeout", "30", "--force")
    assert forced.code == 0 and f"{path}: replaced scratch's" in forced.text
    settings = json.loads(path.read_text())
    validate(settings)
    assert settings["hooks"]["PostToolUse"] == [{"matcher": "Bash|mcp__github__.*", "hooks": [
        {"type": "command", "command": command(scratch_home, timeout="30"), "timeout": 30}]}]


def test_print_shows_the_hook_and_writes_nothing(home: Path, scratch_home: Path) -> None:
    run = cli("hooks", "install", "claude-code", "--print")
    assert run.code == 0
    shown = json.loads(run.text)
    validate(shown)
    assert shown == {"hooks": {"PostToolUse": [{"matcher": "Bash|Read|WebFetch|Grep|mcp__.*",
                                                "hooks": [{"type": "command",
                                                           "command": command(scratch_home),
                                                           "timeout": 60}]}]}}
    assert not any(home.rglob("*.json"))


@pytest.mark.parametrize("scope, where", [("project", ".claude/settings.json"),
                                          ("local", ".claude/settings.local.json")])
def test_project_and_local_settings(home: Path, scratch_home: Path, scope: str,
                                    where: str) -> None:
    assert cli("hooks", "install", "claude-code", "--settings", scope).code == 0
    path = home / "project" / where
    validate(json.loads(path.read_text()))
    assert not (home / ".claude").exists()
    assert cli("hooks", "uninstall", "claude-code", "--settings", scope).code == 0
    assert json.loads(path.read_text()) == {}


def test_a_settings_path(home: Path, scratch_home: Path, tmp_path: Path) -> None:
    path = tmp_path / "managed" / "settings.json"
    assert cli("hooks", "install", "claude-code", "--settings", str(path)).code == 0
    assert json.loads(path.read_text())["hooks"]["PostToolUse"][0]["matcher"] == \
        "Bash|Read|WebFetch|Grep|mcp__.*"


def test_gemini_cli_and_cursor_files(home: Path, scratch_home: Path) -> None:
    gemini = home / ".gemini" / "settings.json"
    gemini.parent.mkdir()
    gemini.write_text(json.dumps({"theme": "GitHub", "mcpServers": {"fs": {"command": "npx"}}}))
    assert cli("hooks", "install", "gemini-cli").code == 0
    assert json.loads(gemini.read_text()) == {
        "theme": "GitHub", "mcpServers": {"fs": {"command": "npx"}},
        "hooks": {"AfterTool": [{
            "matcher": "run_shell_command|read_file|read_many_files|web_fetch|"
                       "search_file_content|mcp_.*",
            "hooks": [{"name": "scratch", "type": "command",
                       "command": command(scratch_home, client="gemini-cli"),
                       "timeout": 60000}]}]}}
    assert cli("hooks", "uninstall", "gemini-cli").code == 0
    assert json.loads(gemini.read_text()) == {"theme": "GitHub",
                                              "mcpServers": {"fs": {"command": "npx"}}}
    cursor = home / ".cursor" / "hooks.json"
    cursor.parent.mkdir()
    mine = {"version": 1, "hooks": {"afterFileEdit": [{"command": "./hooks/format.sh"}]}}
    cursor.write_text(json.dumps(mine))
    assert cli("hooks", "install", "cursor").code == 0
    assert json.loads(cursor.read_text()) == {"version": 1, "hooks": {
        "afterFileEdit": [{"command": "./hooks/format.sh"}],
        "postToolUse": [{"command": command(scratch_home, client="cursor"), "timeout": 60,
                         "matcher": "MCP:.*"}]}}
    assert cli("hooks", "uninstall", "cursor").code == 0
    assert json.loads(cursor.read_text()) == mine


def test_bad_input_is_refused_and_loses_nothing(home: Path, scratch_home: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text("{not json")
    run = cli("hooks", "install", "claude-code", "--json")
    assert run.code == 2 and run.json["error"]["code"] == "server_config_error"
    assert path.read_text() == "{not json"
    unknown = cli("hooks", "install", "windsurf", "--json")
    assert unknown.code == 2 and unknown.json["error"]["code"] == "invalid_argument"
    assert "claude-code, gemini-cli, cursor, codex" in unknown.json["error"]["message"]
    empty = cli("hooks", "install", "claude-code", "--tools", ",", "--json")
    assert empty.json["error"]["code"] == "invalid_argument"
