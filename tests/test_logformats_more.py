"""More log formats parsed into records (issue 22 point 7): Zeek TSV, W3C extended (IIS,
Oracle Web Cache), AWS Application/Classic Load Balancer and S3 server access logs, CEF and
auditd, on real public samples (tests/data/logformats, provenance in tests/data/MANIFEST.md).

Each is sniffed as a log, detected, and read as records through the CLI (schema, iterate-over
rows, --where, --count-by, item-schema, sql) and over MCP (the real dispatch), with exact
field names, types and nulls, and its unparsed lines kept as raw rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scratch.formats import logformats as L
from scratch.formats.sniffer import sniff
from scratch.mcp.dispatch import run_tool
from scratch.mcp.serve.session import ServerState
from tests.helpers import cli

DATA = Path(__file__).parent / "data" / "logformats"
SAMPLES = {"zeek_conn.log": "zeek", "zeek_http.log": "zeek", "iis_w3c.log": "w3c",
           "w3c_oracle.log": "w3c", "cloudfront.log": "w3c", "aws_elb_access.log": "alb", "aws_classic_elb.log": "elb",
           "s3_access.log": "s3", "cef.log": "cef", "audit_rhel7.log": "auditd"}


def _lines(name: str) -> list[str]:
    return (DATA / name).read_text(encoding="utf-8").splitlines()


@pytest.fixture
def logs(scratch_home: Path) -> Path:
    for name in SAMPLES:
        r = cli("ingest", name, "--store-always", input=(DATA / name).read_bytes())
        assert r.code == 0, r.out
    return scratch_home


def rows(*args: str) -> list[dict[str, Any]]:
    r = cli("iterate-over", *args, "--json")
    assert r.code == 0, r.out
    out: list[dict[str, Any]] = r.json["data"]["rows"]
    return out


def counts(name: str, field: str) -> dict[Any, int]:
    r = cli("iterate-over", name, ".", "--count-by", field, "--json")
    assert r.code == 0, r.out
    return {(None if b["type"] == "missing" else b["value"]): b["count"]
            for b in r.json["data"]["values"]}


def records_info(name: str) -> dict[str, Any]:
    r = cli("schema", name, "--json")
    assert r.code == 0, r.out
    out: dict[str, Any] = r.json["data"]["schema"]["records"]
    return out


def types_of(rec: dict[str, Any]) -> dict[str, dict[str, int]]:
    return {f["name"]: f["types"] for f in rec["fields"]}


# --------------------------------------------------------------------- sniffing, detecting


@pytest.mark.parametrize(("name", "fmt"), sorted(SAMPLES.items()))
def test_each_sample_is_sniffed_as_a_log_and_detected_in_its_format(name: str, fmt: str) -> None:
    assert sniff((DATA / name).read_bytes()) == "log"
    found, _, _ = L.detect(_lines(name))
    assert found is not None and found.name == fmt


def test_a_header_format_is_rebuilt_from_the_layout_the_index_keeps() -> None:
    fmt, parsed, looked = L.detect(_lines("zeek_http.log"))
    assert fmt is not None and (parsed, looked) == (49, 49)  # 9 header lines are not counted
    again = L.get_format("zeek", fmt.layout)
    line = _lines("zeek_http.log")[8]
    assert again.parse(line) == fmt.parse(line)
    with pytest.raises(KeyError):
        L.get_format("zeek")  # a header format needs its layout


# ------------------------------------------------------------------------------- Zeek TSV


def test_zeek_conn_fields_types_nulls_and_sets(logs: Path) -> None:
    rec = records_info("zeek_conn.log")
    assert (rec["format"], rec["title"]) == ("zeek", "Zeek conn log (TSV)")
    assert (rec["records"], rec["parsed"], rec["unparsed"], rec["directives"]) == (30, 21, 0, 9)
    t = types_of(rec)
    assert t["ts"] == {"number": 21} and t["id.orig_p"] == {"integer": 21}
    assert t["duration"] == {"number": 13, "null": 8} and t["local_orig"] == {"null": 21}
    assert t["tunnel_parents"] == {"array": 4, "null": 17}
    got = rows("zeek_conn.log", ".", "--fields", "ts,id.orig_h,id.resp_p,service,duration,"
               "tunnel_parents", "--where", "@.tunnel_parents[0]", "--limit", "2")
    assert got == [
        {"_index": 20, "_line": 21, "ts": 1210953061.312379,
         "id.orig_h": "2001:0:4137:9e50:8000:f12a:b9c8:2815", "id.resp_p": 80,
         "service": "http", "duration": 12.810848, "tunnel_parents": ["Ck51lg1bScffFj34Ri"]},
        {"_index": 26, "_line": 27, "ts": 1210953060.829303,
         "id.orig_h": "2001:0:4137:9e50:8000:f12a:b9c8:2815", "id.resp_p": 129,
         "service": None, "duration": 0.463615,
         "tunnel_parents": ["Ck51lg1bScffFj34Ri", "CtPZjS20MLrsMUOJi2"]}]
    assert counts("zeek_conn.log", "proto") == {"tcp": 10, "udp": 8, "icmp": 3, None: 9}
    header = rows("zeek_conn.log", ".", "--fields", "_raw", "--limit", "1")
    assert header == [{"_index": 0, "_line": 1, "_raw": "#separator \\x09"}]
    assert cli("iterate-over", "zeek_conn.log", ".", "--count", "--where",
               "@.orig_bytes > 1000").text == "2\n"


def test_a_dotted_field_name_in_a_filter_is_pointed_to_its_quoted_form(logs: Path) -> None:
    # @.id.resp_p is the path id -> resp_p; Zeek's field is one name with a dot in it
    r = cli("iterate-over", "zeek_conn.log", ".", "--where", "@.id.resp_p == 53", "--fields",
            "uid")
    assert r.code == 0
    assert "warning: where key @.id.resp_p is in none of rows 0..29; did you mean " \
           "@['id.resp_p']? (columns: _line, _raw, ts, uid, id.orig_h" in r.err
    assert cli("iterate-over", "zeek_conn.log", ".", "--where", "@['id.resp_p'] == 53",
               "--count").text == "2\n"


def test_zeek_empty_sets_unset_strings_and_booleans() -> None:
    lines = _lines("zeek_http.log")
    fmt, _, _ = L.detect(lines)
    assert fmt is not None
    d = fmt.parse(lines[8])
    assert d is not None
    assert (d["tags"], d["referrer"], d["resp_fuids"], d["status_code"]) == (
        [], None, ["FNHaqE4UoY2x5hHRul"], 405)
    conn = _lines("zeek_conn.log")
    cfmt, _, _ = L.detect(conn)
    assert cfmt is not None
    # the same record with the booleans set and an empty history: T/F and (empty)
    cells = conn[8].split("\t")
    cells[12], cells[13], cells[15] = "T", "F", "(empty)"
    e = cfmt.parse("\t".join(cells))
    assert e is not None and (e["local_orig"], e["local_resp"], e["history"]) == (True, False,
                                                                                   "")
    cells[3] = "80/tcp"  # a port that is no count: the line stays raw
    assert cfmt.parse("\t".join(cells)) is None


def test_zeek_over_sql_and_item_schema(logs: Path) -> None:
    d = cli("sql", "zeek_conn.log", 'SELECT "id.orig_h", tunnel_parents FROM entry WHERE '
            "len(tunnel_parents) > 1", "--json").json["data"]
    assert d["rows"] == [["2001:0:4137:9e50:8000:f12a:b9c8:2815",
                          ["Ck51lg1bScffFj34Ri", "CtPZjS20MLrsMUOJi2"]]]
    text = cli("item-schema", "zeek_conn.log", ".").text
    assert "tunnel_parents: null|array of string 21/30, 17 null\n" in text
    assert '"id.resp_p": integer 21/30\n' in text


def test_in_sql_a_zeek_logs_rows_are_its_records_and_describe_says_what_is_null(
        logs: Path) -> None:
    """Issue 30 item 9: the header lines (#separator ... #types, #close) were rows of the
    table (30 rows, 21 records), and '-' became NULL without a word."""
    d = cli("sql", "zeek_conn.log", "SELECT count(*), min(_line), max(_line) FROM entry",
            "--json").json["data"]
    assert d["rows"] == [[21, 9, 29]]
    described = cli("sql", "zeek_conn.log", "--describe")
    assert described.code == 0
    assert "entry = zeek_conn.log: the 21 records of a zeek log; its 9 header lines are not " \
           "rows; '-' (Zeek's unset field) is NULL, '(empty)' an empty string or list\n" \
        in described.err
    assert "\tentry\t_raw\t" not in described.text  # no row left without fields
    assert cli("sql", "zeek_conn.log", "SELECT count(*) FROM entry WHERE service IS NULL",
               "--json").json["data"]["rows"] == [[12]]
    schema = cli("schema", "zeek_conn.log").text
    assert "\nnulls: '-' (Zeek's unset field) is NULL, '(empty)' an empty string or list\n" \
        in schema
    w3c = cli("sql", "iis_w3c.log", "--describe").err
    assert "the 210 records of a w3c log; its 44 header lines are not rows; '-' is NULL in " \
           "a number field (s-port, sc-status, sc-substatus, sc-win32-status, sc-bytes, " \
           "cs-bytes, time-taken), text elsewhere" in w3c
    assert cli("sql", "iis_w3c.log", "SELECT count(*) FROM entry", "--json").json["data"][
        "rows"] == [[210]]


# ------------------------------------------------------------------------------------ W3C


def test_iis_w3c_fields_numbers_count_by_and_where(logs: Path) -> None:
    rec = records_info("iis_w3c.log")
    assert rec["title"] == "W3C extended log (Microsoft Internet Information Services 8.5)"
    assert (rec["records"], rec["parsed"], rec["unparsed"], rec["directives"]) == (
        254, 210, 0, 44)
    assert "header_changes" not in rec  # every later #Fields: names the same fields
    assert counts("iis_w3c.log", "sc-status") == {404: 202, 200: 8, None: 44}
    got = rows("iis_w3c.log", ".", "--fields", "cs-uri-stem,sc-status,time-taken,c-ip",
               "--where", '@["time-taken"] > 1000')
    assert got == [{"_index": 14, "_line": 15, "cs-uri-stem": "/48672181611.html",
                    "sc-status": 404, "time-taken": 2411, "c-ip": "180.111.242.129"}]
    assert types_of(rec)["cs-uri-query"] == {"string": 210}


def test_w3c_quoted_values_hold_spaces(logs: Path) -> None:
    got = rows("w3c_oracle.log", ".", "--fields", "cs-method,sc-status,bytes,cs(User-Agent)",
               "--where", '@["sc-status"] == 200')
    assert got == [{"_index": 6, "_line": 7, "cs-method": "GET", "sc-status": 200,
                    "bytes": 350, "cs(User-Agent)": "Mozilla/4.5 [en] (WinNT; I)"}]


def test_cloudfront_tab_separated_w3c(logs: Path) -> None:
    rec = records_info("cloudfront.log")
    assert (rec["records"], rec["parsed"], rec["directives"]) == (5, 3, 2)
    t = types_of(rec)
    assert (t["time-taken"], t["c-port"], t["sc-range-start"]) == (
        {"number": 3}, {"integer": 3}, {"null": 3})
    got = rows("cloudfront.log", ".", "--fields", "x-edge-location,sc-status,time-taken,"
               "x-edge-request-id,ssl-protocol,sc-range-end", "--offset", "3", "--limit", "1")
    assert got == [{"_index": 3, "_line": 4, "x-edge-location": "LAX1", "sc-status": 200,
                    "time-taken": 0.0,
                    "x-edge-request-id": "k6WGMNkEzR5BEM_SaF47gjtX9zBDO2m349OY2an0QPEaUum1ZOLrow==",
                    "ssl-protocol": "TLSv1.2", "sc-range-end": None}]
    assert counts("cloudfront.log", "x-edge-result-type") == {"Hit": 3, None: 2}


def test_zeek_logs_of_two_kinds_concatenated_are_read_each_with_its_header(
        scratch_home: Path) -> None:
    data = (DATA / "zeek_conn.log").read_bytes() + (DATA / "zeek_http.log").read_bytes()
    assert cli("ingest", "both.log", "--store-always", input=data).code == 0
    rec = records_info("both.log")
    assert (rec["records"], rec["parsed"], rec["unparsed"], rec["directives"]) == (88, 70, 0, 18)
    assert rec["header_changes"] == [37]  # the http log's #fields line
    assert [seg[0] for seg in rec["segments"]] == [37]
    t = types_of(rec)
    assert t["proto"] == {"string": 21} and t["status_code"] == {"integer": 49}
    assert t["id.orig_p"] == {"integer": 70}
    assert counts("both.log", "proto") == {"tcp": 10, "udp": 8, "icmp": 3, None: 67}
    got = rows("both.log", ".", "--fields", "method,status_code,proto", "--where",
               '@.method == "PUT"', "--limit", "2")
    assert got == [{"_index": 73, "_line": 74, "method": "PUT", "status_code": 411,
                    "proto": None},
                   {"_index": 74, "_line": 75, "method": "PUT", "status_code": 411,
                    "proto": None}]
    text = cli("schema", "both.log").text
    assert "headers: the fields change at line 37 (each part is read with the header above " \
           "it)\n" in text
    d = cli("sql", "both.log", "SELECT count(*) FILTER (WHERE proto IS NOT NULL), count(*) "
            "FILTER (WHERE method IS NOT NULL) FROM entry", "--json").json["data"]
    assert d["rows"] == [[21, 26]]


def test_a_w3c_header_that_changes_its_fields_mid_file(scratch_home: Path) -> None:
    lines = _lines("iis_w3c.log")
    at = next(i for i, ln in enumerate(lines) if i > 4 and ln.startswith("#Fields:"))
    lines[at] = "#Fields: date time s-ip cs-method"
    k = at + 1
    while k < len(lines) and not lines[k].startswith("#"):
        lines[k] = " ".join(lines[k].split(" ")[:4])  # the part logs the four fields only
        k += 1
    assert cli("ingest", "changed.log", "--store-always",
               input=("\n".join(lines) + "\n").encode()).code == 0
    back = next(i for i, ln in enumerate(lines) if i > at and ln.startswith("#Fields:"))
    rec = records_info("changed.log")
    # the part's header, then the next one, which names the first fields again
    assert (rec["parsed"], rec["unparsed"], rec["header_changes"]) == (210, 0,
                                                                       [at + 1, back + 1])
    assert rows("changed.log", ".", "--fields", "date,cs-method,sc-status", "--offset",
                str(at + 1), "--limit", "1") == [
        {"_index": at + 1, "_line": at + 2, "date": "2015-01-13", "cs-method": "GET",
         "sc-status": None}]
    assert types_of(rec)["sc-status"] == {"integer": 209}


# ------------------------------------------------------------------------------ AWS logs


def test_alb_fields_and_the_other_load_balancers_lines_stay_raw(logs: Path) -> None:
    rec = records_info("aws_elb_access.log")
    assert (rec["records"], rec["parsed"], rec["unparsed"]) == (16, 10, 6)
    assert rec["unparsed_examples"] == [11, 12, 13, 14, 15]
    got = rows("aws_elb_access.log", ".", "--fields", "type,client_ip,client_port,"
               "target_processing_time,elb_status_code,request_verb,request_url,"
               "matched_rule_priority,classification", "--where",
               "@.elb_status_code == 302", "--limit", "1")
    assert got == [{"_index": 2, "_line": 3, "type": "h2", "client_ip": "192.168.1.10",
                    "client_port": 55753, "target_processing_time": 0.004,
                    "elb_status_code": 302, "request_verb": "GET",
                    "request_url": "https://www.domain.name:443/banner/test.png",
                    "matched_rule_priority": 2, "classification": "-"}]
    assert counts("aws_elb_access.log", "type") == {"h2": 8, "https": 2, None: 6}
    raw = rows("aws_elb_access.log", ".", "--fields", "_raw", "--offset", "14", "--limit", "1")
    assert raw[0]["_raw"].startswith("tls 2.0 2022-04-01T08:51:42 net/my-network-loadbalancer")


def test_classic_elb_dashes_are_nulls_and_minus_one_is_kept(logs: Path) -> None:
    got = rows("aws_classic_elb.log", ".", "--fields", "elb_status_code,backend_status_code,"
               "received_bytes,request,request_verb,ssl_protocol", "--offset", "2")
    assert got == [
        {"_index": 2, "_line": 3, "elb_status_code": None, "backend_status_code": None,
         "received_bytes": 82, "request": "- - - ", "request_verb": None, "ssl_protocol": "-"},
        {"_index": 3, "_line": 4, "elb_status_code": None, "backend_status_code": None,
         "received_bytes": -1, "request": "- - - ", "request_verb": None,
         "ssl_protocol": "TLSv1.2"}]


def test_aws_line_variants() -> None:
    from scratch.formats.cloudlogs import ALB, ELB
    alb = _lines("aws_elb_access.log")[0].replace("192.168.1.10:44325", "[2001:db8::1]:44325")
    d = ALB.parse(alb)
    assert d is not None and (d["client_ip"], d["client_port"]) == ("2001:db8::1", 44325)
    # a Classic line as logged before user agents and TLS fields were added
    old = _lines("aws_classic_elb.log")[0].rsplit(' "curl', 1)[0]
    e = ELB.parse(old)
    assert e is not None and (e["request_url"], e["user_agent"], e["ssl_protocol"]) == (
        "http://www.example.com:80/", None, None)
    assert ELB.parse(old + " extra") is None  # more than the format knows: a raw line
    # ALB and S3: AWS appends fields over time; the values after the known ones are kept
    from scratch.formats.cloudlogs import S3
    s3 = _lines("s3_access.log")[0]
    base = S3.parse(s3)
    assert base is not None and base["more_fields"] is None and base["tls_version"] == "TLSV1.1"
    newer = S3.parse(s3 + ' - Yes "us-east-1"')
    assert newer is not None and (newer["acl_required"], newer["more_fields"]) == (
        "Yes", "us-east-1")
    d = ALB.parse(_lines("aws_elb_access.log")[0] + ' "TID_1" "extra"')
    assert d is not None and (d["conn_trace_id"], d["more_fields"]) == ("TID_1", "extra")


def test_s3_access_fields(logs: Path) -> None:
    got = rows("s3_access.log", ".", "--fields", "time,operation,key,http_status,error_code,"
               "bytes_sent,object_size,total_time,signature_version", "--where",
               '@.http_status == 404 || @.operation == "REST.PUT.OBJECT"')
    assert got == [
        {"_index": 2, "_line": 3, "time": "06/Feb/2019:00:00:38 +0000",
         "operation": "REST.GET.BUCKETPOLICY", "key": "-", "http_status": 404,
         "error_code": "NoSuchBucketPolicy", "bytes_sent": 297, "object_size": None,
         "total_time": 38, "signature_version": "SigV2"},
        {"_index": 4, "_line": 5, "time": "06/Feb/2019:00:01:57 +0000",
         "operation": "REST.PUT.OBJECT", "key": "s3-dg.pdf", "http_status": 200,
         "error_code": "-", "bytes_sent": 0, "object_size": 4406583, "total_time": 41754,
         "signature_version": "SigV4"}]
    d = cli("sql", "s3_access.log", "SELECT operation, count(*) FROM entry GROUP BY operation "
            "ORDER BY 2 DESC, 1", "--json").json["data"]
    assert d["rows"] == [["REST.GET.VERSIONING", 2], ["REST.GET.BUCKETPOLICY", 1],
                         ["REST.GET.LOGGING_STATUS", 1], ["REST.PUT.OBJECT", 1]]


# ------------------------------------------------------------------------------ CEF, auditd


def test_cef_header_extension_escapes_and_an_unparsed_line(logs: Path) -> None:
    rec = records_info("cef.log")
    assert (rec["records"], rec["parsed"], rec["unparsed"], rec["blank"]) == (23, 13, 1, 9)
    assert rec["unparsed_examples"] == [21]
    assert types_of(rec)["severity"] == {"integer": 10, "string": 3}
    got = rows("cef.log", ".", "--fields", "device_vendor,severity,cn1,string,another",
               "--offset", "4", "--limit", "1")
    assert got == [{"_index": 4, "_line": 5, "device_vendor": "Trend Micro", "severity": 6,
                    "cn1": 1, "another": "field",
                    "string": 'hello \\"world\\" this is a backslash: \\ and this is a bracket'
                              ' \\] this is equal =, this is pipe \\|, this is newline \n and '
                              "another newline \n the end!"}]
    assert counts("cef.log", "device_vendor") == {
        None: 10, "Trend Micro": 4, "Incapsula": 3, "Aruba Networks": 2, "Fortinet": 2,
        "Elastic": 1, "Kaspersky Lab": 1}
    syslog = rows("cef.log", ".", "--fields", "prefix,device_product,name,eventId", "--where",
                  '@.device_vendor == "Elastic"')
    assert syslog == [{"_index": 16, "_line": 17, "device_product": "Vaporware",
                       "prefix": "<189>1 2021-06-18T10:55:50.000003Z host app - - -",
                       "name": "Web request", "eventId": "3457"}]
    assert rows("cef.log", ".", "--fields", "_raw", "--where", '@._raw == "unparsable line"'
                ) == [{"_index": 20, "_line": 21, "_raw": "unparsable line"}]


def test_auditd_records_flatten_msg_and_keep_hex_as_written(logs: Path) -> None:
    rec = records_info("audit_rhel7.log")
    assert (rec["records"], rec["parsed"], rec["unparsed"]) == (50, 49, 1)
    got = rows("audit_rhel7.log", ".", "--fields", "type,time,serial,pid,uid,acct,addr,"
               "terminal,res,exe", "--where", '@.type == "USER_AUTH"')
    assert got == [{"_index": 32, "_line": 33, "type": "USER_AUTH", "time": 1481077043.046,
                    "serial": 408, "pid": 1298, "uid": 0, "acct": "andrew_kroh",
                    "addr": "96.241.146.97", "terminal": "?", "res": "success",
                    "exe": "/usr/sbin/sshd"}]
    # words that are no pair (auditd's own records) are kept as text
    assert rows("audit_rhel7.log", ".", "--fields", "type,text,auid,pid,res", "--where",
                '@.type == "DAEMON_END"') == [
        {"_index": 12, "_line": 13, "type": "DAEMON_END", "text": "auditd normal halt, sending",
         "auid": "?", "pid": "?", "res": "success"}]
    sock = rows("audit_rhel7.log", ".", "--fields", "saddr", "--where",
                '@.type == "SOCKADDR"', "--limit", "2")
    assert [r["saddr"] for r in sock] == ["02000050A9FEA9FE0000000000000000",
                                          "100000000000000000000000"]
    assert rows("audit_rhel7.log", ".", "--fields", "_raw", "--where", "@._raw") == [
        {"_index": 30, "_line": 31, "_raw": "type=UNKNOWN[1329] msg=?"}]
    by = counts("audit_rhel7.log", "type")
    assert (by["SOCKADDR"], by["EXECVE"], by["SYSCALL"]) == (5, 4, 3)


# ------------------------------------------------------------------------------------ MCP


def test_the_same_records_over_mcp(logs: Path) -> None:
    session = ServerState().session_for("conn", "default", None, "test")
    out = run_tool("iterate_over", {"file": "zeek_conn.log", "path": ".", "count_by": "proto",
                                    "where": "@.duration > 1"}, session)
    assert out.ok, out.text
    assert out.text == "proto\tcount\nudp\t4\ntcp\t1\n"
    out = run_tool("iterate_over", {"file": "s3_access.log", "path": ".",
                                    "fields": "http_status,error_code",
                                    "where": "@.http_status == 404"}, session)
    assert out.ok, out.text
    assert out.text == "_index\t_line\thttp_status\terror_code\n2\t3\t404\tNoSuchBucketPolicy\n"
    out = run_tool("schema", {"file": "cef.log"}, session)
    assert out.ok, out.text
    assert ("records: cef (ArcSight Common Event Format (CEF): header fields and the "
            "extension's keys), 23 lines: 13 parsed, 1 unparsed (line 21), 9 blank\n") in out.text
    out = run_tool("sql", {"file": "audit_rhel7.log", "query": "SELECT count(*) FROM entry "
                           "WHERE type = 'SYSCALL' AND exit < 0"}, session)
    assert out.ok, out.text
    assert out.text == "count_star()\n1\n"


def test_the_pointer_of_a_big_zeek_log_shows_its_records(scratch_home: Path) -> None:
    lines = _lines("zeek_conn.log")
    data = lines[:8] + lines[8:29] * 100 + lines[29:]
    r = cli("ingest", "big_conn.log", "--store-always", input=("\n".join(data) + "\n").encode(),
            env={"SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS": "3000"})
    assert r.code == 0, r.out
    assert "\nrecords (zeek): 2,100 of 2,109 lines parsed, 9 header lines\n" in r.text
    assert "\n  scratch schema big_conn.log\n" in r.text
    assert counts("big_conn.log", "proto") == {"tcp": 1000, "udp": 800, "icmp": 300, None: 9}


POINTERS = {
    "iis_w3c.log": (["  sc-status: 404 202, 200 8", "  cs-method: GET 210"],
                    "scratch iterate-over iis_w3c.log . --fields time,sc-status,cs-uri-stem "
                    "--where '@[\"sc-status\"] >= 400' --limit 20"),
    "zeek_conn.log": (["  service: dns 3, http 3, teredo 2, dhcp 1"],
                      "scratch iterate-over zeek_conn.log . --count-by service"),
    "cef.log": (["  severity: 0 3, 6 3, 1 2, 3 1, 5 1, … 3 more"],
                "scratch iterate-over cef.log . --count-by severity"),
    "audit_rhel7.log": (["  type: SOCKADDR 5, EXECVE 4, SYSCALL 3, CONFIG_CHANGE 2, CWD 2, "
                         "… 32 more"],
                        "scratch iterate-over audit_rhel7.log . --fields time,res,type --where "
                        "'@.res == \"failed\"' --limit 20"),
    "aws_elb_access.log": (["  elb_status_code: 301 4, 302 4, 200 2", "  request_verb: GET 10"],
                           "scratch iterate-over aws_elb_access.log . --count-by "
                           "elb_status_code"),
    "s3_access.log": (["  http_status: 200 4, 404 1"],
                      "scratch sql s3_access.log 'SELECT key, count(*) AS n FROM entry WHERE "
                      "http_status >= 400 GROUP BY key ORDER BY n DESC LIMIT 10'"),
}


@pytest.mark.parametrize("name", sorted(POINTERS))
def test_the_pointer_counts_each_format_and_its_next_calls_run(scratch_home: Path,
                                                               name: str) -> None:
    import shlex

    env = {"SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS": "300"}  # small: a pointer, not the text
    r = cli("ingest", name, "--store-always", input=(DATA / name).read_bytes(), env=env)
    assert r.code == 0, r.out
    lines = r.text.splitlines()
    breakdown, one_call = POINTERS[name]
    for want in breakdown:
        assert want in lines, (name, r.text)
    nxt = [ln.strip() for ln in r.text.split("next:\n", 1)[1].splitlines()]
    assert one_call in nxt, nxt
    for c in nxt:
        run = cli(*shlex.split(c)[1:])
        assert run.code == 0, (c, run.out, run.err)


NEW_FORMATS = {"zeek", "w3c", "alb", "elb", "s3", "cef", "auditd"}


@pytest.mark.corpus
def test_no_file_of_the_corpus_is_taken_for_one_of_the_new_formats(corpus_dir: Path) -> None:
    """No false positive: every corpus file (logs, CSV, JSON, YAML ...) keeps the sniffed format
    and the log format it had before these formats were added."""
    import itertools

    from scratch.formats import sniffer

    files = sorted(p for p in corpus_dir.rglob("*") if p.is_file())
    assert len(files) > 100
    for path in files:
        data = path.open("rb").read(sniffer.SNIFF_BYTES + 1)
        text = data.decode("utf-8", "replace")
        lines = text.splitlines()[:200]
        assert not sniffer._is_declared_log(lines), path
        if sniffer.sniff(data) != "log":
            continue
        with path.open(encoding="utf-8", errors="replace") as f:
            sample = [ln.rstrip("\r\n") for ln in itertools.islice(f, 5000)]
        found, _, _ = L.detect(sample)
        assert found is None or found.name not in NEW_FORMATS, (path, found.name)


def test_a_zeek_log_through_the_mcp_sdk_client(tmp_path: Path) -> None:
    """The real SDK client over stdio: ingest a Zeek log as a tool's content, then count and
    filter its records."""
    from tests.mcp_support import server_env, stdio_client

    home = tmp_path / "store"
    client = stdio_client(home, env=server_env(home))
    try:
        content = (DATA / "zeek_conn.log").read_text(encoding="utf-8")
        client.call("ingest", {"content": content, "name": "conn", "store_always": True})
        assert client.text("iterate_over", {"file": "conn", "path": ".",
                                            "count_by": "conn_state", "limit": 3}) == (
            "conn_state\tcount\n(missing)\t9\nSF\t5\nOTH\t4\n(other: 6 values)\t12\n")
        assert client.text("iterate_over", {"file": "conn", "path": ".",
                                            "fields": "uid,orig_bytes",
                                            "where": "@.orig_bytes > 1000"}) == (
            "_index\t_line\tuid\torig_bytes\n20\t21\tCNnMIj2QSd84NKf7U3\t1675\n"
            "24\t25\tCk51lg1bScffFj34Ri\t2359\n")
    finally:
        client.close()
