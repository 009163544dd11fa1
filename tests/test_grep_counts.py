"""grep's counts: --count (exact over the whole entry), the whole entry's total when -m stops
the search, and --count-by GROUP (a capture group's values); against Python's re over the
stored lines."""

from __future__ import annotations

import re
import shlex
from collections import Counter
from pathlib import Path

import pytest

from tests.helpers import cli, shell_of

LINES = [f"{i:05d} {['GET', 'POST', 'PUT'][i % 3]} /api/v{i % 4} status={[200, 404, 500][i % 7 % 3]}"
         + (" slow" if i % 10 == 0 else "") for i in range(3000)]


@pytest.fixture
def log(scratch_home: Path) -> str:
    r = cli("ingest", "app.log", "--store-always", "--format", "text",
            input=("\n".join(LINES) + "\n").encode())
    assert r.code == 0, r.out
    return "app.log"


def test_count_is_exact_over_the_whole_entry(log: str) -> None:
    want = sum(1 for line in LINES if re.search(r"status=5\d\d", line))
    r = cli("grep", log, r"status=5\d\d", "--count", "--json")
    assert r.code == 0
    assert (r.json["data"]["count"], r.json["data"]["lines"]) == (want, len(LINES))
    assert isinstance(r.json["data"]["seconds"], float)
    human = cli("grep", log, r"status=5\d\d", "--count")
    assert human.text == f"{want}\n"
    assert f"{want:,} of {len(LINES):,} lines match (" in human.err
    inverted = cli("grep", log, "slow", "--count", "-v").text
    assert inverted == f"{sum(1 for line in LINES if 'slow' not in line)}\n"
    assert cli("grep", log, "SLOW", "--count", "-i").text == f"{len(LINES) // 10}\n"
    assert cli("grep", log, "nothing here", "--count", "-F").text == "0\n"


def test_max_count_answers_report_the_whole_total(log: str) -> None:
    want = sum(1 for line in LINES if "POST" in line)
    r = cli("grep", log, "POST", "-m", "5", "--json")
    assert r.code == 0 and r.json["data"]["matches"] == 5
    assert r.json["meta"]["total_matches"] == want
    human = cli("grep", log, "POST", "-m", "5")
    assert f"{want:,} matching lines in the whole entry; this search stops at the first 5" in human.err
    # no -m, or -m larger than the matches: nothing to add
    assert "total_matches" not in cli("grep", log, "status=500 slow", "-m", "1000",
                                      "--json").json["meta"]


def test_the_whole_total_is_counted_once_per_version(log: str, scratch_home: Path) -> None:
    """The total a -m answer reports is kept beside the version's index: the next such grep
    reads it (a doctored file shows it is read), and a new version counts afresh."""
    import json

    want = sum(1 for line in LINES if "PUT" in line)
    assert cli("grep", log, "PUT", "-m", "2", "--json").json["meta"]["total_matches"] == want
    kept = [p for p in (scratch_home / "cache").rglob("counts/*.json")
            if json.loads(p.read_bytes()).get("total") == want]
    assert len(kept) == 1
    doc = json.loads(kept[0].read_bytes())
    kept[0].write_text(json.dumps({**doc, "total": 12345}))
    assert cli("grep", log, "PUT", "-m", "2", "--json").json["meta"]["total_matches"] == 12345
    assert cli("grep", log, "PUT", "-m", "2", "-i", "--json").json["meta"]["total_matches"] \
        == want  # another question: its own count
    cli("ingest", log, "--store-always", "--format", "text",
        input=("\n".join(LINES[:300]) + "\n").encode())
    assert cli("grep", log, "PUT", "-m", "2", "--json").json["meta"]["total_matches"] == 100


def test_count_by_a_numbered_and_a_named_group(log: str) -> None:
    want = Counter(m.group(1) for line in LINES if (m := re.search(r"status=(\d+)", line)))
    r = cli("grep", log, r"status=(\d+)", "--count-by", "1", "--json")
    assert r.code == 0
    got = {b["value"]: b["count"] for b in r.json["data"]["values"]}
    assert got == dict(want) and r.json["data"]["total"] == sum(want.values())
    named = Counter(m.group(1) for line in LINES if (m := re.search(r" (GET|POST|PUT) /api/v(\d)",
                                                                   line)))
    r = cli("grep", log, r" (?P<method>GET|POST|PUT) /api/v(\d)", "--count-by", "method")
    assert r.code == 0
    assert r.text.splitlines() == ["method\tcount", *(f"{k}\t{n}" for k, n in
                                                     named.most_common())]
    versions = Counter(m.group(2) for line in LINES if (m := re.search(
        r" (GET|POST|PUT) /api/v(\d)", line)))
    r = cli("grep", log, r" (?P<method>GET|POST|PUT) /api/v(\d)", "--count-by", "2", "--json")
    assert {b["value"]: b["count"] for b in r.json["data"]["values"]} == dict(versions)


def test_count_by_an_optional_group_counts_where_it_took_no_part(log: str) -> None:
    r = cli("grep", log, r"status=500( slow)?", "--count-by", "1", "--json")
    got = {(b["type"], b["value"]): b["count"] for b in r.json["data"]["values"]}
    total = [line for line in LINES if "status=500" in line]
    slow = sum(1 for line in total if line.endswith("slow"))
    assert got == {("string", " slow"): slow, ("missing", None): len(total) - slow}


def test_count_by_limit_other_and_fit(log: str) -> None:
    want = Counter(line.split()[2] for line in LINES).most_common()
    r = cli("grep", log, r"(/api/v\d)", "--count-by", "1", "--limit", "2", "--json")
    data = r.json["data"]
    assert [(b["value"], b["count"]) for b in data["values"]] == want[:2]
    assert data["other"] == {"count": sum(n for _, n in want[2:]), "distinct": 2}
    env = {"SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS": "185"}
    r = cli("grep", log, r"(/api/v\d)", "--count-by", "1", "--fit", "--json", env=env)
    seen = []
    while True:
        assert r.code == 0, r.out
        seen += [(b["value"], b["count"]) for b in r.json["data"]["values"]]
        nxt = r.json["data"].get("next")
        if nxt is None:
            break
        r = cli(*shlex.split(shell_of(nxt))[1:], "--json", env=env)
    assert seen == want


def test_bad_groups_and_combinations_are_clear_errors(log: str) -> None:
    cases = [(["x(y)", "--count-by", "2"], "has no group '2': it has 1 group"),
             (["xy", "--count-by", "1"], "it has no groups"),
             (["(?P<a>x)", "--count-by", "b"], "has no group 'b': it has 1 group (a)"),
             (["(x)", "--count-by", "1", "-v"], "--invert-match selects lines"),
             (["x", "--count", "--count-by", "1"], "two answers"),
             (["x", "--count", "-C", "2"], "--context shows lines"),
             (["x", "--offset", "3"], "--offset and --limit page")]
    for args, needle in cases:
        r = cli("grep", log, *args, "--json")
        assert r.code == 2, (args, r.out)
        assert needle in r.json["error"]["message"], (args, r.json["error"]["message"])
    r = cli("grep", log, "(unclosed", "--count-by", "1", "--json")
    assert r.code == 2 and r.json["error"]["code"] == "invalid_pattern"


@pytest.mark.corpus
def test_access_log_status_counts_match_a_reference_regex(corpus_dir: Path,
                                                          scratch_home: Path) -> None:
    path = corpus_dir / "logs/app/apache_access_10k.log"
    r = cli("ingest", "access", "--store-always", input=path.read_bytes())
    assert r.code == 0
    text = path.read_text(encoding="utf-8", errors="replace").splitlines()
    pattern = r'" (\d{3}) '
    want = Counter(m.group(1) for line in text if (m := re.search(pattern, line)))
    r = cli("grep", "access", pattern, "--count-by", "1", "--limit", "100", "--json")
    assert {b["value"]: b["count"] for b in r.json["data"]["values"]} == dict(want)
    assert cli("grep", "access", "Googlebot", "--count").text == (
        f"{sum(1 for line in text if 'Googlebot' in line)}\n")
