"""`scratch redactions` and redaction on every way into the store: the CLI's ingest, run, write
and log append, the MCP tools ingest, write_file and append_log, the MCP proxy's interception,
companions (embedded documents, an MCP result's blocks), the Python entry the client hooks
use (scratch.answers.capture.ingest), the settings and --no-redact, the ledger, and the store's own
refusal of content that comes without its redaction record.

After each capture no byte of the secret is anywhere in the store: in any git object (every
commit, tree and blob, reachable or not), in any file under the store (the call ledger and the
caches included).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scratch.redact.markers import marker, store_key
from tests.helpers import cli

GH = "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"  # detect-secrets' own test token
PW = "cGFzc3dvcmQxMjM="  # base64 of password123, a Secret's value
BIG_PAD = [{"name": f"pod-{i}", "phase": "Running"} for i in range(400)]


def kube_output() -> bytes:
    """A `kubectl get secrets,pods -o json` shape: a Secret, and a Pod with a token env."""
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "data": {"password": PW}, "kind": "Secret",
         "metadata": {"name": "db", "uid": "62a187fd-756e-11ea-b27b-0242ac11002d"},
         "type": "Opaque"},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}, "spec": {
            "containers": [{"name": "c", "env": [{"name": "GITHUB_TOKEN", "value": GH}]}]}},
        *BIG_PAD]}, indent=2).encode()


def leaks(home: Path, *secrets: str) -> list[str]:
    """Where any of ``secrets`` is found in the store: git objects, then files."""
    out: list[str] = []
    objects = subprocess.run(["git", "-C", str(home), "cat-file", "--batch-all-objects",
                              "--batch"], capture_output=True, check=True).stdout
    for s in secrets:
        if s.encode() in objects:
            out.append(f"a git object holds {s[:6]}...")
    for path in home.rglob("*"):
        if path.is_file() and ".git" not in path.parts:
            data = path.read_bytes()
            out.extend(f"{path.relative_to(home)} holds {s[:6]}..." for s in secrets
                       if s.encode() in data)
    # packed and loose objects are compressed: the cat-file pass above read them all
    return out


def findings(name: str) -> dict[str, object]:
    run = cli("--json", "redactions", name)
    assert run.code == 0, run.err
    return run.json["data"]  # type: ignore[no-any-return]


def test_ingest_redacts_and_says_so(scratch_home: Path) -> None:
    run = cli("ingest", "--tool", "kubectl_get_all", "--store-always", input=kube_output())
    assert run.code == 0, run.err
    assert "2 values redacted at capture (github-pat 1, k8s-secret-data 1)" in run.out.decode()
    assert leaks(scratch_home, GH, PW) == []
    got = cli("--json", "get-in", "kubectl_get_all", "items.1.spec.containers.0.env.0").json
    key = store_key(scratch_home)
    assert got["data"]["value"] == {"name": "GITHUB_TOKEN",
                                    "value": marker("github-pat", GH.encode(), key)}
    assert got["meta"]["redacted"] == {"count": 2, "rules": {"github-pat": 1,
                                                             "k8s-secret-data": 1}}
    data = findings("kubectl_get_all")
    source = kube_output().decode().split("\n")
    at = [next(i for i, line in enumerate(source, 1) if s in line) for s in (PW, GH)]
    assert [(f["rule"], f["line"], f["path"]) for f in data["findings"]] == [
        ("k8s-secret-data", at[0], "items.0.data.password"),
        ("github-pat", at[1], "items.1.spec.containers.0.env.0.value")]
    for f in data["findings"]:  # the marker is on the line said
        line = cli("slice", "kubectl_get_all", str(f["line"]), str(f["line"]), "--no-numbers")
        assert f["marker"] in line.out.decode()
    assert all(GH not in json.dumps(f) and PW not in json.dumps(f) for f in data["findings"])
    # the index, schema and SQL read the redacted form
    sql = cli("--json", "sql", "kubectl_get_all",
              "SELECT count(*) AS n FROM entry WHERE kind = 'Secret'").json
    assert sql["data"]["rows"] == [[1]] or sql["data"]["rows"] == [{"n": 1}]
    text = cli("redactions", "kubectl_get_all")
    assert text.out.decode().splitlines()[0].split() == ["line", "rule", "path", "key", "marker"]


def test_run_redacts_its_commands_output(scratch_home: Path, tmp_path: Path) -> None:
    src = tmp_path / "env.txt"
    src.write_text("".join(f"VAR_{i}=value {i}\n" for i in range(2000))
                   + f"GITHUB_TOKEN={GH}\nAWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRf1\n")
    run = cli("run", "--store-always", "--tool", "env", "--", "cat", str(src))
    assert run.code == 0, run.err
    assert leaks(scratch_home, GH, "wJalrXUtnFEMI") == []
    data = findings("env")
    assert [(f["rule"], f["line"]) for f in data["findings"]] == [
        ("github-pat", 2001), ("secret-assignment", 2002)]


def test_write_and_log_append_redact(scratch_home: Path, tmp_path: Path) -> None:
    out = cli("write", "notes/env.sh", input=f"step 1\nexport GITHUB_TOKEN={GH}\n")
    assert out.code == 0 and "1 value redacted at capture (github-pat 1)" in out.out.decode()
    f = tmp_path / "conf.yaml"
    f.write_text("db:\n  password: hunter2hunter\n  host: db.local\n")
    assert cli("write", "conf.yaml", str(f)).code == 0
    assert cli("log", "append", "events", f'{{"step": 3, "token": "{GH}"}}').code == 0
    lines = cli("log", "append", "events", "--lines", input="ok\npassword=hunter2hunter\n")
    assert lines.code == 0
    assert leaks(scratch_home, GH, "hunter2hunter") == []
    assert [(x["rule"], x["line"]) for x in findings("notes/env.sh")["findings"]] == [
        ("github-pat", 2)]
    assert [(x["rule"], x["path"]) for x in findings("conf.yaml")["findings"]] == [
        ("secret-field", "db.password")]
    log = findings("events")
    assert log["count"] == 2 and [(x["rule"], x["id"]) for x in log["findings"]] == [
        ("github-pat", 1), ("secret-assignment", 3)]
    read = cli("--json", "log", "read", "events", "--since", "0").json
    assert read["data"]["entries"][0]["entry"]["token"] == marker(
        "github-pat", GH.encode(), store_key(scratch_home))


def test_no_redact_is_recorded_in_the_version_and_the_ledger(scratch_home: Path) -> None:
    assert cli("write", "raw", "--no-redact", input=f"token={GH}\n").code == 0
    assert cli("read", "raw").out == f"token={GH}\n".encode()
    data = findings("raw")
    assert data["unredacted"] == "--no-redact" and data["findings"] == []
    records = [json.loads(line) for line in
               (scratch_home / "state/agents/default/calls.jsonl").read_text().splitlines()]
    write = next(r for r in records if r["command"] == "write")
    assert write["unredacted"] == "--no-redact"
    assert cli("--json", "head", "raw").json["meta"]["redacted"] == {
        "count": 0, "unredacted": "--no-redact"}


def test_settings_turn_it_off_per_tool_and_keep_allowed_values(scratch_home: Path) -> None:
    scratch_home.mkdir(parents=True, exist_ok=True)
    (scratch_home / "scratch.toml").write_text(
        '[redact]\nallow = ["^ghp_wWPw"]\n[redact.tools]\n"kubectl_get_configmaps*" = false\n')
    text = f"a={GH}\nb=ghp_zzPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUx\n"
    assert cli("ingest", "--store-always", "--tool", "kubectl_get_configmaps_x",
               input=text).code == 0
    assert findings("kubectl_get_configmaps_x")["unredacted"] == \
        "redact.tools['kubectl_get_configmaps*']"
    assert cli("ingest", "--store-always", "--tool", "other", input=text).code == 0
    kept = findings("other")
    assert [x["line"] for x in kept["findings"]] == [2]  # the allowed value stays
    env = {"SCRATCH_REDACT_ENABLED": "0"}
    assert cli("write", "w", input=f"t={GH}\n", env=env).code == 0
    assert findings("w")["unredacted"] == "redact.enabled"


def test_the_ledger_never_holds_a_secret_an_argument_carried(scratch_home: Path) -> None:
    cli("write", "n", input="x\n")
    cli("grep", "n", GH)
    cli("run", "--store-always", "--", "echo", f"Authorization: Bearer {GH}")
    ledger = (scratch_home / "state/agents/default/calls.jsonl").read_text()
    assert GH not in ledger and ledger.count("«redacted:") >= 2


def test_the_store_refuses_content_without_its_redaction_record(scratch_home: Path) -> None:
    from scratch.store import Pending, Store, logs
    from scratch.store.config import load_config
    from scratch.store.writing import Pending as P
    store = Store.open(scratch_home, "default", load_config(scratch_home))
    with pytest.raises(TypeError):
        store.write("x", b"data\n")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Pending("x", b"d", "file", {}, "0" * 40, 1, 1, False)  # type: ignore[call-arg]
    fake = P("x", b"d\n", "file", {}, "0" * 40, 2, 1, False, None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="redaction record"), store.lock():
        store.commit_versions([fake], verb="Write")
    with pytest.raises(TypeError):
        logs.append(store, "lg", [b"entry"])  # type: ignore[call-arg]
    assert store.load_meta("x") is None and store.load_meta("lg") is None


def test_every_path_into_the_store_passes_a_redaction_record() -> None:
    """Every call in scratch/ that stores content names its redaction: the store's write, its
    commit of pending versions, log appends (read from the source, so a new path fails here
    until it does)."""
    import ast
    root = Path(__file__).resolve().parents[1] / "scratch"
    calls: list[str] = []
    for path in root.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            owner = getattr(getattr(func, "value", None), "id", "")
            where = f"{path.relative_to(root)}:{node.lineno}"
            keywords = {k.arg for k in node.keywords}
            if name == "Pending" and len(node.args) + len(keywords) < 9:
                calls.append(f"{where}: Pending without its redaction")
            elif name == "append" and owner == "logs" and "redaction" not in keywords:
                calls.append(f"{where}: logs.append without redaction=")
            elif name == "write" and isinstance(func, ast.Attribute) and len(node.args) == 2 \
                    and "redaction" not in keywords and owner in ("", "store") \
                    and "store" in ast.unparse(func.value):
                calls.append(f"{where}: store.write without redaction=")
    assert calls == []


def test_the_python_entry_the_hooks_use_redacts(scratch_home: Path) -> None:
    import io

    from scratch.answers.capture.ingest import IngestOptions, ingest
    from scratch.answers.kernel.context import Context
    ctx = Context.build(store=str(scratch_home))
    result = ingest(ctx, io.BytesIO(kube_output()), IngestOptions(tool="hook_claude",
                                                                  store_always=True))
    assert result.data["redacted"] == {"count": 2, "rules": {"github-pat": 1,
                                                             "k8s-secret-data": 1}}
    assert leaks(scratch_home, GH, PW) == []


def test_an_embedded_document_is_redacted_with_its_output(scratch_home: Path) -> None:
    inner = json.dumps({"db": {"password": "hunter2hunter", "host": "db"}, "pad": BIG_PAD})
    outer = json.dumps({"result": {"content": [{"type": "text", "text": inner}]}})
    run = cli("ingest", "--store-always", "--tool", "mcp_result", input=outer)
    assert run.code == 0, run.err
    names = [e["name"] for e in cli("--json", "ls").json["data"]["entries"]]
    companion = next(n for n in names if n.endswith(".result-content-0-text"))
    key = store_key(scratch_home)
    stored = json.loads(cli("read", companion).out)
    assert stored["db"] == {"password": marker("secret-field", b"hunter2hunter", key),
                            "host": "db"}
    assert [(f["rule"], f["path"]) for f in findings(names[0])["findings"]] == [
        ("secret-field", "result.content.0.text")]
    assert leaks(scratch_home, "hunter2hunter") == []


# -- MCP ---------------------------------------------------------------------------------

def test_the_mcp_tools_redact(scratch_home: Path) -> None:
    from tests.mcp_support import stdio_client
    client = stdio_client(scratch_home)
    try:
        client.text("ingest", {"content": kube_output().decode(), "tool": "kubectl_get_all",
                               "store_always": True})
        client.text("write_file", {"path": "n.env", "content": f"GITHUB_TOKEN={GH}\n"})
        client.text("append_log", {"path": "ev", "entry": "password=hunter2hunter"})
        client.text("write_file", {"path": "raw.env", "content": "password=keepme1234\n",
                                   "no_redact": True})
        listed = client.text("redactions", {"file": "n.env"})
    finally:
        client.close()
    assert "github-pat" in listed and GH not in listed
    assert leaks(scratch_home, GH, PW, "hunter2hunter") == []
    assert cli("read", "raw.env").out == b"password=keepme1234\n"


def test_the_proxy_redacts_what_it_stores_and_its_companions(tmp_path: Path) -> None:
    from tests.test_mcp_proxy import fixture_entry, proxy_client, servers_file
    home = tmp_path / "store"
    home.mkdir()
    (home / "scratch.toml").write_text('[mcp.servers.fx.scratchpad]\n"*" = { min_tokens = 10 }\n')
    doc = json.dumps({"items": [{"name": "api", "env": [{"name": "API_TOKEN", "value": GH}]},
                                *BIG_PAD]})
    client = proxy_client(home, servers_file(tmp_path, {"fx": fixture_entry()}), mode="legacy")
    try:
        result = client.call("echo", {"message": doc})
        name = result.meta["scratch"]["stored"]
        assert "1 value redacted at capture (github-pat 1)" in result.content[0].text
    finally:
        client.close()
    assert name.startswith("fx.echo/")
    assert leaks(home, GH) == []
    from scratch.store import Store
    from scratch.store.config import load_config
    meta = Store.open(home, "default", load_config(home)).load_meta(name)
    assert meta is not None
    assert meta["versions"][-1]["info"]["redaction"]["rules"] == {"github-pat": 1}


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX only")
def test_a_binary_output_keeps_its_size(scratch_home: Path) -> None:
    blob = b"\x89PNG\r\n\x1a\n\x00\x00" + GH.encode() + b"\x00" * 5000
    assert cli("ingest", "--store-always", "--tool", "png", input=blob).code == 0
    data = findings("png")
    assert [f["rule"] for f in data["findings"]] == ["github-pat"]
    assert leaks(scratch_home, GH) == []
