"""Exploration commands on stored entries: exact answers, prices, refusals and --fit paging."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from scratch.tokens import count_text, resolve_encoding
from tests.helpers import cli, count, shell_of, shells

SAMPLE = Path(__file__).resolve().parents[1] / "scratch" / "samples" / "pods.json"
O200K = resolve_encoding(None, "o200k_base")


def ingest(path: Path, name: str, *extra: str) -> dict:
    r = cli("ingest", name, "--store-always", "--json", *extra, input=path.read_bytes())
    assert r.code == 0, r.out
    return r.json["data"]


def stored(home: Path, name: str) -> list[str]:
    return (home / "agents/default/files" / name).read_text().splitlines()


def run_next(cmd: str):
    args = shlex.split(shell_of(cmd))
    assert args[0] == "scratch"
    return cli(*args[1:], "--json")


@pytest.fixture
def pods(scratch_home: Path) -> str:
    ingest(SAMPLE, "pods")
    return "pods"


def test_head_tail_slice_match_plain_slicing(scratch_home: Path, pods: str) -> None:
    lines = stored(scratch_home, pods)
    r = cli("head", pods, "-n", "5")
    assert r.code == 0
    assert r.text == "".join(f"{i + 1}:{lines[i]}\n" for i in range(5))
    r = cli("tail", pods, "-n", "3", "--no-numbers")
    assert r.text == "".join(f"{line}\n" for line in lines[-3:])
    d = cli("slice", pods, "100", "110", "--json").json["data"]
    assert d["lines"] == lines[99:110]
    assert (d["start"], d["end"], d["total_lines"]) == (100, 110, len(lines))


def test_slice_argument_errors(pods: str) -> None:
    r = cli("slice", pods, "0", "5", "--json")
    assert r.code == 2 and r.json["error"]["code"] == "invalid_argument"
    r = cli("slice", pods, "9", "5", "--json")
    assert r.code == 2 and r.json["error"]["code"] == "invalid_argument"
    r = cli("slice", pods, "999999", "1000000", "--json")
    assert r.code == 4
    assert r.json["error"]["code"] == "offset_out_of_range"
    assert r.json["error"]["total_lines"] > 8000


def test_reported_tokens_within_two_percent(pods: str) -> None:
    for args in (("head", pods, "-n", "200"), ("slice", pods, "4000", "4400"),
                 ("tail", pods, "-n", "120", "--no-numbers"),
                 ("grep", pods, "CrashLoopBackOff", "-C", "2"),
                 ("get-in", pods, "items.5"), ("schema", pods)):
        r = cli(*args)
        assert r.code == 0, (args, r.err)
        exact = count_text(r.text, O200K)
        reported = int(r.err.rsplit("-- ", 1)[1].split(" tokens")[0].replace(",", ""))
        assert abs(reported - exact) <= max(2, 0.02 * exact), (args, reported, exact)


def test_refusal_has_code_estimate_limit_and_runnable_suggestions(scratch_home: Path,
                                                                  pods: str) -> None:
    (scratch_home / "scratch.toml").write_text("[budget]\nmax_extraction_tokens = 300\n")
    r = cli("head", pods, "-n", "400", "--json")
    assert r.code == 3
    err = r.json["error"]
    assert err["code"] == "head_too_large"
    assert err["limit"] == 300 and err["estimated_tokens"] > 300
    for suggestion in err["suggestions"]:
        follow = run_next(suggestion)
        assert follow.code == 0, suggestion  # runs as given, within the cap
    r = cli("grep", pods, "name", "--json")
    assert r.json["error"]["code"] == "grep_too_large"
    r = cli("get-in", pods, "items", "--json")
    assert r.json["error"]["code"] == "get_in_too_large"
    r = cli("read", pods, "--json")
    assert r.json["error"]["code"] == "read_too_large"
    r = cli("schema", pods, "--json")
    assert r.json["error"]["code"] == "schema_too_large"
    assert run_next(r.json["error"]["suggestions"][-1]).code == 0  # a smaller --depth fits


def test_budget_exceeded_and_only_the_refusal_recorded(scratch_home: Path, pods: str) -> None:
    cli("budget", "set-window", "1000")
    before = cli("budget", "--json").json["data"]["used"]
    r = cli("slice", pods, "1", "300", "--json")
    assert r.code == 3
    err = r.json["error"]
    assert err["code"] == "budget_exceeded"
    assert err["estimated_tokens"] > err["remaining"]
    # the answer was not given; the refusal was read, and costs what it printed
    assert cli("budget", "--json").json["data"]["used"] == before + count(r.text)


def test_fit_pages_cover_everything_without_gap_or_overlap(scratch_home: Path,
                                                          pods: str) -> None:
    (scratch_home / "scratch.toml").write_text("[budget]\nmax_extraction_tokens = 500\n")
    lines = stored(scratch_home, pods)
    seen: list[str] = []
    r = cli("slice", pods, "1", "600", "--fit", "--json")
    pages = 0
    while True:
        assert r.code == 0, r.out
        data = r.json["data"]
        assert r.json["meta"]["tokens"]["count"] <= 500
        seen.extend(data["lines"])
        pages += 1
        if "next" not in data:
            break
        r = run_next(data["next"])
    assert pages > 2
    assert seen == lines[:600]


def test_grep_fit_covers_all_matches(scratch_home: Path, pods: str) -> None:
    (scratch_home / "scratch.toml").write_text("[budget]\nmax_extraction_tokens = 200\n")
    lines = stored(scratch_home, pods)
    expected = [i + 1 for i, line in enumerate(lines) if '"phase"' in line]
    got: list[int] = []
    r = cli("grep", pods, '"phase"', "-F", "--fit", "--json")
    while True:
        data = r.json["data"]
        got += [ln["line"] for reg in data["regions"] for ln in reg["lines"] if ln["match"]]
        if "next" not in data:
            break
        r = run_next(data["next"])
    assert got == expected


def test_grep_output_format_and_flags(scratch_home: Path, pods: str) -> None:
    lines = stored(scratch_home, pods)
    r = cli("grep", pods, "crashloop", "-i", "-m", "1", "-C", "1")
    n = next(i for i, line in enumerate(lines) if "CrashLoop" in line) + 1
    assert r.text == f"{n - 1}-{lines[n - 2]}\n{n}:{lines[n - 1]}\n{n + 1}-{lines[n]}\n"
    r = cli("grep", pods, "Running", "-m", "2")
    assert r.text.count("\n") == 2 and "--" in r.text or r.text.count(":") >= 2


def test_grep_pathological_pattern_and_invalid_pattern(scratch_home: Path) -> None:
    cli("write", "aaa", input="a" * 200_000 + "b\n")
    r = cli("grep", "aaa", "(a+)+$", "--json")
    assert r.code == 0 and r.json["data"]["matches"] == 0
    r = cli("grep", "aaa", "foo(bar", "--json")
    assert r.code == 2
    err = r.json["error"]
    assert err["code"] == "invalid_pattern"
    assert isinstance(err["position"], int)
    assert any(s.endswith("-F") for s in shells(err["suggestions"]))


def test_get_in_paths_match_json(scratch_home: Path, pods: str) -> None:
    doc = json.loads(SAMPLE.read_text())
    r = cli("get-in", pods, "items.7.metadata", "--json")
    assert r.json["data"]["value"] == doc["items"][7]["metadata"]
    r = cli("get-in", pods, "/items/7/status/phase", "--json")
    assert r.json["data"]["text"] == doc["items"][7]["status"]["phase"] + "\n"
    key = 'items.0.metadata.labels."app.kubernetes.io/name"'
    assert cli("get-in", pods, key).text == doc["items"][0]["metadata"]["labels"][
        "app.kubernetes.io/name"] + "\n"
    failed = [p["metadata"]["name"] for p in doc["items"] if p["status"]["phase"] == "Failed"]
    r = cli("get-in", pods, "$.items[?@.status.phase=='Failed'].metadata.name", "--json")
    assert [m["value"] for m in r.json["data"]["matches"]] == failed
    r = cli("get-in", pods, ".", "--limit", "3", "--json")
    assert r.json["data"]["text"] == '{\n  "apiVersion": "v1",\n  "kind": "List",\n'


def test_get_in_missing_path_diagnostics(pods: str) -> None:
    r = cli("get-in", pods, "items.3.metdata", "--json")
    assert r.code == 4
    err = r.json["error"]
    assert (err["code"], err["valid_prefix"], err["failed_segment"]) == \
        ("key_path_not_found", "items.3", "metdata")
    assert err["available_keys"] == ["apiVersion", "kind", "metadata", "spec", "status"]
    assert shell_of(err["suggestions"][0]) == "scratch get-in pods items.3.metadata"
    r = cli("get-in", pods, "items.500", "--json")
    assert r.json["error"]["array_length"] == 60
    r = cli("get-in", pods, "kind.x", "--json")
    assert r.json["error"]["value_type"] == "string"


def test_hash_prefix_reference(scratch_home: Path) -> None:
    data = cli("ingest", "--tool", "t", "--store-always", "--json",
               input=SAMPLE.read_bytes()).json["data"]
    digest = data["name"].rsplit("-", 1)[1]
    r = cli("head", digest[:5], "-n", "1", "--json")
    assert r.code == 0 and r.json["data"]["name"] == data["name"]


def test_versioned_files_and_logs_are_explorable(scratch_home: Path) -> None:
    cli("write", "notes.md", input="# Plan\n\n- one\n- two\n")
    cli("write", "notes.md", input="# Plan\n\n- one\n- two\n- three\n")
    assert cli("tail", "notes.md", "-n", "1").text == "5:- three\n"
    assert cli("head", "notes.md@1", "-n", "10", "--no-numbers").text == "# Plan\n\n- one\n- two\n"
    cli("log", "append", "ev", "--lines", input="start\nerror: disk full\nstop\n")
    r = cli("grep", "ev", "disk", "--json")
    assert [ln["line"] for reg in r.json["data"]["regions"] for ln in reg["lines"]] == [2]
    assert cli("tail", "ev", "-n", "1", "--json").json["data"]["lines"][0].startswith('{"id":3')


def test_read_since_version_is_priced(scratch_home: Path) -> None:
    cli("write", "f", input="a\nb\n")
    cli("write", "f", input="a\nc\n")
    r = cli("read", "f", "--since-version", "1", "--json")
    assert r.json["data"]["ops"] == [{"op": "equal", "count": 1},
                                     {"op": "remove", "lines": ["b"], "line": 2},
                                     {"op": "add", "lines": ["c"], "line": 2}]
    assert r.json["meta"]["tokens"]["count"] > 0


def test_item_schema_presence_and_window(pods: str) -> None:
    doc = json.loads(SAMPLE.read_text())
    data = cli("item-schema", pods, "items", "--json").json["data"]
    fields = {f["path"]: f for f in data["fields"]}
    assert fields["metadata.name"]["presence"] == "60/60"
    waiting = sum(1 for p in doc["items"]
                  if "waiting" in p["status"]["containerStatuses"][0]["state"])
    assert data["length"] == 60
    key = "status.containerStatuses[*].state.waiting"
    assert fields[key]["presence"] == f"{waiting}/60"
    win = cli("item-schema", pods, "items", "--offset", "10", "--limit", "5")
    assert win.text.startswith("window: items 10..14 of 60\n")
    r = cli("item-schema", pods, "kind", "--json")
    assert r.code == 2 and r.json["error"]["code"] == "not_an_array"


def test_iterate_over_rows_where_and_fit(scratch_home: Path, pods: str) -> None:
    doc = json.loads(SAMPLE.read_text())
    r = cli("iterate-over", pods, "items", "--fields", "metadata.name,status.phase,nope",
            "--limit", "3", "--json")
    rows = r.json["data"]["rows"]
    assert rows == [{"_index": i, "metadata.name": doc["items"][i]["metadata"]["name"],
                     "status.phase": doc["items"][i]["status"]["phase"], "nope": None}
                    for i in range(3)]
    r = cli("iterate-over", pods, "items", "--fields", "metadata.name", "--where",
            "@.status.phase == 'Failed'", "--json")
    assert [row["_index"] for row in r.json["data"]["rows"]] == [
        i for i, p in enumerate(doc["items"]) if p["status"]["phase"] == "Failed"]
    r = cli("iterate-over", pods, "items", "--fields", "spec.containers", "--limit", "1",
            "--json")
    trunc = r.json["data"]["rows"][0]["_truncated"]["spec.containers"]
    assert trunc["path"] == "items.0.spec.containers"
    (scratch_home / "scratch.toml").write_text("[budget]\nmax_extraction_tokens = 300\n")
    seen: list[int] = []
    r = cli("iterate-over", pods, "items", "--fields", "metadata.name,status.phase", "--fit",
            "--json")
    while True:
        assert r.code == 0, r.out
        seen += [row["_index"] for row in r.json["data"]["rows"]]
        if "next" not in r.json["data"]:
            break
        r = run_next(r.json["data"]["next"])
    assert seen == list(range(60))


def test_summarize_counts_and_cache_and_small_refusal(scratch_home: Path, pods: str) -> None:
    first = cli("summarize", pods, "--json")
    assert first.code == 0
    text = first.json["data"]["summary"]
    assert "status.phase: Running 53, Pending 5, Failed 2" in text
    assert first.json["data"]["cached"] is False
    assert cli("summarize", pods, "--json").json["data"]["cached"] is True
    cli("write", "tiny", input="just a line\n")
    r = cli("summarize", "tiny", "--json")
    assert r.code == 3 and r.json["error"]["code"] == "entry_too_small"
    assert shells(r.json["error"]["suggestions"]) == ["scratch read tiny"]


def test_summarize_command_runs_per_piece(scratch_home: Path, pods: str) -> None:
    (scratch_home / "scratch.toml").write_text(
        "[summarize]\ncommand = \"wc -l | tr -d ' '\"\n[budget]\nmax_extraction_tokens = 30000\n")
    r = cli("summarize", pods, "--json")
    assert r.code == 0
    parts = r.json["data"]["summary"].split("[part ")
    counts = [int(p.split("\n", 1)[1].strip()) for p in parts[1:]]
    assert sum(counts) == len(stored(scratch_home, pods))


def test_get_in_and_read_fit_cover_the_whole_answer(scratch_home: Path, pods: str) -> None:
    doc = json.loads(SAMPLE.read_text())
    (scratch_home / "scratch.toml").write_text("[budget]\nmax_extraction_tokens = 300\n")
    whole = json.dumps(doc["items"][3], indent=2, ensure_ascii=False) + "\n"
    text = ""
    r = cli("get-in", pods, "items.3", "--fit", "--json")
    pages = 0
    while True:
        assert r.code == 0, r.out
        assert r.json["meta"]["tokens"]["count"] <= 300
        text += r.json["data"]["text"]
        pages += 1
        if "next" not in r.json["data"]:
            break
        r = run_next(r.json["data"]["next"])
    assert pages > 3 and text == whole
    cli("write", "notes.txt", input="".join(f"note {i}: {'x' * 30}\n" for i in range(200)))
    lines: list[str] = []
    r = cli("read", "notes.txt", "--fit", "--json")
    while True:
        lines += r.json["data"]["lines"]
        if "next" not in r.json["data"]:
            break
        r = run_next(r.json["data"]["next"])
    assert lines == [f"note {i}: {'x' * 30}" for i in range(200)]


def test_json_answers_are_priced_on_the_envelope(pods: str) -> None:
    for args in (("head", pods, "-n", "30"), ("schema", pods, "--depth", "2"),
                 ("item-schema", pods, "items", "--limit", "5"),
                 ("iterate-over", pods, "items", "--fields", "metadata.name", "--limit", "10"),
                 ("get-in", pods, "items.2.metadata"), ("grep", pods, "Failed", "-C", "1")):
        r = cli(*args, "--json")
        assert r.code == 0, (args, r.out[:300])
        exact = count_text(r.text, O200K)
        assert abs(r.json["meta"]["tokens"]["count"] - exact) <= 2, args


def test_fit_with_the_budget_spent_says_budget_exceeded(pods: str) -> None:
    cli("budget", "set-window", "2000")
    cli("budget", "used", "1600")
    r = cli("head", pods, "--fit", "--json")
    assert r.code == 3 and r.json["error"]["code"] == "budget_exceeded"


def test_schema_of_csv_logs_and_markdown_is_readable(scratch_home: Path) -> None:
    cli("write", "t.csv", input="name,n\na,1\nb,\nc,3\n")
    text = cli("schema", "t.csv").text
    assert text.splitlines()[:2] == ["csv: 4 lines", "csv: 3 rows, 2 columns, delimiter ',', "
                                     "header on line 1"]
    doc = ("# Title\n\nSee [the docs](https://example.org/docs).\n\n## Part\n\n- one\n"
           "- two\n\n```sh\nscratch ls\n```\n")
    cli("write", "doc.md", input=doc)
    assert cli("schema", "doc.md").text == ("markdown: 12 lines\n# Title L1-12\n"
                                            "  ## Part L5-12\n")
    cli("write", "plain.txt", input="just\nsome\nwords\n")
    assert cli("schema", "plain.txt").text.startswith("text: 3 lines\n")


def test_a_count_of_one_is_singular(scratch_home: Path) -> None:
    cli("write", "one.txt", input="hello error\n")
    assert cli("schema", "one.txt").text.startswith("text: 1 line\n")
    r = cli("slice", "one.txt", "3", "4", "--json")
    assert r.json["error"]["message"] == "one.txt has 1 line; line 3 is past the end"
    cli("write", "t.csv", input="a,b\n1,2\n")
    assert "csv: 1 row, 2 columns," in cli("schema", "t.csv").text
    cli("ingest", "s", "--store-always", input='{"s": "x"}')
    r = cli("get-in", "s", "s", "--offset", "5", "--json")
    assert r.json["error"]["message"] == "--offset 5 is past the end (1 line)"
    cli("write", "long.txt", input=" ".join(f"w{i}" for i in range(1500)) + "\n")
    summary = cli("summarize", "long.txt", "--json").json["data"]["summary"]
    assert summary.startswith("long.txt: text, ") and ", 1 line, " in summary.splitlines()[0]
