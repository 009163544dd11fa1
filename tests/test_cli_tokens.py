"""`scratch tokens` and `scratch budget` through the CLI."""

from __future__ import annotations

import math
from pathlib import Path

from scratch.tokens import count_text, resolve_encoding
from tests.helpers import cli

SAMPLE = Path(__file__).resolve().parents[1] / "scratch" / "samples" / "pods.json"


def test_count_and_envelope() -> None:
    r = cli("tokens", input="hello world")
    assert (r.code, r.text) == (0, "2\n")
    data = cli("tokens", "--json", "--model", "gpt-4o", input="hello world").json["data"]
    assert data == {"count": 2, "encoding": "o200k_base", "model": "gpt-4o", "exact": True}


def test_ids_per_encoding() -> None:
    assert cli("tokens", "--ids", input="hello world").text == "24912 2375\n"
    assert cli("tokens", "--ids", "--model", "gpt-4-0613", input="hello world").text == \
        "15339 1917\n"
    assert cli("tokens", "--ids", "--model", "gemini-2.5-pro", input="Hello world").text == \
        "9259 1902\n"


def test_claude_is_a_labelled_estimate() -> None:
    text = SAMPLE.read_text()[:20000]
    cl100k = count_text(text, resolve_encoding(None, "cl100k_base"))
    r = cli("tokens", "--json", "--model", "us.anthropic.claude-sonnet-4-20250514-v1:0",
            input=text)
    assert r.json["data"]["count"] == math.ceil(round(cl100k * 1.1, 9))
    assert r.json["data"]["exact"] is False
    assert "estimate" in cli("tokens", "--encoding", "claude", input=text).err


def test_unknown_encoding() -> None:
    r = cli("tokens", "--encoding", "p50k", "--json", input="x")
    assert r.code == 2 and r.json["error"]["code"] == "unknown_encoding"


def test_truncate_tail_split_round_trip(tmp_path: Path) -> None:
    data = SAMPLE.read_bytes()[:50_000]
    spec = resolve_encoding(None, "o200k_base")
    head = cli("tokens", "--truncate", "300", input=data).out
    tail = cli("tokens", "--tail", "300", input=data).out
    assert data.startswith(head) and data.endswith(tail)
    assert count_text(head.decode(), spec) <= 300 and count_text(tail.decode(), spec) <= 300
    assert count_text(head.decode(), spec) >= 290
    chunks = cli("tokens", "--split", "700", input=data).out.split(b"\x1e")
    assert b"".join(chunks) == data
    assert all(count_text(c.decode(), spec) <= 700 for c in chunks)
    out = tmp_path / "parts"
    r = cli("tokens", "--split", "700", "--split-dir", str(out), "--json", input=data)
    files = sorted(out.iterdir())
    assert len(files) == r.json["data"]["count"] == len(chunks)
    assert b"".join(f.read_bytes() for f in files) == data
    # a second split into the same directory would leave the first one's extra chunks behind
    r = cli("tokens", "--split", "5000", "--split-dir", str(out), "--json", input=data)
    assert r.code == 2
    assert r.json["error"]["code"] == "split_dir_not_empty"
    assert r.json["error"]["first"] == "chunk-00001.txt"
    assert sorted(out.iterdir()) == files  # nothing written, nothing removed


def test_budget_commands(scratch_home: Path) -> None:
    d = cli("budget", "--json", "--model", "gpt-4o").json["data"]
    assert (d["window"], d["usable"], d["used"], d["remaining"]) == (128000, 102400, 0, 102400)
    assert d["tokenizer"] == "o200k_base"
    assert cli("budget", "used", "5000", "--json").json["data"]["used"] == 5000
    assert cli("budget", "used", "100", "--json").json["data"]["used"] == 5000  # max rule
    d = cli("budget", "set-window", "20000", "--json").json["data"]
    assert (d["window"], d["usable"], d["remaining"]) == (20000, 16000, 11000)
    d = cli("budget", "reset", "--json").json["data"]
    assert (d["used"], d["window"]) == (0, 20000)
    other = cli("budget", "--json", "--session", "s2").json["data"]
    assert other["window"] == 128000
    (scratch_home / "scratch.toml").write_text("[budget]\nsafety_margin = 2.0\n")
    assert cli("budget", "--json", "--session", "s3").json["data"]["margin"] == 0.95


def test_corrupt_budget_file_resets_with_warning(scratch_home: Path) -> None:
    cli("budget", "used", "10")
    state = scratch_home / "state" / "budget" / "default" / "default.json"
    state.write_text("{garbage")
    r = cli("budget", "--json")
    assert r.code == 0
    assert r.json["data"]["used"] == 0
    assert r.json["meta"]["warnings"]


def test_an_unknown_model_warns_and_names_the_tokenizer_it_falls_back_to(
        scratch_home: Path) -> None:
    want = ("warning: unknown model 'foo': answers are priced with o200k_base (the default "
            "tokenizer) and a 128,000-token context window; --encoding picks the tokenizer "
            "(o200k_base, cl100k_base, gemma3, claude), config budget.windows the window")
    r = cli("tokens", "--model", "foo", input="hello world")
    assert (r.code, r.text) == (0, "2\n")
    assert r.err.splitlines()[0] == want + " (model from --model)"
    r = cli("budget", "--json", env={"SCRATCH_MODEL": "llama-3"})
    assert r.code == 0 and r.json["data"]["tokenizer"] == "o200k_base"
    assert r.err.splitlines()[0] == (want.replace("'foo'", "'llama-3'")
                                     + " (model from env SCRATCH_MODEL)")
    # a known model, no model, or a tokenizer chosen with --encoding: nothing to say
    for args in (["--model", "gpt-4o"], ["--model", "openai/gpt-4.1-mini"], [],
                 ["--model", "foo", "--encoding", "cl100k_base"]):
        r = cli("tokens", *args, input="hello world")
        assert r.code == 0 and "warning" not in r.err, args
