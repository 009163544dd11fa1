"""The one install flow of `scratch hooks install` and `scratch mcp install`
(scratch.cli.client_install): --print shows what to add, where, and writes nothing; an install
says added, then already, refuses a different entry without --force (exit 2, file untouched),
and with it says replaced and where the backup is. HOME is a temporary directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import cli

# each command, the flag naming its file, what it says it adds, whose file --print names, and
# the words that put a different scratch entry there (its own refusal code)
FLOWS = {
    "hooks": (["hooks", "install", "claude-code"], "--settings", "scratch's PostToolUse hook",
              "Claude Code's settings", ["--tools", "Bash"], "hook_exists"),
    "mcp": (["mcp", "install", "claude-code"], "--config", "'scratch' (scratch mcp serve",
            "Claude Code's config", ["--tools", "explore"], "entry_exists"),
}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    return home


@pytest.mark.parametrize("flow", sorted(FLOWS))
def test_one_flow_print_add_already_refuse_force(home: Path, scratch_home: Path,
                                                 flow: str) -> None:
    words, flag, added, owner, other, code = FLOWS[flow]
    path = home / "client.json"
    path.write_text('{"kept": true}\n')
    shown = cli(*words, flag, str(path), "--print")
    assert shown.code == 0, shown.err
    assert shown.err == f"add this to {path} ({owner})\n"
    assert json.loads(shown.text)  # what to add, as JSON
    printed = cli(*words, flag, str(path), "--print", "--json")
    assert printed.json["data"]["file"] == str(path)
    assert printed.json["data"]["client"] == "claude-code"
    assert path.read_text() == '{"kept": true}\n'  # --print wrote nothing
    backup = Path(f"{path}.scratch-backup")
    assert not backup.exists()

    first = cli(*words, flag, str(path))
    assert first.code == 0, first.err
    assert first.text.startswith(f"{path}: added {added}")
    assert first.text.endswith(f"; backup: {backup}" + (
        "; restart Claude Code to load it\n" if flow == "mcp" else "\n"))
    assert json.loads(backup.read_text()) == {"kept": True}
    done = cli(*words, flag, str(path), "--json").json["data"]
    assert (done["unchanged"], done["replaced"], done["backup"]) == (True, False, None)
    again = cli(*words, flag, str(path))
    assert again.code == 0 and again.text.startswith(f"{path}: already ")
    assert again.err == ""

    installed = path.read_bytes()
    refused = cli(*words, flag, str(path), *other, "--json")
    assert (refused.code, refused.json["error"]["code"]) == (2, code)
    assert path.read_bytes() == installed
    forced = cli(*words, flag, str(path), *other, "--force", "--json")
    assert forced.code == 0, forced.err
    data = forced.json["data"]
    assert (data["unchanged"], data["replaced"], data["backup"]) == (False, True, str(backup))
    assert json.loads(backup.read_text()) == {"kept": True}  # the first backup is kept


def test_codex_hook_says_to_trust_it_on_print_and_after_an_edit_only(
        home: Path, scratch_home: Path) -> None:
    trust = "Codex runs a new or changed hook only once you trust it: open /hooks in Codex\n"
    path = home / "hooks.json"
    shown = cli("hooks", "install", "codex", "--settings", str(path), "--print")
    assert shown.err == f"add this to {path} (Codex's settings)\n" + trust
    first = cli("hooks", "install", "codex", "--settings", str(path))
    assert first.code == 0 and first.err == trust
    assert first.text.startswith(f"{path}: added scratch's PreToolUse hook for ")
    again = cli("hooks", "install", "codex", "--settings", str(path))
    assert (again.text, again.err) == (f"{path}: already runs this scratch hook\n", "")
