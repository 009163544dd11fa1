"""Parsed log records in the index (scratch.index.logrecords): schema, facets, unparsed lines,
iteration; counts checked against plain Python over the original file."""

from __future__ import annotations

import io
import re
from collections import Counter
from pathlib import Path

import pytest

from scratch.formats.logformats import records
from scratch.index import EntryIndex, build_index
from scratch.index.logrecords import FACET_MAX, SECTION, iter_records, records_info
from scratch.index.normalizer import normalize


def _index(tmp_path: Path, data: bytes) -> tuple[Path, EntryIndex]:
    content = tmp_path / "content"
    n = normalize(io.BytesIO(data), content, declared="log")
    assert n.format == "log"
    return content, build_index(content, tmp_path / "index", "log", analysis=n.analysis)


def _access(i: int, status: int, path: str) -> str:
    return (f'10.0.0.{i % 7} - - [17/May/2015:10:05:{i % 60:02d} +0000] "GET {path} HTTP/1.1" '
            f'{status} {i * 10} "-" "agent-{i % 3}"')


def test_access_log_records_in_the_index(tmp_path: Path) -> None:
    lines = [_access(i, 404 if i % 5 == 0 else 200, f"/p{i % 4}") for i in range(200)]
    lines[50] = "garbage line"
    lines[120] = ""
    content, idx = _index(tmp_path, ("\r\n".join(lines) + "\r\n").encode())
    rec = records_info(idx)
    assert rec is not None
    assert (rec["format"], rec["records"], rec["parsed"], rec["unparsed"], rec["blank"]) == (
        "combined", 200, 198, 1, 1)
    assert list(idx.section(SECTION) or []) == [51]
    assert rec["unparsed_examples"] == [51]
    fields = {f["name"]: f for f in rec["fields"]}
    assert fields["status"] == {"name": "status", "type": "integer", "present": 198,
                                "types": {"integer": 198}}
    assert fields["_raw"]["present"] == 2 and fields["_line"]["present"] == 200
    statuses = Counter(404 if i % 5 == 0 else 200 for i in range(200) if i not in (50, 120))
    assert rec["facets"]["status"] == {
        "distinct": 2, "values": [[200, statuses[200]], [404, statuses[404]]]}
    assert rec["facets"]["method"] == {"distinct": 1, "values": [["GET", 198]]}
    # iteration: one record per line, CRLF removed, blank and garbage raw
    got = list(iter_records(content, rec["format"]))
    assert len(got) == 200
    assert got[50] == {"_line": 51, "_raw": "garbage line"}
    assert got[120] == {"_line": 121, "_raw": ""}
    assert got[3]["status"] == 200 and got[3]["path"] == "/p3" and got[3]["_line"] == 4
    assert list(iter_records(content, "combined", start=198, stop=200)) == got[198:]
    # a window read through the line index gives the same records
    window = [b.decode() for b in idx.read_lines(101, 110)]
    assert list(records(window, idx_fmt(rec), first_line=101)) == got[100:110]
    idx.close()


def idx_fmt(rec: dict) -> object:
    from scratch.formats.logformats import get_format

    return get_format(rec["format"])


def test_logfmt_fields_vary_and_facets_stop_past_the_cap(tmp_path: Path) -> None:
    lines = [f'level={"info" if i % 3 else "error"} n={i} msg="m {i}"' +
             (" extra=true" if i % 2 else "") for i in range(FACET_MAX + 50)]
    _, idx = _index(tmp_path, ("\n".join(lines) + "\n").encode())
    rec = records_info(idx)
    assert rec is not None and rec["format"] == "logfmt"
    fields = {f["name"]: f for f in rec["fields"]}
    assert fields["n"]["types"] == {"integer": FACET_MAX + 50}
    assert fields["extra"]["present"] == (FACET_MAX + 50) // 2
    # logfmt has no booleans: a bare true is the text "true" (only a key alone is true)
    assert fields["extra"]["types"] == {"string": (FACET_MAX + 50) // 2}
    assert rec["facets"]["n"] == {"distinct": None, "over": FACET_MAX}
    errors = sum(1 for i in range(FACET_MAX + 50) if i % 3 == 0)
    assert rec["facets"]["level"]["values"] == [["info", FACET_MAX + 50 - errors],
                                                ["error", errors]]
    idx.close()


def test_a_log_in_no_known_format_is_records_by_its_line_templates(tmp_path: Path) -> None:
    """(tests/test_logtemplates.py tests the mined records themselves.)"""
    data = b"".join(b"2024-01-01 10:00:%02d something happened %d\n" % (i % 60, i)
                    for i in range(50))
    _, idx = _index(tmp_path, data)
    rec = records_info(idx)
    assert rec is not None and rec["format"] == "templates"
    assert rec["templates"] == [[1, "something happened <*>", 50]]
    unparsed, ids = idx.section(SECTION), idx.section("records:templates")
    assert unparsed is not None and ids is not None
    assert (list(unparsed), list(ids)) == ([], [1] * 50)
    idx.close()


ACCESS = re.compile(r'^\S+ \S+ \S+ \[[^\]]+\] "([^"]*)" (\d+) (\S+) "[^"]*" "[^"]*"$')


@pytest.mark.corpus
def test_apache_access_log_counts_match_plain_python(corpus_dir: Path, tmp_path: Path) -> None:
    src = corpus_dir / "logs/app/apache_access_10k.log"
    content, idx = _index(tmp_path, src.read_bytes())
    rec = records_info(idx)
    assert rec is not None and rec["format"] == "combined"
    statuses: Counter[int] = Counter()
    methods: Counter[str] = Counter()
    parsed = 0
    for line in src.read_text(encoding="utf-8").splitlines():
        m = ACCESS.match(line)
        if m:
            parsed += 1
            statuses[int(m.group(2))] += 1
            methods[m.group(1).split(" ")[0]] += 1
    assert rec["parsed"] == parsed == 9999
    assert dict(map(tuple, rec["facets"]["status"]["values"])) == dict(statuses)
    assert rec["facets"]["status"]["values"][0] == [200, statuses[200]]
    assert dict(map(tuple, rec["facets"]["method"]["values"])) == dict(methods)
    got = Counter(r.get("status") for r in iter_records(content, "combined") if "_raw" not in r)
    assert got == statuses
    idx.close()


@pytest.mark.corpus
def test_loghub_levels_and_components(corpus_dir: Path, tmp_path: Path) -> None:
    import csv

    src = corpus_dir / "logs/loghub/HDFS_2k.log"
    _, idx = _index(tmp_path, src.read_bytes())
    rec = records_info(idx)
    assert rec is not None and rec["format"] == "loghub"
    with open(corpus_dir / "csv/loghub_HDFS_2k.log_structured.csv", encoding="utf-8",
              newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert dict(map(tuple, rec["facets"]["level"]["values"])) == dict(
        Counter(r["Level"] for r in rows))
    assert dict(map(tuple, rec["facets"]["component"]["values"])) == dict(
        Counter(r["Component"] for r in rows))
    fields = {f["name"]: f for f in rec["fields"]}
    assert fields["pid"]["types"] == {"integer": 2000}
    assert fields["process"]["types"] == {"null": 2000}
    idx.close()


@pytest.mark.corpus
@pytest.mark.parametrize(("name", "field"), [("logs/app/apache_access_10k.log", "status"),
                                             ("logs/app/auth.log", "tag"),
                                             ("logs/k8s/kube-sonobuoy.txt", "level"),
                                             ("logs/app/custodian-run.log", "levelname")])
def test_facet_count_by_is_the_record_by_record_answer(corpus_dir: Path, tmp_path: Path,
                                                       name: str, field: str) -> None:
    from scratch.index.logrecords import facet_count_by
    from scratch.query.aggregate import count_by

    content, idx = _index(tmp_path, (corpus_dir / name).read_bytes())
    rec = records_info(idx)
    assert rec is not None
    got = facet_count_by(rec, field, limit=5)
    assert got is not None
    assert got.to_dict() == count_by(iter_records(content, rec["format"]), [field],
                                     limit=5).to_dict()
    assert facet_count_by(rec, "_raw") is None
    idx.close()
