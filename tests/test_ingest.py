"""`scratch ingest` end to end without the shared corpus: passthrough, thresholds, names,
the pointer on the shipped sample, companions, bad input, stats and budget.

Everything runs through the real CLI (in-process, or as a subprocess where a real pipe is
needed) with real git and the real tokenizer; expected values are computed independently
with the ``json`` module and ``scratch.tokens.count_text`` on the stored file.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from importlib.resources import files
from pathlib import Path

import pytest

from tests.helpers import Run, cli, count, count_bytes, json_tokens, shells

PODS = Path(str(files("scratch") / "samples" / "pods.json"))
AUTO_NAME = re.compile(r"(?P<tool>.+)/(?P<stamp>\d{8}T\d{6}Z)-(?P<hash>[0-9a-f]{8})")


# ---------------------------------------------------------------------------------------------
# helpers


def stored_path(home: Path, name: str) -> Path:
    return home / "agents" / "default" / "files" / name


def line_count(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def entries() -> list[dict]:
    return cli("ls", "--json").json["data"]["entries"]


def ingest(*args: str, input: bytes | str) -> Run:
    return cli("ingest", *args, input=input)


def pointer(*args: str, input: bytes | str) -> dict:
    r = ingest(*args, "--json", input=input)
    assert r.code == 0, r.out
    return r.json["data"]


def write_config(home: Path, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "scratch.toml").write_text(text)


def check_stored_fields(home: Path, p: dict) -> bytes:
    """bytes/lines/tokens of the pointer are those of the stored file; returns its bytes."""
    data = stored_path(home, p["name"]).read_bytes()
    from scratch.tokens.tokenizer import decode_text

    assert p["bytes"] == len(data)
    assert p["lines"] == line_count(data)
    assert p["tokens"] == count(decode_text(data))
    assert p["encoding"] == "o200k_base" and p["exact"] is True
    return data


def text_of_tokens(n: int) -> str:
    """Text of exactly ``n`` tokens: each " the" is one token (no final newline)."""
    text = "the" + " the" * (n - 1)
    assert count(text) == n
    return text


# ---------------------------------------------------------------------------------------------
# passthrough


@pytest.mark.parametrize("data", [
    b"plain line\n",
    b"windows\r\nline endings\r\n",
    b"no trailing newline",
    b"invalid utf-8 \xff\xfe\xc3( here\n",
    b'{"small": "json", "kept": [1, 2]}',  # not pretty-printed: passthrough is untouched
    "caf\u00e9 \u65e5\u672c \U0001f600\n".encode(),
    b"\x00\x01binary-ish\x00",
])
def test_passthrough_is_byte_exact_and_stores_nothing(data: bytes) -> None:
    r = ingest(input=data)
    assert (r.code, r.out, r.err) == (0, data, "")
    assert entries() == []


def test_passthrough_json_envelope() -> None:
    data = b"a\r\nb\n"
    r = ingest("--json", input=data)
    assert r.code == 0
    # fewer bytes than the threshold: decided without loading a tokenizer (tokens null)
    assert r.json["data"] == {"stored": False, "bytes": 5, "tokens": None,
                              "threshold": 5120, "content": "a\r\nb\n"}
    text = text_of_tokens(5000)  # over 5120 bytes, under 5120 tokens: counted
    r = ingest("--json", input=text)
    assert r.json["data"] == {"stored": False, "bytes": len(text), "tokens": count(text),
                              "threshold": 5120, "content": text}
    assert entries() == []


@pytest.mark.parametrize("data", [
    b"windows\r\nline endings\r\n",
    b"no trailing newline",
    b"invalid utf-8 \xff\xfe\xc3( here\r\n",
])
def test_store_always_stores_bytes_exactly(scratch_home: Path, data: bytes) -> None:
    p = pointer("--store-always", input=data)
    assert p["stored"] is True and p["version"] == 1 and p["format"] == "text"
    assert check_stored_fields(scratch_home, p) == data
    assert [e["name"] for e in entries()] == [p["name"]]
    assert cli("read", p["name"]).out == data


def test_large_passthrough_below_a_configured_threshold(scratch_home: Path) -> None:
    # 1 MB, over the 64 KiB prefix the threshold check reads first
    write_config(scratch_home, '[thresholds]\n"*" = 10000000\n')
    data = b"".join(b"line %d\r\n" % i for i in range(100_000))
    r = ingest("--tool", "x", input=data)
    assert (r.code, r.out == data, r.err) == (0, True, "")
    assert entries() == []


# ---------------------------------------------------------------------------------------------
# thresholds


def test_threshold_boundary_from_config_and_tool(scratch_home: Path) -> None:
    text = text_of_tokens(300)
    write_config(scratch_home, '[thresholds]\n"kubectl_*" = 300\n"kubectl_get" = 301\n'
                               '"*" = 100000\n"aws_?3_*" = 299\n"aws_s3_*" = 400\n')
    # longest pattern wins: kubectl_get (301) beats kubectl_* (300) -> passthrough
    r = ingest("--tool", "kubectl_get", input=text)
    assert (r.code, r.text) == (0, text)
    # kubectl_* = 300 is reached exactly ("at or above") -> stored
    p = pointer("--tool", "kubectl_logs", input=text)
    assert p["stored"] is True and p["tokens"] == 300
    assert AUTO_NAME.fullmatch(p["name"])["tool"] == "kubectl_logs"
    # a length tie: the smaller threshold (299) wins -> stored
    assert pointer("--tool", "aws_s3_ls", input=text)["stored"] is True
    # only "*" matches -> passthrough; no --tool means "stdin", which "*" also matches
    assert ingest("--tool", "gh", input=text).text == text
    assert ingest(input=text).text == text
    assert len(entries()) == 2
    # `config threshold` says the same thing ingest did
    d = cli("config", "threshold", "kubectl_get", "--json").json["data"]
    assert (d["min_tokens"], d["pattern"]) == (301, "kubectl_get")


def test_default_threshold_is_5120(scratch_home: Path) -> None:
    below = text_of_tokens(5119)
    r = ingest("--tool", "t", input=below)
    assert (r.code, r.text) == (0, below)
    p = pointer("--tool", "t", input=below + " the")  # one more token
    assert p["stored"] is True and p["tokens"] == 5120


def test_threshold_when_the_prefix_alone_is_below_it(scratch_home: Path) -> None:
    # 200 KB of blank-ish lines (few tokens) and then dense text: the 64 KiB prefix is well
    # below the threshold, so the whole input must be counted to decide
    sparse = (" " * 199 + "\n") * 1000
    dense = " ".join(f"v{i}" for i in range(8000)) + "\n"
    data = sparse + dense
    total = count(data)
    assert count(data[:65536]) < 1000 < total
    write_config(scratch_home, f'[thresholds]\n"exact" = {total}\n"above" = {total + 1}\n')
    assert ingest("--tool", "above", input=data).text == data
    assert entries() == []
    p = pointer("--tool", "exact", input=data)
    assert (p["stored"], p["tokens"]) == (True, total)


# ---------------------------------------------------------------------------------------------
# names and versions


def test_automatic_name_and_identical_content_twice(scratch_home: Path) -> None:
    data = PODS.read_bytes()
    before = datetime.now(UTC).replace(microsecond=0)
    first = pointer("--tool", "kubectl_get_pods", input=data)
    after = datetime.now(UTC)
    m = AUTO_NAME.fullmatch(first["name"])
    assert m is not None, first["name"]
    assert m["tool"] == "kubectl_get_pods"
    assert m["hash"] == hashlib.sha256(data).hexdigest()[:8]
    stamp = datetime.strptime(m["stamp"], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    assert before - timedelta(seconds=1) <= stamp <= after
    assert first["version"] == 1 and "already_stored" not in first

    second = pointer("--tool", "kubectl_get_pods", input=data)
    assert second["name"] == first["name"]
    assert second["version"] == 1 and second["already_stored"] is True
    assert [e["name"] for e in entries()] == [first["name"]]
    human = ingest("--tool", "kubectl_get_pods", input=data).text
    assert human.splitlines()[1] == ("already stored: identical content was ingested before "
                                     "under this name")

    # different content, same tool: a new automatic name
    other = pointer("--tool", "kubectl_get_pods", "--store-always", input=b"other\n")
    assert other["name"] != first["name"] and other["name"].startswith("kubectl_get_pods/")
    # no tool: "stdin"; odd characters in the tool are replaced
    assert pointer("--store-always", input=b"x\n")["name"].startswith("stdin/")
    assert pointer("--store-always", "--tool", "my tool:v2", input=b"y\n")["name"].startswith(
        "my_tool_v2/")


def test_explicit_name_gets_versions(scratch_home: Path) -> None:
    one = pointer("runs/out", "--store-always", input=b"one\n")
    assert (one["name"], one["version"]) == ("runs/out", 1)
    two = pointer("runs/out", "--store-always", input=b"two\n")
    assert (two["name"], two["version"], two.get("already_stored")) == ("runs/out", 2, None)
    same = pointer("runs/out", "--store-always", input=b"two\n")
    assert (same["version"], same["already_stored"]) == (2, True)
    assert [h["version"] for h in cli("history", "runs/out", "--json").json["data"]["versions"]
            ] == [1, 2]
    assert cli("read", "runs/out@1").out == b"one\n"
    assert stored_path(scratch_home, "runs/out").read_bytes() == b"two\n"


def test_invalid_name_and_format_fail_before_reading() -> None:
    r = ingest("../x", "--json", input=b"data\n")
    assert r.code == 2 and r.json["error"]["code"] == "invalid_name"
    r = ingest("--format", "nope", "--json", input=b"small\n")
    assert r.code == 2 and r.json["error"]["code"] == "invalid_argument"
    assert entries() == []


# ---------------------------------------------------------------------------------------------
# the pointer on the shipped sample (a synthetic kubectl pod list)


def test_pointer_on_pods_sample(scratch_home: Path) -> None:
    raw = PODS.read_bytes()
    original = json.loads(raw)
    r = ingest("--tool", "kubectl_get_pods", input=raw)
    assert r.code == 0
    p = pointer("--tool", "kubectl_get_pods", input=raw)
    name = p["name"]
    stored = check_stored_fields(scratch_home, p)
    assert p["format"] == "json"
    assert json.loads(stored) == original
    # pretty-printed with 2 spaces, key order kept
    assert stored == (json.dumps(original, indent=2, ensure_ascii=False) + "\n").encode()
    assert p["array"]["path"] == "items"
    assert p["array"]["length"] == len(original["items"]) == 60
    assert p["array"]["keys"] == {k: "60/60" for k in original["items"][0]}
    # the JSON pointer is cut to fit the size rule on its own: samples go before keys
    assert len(p["array"]["samples"]) <= 3
    items_node = next(n for n in p["schema"] if n["path"] == "items")
    assert items_node["type"] == "array" and items_node["length"] == 60
    first, last = items_node["lines"]
    lines = stored.decode().split("\n")
    assert lines[first - 1] == '  "items": [' and lines[last - 1] == "  ],"
    nxt = shells(p["next"])
    # the pods that restarted come first: they are what stands out (tests/test_pointer_signals)
    assert nxt[:5] == [f"scratch schema {name}", f"scratch item-schema {name} items --depth 2",
                       nxt[2], f"scratch iterate-over {name} items --count-by status.phase",
                       f"scratch get-in {name} items.0"]
    assert nxt[2].startswith(f"scratch iterate-over {name} items --fields metadata.name,"
                             "status.containerStatuses.0.restartCount --where ")
    # the human rendering: its exact token count is pointer_tokens, within the size rules
    text = r.text
    assert text.splitlines()[0] == (
        f"stored {name} (version 1): json, {len(stored):,} bytes, {p['lines']:,} lines, "
        f"{p['tokens']:,} tokens (o200k_base)")
    assert "items of items (60): keys apiVersion 60/60, kind 60/60" in text
    first_pod = original["items"][0]["metadata"]["name"]
    assert text.count("\n  item 0: ") == 1 and f'"name":"{first_pod}"' in text
    assert count(text) + count("already stored: identical content was ingested before under "
                               "this name\n") >= p["pointer_tokens"]
    raw_tokens = count_bytes(raw)
    assert p["tokens"] >= 50_000 and raw_tokens >= 50_000
    assert p["pointer_tokens"] <= min(800, raw_tokens // 100, p["tokens"] // 100)
    assert r.err.startswith(f"-- {count(text)} tokens (o200k_base)")
    # with --json the agent reads the envelope: it meets the same rule
    envelope = ingest("--tool", "kubectl_get_pods", "--json", input=raw).text
    assert count(envelope) <= min(800, raw_tokens // 100, p["tokens"] // 100)


def _pointer_content(text: str, name: str) -> str:
    """A pointer's text up to its next calls, the entry's name in its first line written
    NAME."""
    first, rest = text.split("\nnext:\n")[0].split("\n", 1)
    return first.replace(name, "NAME") + "\n" + rest


@pytest.mark.parametrize("naming", ["tool", "name"])
def test_one_pointer_on_every_interface_and_every_way_of_naming(tmp_path: Path,
                                                                 naming: str) -> None:
    """Issue 30 item 2: over MCP with an automatic name (``tool``) the pointer of the README's
    sample was ``stored … / error words in 6 lines / next:``, sized on the JSON it never
    shows and cut content before calls; it is now the CLI's, whatever the naming."""
    from tests.mcp_support import server_env, stdio_client, text_of
    raw = PODS.read_bytes()
    named = ("--tool", "kubectl_get_pods") if naming == "tool" else ("pods",)
    r = ingest(*named, input=raw)
    assert r.code == 0, r.err
    shell_name = r.text.split()[1]
    home = tmp_path / "mcp-store"
    client = stdio_client(home, env=server_env(home))
    try:
        args = {"tool": "kubectl_get_pods"} if naming == "tool" else {"name": "pods"}
        result = client.call("ingest", {"content": raw.decode(), **args})
    finally:
        client.close()
    assert not result.is_error, text_of(result)
    mcp_text = text_of(result)
    mcp_name = mcp_text.split()[1]
    assert (AUTO_NAME.fullmatch(mcp_name) is not None) == (naming == "tool")
    content = _pointer_content(r.text, shell_name)
    assert _pointer_content(mcp_text, mcp_name) == content
    for shown in ("schema:\n  .: object{4} L1-8653\n", "    items: array[60] L4-8649\n",
                  "kubernetes (List): 60 pods (Running 53, Pending 5, Failed 2)\n",
                  "  restarts: 25 of 60 pods, 185 in all", "CrashLoopBackOff 4",
                  "\n  item 0: {"):
        assert shown in content, shown
    calls = mcp_text.split("\nnext:\n")[1].splitlines()
    assert len(calls) >= 5 and calls[0] == (
        f'  {{"name":"schema","arguments":{{"file":"{mcp_name}"}}}}')


def test_raw_keeps_json_bytes(scratch_home: Path) -> None:
    data = json.dumps(json.loads(PODS.read_bytes()), separators=(",", ":")).encode()
    p = pointer("--raw", input=data)
    assert p["format"] == "json" and p["lines"] == 1
    assert stored_path(scratch_home, p["name"]).read_bytes() == data


def test_minified_json_is_made_navigable(scratch_home: Path) -> None:
    value = json.loads(PODS.read_bytes())
    data = json.dumps(value, separators=(",", ":")).encode()
    assert line_count(data) == 1
    p = pointer(input=data)
    stored = check_stored_fields(scratch_home, p)
    assert stored == (json.dumps(value, indent=2) + "\n").encode()
    assert p["lines"] == line_count(stored) > 8000


# ---------------------------------------------------------------------------------------------
# pointer size


def _minified_nested(records: int) -> bytes:
    def deep(i: int, d: int) -> dict:
        return {"k": i} if d == 0 else {"a": deep(i, d - 1), "b": [deep(i, d - 1)]}

    doc: dict = {f"section_{j}": {"name": f"s{j}", "enabled": True, "count": j,
                                  "nested": {"x": j, "y": {"z": f"v{j}"}}} for j in range(25)}
    doc["records"] = [deep(i, 6) for i in range(records)]
    return json.dumps(doc, separators=(",", ":")).encode()


def test_pointer_is_at_most_1pct_of_the_output_as_received(scratch_home: Path) -> None:
    # Minified JSON of ~51k tokens whose pretty-printed form has ~120k: the pointer must be
    # judged against what the tool printed, not against the bigger stored form.
    data = _minified_nested(76)
    raw_tokens = count_bytes(data)
    assert 50_000 <= raw_tokens < 60_000
    r = ingest(input=data)
    p = pointer(input=data)
    assert p["tokens"] > 100_000
    assert p["pointer_tokens"] <= raw_tokens // 100
    assert count(r.text) <= raw_tokens // 100


@pytest.mark.parametrize("words", [4, 40])
def test_big_json_is_counted_as_received_while_it_is_stored(scratch_home: Path,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            words: int) -> None:
    """Big JSON that will be laid out anew has its received tokens counted in a thread from
    the start (the pointer is judged by the smaller count), with the same pointer as counting
    them at the end: below the limit (a count) and over it (surely more)."""
    import threading

    import scratch.answers.capture.ingest as ingest_mod

    counted_in: list[str] = []
    real = ingest_mod._received_tokens

    def seen(*args: object, **kwargs: object) -> int | None:
        counted_in.append(threading.current_thread().name)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ingest_mod, "_received_tokens", seen)
    # ~1.2 MB minified: long blank runs in the strings are few tokens (~30k in all) unless
    # the strings hold words
    doc = {"rows": [{"id": i, "pad": " " * 340 + "word " * words} for i in range(3000)]}
    data = json.dumps(doc, separators=(",", ":")).encode()
    assert len(data) > 1 << 20
    got = {}
    for name, ahead in (("early", True), ("late", False)):
        with monkeypatch.context() as m:
            if not ahead:
                m.setattr(ingest_mod, "_received_ahead", lambda *a: None)
            counted_in.clear()
            got[name] = pointer(name, "--store-always", input=data)
            assert counted_in == ["scratch-received" if ahead else "MainThread"], counted_in
    for key in ("tokens", "pointer_tokens", "lines", "bytes"):
        assert got["early"][key] == got["late"][key], key
    assert got["early"]["pointer_tokens"] > 0


def test_counting_a_big_input_as_received_builds_no_tokenizer_engine(tmp_path: Path) -> None:
    """Telling that big JSON received holds enough tokens reads a few hundred KB with the
    pure-Python counter: the tokenizer engine (tiktoken's, ~80 MB, at ingest's peak) is not
    built for it, in a process of its own (the tokenizers are shared within one)."""
    import subprocess
    import sys

    doc = {"items": [{"name": f"pod-{i}", "labels": {"app": "web", "tier": str(i % 7)},
                      "status": {"phase": "Running"}} for i in range(40000)]}
    src = tmp_path / "in.json"
    src.write_text(json.dumps(doc, indent=4))
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from scratch.answers.capture.ingest import _received_tokens\n"
        "from scratch.store.spool import spool\n"
        "from scratch.tokens import get_tokenizer, resolve_encoding\n"
        "spec = resolve_encoding(None, None)\n"
        "got = spool(open(sys.argv[1], 'rb'), Path(sys.argv[2]))\n"
        "print(_received_tokens(got, spec, 80000), get_tokenizer(spec.base)._encoding is None)\n"
        "got.discard()\n")
    out = subprocess.run([sys.executable, "-c", code, str(src), str(tmp_path / "spool")],
                         capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1]).stdout
    assert out.split() == ["None", "True"]


def test_pointer_smaller_than_a_small_stored_output() -> None:
    text = text_of_tokens(5200)
    r = ingest(input=text)
    assert r.code == 0 and r.text.startswith("stored ")
    assert count(r.text) < 5200


# ---------------------------------------------------------------------------------------------
# companions


def test_companion_from_an_mcp_shaped_result(scratch_home: Path) -> None:
    inner = json.loads(PODS.read_bytes())
    inner["items"] = inner["items"][:3]
    text = json.dumps(inner)  # one line inside the string, 10+ lines once pretty-printed
    mcp = json.dumps({"content": [{"type": "text", "text": text}], "isError": False})
    p = pointer("mcp/pods", "--store-always", input=mcp)
    cname = "mcp/pods.content-0-text"
    assert p["companions"] == [cname]
    assert f"scratch head {cname}" in shells(p["next"])
    assert sorted(e["name"] for e in entries()) == ["mcp/pods", cname]
    companion = stored_path(scratch_home, cname).read_bytes()
    assert json.loads(companion) == inner
    assert companion == (json.dumps(inner, indent=2) + "\n").encode()
    human = ingest("mcp/pods", "--store-always", input=mcp).text
    assert f"embedded documents stored as: {cname}\n" in human
    assert f"  scratch head {cname}\n" in human


def test_companion_needs_ten_lines_and_covers_markdown(scratch_home: Path) -> None:
    ten = json.dumps({"values": [f"item-{i}" for i in range(6)]})  # 10 lines pretty-printed
    nine = json.dumps({"values": [f"item-{i}" for i in range(5)]})  # 9 lines
    md = ("# Report\n\nSome text about the run.\n\n## Findings\n\n"
          + "".join(f"- finding {i} in [doc {i}](https://example.com/{i})\n" for i in range(8)))
    short_md = "# Report\n\n- one\n- [two](https://example.com/2)\n"
    doc = {"content": [{"type": "text", "text": nine}, {"type": "text", "text": ten},
                       {"type": "text", "text": md}, {"type": "text", "text": short_md}]}
    p = pointer("m", "--store-always", input=json.dumps(doc))
    assert p["companions"] == ["m.content-1-text", "m.content-2-text"]
    assert json.loads(stored_path(scratch_home, "m.content-1-text").read_bytes()) == {
        "values": [f"item-{i}" for i in range(6)]}
    assert stored_path(scratch_home, "m.content-2-text").read_bytes() == md.encode()


# ---------------------------------------------------------------------------------------------
# bad input


def test_empty_input(scratch_home: Path) -> None:
    for args in ((), ("--store-always",), ("named",)):
        r = ingest(*args, input=b"")
        assert (r.code, r.out, r.err) == (0, b"",
                                          "scratch: the input was empty; nothing stored\n")
    r = ingest("--json", input=b"")
    assert r.json["data"] == {"stored": False, "empty": True, "bytes": 0}
    assert entries() == []


def test_binary_input_is_stored_and_called_binary(scratch_home: Path) -> None:
    data = bytes(range(256)) * 64  # NUL bytes and every control byte
    p = pointer("--store-always", input=data)
    assert p["format"] == "binary"
    assert stored_path(scratch_home, p["name"]).read_bytes() == data
    assert p["bytes"] == len(data)
    text = ingest("--store-always", input=data).text
    assert text.splitlines()[0].startswith(f"stored {p['name']} (version 1): binary, 16,384 bytes")


def test_big_invalid_utf8_is_stored_byte_exact(scratch_home: Path) -> None:
    line = "résumé naïve — ok ".encode() + b"\xff\xfe\xc3\x28 \xe2\x82 broken\r\n"
    data = line * 4000  # well over the default threshold
    p = pointer(input=data)
    assert p["stored"] is True and p["format"] in ("text", "log")
    assert check_stored_fields(scratch_home, p) == data


@pytest.mark.parametrize("opener,closer", [("[", "]"), ('{"a":', "}")])
def test_json_nested_10000_deep(scratch_home: Path, opener: str, closer: str) -> None:
    data = (opener * 10_000 + "0" + closer * 10_000).encode()
    p = pointer("--store-always", input=data)
    assert p["format"] == "text"
    assert stored_path(scratch_home, p["name"]).read_bytes() == data
    (warning,) = p["warnings"]
    assert warning.startswith("content does not parse as JSON at line 1, column ")
    assert "nested too deeply" in warning and warning.endswith("; stored as text")


def test_truncated_json_warns_with_the_position(scratch_home: Path) -> None:
    data = PODS.read_bytes()[:100_000]
    with pytest.raises(json.JSONDecodeError) as exc:
        json.loads(data)
    e = exc.value
    p = pointer(input=data)
    assert p["format"] == "text"
    assert stored_path(scratch_home, p["name"]).read_bytes() == data
    assert p["warnings"] == [f"content does not parse as JSON at line {e.lineno}, column "
                             f"{e.colno}: {e.msg}; stored as text"]
    r = ingest(input=data)
    assert f"warning: {p['warnings'][0]}\n" in r.text


def test_declared_format_that_does_not_parse(scratch_home: Path) -> None:
    data = b'{"a": 1,\n "b": [1, 2\n'
    e = None
    try:
        json.loads(data)
    except json.JSONDecodeError as exc:
        e = exc
    assert e is not None
    p = pointer("--format", "json", "--store-always", input=data)
    assert p["format"] == "text"
    assert p["warnings"] == [f"content does not parse as JSON at line {e.lineno}, column "
                             f"{e.colno}: {e.msg}; stored as text"]
    assert stored_path(scratch_home, p["name"]).read_bytes() == data


def test_small_truncated_json_warns_too(scratch_home: Path) -> None:
    # under the 64 KiB sniffing prefix, so the whole input is known to end early
    data = PODS.read_bytes()[:3000]
    with pytest.raises(json.JSONDecodeError) as exc:
        json.loads(data)
    e = exc.value
    p = pointer("--store-always", input=data)
    assert p["format"] == "text"
    assert stored_path(scratch_home, p["name"]).read_bytes() == data
    assert p["warnings"] == [f"content does not parse as JSON at line {e.lineno}, column "
                             f"{e.colno}: {e.msg}; stored as text"]


def test_one_5mb_line(scratch_home: Path) -> None:
    words = ["alpha", "beta", "gamma", "error", "42", "x=1;"]
    data = " ".join(words[i % 6] + str(i % 7) for i in range(820_000)).encode()
    assert len(data) > 5_000_000 and b"\n" not in data
    p = pointer(input=data)
    assert (p["format"], p["lines"], p["bytes"]) == ("text", 1, len(data))
    assert check_stored_fields(scratch_home, p) == data
    first = p["text"]["first_lines"][0]
    assert len(first) < 1000 and data.decode().startswith(first.rstrip("…"))


def _shell(cmd: str, home: Path) -> subprocess.CompletedProcess[str]:
    import os

    env = {**os.environ, "SCRATCH_HOME": str(home)}
    return subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, env=env,
                          timeout=60)


def test_closed_stdout_downstream(scratch_home: Path, tmp_path: Path) -> None:
    py = sys.executable
    big = tmp_path / "big.txt"
    big.write_bytes(b"".join(b"line %d\n" % i for i in range(200_000)))  # 1.4 MB
    write_config(scratch_home, '[thresholds]\n"pass" = 100000000\n')
    # passthrough of far more than a pipe holds into `head -c 10`
    r = _shell(f"{py} -m scratch ingest --tool pass < {big} | head -c 10; "
               "echo \" ${PIPESTATUS[0]}\"", scratch_home)
    assert r.stdout == "line 0\nlin 0\n"
    assert "Traceback" not in r.stderr and "BrokenPipe" not in r.stderr, r.stderr
    # a stored output whose pointer goes to a reader that has already gone
    r = _shell(f"{py} -m scratch ingest --tool stored < {PODS} | true; "
               "echo \"${PIPESTATUS[0]}\"", scratch_home)
    assert r.stdout == "0\n"
    assert "Traceback" not in r.stderr and "BrokenPipe" not in r.stderr, r.stderr
    r = _shell(f"{py} -m scratch ingest --tool stored --json < {PODS} | head -c 10",
               scratch_home)
    assert r.stdout == '{"scratch"' and "Traceback" not in r.stderr


# ---------------------------------------------------------------------------------------------
# stats and budget


def test_intercepted_tokens_in_stats_and_budget() -> None:
    ingest(input=b"small\n")  # passthrough: nothing intercepted
    agent = cli("stats", "--json").json["data"]["agents"]
    assert all(a.get("tokens_intercepted", 0) == 0 for a in agent)
    r = cli("ingest", "--tool", "kubectl_get_pods", "--json", input=PODS.read_bytes())
    p, meta = r.json["data"], r.json["meta"]
    # the agent read the --json pointer, so it is charged as printed: the whole envelope
    assert meta["tokens"]["count"] == count(r.text)
    intercepted = p["tokens"] - meta["tokens"]["count"]
    assert meta["intercepted"] == intercepted
    (stats,) = cli("stats", "--json").json["data"]["agents"]
    assert stats["tokens_intercepted"] == intercepted
    budget = cli("budget", "--json").json["data"]
    assert budget["intercepted"] == intercepted
    assert budget["used"] == budget["kinds"]["pointer"] == meta["tokens"]["count"]


def test_core_ingest_api_without_the_cli(scratch_home: Path) -> None:
    from scratch.answers.capture.ingest import IngestOptions, default_tool
    from scratch.answers.capture.ingest import ingest as core_ingest
    from scratch.answers.kernel.context import Context

    ctx = Context.build()
    rows = "".join(f"{i},name-{i},{i * 7 % 13}\n" for i in range(2000))
    res = core_ingest(ctx, io.BytesIO(("id,name,score\n" + rows).encode()),
                      IngestOptions(name="t.csv", store_always=True))
    assert res.data["format"] == "csv" and res.data["name"] == "t.csv"
    assert res.data["text"]["header"] == ["id", "name", "score"]
    assert res.data["text"]["rows"] == 2000 and res.data["text"]["columns"] == 3
    assert isinstance(res.text, str) and "columns (3, 2,000 rows): id, name, score\n" in res.text
    assert default_tool(["/usr/bin/kubectl", "get", "pods", "-A"]) == "kubectl_get"
    assert default_tool(["kubectl", "--context=prod", "get"]) == "kubectl_get"
    assert default_tool(["ls", "-la"]) == "ls"


AWKWARD = (b'{"big": 123456789012345678901234567890, "neg": -98765432109876543210,'
           b' "u64": 18446744073709551615, "f": 1.7976931348623157e308, "tiny": 5e-324,'
           b' "pi": 3.141592653589793238462643383279, "exp": 1E+2, "esc": "\\u00e9\\ud83d\\ude00",'
           b' "lone": "\\ud800", "ctl": "\\u0000\\t", "dup": 1, "dup": 2, "nested": [[[{}]], []]}')


def test_json_round_trip_of_awkward_values(scratch_home: Path) -> None:
    # stored (never lost) and parsing the stored form gives the original value back
    p = pointer("--store-always", input=AWKWARD)
    content = stored_path(scratch_home, p["name"]).read_bytes()
    assert json.loads(content) == json.loads(AWKWARD)
    assert list(json.loads(content)) == list(json.loads(AWKWARD))  # key order kept
    assert p["lines"] == line_count(content) == 22  # pretty-printed, the repeated key kept
    assert json_tokens(content) == json_tokens(AWKWARD)  # every token as written
    # NaN and Infinity are not JSON: kept as received, as text, and the pointer says why
    r = ingest("--store-always", "--json", "--format", "json",
               input=b'[NaN, Infinity, -Infinity, 1]')
    nan = r.json["data"]
    assert nan["format"] == "text"
    assert stored_path(scratch_home, nan["name"]).read_bytes() == b'[NaN, Infinity, -Infinity, 1]'
    assert r.json["meta"]["warnings"] == ["content does not parse as JSON at line 1, column 2: "
                                          "Expecting value; stored as text"]


BIG = {"big": 2**100, "items": [{"n": 2**70 + i, "s": "x" * 20} for i in range(300)]}


def test_big_integers_keep_the_json_index(scratch_home: Path) -> None:
    data = json.dumps(BIG)
    r = ingest("--store-always", input=data)
    assert r.code == 0
    lines = r.text.splitlines()
    assert ": json, " in lines[0], r.text
    assert f"    big: integer {2**100} L2-2" in lines
    assert f'  item 0: {{"n":{2**70},"s":"{"x" * 20}"}}' in lines
    name = lines[0].split()[1]
    assert json.loads(stored_path(scratch_home, name).read_bytes()) == BIG


def test_big_integers_in_a_json_envelope(scratch_home: Path) -> None:
    r = ingest("--store-always", "--json", input=json.dumps(BIG))
    assert r.code == 0, r.out
    schema = {n["path"]: n for n in r.json["data"]["schema"]}
    assert schema["big"]["value"] == 2**100


def test_automatic_name_only_matches_the_same_bytes(scratch_home: Path) -> None:
    first = pointer("--store-always", "--tool", "t", input=b"payload\n")
    # the entry is rewritten with other content: the same input is not "already stored"
    assert cli("write", first["name"], input=b"edited\n").code == 0
    again = pointer("--store-always", "--tool", "t", input=b"payload\n")
    assert "already_stored" not in again
    m1, m2 = AUTO_NAME.fullmatch(first["name"]), AUTO_NAME.fullmatch(again["name"])
    assert m1["hash"] == m2["hash"]
    # within the same second the automatic name is the same, so it becomes version 3
    assert again["version"] == (3 if again["name"] == first["name"] else 1)
    assert cli("read", f"{first['name']}@2").out == b"edited\n"
    assert cli("read", again["name"]).out == b"payload\n"


@pytest.mark.parametrize("encoding", ["cl100k_base", "gemma3", "claude"])
def test_tokens_in_the_agents_encoding(scratch_home: Path, encoding: str) -> None:
    from scratch.tokens import count_text, resolve_encoding
    from scratch.tokens.tokenizer import decode_text

    enc = resolve_encoding(None, encoding)
    data = b"".join(b"2026-11-30T07:%02d:00Z INFO request %d served\r\n" % (i % 60, i)
                    for i in range(3000))
    r = cli("--encoding", encoding, "ingest", "--json", input=data)
    p = r.json["data"]
    assert (p["encoding"], p["exact"]) == (encoding, encoding != "claude")
    content = stored_path(scratch_home, p["name"]).read_bytes()
    assert content == data
    assert p["tokens"] == count_text(decode_text(content), enc)
    human = cli("--encoding", encoding, "ingest", input=data).text
    assert p["pointer_tokens"] <= min(800, p["tokens"] // 100)
    assert count_text(human, enc) <= min(800, p["tokens"] // 100)


# ---------------------------------------------------------------------------------------------
# big JSON: written, hashed and committed from memory while it is parsed


@pytest.mark.parametrize("tail", [
    b"",
    b',"big":123456789012345678901234567890,"x":1e400',  # the standard library parses it
    b',"items":{"again":1}',  # a repeated key: indexed from the stored text
])
def test_big_json_is_committed_as_stored(scratch_home: Path, tail: bytes) -> None:
    items = [{"n": i, "s": "\\u00e9x" * (i % 5), "f": i + 0.5, "t": [True, None]}
             for i in range(20_000)]
    data = json.dumps({"items": items}, separators=(",", ":")).encode()[:-1] + tail + b"}"
    assert len(data) > 1 << 20  # over the size where storing runs beside the parsing
    p = pointer("big", "--store-always", input=data)
    stored = check_stored_fields(scratch_home, p)
    assert p["format"] == "json" and json_tokens(stored) == json_tokens(data)
    assert stored.startswith(b'{\n  "items": [\n    {\n      "n": 0,\n')
    git = ["git", "-C", str(scratch_home), "cat-file"]
    committed = subprocess.run([*git, "blob", "HEAD:agents/default/files/big"],
                               capture_output=True, check=True).stdout
    assert committed == stored
    path, want = ("items.again", 1) if tail.startswith(b',"items"') else ("items.19999.f", 19999.5)
    assert cli("--json", "get-in", "big", path).json["data"]["value"] == want
    if tail.startswith(b',"items"'):
        assert any("repeats a key" in w for w in p.get("warnings", [])), p
