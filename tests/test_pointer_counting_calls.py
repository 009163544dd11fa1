"""The pointer offers counting where it is the natural next step (a count-by of the field
that reads like a category, SQL over a table), and every such call runs as printed under the
per-call cap."""

from __future__ import annotations

import json
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
        r = cli(*shlex.split(c)[1:], env=CAP)  # as printed: sized for the mode it names
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


# issue 30 item 10: sql for flat arrays of records; nested fields outlined and averaged


@pytest.mark.corpus
def test_flat_records_are_offered_to_sql(corpus_dir: Path, scratch_home: Path) -> None:
    """journald's records are flat (strings only) with no number to average: two of its
    categories crossed, what one count-by does not answer (before: no sql call)."""
    path = corpus_dir / "ndjson/journald_ip-10-0-9-16.ndjson"
    r = cli("ingest", path.name, "--store-always", input=path.read_bytes(), env=CAP)
    calls = [ln.strip() for ln in r.text.split("\nnext:\n")[1].splitlines()]
    assert "scratch sql journald_ip-10-0-9-16.ndjson 'SELECT \"PRIORITY\", " \
           "\"SYSLOG_IDENTIFIER\", count(*) AS n FROM entry GROUP BY ALL ORDER BY n DESC " \
           "LIMIT 10'" in calls
    run_all(calls)


def _quakes(n: int = 300) -> bytes:
    """A GeoJSON FeatureCollection shaped as USGS's earthquake feeds are: each Feature's
    fields under ``properties``."""
    features = [{"type": "Feature", "properties": {
        "mag": round(0.5 + (i * 37 % 60) / 10, 1), "place": f"{i % 50} km SW of Town{i % 7}",
        "time": 1700000000000 + i * 61000, "status": ("automatic", "reviewed")[i % 2],
        "tsunami": 0, "net": ("ak", "ci", "us", "nc")[i % 4], "magType": ("ml", "md")[i % 2],
        "type": "earthquake", "title": f"M {i % 6} - {i % 50} km SW of Town{i % 7}"},
        "geometry": {"type": "Point", "coordinates": [-150 + i % 90, 20 + i % 40, i % 30]},
        "id": f"us{i:08d}"} for i in range(n)]
    return json.dumps({"type": "FeatureCollection", "metadata": {"count": n},
                       "features": features}, indent=1).encode()


def test_a_records_body_is_outlined_and_averaged(tmp_path: Path, scratch_home: Path) -> None:
    path = tmp_path / "quakes.json"
    path.write_bytes(_quakes())
    r = cli("ingest", path.name, "--store-always", input=path.read_bytes(), env=CAP)
    assert r.code == 0, r.err
    assert ("items of features (300): keys type 300/300, properties 300/300 {mag, place, time, "
            "status, tsunami, net, magType, type, … 1 more}, geometry 300/300 {type, "
            "coordinates}, id 300/300\n") in r.text
    calls = next_calls(path)
    query = ("SELECT properties.status, count(*) AS n, round(avg(properties.mag), 2) AS "
             "avg_mag FROM entry GROUP BY ALL ORDER BY n DESC LIMIT 10")
    assert f"scratch sql quakes.json '{query}'" in calls
    rows = cli("sql", "quakes.json", query, "--json").json["data"]["rows"]
    assert sorted(rows) == [["automatic", 150, 3.4], ["reviewed", 150, 3.5]]
    run_all(calls)


def test_a_pods_nested_number_is_not_averaged(scratch_home: Path) -> None:
    """A pod's metadata, spec and status are no one body: no average of a grace period."""
    from tests.helpers import cli as run
    data = Path(__file__).parent / "data" / "k8s_pods_kube-system.json"
    r = run("ingest", "pods", "--store-always", "--json", input=data.read_bytes(), env=CAP)
    assert not any(" sql " in c for c in r.json["data"]["next"])
