"""Log line formats (scratch.formats.logformats): parse results against reference parsers
written here independently (other regexes, plain splitting, Loghub's own structured CSVs)."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from scratch.formats import logformats as L
from scratch.index.textinfo import iter_text_lines


def _lines(path: Path) -> list[str]:
    return list(iter_text_lines(path))


# ------------------------------------------------------------------------------ core suite


def test_every_format_parses_its_example_and_declares_its_fields() -> None:
    for fmt in L.FORMATS:
        d = fmt.parse(fmt.example)
        assert d is not None, fmt.name
        if not fmt.dynamic:
            assert tuple(d) == fmt.field_names, fmt.name
        assert not any(k.startswith("_") for k in d)
        for f in fmt.fields:
            v = d[f.name]
            if v is not None and f.type == "integer":
                assert type(v) is int, (fmt.name, f.name)
        assert fmt.doc.startswith("https://")
    assert L.get_format("combined") is L.COMBINED
    assert "body_bytes_sent (integer)" in L.help_text()


def test_combined_fields_are_nginx_names_and_numbers_are_numbers() -> None:
    line = ('203.0.113.9 - alice [10/Oct/2000:13:55:36 -0700] "GET /a b.gif?x=1 HTTP/1.0" 404 - '
            '"http://example.com/" "Mozilla/4.08 [en] (Win98; I ;Nav)"')
    # the request line has a space in the path: not METHOD PATH PROTOCOL, so those are null
    assert L.COMBINED.parse(line) == {
        "remote_addr": "203.0.113.9", "remote_user": "alice",
        "time_local": "10/Oct/2000:13:55:36 -0700", "request": "GET /a b.gif?x=1 HTTP/1.0",
        "method": None, "path": None, "protocol": None, "status": 404, "body_bytes_sent": 0,
        "http_referer": "http://example.com/",
        "http_user_agent": "Mozilla/4.08 [en] (Win98; I ;Nav)"}
    ok = '::1 - - [01/Jan/2024:00:00:00 +0000] "POST /api HTTP/2.0" 201 17 "-" "curl/8"'
    d = L.COMBINED.parse(ok)
    assert d is not None
    assert (d["method"], d["path"], d["protocol"], d["status"], d["body_bytes_sent"]) == (
        "POST", "/api", "HTTP/2.0", 201, 17)
    assert L.COMMON.parse(ok) is None  # the common format has no referer/agent
    assert L.COMMON.parse(ok.rsplit(' "-"', 1)[0]) is not None
    assert L.COMBINED.parse(ok[:-1]) is None  # unterminated user agent
    # Apache writes a quote inside a field as \" (the field keeps it as written)
    esc = ('1.2.3.4 - - [01/Jan/2024:00:00:00 +0000] "GET /q?a=\\"b\\" HTTP/1.1" 200 1 "-" '
           '"say \\"hi\\" 200 1 \\"x\\""')
    d = L.COMBINED.parse(esc)
    assert d is not None
    assert (d["path"], d["http_user_agent"]) == ('/q?a=\\"b\\"', 'say \\"hi\\" 200 1 \\"x\\"')


def test_rfc5424_examples_from_the_rfc() -> None:
    # RFC 5424 section 6.5, examples 1-4 (the BOM of example 1 left out)
    ex1 = "<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - 'su root' failed"
    ex3 = ('<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 '
           '[exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"] '
           'An application event log entry...')
    ex4 = ('<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 '
           '[exampleSDID@32473 iut="3"][examplePriority@32473 class="high"]')
    d1 = L.RFC5424.parse(ex1)
    assert d1 == {"facility": 4, "severity": 2, "version": 1,
                  "timestamp": "2003-10-11T22:14:15.003Z", "hostname": "mymachine.example.com",
                  "app_name": "su", "procid": "-", "msgid": "ID47", "structured_data": "-",
                  "msg": "'su root' failed"}
    d3 = L.RFC5424.parse(ex3)
    assert d3 is not None and (d3["facility"], d3["severity"]) == (20, 5)
    assert d3["structured_data"].startswith("[exampleSDID@32473 ") and d3["msg"].startswith("An")
    d4 = L.RFC5424.parse(ex4)
    assert d4 is not None and d4["msg"] is None and d4["structured_data"].endswith('"high"]')
    assert L.RFC3164.parse(ex1) is None


def test_rfc3164_with_and_without_pri_tag_and_pid() -> None:
    assert L.RFC3164.parse("<13>Feb  5 17:32:18 10.0.0.99 myprog[42]: hello") == {
        "facility": 1, "severity": 5, "timestamp": "Feb  5 17:32:18", "hostname": "10.0.0.99",
        "tag": "myprog", "pid": 42, "content": "hello"}
    d = L.RFC3164.parse("Jun 19 04:08:57 combo syslogd 1.4.1: restart.")
    assert d is not None and d["tag"] is None and d["content"] == "syslogd 1.4.1: restart."
    d = L.RFC3164.parse("Jul 27 14:42:00 combo kernel: Linux agpgart")
    assert d is not None and (d["tag"], d["pid"], d["content"]) == ("kernel", None, "Linux agpgart")


def test_klog_and_logfmt() -> None:
    assert L.KLOG.parse("W0102 15:04:05.123456   12345 reflector.go:167] watch ended") == {
        "level": "WARNING", "timestamp": "0102 15:04:05.123456", "threadid": 12345,
        "file": "reflector.go", "line": 167, "msg": "watch ended"}
    line = 'time="2021-05-24T16:37:58Z" level=info msg="say \\"hi\\"" n=3 ratio=0.5 ok id="7" dry'
    assert L.LOGFMT.parse(line) == {"time": "2021-05-24T16:37:58Z", "level": "info",
                                    "msg": 'say "hi"', "n": 3, "ratio": 0.5, "ok": True,
                                    "id": "7", "dry": True}
    assert L.LOGFMT.parse("2021-11-15T09:21:29.542014685Z level=warn ts=1 x=") == {
        "timestamp": "2021-11-15T09:21:29.542014685Z", "level": "warn", "ts": 1, "x": ""}
    assert L.LOGFMT.parse("just words here a=1 b=2") is None  # first pair has no value
    assert L.LOGFMT.parse("a=1") is None  # one pair is not enough
    assert L.LOGFMT.parse('a=1 b="unterminated') is None


def test_detect_needs_half_of_the_record_lines_and_prefers_specific_formats() -> None:
    access = '1.2.3.4 - - [01/Jan/2024:00:00:00 +0000] "GET / HTTP/1.1" 200 5 "-" "x"'
    fmt, n, s = L.detect([access] * 3 + ["", "garbage"] * 2)
    assert (fmt, n, s) == (L.COMBINED, 3, 5)
    assert L.detect(["garbage"] * 3 + [access] * 2)[0] is None
    # indented continuation lines (a stack trace) do not count against the format
    py = "2016-11-21 11:13:07,750 - c7n.policy - ERROR - failed"
    assert L.detect([py, "Traceback (most recent call last):", '  File "x", line 1',
                     "    boom()", py])[0] is L.PYTHON_LOGGING
    assert L.detect([]) == (None, 0, 0)


def test_records_are_one_per_line_and_keep_unparsed_raw() -> None:
    lines = ["a=1 b=2", "", "not logfmt", "c=3 d=4"]
    assert list(L.records(lines, L.LOGFMT)) == [
        {"_line": 1, "a": 1, "b": 2}, {"_line": 2, "_raw": ""}, {"_line": 3, "_raw": "not logfmt"},
        {"_line": 4, "c": 3, "d": 4}]


# ---------------------------------------------------------------------- real corpus files

REF_ACCESS = re.compile(r'^([^ ]+) [^ ]+ ([^ ]+) \[(.+?)\] "(.*?)" ([0-9]+) ([0-9]+|-)'
                        r'(?: "(.*?)" "(.*)")?$')


@pytest.mark.corpus
def test_combined_on_the_apache_access_log(corpus_dir: Path) -> None:
    lines = _lines(corpus_dir / "logs/app/apache_access_10k.log")
    fmt, _, _ = L.detect(lines)
    assert fmt is L.COMBINED
    parsed = 0
    for line in lines:
        d = L.COMBINED.parse(line)
        m = REF_ACCESS.match(line)
        if d is None:
            assert m is None or m.group(8) is None or not line.endswith('"')
            continue
        parsed += 1
        assert m is not None
        addr, user, when, req, status, sent, ref, agent = m.groups()
        parts = req.split(" ")
        assert d == {
            "remote_addr": addr, "remote_user": user, "time_local": when, "request": req,
            "method": parts[0] if len(parts) == 3 else None,
            "path": parts[1] if len(parts) == 3 else None,
            "protocol": parts[2] if len(parts) == 3 else None,
            "status": int(status), "body_bytes_sent": 0 if sent == "-" else int(sent),
            "http_referer": ref, "http_user_agent": agent}
    assert parsed == 9999  # one line of the file is cut inside its user agent


@pytest.mark.corpus
@pytest.mark.parametrize("name", ["logs/app/auth.log", "logs/loghub/Linux_2k.log",
                                  "logs/loghub/Mac_2k.log", "logs/loghub/OpenSSH_2k.log",
                                  "logs/k8s/kubelet_node.log"])
def test_rfc3164_on_syslog_files(corpus_dir: Path, name: str) -> None:
    lines = _lines(corpus_dir / name)
    assert L.detect(lines)[0] is L.RFC3164
    for line in lines:
        if not line:
            continue
        d = L.RFC3164.parse(line)
        assert d is not None, line
        # reference: the timestamp is the first 15 characters (optionally with fractions),
        # then host, then "tag[pid]: " when the next word ends in ":"
        stamp_end = 15 + (len(line[15:].split(" ", 1)[0]) if line[15] == "." else 0)
        host, rest = line[stamp_end + 1:].split(" ", 1)
        assert (d["timestamp"], d["hostname"]) == (line[:stamp_end], host)
        word, _, after = rest.partition(": ")
        tag_like = re.fullmatch(r"([^\s\[\]:]+)(?:\[(\d+)\])?", word)
        if after and tag_like:
            assert (d["tag"], d["pid"], d["content"]) == (
                tag_like.group(1), int(tag_like.group(2)) if tag_like.group(2) else None, after)
        elif rest.endswith(":") and tag_like is None and re.fullmatch(r"[^\s\[\]:]+:", rest):
            assert d["tag"] == rest[:-1]
        else:
            assert d["tag"] is None or rest.startswith(d["tag"])


@pytest.mark.corpus
def test_loghub_hdfs_and_openstack_match_loghubs_own_split(corpus_dir: Path) -> None:
    cases = [("HDFS", L.LOGHUB, ["Date", "Time", "Pid", "Level", "Component", "Content"]),
             ("OpenStack", L.OPENSTACK,
              ["Logrecord", "Date", "Time", "Pid", "Level", "Component", "ADDR", "Content"])]
    for name, fmt, columns in cases:
        lines = _lines(corpus_dir / f"logs/loghub/{name}_2k.log")
        assert L.detect(lines)[0] is fmt
        with open(corpus_dir / f"csv/loghub_{name}_2k.log_structured.csv", encoding="utf-8",
                  newline="") as fh:
            rows = list(csv.DictReader(fh))
        assert len(rows) == len(lines) == 2000
        for line, row in zip(lines, rows):
            d = fmt.parse(line)
            assert d is not None
            for col in columns:
                want: object = int(row[col]) if col == "Pid" else row[col]
                assert d[col.lower()] == want, (name, row["LineId"], col)


@pytest.mark.corpus
@pytest.mark.parametrize("name", ["Hadoop", "Spark"])
def test_loghub_layouts_of_hadoop_and_spark(corpus_dir: Path, name: str) -> None:
    # Loghub's templates: Hadoop '<Date> <Time> <Level> \[<Process>\] <Component>: <Content>',
    # Spark '<Date> <Time> <Level> <Component>: <Content>'; reference split by words here.
    lines = _lines(corpus_dir / f"logs/loghub/{name}_2k.log")
    assert L.detect(lines)[0] is L.LOGHUB
    for line in lines:
        d = L.LOGHUB.parse(line)
        assert d is not None
        date, time, level, rest = line.split(" ", 3)
        process = None
        if name == "Hadoop":
            assert rest.startswith("[")
            process, rest = rest[1:].split("] ", 1)
        component, content = rest.split(": ", 1)
        assert d == {"date": date, "time": time, "pid": None, "level": level,
                     "process": process, "component": component, "content": content}


REF_KLOG = re.compile(r"^([IWEF])([0-9]{4} [0-9:.]{15}) +([0-9]+) ([^:]+):([0-9]+)\] (.*)$")


@pytest.mark.corpus
def test_klog_lines_in_kubernetes_logs(corpus_dir: Path) -> None:
    seen = 0
    for name in ("logs/k8s/traefik.log", "logs/k8s/sonobuoy_e2e.txt", "logs/k8s/coredns.log"):
        for line in _lines(corpus_dir / name):
            m = REF_KLOG.match(line)
            d = L.KLOG.parse(line)
            assert (m is None) == (d is None), line
            if m:
                seen += 1
                lv, ts, tid, file, ln, msg = m.groups()
                assert d == {"level": {"I": "INFO", "W": "WARNING", "E": "ERROR",
                                       "F": "FATAL"}[lv], "timestamp": ts, "threadid": int(tid),
                             "file": file, "line": int(ln), "msg": msg}
    assert seen > 20
    # klog inside journald lines: the syslog content is a klog line
    for line in _lines(corpus_dir / "logs/k8s/kubelet_node.log"):
        d = L.RFC3164.parse(line)
        assert d is not None and L.KLOG.parse(d["content"]) is not None


REF_PAIR = re.compile(r'([^ =]+)=("(?:[^"\\]|\\.)*"|[^ ]*)')


@pytest.mark.corpus
@pytest.mark.parametrize("name", ["logs/k8s/cluster-samples-operator_last-100-lines.log",
                                  "logs/k8s/kube-sonobuoy.txt",
                                  "logs/k8s/alertmanager_last-50-lines.log"])
def test_logfmt_files(corpus_dir: Path, name: str) -> None:
    lines = _lines(corpus_dir / name)
    assert L.detect(lines)[0] is L.LOGFMT
    for line in lines:
        d = L.LOGFMT.parse(line)
        assert d is not None
        want: dict[str, object] = {}
        body = line
        if re.match(r"[0-9]{4}-", line):
            stamp, body = line.split(" ", 1)
            want["timestamp"] = stamp
        for key, raw in REF_PAIR.findall(body):
            if raw.startswith('"'):
                want[key] = json.loads(raw)
            else:
                try:
                    want[key] = json.loads(raw) if raw else ""
                except ValueError:
                    want[key] = raw
                if isinstance(want[key], (bool, list, dict)) or want[key] is None:
                    want[key] = raw
        assert d == want, line


@pytest.mark.corpus
def test_python_logging_and_unparsed_traceback_lines(corpus_dir: Path) -> None:
    lines = _lines(corpus_dir / "logs/app/custodian-run.log")
    assert L.detect(lines)[0] is L.PYTHON_LOGGING
    recs = list(L.records(lines, L.PYTHON_LOGGING))
    raw = [r for r in recs if "_raw" in r]
    ok = [r for r in recs if "_raw" not in r]
    assert len(ok) == sum(1 for ln in lines if re.match(r"^\d{4}-\d\d-\d\d [\d:,]{12} - ", ln))
    assert all(set(r) == {"_line", "_raw"} for r in raw)
    assert {r["levelname"] for r in ok} <= {"INFO", "ERROR", "WARNING", "DEBUG"}
    assert len(recs) == len(lines)


@pytest.mark.corpus
@pytest.mark.parametrize("name", ["logs/loghub/Android_2k.log", "logs/k8s/coredns.log",
                                  "logs/app/kafkaServer-gc.log", "logs/loghub/HealthApp_2k.log"])
def test_unknown_layouts_are_not_claimed(corpus_dir: Path, name: str) -> None:
    assert L.detect(_lines(corpus_dir / name))[0] is None
