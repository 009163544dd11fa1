"""Ingest on the real files of ../shared/corpus (skipped when it is absent).

Every expected value is computed independently of scratch's format and index code: line and
byte counts from the stored file, token counts with ``scratch.tokens.count_text`` on the whole
stored text, structure with the ``json``/``yaml``/``csv`` modules.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import cli, count, count_bytes, json_tokens, shells

pytestmark = pytest.mark.corpus
ENVELOPE = 60  # tokens of the --json envelope around the pointer's data (measured 56-58)


def ingest_both(ctx: Any, path: Path, opts: Any) -> tuple[Any, int]:
    """Ingest ``path`` as an agent reading text would, then as one reading --json: the text
    result, and the tokens of the --json pointer's data (its calls spelled as printed)."""
    from scratch.answers.capture.ingest import ingest
    from scratch.answers.pointer.build import pointer_json
    from scratch.cli.render import JsonEnvelope, ShellText
    with open(path, "rb") as fh:
        res = ingest(ctx, fh, opts, rendering=ShellText())
    with open(path, "rb") as fh:
        as_json = ingest(ctx, fh, opts, rendering=JsonEnvelope())
    return res, count(pointer_json(as_json.data, JsonEnvelope().call_data))


def as_stored(home: Path, raw: bytes) -> bytes:
    """``raw`` as ingest stores it before laying it out: redacted with the store's key (the
    corpus holds a few credentials, tests/test_redact.py lists them; elsewhere unchanged)."""
    from scratch.redact import redact_bytes, store_key
    (home / "state").mkdir(parents=True, exist_ok=True, mode=0o700)
    return redact_bytes(raw, store_key(home)).data


def stored(home: Path, name: str) -> bytes:
    return (home / "agents" / "default" / "files" / name).read_bytes()


def line_count(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


ALREADY = "already stored: identical content was ingested before under this name"


def ingest_file(path: Path, *args: str, name: str = "out") -> tuple[dict[str, Any], str]:
    """(pointer data, human pointer text) of ``path`` ingested as ``name`` (JSON first, then
    the same content again in human mode, which says it is already stored)."""
    data = path.read_bytes()
    r = cli("ingest", name, "--store-always", "--json", *args, input=data)
    assert r.code == 0, r.out[:500]
    human = cli("ingest", name, "--store-always", *args, input=data)
    assert human.code == 0
    if human.text.startswith("stored "):
        assert human.text.splitlines()[1] == ALREADY
    else:  # smaller than any pointer to it: shown as it is, and still stored
        assert human.out == data and "shorter than a pointer" in human.err
    return r.json["data"], human.text


def check_fields(home: Path, p: dict[str, Any], fmt: str) -> bytes:
    content = stored(home, p["name"])
    from scratch.tokens.tokenizer import decode_text

    assert p["format"] == fmt
    assert p["bytes"] == len(content)
    assert p["lines"] == line_count(content)
    assert p["tokens"] == count(decode_text(content))
    assert (p["encoding"], p["exact"]) == ("o200k_base", True)
    return content


def resolve(value: Any, path: str) -> Any:
    from scratch.query.paths import parse_dot_path

    if path == ".":
        return value
    for seg in parse_dot_path(path):
        key = getattr(seg, "key", seg)
        value = value[key] if isinstance(value, dict) else value[int(key)]
    return value


def presence(items: list[dict[str, Any]]) -> dict[str, str]:
    counts: dict[str, int] = {}
    for item in items:
        for k in item:
            counts[k] = counts.get(k, 0) + 1
    return {k: f"{n}/{len(items)}" for k, n in counts.items()}


def unquoted(keys: dict[str, str]) -> dict[str, str]:
    """Pointer keys are dot-path segments: quoted with JSON string syntax when needed."""
    return {(json.loads(k) if k.startswith('"') else k): v for k, v in keys.items()}


def check_array(p: dict[str, Any], value: Any, path: str) -> None:
    arr = p["array"]
    assert arr["path"] == path
    target = resolve(value, path)
    assert isinstance(target, list) and arr["length"] == len(target)
    if all(isinstance(x, dict) for x in target):
        assert unquoted(arr["keys"]) == presence(target)
    name = p["name"]
    nxt = shells(p["next"])
    assert f"scratch item-schema {name} {path} --depth 2" in nxt
    first = "0" if path == "." else f"{path}.0"
    # a first item too big for the per-call cap is suggested with --fit (tests/test_pointer_next)
    assert (f"scratch get-in {name} {first}" in nxt
            or f"scratch get-in {name} {first} --fit" in nxt)


# ---------------------------------------------------------------------------------------------
# JSON: kubernetes, aws, github, gcp, mcp


@pytest.mark.parametrize("rel,path", [
    ("k8s/troubleshoot/clusterroles.json", "items"),           # kubectl List, pretty-printed
    ("k8s/honeycomb/pods.json", "items"),
    ("k8s/sonobuoy/kube-system_Events.json", "."),             # minified single line
    ("aws/custodian/ec2.DescribeSecurityGroups.json", "data.SecurityGroups"),
    ("gcp/custodian/compute.zones.json", "body.items"),
    ("github/github_events.json", "."),
    ("github/octokit-fixtures/paginate-issues.raw-fixture.json", "."),
])
def test_json_outputs(scratch_home: Path, corpus_dir: Path, rel: str, path: str) -> None:
    raw = (corpus_dir / rel).read_bytes()
    value = json.loads(as_stored(scratch_home, raw))
    p, human = ingest_file(corpus_dir / rel)
    content = check_fields(scratch_home, p, "json")
    assert json.loads(content) == value
    assert content == (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode()
    check_array(p, value, path)
    assert human.splitlines()[0] == (
        f"stored out (version 1): json, {p['bytes']:,} bytes, {p['lines']:,} lines, "
        f"{p['tokens']:,} tokens (o200k_base)")


def test_minified_json_with_a_3mb_line(scratch_home: Path, corpus_dir: Path) -> None:
    rel = corpus_dir / "json/minified/kubernetes-openapi-v1.14-aggregated.json"
    raw = rel.read_bytes()
    assert line_count(raw) == 1 and len(raw) > 3_000_000
    value = json.loads(raw)
    p, human = ingest_file(rel)
    content = check_fields(scratch_home, p, "json")
    # re-indented: the lines of the canonical layout, every token as written (Go's \u003c too)
    assert json_tokens(content) == json_tokens(raw) and json.loads(content) == value
    assert b"\\u003c" in content
    assert p["lines"] == len(json.dumps(value, indent=2).split("\n")) > 80_000
    top = [n for n in p["schema"] if n["depth"] == 1]
    assert [n["path"] for n in top] == list(value)
    node = next(n for n in top if n["path"] == "definitions")
    assert (node["type"], node["length"]) == ("object", len(value["definitions"]))
    # line ranges point at the stored lines
    text_lines = content.decode().split("\n")
    assert text_lines[node["lines"][0] - 1] == '  "definitions": {'
    # an API description: its operations, not its largest array (issue 30 item 10)
    api = p["openapi"]
    assert (api["spec"], api["paths"]) == ("swagger 2.0", len(value["paths"]))
    assert "array" not in p and "error_lines" not in p
    raw_tokens = count_bytes(raw)
    assert p["pointer_tokens"] <= min(800, raw_tokens // 100)


def test_mcp_schema_and_spec_examples(scratch_home: Path, corpus_dir: Path) -> None:
    value = json.loads((corpus_dir / "mcp/spec/schema-2025-11-25.json").read_bytes())
    p, _ = ingest_file(corpus_dir / "mcp/spec/schema-2025-11-25.json")
    check_fields(scratch_home, p, "json")
    top = {n["path"]: n for n in p["schema"] if n["depth"] == 1}
    assert top['"$defs"']["length"] == len(value["$defs"])
    assert top['"$schema"']["value"] == value["$schema"]
    # the spec's CallToolResult carries a 5-line JSON text: under 10 lines, no companion
    small, _ = ingest_file(corpus_dir / "mcp/spec/CallToolResult.result-with-structured-content"
                           ".json", name="small")
    assert "companions" not in small
    assert sorted(e["name"] for e in cli("ls", "--json").json["data"]["entries"]) == [
        "out", "small"]


def test_companion_in_an_mcp_result_wrapping_corpus_json(scratch_home: Path,
                                                          corpus_dir: Path) -> None:
    inner_raw = (corpus_dir / "k8s/kubectl-neat/list1-raw.json").read_text()
    inner = json.loads(inner_raw)
    tool = json.loads((corpus_dir / "mcp/github-mcp-server/list_issues.tool.json").read_text())
    md = "# list_issues\n\n" + tool["description"] + "\n\n" + "".join(
        f"- `{k}`: {v.get('description', '')}\n" for k, v in tool["inputSchema"]["properties"]
        .items()) + "\nSee [the docs](https://docs.github.com/rest/issues).\n"
    result = {"jsonrpc": "2.0", "id": 7, "result": {"content": [
        {"type": "text", "text": inner_raw}, {"type": "text", "text": md}], "isError": False}}
    p = json.loads(cli("ingest", "mcp/list", "--store-always", "--json",
                       input=json.dumps(result)).out)["data"]
    names = ["mcp/list.result-content-0-text", "mcp/list.result-content-1-text"]
    assert p["companions"] == names
    assert json.loads(stored(scratch_home, names[0])) == inner
    assert stored(scratch_home, names[1]) == md.encode()
    assert f"scratch head {names[0]}" in shells(p["next"])
    entries = {e["name"] for e in cli("ls", "--json").json["data"]["entries"]}
    assert entries == {"mcp/list", *names}


# ---------------------------------------------------------------------------------------------
# YAML (kubectl -o yaml, multi-document manifests)


def test_kubectl_yaml_list(scratch_home: Path, corpus_dir: Path) -> None:
    import yaml

    raw = (corpus_dir / "k8s/kubectl-neat/list1-raw.yaml").read_bytes()
    value = yaml.safe_load(raw)
    p, _ = ingest_file(corpus_dir / "k8s/kubectl-neat/list1-raw.yaml")
    assert check_fields(scratch_home, p, "yaml") == raw  # YAML is kept byte for byte
    check_array(p, value, "items")


def test_multi_document_kubectl_yaml(scratch_home: Path, corpus_dir: Path) -> None:
    import yaml

    docs = [(corpus_dir / f"k8s/kubectl-neat/{f}").read_text()
            for f in ("pod1-raw.yaml", "secret1-raw.yaml", "pod1-raw.yaml")]
    raw = "---\n".join(d if d.endswith("\n") else d + "\n" for d in docs).encode()
    values = [d for d in yaml.safe_load_all(raw) if d is not None]
    assert len(values) == 3
    p = json.loads(cli("ingest", "many", "--store-always", "--json", input=raw).out)["data"]
    assert check_fields(scratch_home, p, "yaml") == as_stored(scratch_home, raw)
    check_array(p, values, ".")
    assert p["array"]["keys"]["kind"] == "3/3" and p["array"]["keys"]["spec"] == "2/3"


def test_big_multi_document_manifest(scratch_home: Path, corpus_dir: Path) -> None:
    import yaml

    raw = (corpus_dir / "yaml/argo-cd-install.yaml").read_bytes()
    values = [d for d in yaml.load_all(raw, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
              if d is not None]
    p, human = ingest_file(corpus_dir / "yaml/argo-cd-install.yaml")
    assert check_fields(scratch_home, p, "yaml") == raw
    check_array(p, values, ".")
    assert p["pointer_tokens"] <= min(800, p["tokens"] // 100)
    assert count(human) <= min(800, p["tokens"] // 100)


# ---------------------------------------------------------------------------------------------
# logs (loghub: CRLF), CSV, NDJSON


def test_loghub_log_with_crlf(scratch_home: Path, corpus_dir: Path) -> None:
    raw = (corpus_dir / "logs/loghub/HDFS_2k.log").read_bytes()
    assert raw.count(b"\r\n") == raw.count(b"\n") == 2000
    p, human = ingest_file(corpus_dir / "logs/loghub/HDFS_2k.log")
    assert check_fields(scratch_home, p, "log") == raw  # byte-exact, CRLF kept
    lines = raw.decode().split("\r\n")[:-1]
    levels: dict[str, int] = {}
    for line in lines:  # "081109 203615 148 INFO dfs.DataNode...": the 4th field
        levels[line.split()[3]] = levels.get(line.split()[3], 0) + 1
    assert levels == {"INFO": 1920, "WARN": 80}
    text = p["text"]
    assert text["levels"] == levels
    # lines without their CR, cut to the pointer's width (a parsed log's breakdown and its
    # counting calls take the room of two sample lines in the JSON pointer)
    assert len(text["first_lines"]) >= 3 and len(text["last_lines"]) >= 3
    for shown, line in zip(text["first_lines"], lines, strict=False):
        assert shown == line or (shown.endswith("…") and line.startswith(shown[:-1]))
    for shown, line in zip(text["last_lines"], lines[-len(text["last_lines"]):], strict=True):
        assert shown == line or (shown.endswith("…") and line.startswith(shown[:-1]))
    assert text["time_range"] == [lines[0][:13], lines[-1][:13]]
    assert "levels: " + ", ".join(f"{k} {v}" for k, v in levels.items()) in human
    assert f"  {lines[-1]}\n" in human  # errors are usually at the end: the last line is shown
    assert p["pointer_tokens"] <= min(800, p["tokens"] // 100)


@pytest.mark.parametrize("rel", ["csv/world-cities.csv",
                                 "csv/loghub_OpenStack_2k.log_structured.csv"])
def test_csv(scratch_home: Path, corpus_dir: Path, rel: str) -> None:
    raw = (corpus_dir / rel).read_bytes()
    rows = list(csv.reader(io.StringIO(raw.decode(), newline="")))
    header, records = rows[0], [r for r in rows[1:] if r]
    p, human = ingest_file(corpus_dir / rel)
    assert check_fields(scratch_home, p, "csv") == raw
    assert p["text"]["header"] == header
    assert (p["text"]["columns"], p["text"]["rows"]) == (len(header), len(records))
    assert f"columns ({len(header)}, {len(records):,} rows): {', '.join(header)}\n" in human


def test_ndjson(scratch_home: Path, corpus_dir: Path) -> None:
    raw = (corpus_dir / "ndjson/go-slog-app-log.head10000.ndjson").read_bytes()
    records = [json.loads(line) for line in raw.splitlines() if line.strip()]
    p, _ = ingest_file(corpus_dir / "ndjson/go-slog-app-log.head10000.ndjson")
    assert check_fields(scratch_home, p, "ndjson") == raw
    assert len(records) == 10_000
    assert (p["array"]["path"], p["array"]["length"]) == (".", 10_000)
    expected = presence(records)
    shown = unquoted(p["array"]["keys"])
    assert shown == {k: v for k, v in expected.items() if k in shown}
    assert list(shown)[:3] == ["time", "level", "msg"]


# ---------------------------------------------------------------------------------------------
# every corpus JSON file: round trip and pointer size


def test_every_json_file_round_trips_and_pointer_fits(scratch_home: Path,
                                                      corpus_dir: Path) -> None:
    from scratch.answers.capture.ingest import IngestOptions
    from scratch.answers.kernel.context import Context

    ctx = Context.build()
    # the JSONTestSuite's cases (mostly not valid JSON) are tests/test_json_exact.py's
    files = sorted(p for p in corpus_dir.rglob("*.json")
                   if "suites/jsontestsuite/" not in p.as_posix())
    assert len(files) >= 80
    bad: list[str] = []
    for i, path in enumerate(files):
        rel = path.relative_to(corpus_dir).as_posix()
        raw = path.read_bytes()
        res, json_tokens = ingest_both(ctx, path, IngestOptions(name=f"rt/{i}",
                                                                store_always=True))
        p = res.data
        content = stored(scratch_home, f"rt/{i}")
        if p["format"] != "json" or json.loads(content) != json.loads(
                as_stored(scratch_home, raw)):
            bad.append(f"{rel}: round trip ({p['format']})")
            continue
        if isinstance(res.text, bytes):  # an output smaller than any pointer: shown as is
            assert res.text == raw and p["pointer_tokens"] <= count_bytes(raw)
            continue
        if count(res.text) != p["pointer_tokens"]:
            bad.append(f"{rel}: pointer_tokens {p['pointer_tokens']} != {count(res.text)}")
        # the printed pointer, and the --json one (its data plus the envelope around it)
        pointer_tokens = max(count(res.text), json_tokens + ENVELOPE)
        # the output is what the tool printed; re-rendered JSON has its own token count
        received = p["tokens"] if content == raw else count_bytes(raw)
        if received >= 5120:  # what ingest stores by default
            if pointer_tokens >= received:
                bad.append(f"{rel}: pointer {pointer_tokens} >= output {received}")
            if received >= 50_000 and pointer_tokens > min(800, received // 100):
                bad.append(f"{rel}: pointer {pointer_tokens} over 1% of {received}")
    assert bad == []


def test_pointer_size_on_every_other_corpus_file(scratch_home: Path, corpus_dir: Path) -> None:
    from scratch.answers.capture.ingest import IngestOptions
    from scratch.answers.kernel.context import Context

    ctx = Context.build()
    files = sorted(p for p in corpus_dir.rglob("*") if p.is_file() and p.suffix != ".json"
                   and p.name not in ("MANIFEST.md", "LICENSE"))
    bad: list[str] = []
    for i, path in enumerate(files):
        rel = path.relative_to(corpus_dir).as_posix()
        res, json_tokens = ingest_both(ctx, path, IngestOptions(name=f"f/{i}", tool="t"))
        if not res.data["stored"]:
            continue  # under the default threshold: passed through
        p = res.data
        # kept byte-exact (but for the credentials redaction replaced)
        assert stored(scratch_home, f"f/{i}") == as_stored(scratch_home, path.read_bytes()), rel
        n = max(count(res.text), json_tokens + ENVELOPE)
        if not (n < p["tokens"] and (p["tokens"] < 50_000 or n <= min(800, p["tokens"] // 100))):
            bad.append(f"{rel}: pointer {n} for {p['tokens']}")
    assert bad == []
