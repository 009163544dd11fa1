"""summarize of a request log counts its errors by HTTP status (issue 30, item 13): a line
whose URL holds "failure" is no error when its status is 200, and the 500s are."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import cli


def test_an_access_log_counts_errors_by_status_not_by_words(corpus_dir: Path,
                                                             scratch_home: Path) -> None:
    log = corpus_dir / "logs" / "app" / "apache_access_10k.log"
    assert cli("write", "access.log", input=log.read_bytes()).code == 0
    r = cli("summarize", "access.log", "--json")
    assert r.code == 0, r.out
    text = r.json["data"]["summary"]
    lines = text.splitlines()
    assert "server errors (status 5xx): 3 of 9,999 requests: 500 3" in lines
    assert "client errors (4xx): 217 of 9,999 requests: 404 213, 403 2, 416 2" in lines
    at = lines.index("error lines (sample, status 5xx):")
    sample = lines[at + 1:]
    assert [s.split(":", 1)[0].strip() for s in sample] == ["2071", "3473", "9158"]
    assert all('" 500 ' in s for s in sample)
    assert "failure" not in text  # the 200s of /blog/tags/installer%20failure are no errors


def test_a_request_log_without_server_errors_says_none(scratch_home: Path) -> None:
    lines = "".join(f'10.0.0.{i} - - [17/May/2015:10:05:0{i % 10} +0000] "GET /failure/{i} '
                    f'HTTP/1.1" {404 if i % 5 == 0 else 200} 12 "-" "curl/8"\n'
                    for i in range(40))
    assert cli("write", "a.log", input=lines).code == 0
    text = cli("summarize", "a.log", "--json").json["data"]["summary"]
    assert "server errors (status 5xx): 0 of 40 requests" in text.splitlines()
    assert "client errors (4xx): 8 of 40 requests: 404 8" in text.splitlines()
    assert "error lines" not in text
