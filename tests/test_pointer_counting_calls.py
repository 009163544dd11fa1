"""The pointer offers counting where it is the natural next step (a count-by of the field
that reads like a category, SQL over a table), and every such call runs as printed under the
per-call cap."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from tests.helpers import cli

CAP = {"SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS": "3000"}


def next_calls(path: Path) -> list[str]:
    r = cli("ingest", path.name, "--store-always", "--json", input=path.read_bytes(), env=CAP)
    assert r.code == 0, r.out
    return r.json["data"]["next"]


def run_all(calls: list[str]) -> None:
    for c in calls:
        cli("budget", "reset")
        r = cli(*shlex.split(c)[1:], "--json", env=CAP)
        assert r.code == 0, (c, r.out[:500])


@pytest.mark.corpus
@pytest.mark.parametrize("rel,wanted", [
    ("ndjson/journald_ip-10-0-9-16.ndjson", ". --count-by PRIORITY"),
    ("csv/world-cities.csv", ". --count-by country"),
    ("k8s/honeycomb/pods.json", "items --count-by status.phase"),
    ("logs/app/auth.log", ". --count-by tag"),
    ("logs/loghub/OpenStack_2k.log", ". --count-by level"),
])
def test_counting_calls_are_offered_and_run(corpus_dir: Path, scratch_home: Path, rel: str,
                                            wanted: str) -> None:
    calls = next_calls(corpus_dir / rel)
    assert any(c.endswith(wanted) and " iterate-over " in c for c in calls), calls
    run_all(calls)


@pytest.mark.corpus
def test_a_table_is_offered_to_sql(corpus_dir: Path, scratch_home: Path) -> None:
    calls = next_calls(corpus_dir / "csv/country-codes.csv")
    assert any(c.startswith("scratch sql ") and c.endswith(" --describe") for c in calls)
    run_all(calls)
