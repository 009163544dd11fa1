"""Known log line formats, parsed into fields: a registry with one ``parse`` contract.

Every :class:`LogFormat` has a ``name``, a ``title``, its ``fields`` (name, JSON type,
meaning), ``doc`` (where the format and its field names are defined) and an ``example``, so
help text can be generated from :data:`FORMATS`; and ``parse(line) -> dict | None``.

Invariants:
- ``parse`` takes one line without its terminator (``\\n`` and a ``\\r`` before it removed)
  and returns a new dict of fields, or None when the line is not in the format. A format with
  fixed fields returns every one of them on every line it parses, in the order of ``fields``
  (an optional part that is absent is None); logfmt returns the keys the line has, in order.
- Field names are the format's own (nginx's variable names for access logs, the RFC's for
  syslog, glog's for klog, Loghub's ``<Date> <Time> ...`` templates in lower case for the
  Loghub layouts, the header's for Zeek and W3C (:mod:`scratch.formats.headerlogs`), AWS's
  documentation's for its access logs (:mod:`scratch.formats.cloudlogs`), the CEF standard's
  and the line's own keys for CEF and auditd (:mod:`scratch.formats.eventlogs`)); no field
  name starts with ``_`` (those are scratch's: ``_line``, ``_raw``).
- Numbers are numbers: a field typed integer holds an ``int`` (or None) in a fixed-field
  format (a dynamic one declares the usual type of its fixed fields, CEF's ``severity`` may
  be a word: the index counts the types each field has); other fields keep the text as
  written (``-`` stays ``-``, a date such as ``081109`` stays a string). logfmt has no
  declared types: an unquoted value that reads as a JSON number is a number, a key without
  ``=`` is ``true``, a quoted value is always a string.
- :func:`detect` looks at a bounded sample only: the first record lines (non-blank, not
  starting with whitespace: indented lines continue a record, as stack traces do). It picks
  the format that parses the most of them, at least half; ties go to the earlier format in
  :data:`FORMATS` (the more specific one).

Pure ``re`` on ``str``; nothing here reads files.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator

from scratch.formats import cloudlogs, eventlogs, headerlogs
from scratch.formats.logbase import (
    DETECT_MIN_SHARE,
    DETECT_SAMPLE,
    Field,
    Layout,
    LogFormat,
    Parser,
    Record,
    Row,
    RowParser,
    fixed,
    regex_row,
)

__all__ = ["BY_NAME", "DETECT_MIN_SHARE", "DETECT_SAMPLE", "FORMATS", "Field", "LogFormat",
           "Parser", "RowParser", "detect", "get_format", "help_text", "records"]

# ---------------------------------------------------------------------------- access logs

_QUOTED = r'"([^"\\]*(?:\\.[^"\\]*)*)"'  # a quoted field; \" inside is kept as written
_PLAIN = r'"([^"]*)"'  # the same without escapes: a third faster, for lines without a backslash
_HEAD = r'(\S++) \S++ (\S++) \[([^\]]++)\] {q} (\d{{3}}) (\d+|-)'
_COMBINED = re.compile(_HEAD.format(q=_QUOTED) + " " + _QUOTED + " " + _QUOTED + r"[ \t]*\Z")
_COMBINED_PLAIN = re.compile(_HEAD.format(q=_PLAIN) + " " + _PLAIN + " " + _PLAIN + r"[ \t]*\Z")
_COMMON = re.compile(_HEAD.format(q=_QUOTED) + r"[ \t]*\Z")
_COMMON_PLAIN = re.compile(_HEAD.format(q=_PLAIN) + r"[ \t]*\Z")


def _access(pattern: re.Pattern[str], plain: re.Pattern[str]) -> RowParser:
    def row(line: str) -> Row | None:
        m = (plain if "\\" not in line else pattern).match(line)
        if m is None:
            return None
        g = m.groups()
        request = g[3]
        parts = request.split(" ")
        if len(parts) == 3 and all(parts):
            method, path, protocol = parts
        else:  # "-", a bare path, garbage from a scanner: no method/path/protocol
            method = path = protocol = None
        sent = g[5]
        # Apache's %b writes "-" for no bytes (its documentation: "a '-' rather than a 0")
        return (g[0], g[1], g[2], request, method, path, protocol, int(g[4]),
                0 if sent == "-" else int(sent), *g[6:])

    return row


_ACCESS_FIELDS = (
    Field("remote_addr", "string", "client address"),
    Field("remote_user", "string", "user name from authentication, - if none"),
    Field("time_local", "string", "local time, as 17/May/2015:10:05:03 +0000"),
    Field("request", "string", "the full request line"),
    Field("method", "string", "request method (null if the request line is not three words)",
          facet=True),
    Field("path", "string", "request target"),
    Field("protocol", "string", "HTTP/1.1 ...", facet=True),
    Field("status", "integer", "response status", facet=True, status=True),
    Field("body_bytes_sent", "integer", "bytes sent without headers (- counts as 0)"),
)
_NGINX_DOC = "https://nginx.org/en/docs/http/ngx_http_log_module.html#log_format"

COMBINED = fixed(
    "combined", "combined access log (Apache, nginx)", _NGINX_DOC,
    _ACCESS_FIELDS + (Field("http_referer", "string", "Referer header, - if none"),
                      Field("http_user_agent", "string", "User-Agent header")),
    _access(_COMBINED, _COMBINED_PLAIN),
    '127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /a.gif HTTP/1.0" 200 2326 '
    '"http://example.com/" "Mozilla/4.08"')
COMMON = fixed(
    "common", "common access log (CLF)", "https://httpd.apache.org/docs/2.4/logs.html#common",
    _ACCESS_FIELDS, _access(_COMMON, _COMMON_PLAIN),
    '127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /a.gif HTTP/1.0" 200 2326')

# --------------------------------------------------------------------------------- syslog

_MON = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_RFC5424 = re.compile(
    r"<(?P<pri>\d{1,3})>(?P<version>[1-9]\d{0,2}) (?P<timestamp>\S+) (?P<hostname>\S+) "
    r"(?P<app_name>\S+) (?P<procid>\S+) (?P<msgid>\S+) "
    r"(?P<structured_data>-|(?:\[(?:[^\]\\]|\\.)*\])+)(?: (?P<msg>.*))?\Z")
_RFC3164 = re.compile(
    r"(?:<(?P<pri>\d{1,3})>)?(?P<timestamp>" + _MON + r" [ \d]\d \d{2}:\d{2}:\d{2}(?:\.\d+)?) "
    r"(?P<hostname>\S+) (?:(?P<tag>[^\s\[\]:]+)(?:\[(?P<pid>\d+)\])?: ?)?(?P<content>.*)\Z")


def _rfc5424(line: str) -> Row | None:
    m = _RFC5424.match(line)
    if m is None:
        return None
    pri, version, ts, host, app, procid, msgid, sd, msg = m.groups()
    facility, severity = divmod(int(pri), 8)
    if msg is not None and msg.startswith("\ufeff"):
        msg = msg[1:]  # the RFC's BOM before a UTF-8 MSG
    return (facility, severity, int(version), ts, host, app, procid, msgid, sd, msg)


def _rfc3164(line: str) -> Row | None:
    m = _RFC3164.match(line)
    if m is None:
        return None
    pri, ts, host, tag, pid, content = m.groups()
    facility, severity = divmod(int(pri), 8) if pri is not None else (None, None)
    return (facility, severity, ts, host, tag, int(pid) if pid is not None else None, content)


_FAC = Field("facility", "integer", "PRI div 8 (null without a PRI)", facet=True)
_SEV = Field("severity", "integer", "PRI mod 8: 0 emergency .. 7 debug (null without a PRI)",
             facet=True)
RFC5424 = fixed(
    "rfc5424", "syslog (RFC 5424)", "https://www.rfc-editor.org/rfc/rfc5424#section-6",
    (_FAC, _SEV, Field("version", "integer", "protocol version"),
     Field("timestamp", "string", "RFC 3339 time, - if unknown"),
     Field("hostname", "string", "HOSTNAME"), Field("app_name", "string", "APP-NAME", facet=True),
     Field("procid", "string", "PROCID"), Field("msgid", "string", "MSGID", facet=True),
     Field("structured_data", "string", "STRUCTURED-DATA as written, - if none"),
     Field("msg", "string", "MSG (null if absent)")),
    _rfc5424,
    "<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - 'su root' failed")
RFC3164 = fixed(
    "rfc3164", "BSD syslog (RFC 3164), as in /var/log/syslog and auth.log",
    "https://www.rfc-editor.org/rfc/rfc3164#section-4.1",
    (_FAC, _SEV, Field("timestamp", "string", "Mmm dd hh:mm:ss"),
     Field("hostname", "string", "HOSTNAME", facet=True),
     Field("tag", "string", "TAG: the program (null when the line has none)", facet=True),
     Field("pid", "integer", "the [pid] after the TAG"),
     Field("content", "string", "CONTENT: the rest of the message")),
    _rfc3164, "Mar 27 13:06:56 ip-10-77-20-248 sshd[1291]: Server listening on 0.0.0.0 port 22.")

# ----------------------------------------------------------------------------------- klog

_KLOG = re.compile(
    r"(?P<level>[IWEF])(?P<timestamp>\d{4} \d{2}:\d{2}:\d{2}\.\d{6}) +(?P<threadid>\d+) "
    r"(?P<file>[^:\s\]]+):(?P<line>\d+)\] ?(?P<msg>.*)\Z")
_KLOG_LEVELS = {"I": "INFO", "W": "WARNING", "E": "ERROR", "F": "FATAL"}


def _klog(line: str) -> Row | None:
    m = _KLOG.match(line)
    if m is None:
        return None
    lv, ts, tid, file, ln, msg = m.groups()
    return (_KLOG_LEVELS[lv], ts, int(tid), file, int(ln), msg)


KLOG = fixed(
    "klog", "klog / glog (Kubernetes, Go and C++ services)",
    "https://github.com/google/glog#log-line-prefix-format",
    (Field("level", "string", "INFO, WARNING, ERROR or FATAL (the line's first letter)",
           facet=True),
     Field("timestamp", "string", "mmdd hh:mm:ss.uuuuuu"),
     Field("threadid", "integer", "thread (or process) id"),
     Field("file", "string", "source file", facet=True), Field("line", "integer", "source line"),
     Field("msg", "string", "the message")),
    _klog, 'I1213 17:06:54.244456       6 e2e.go:383] Starting e2e run')

# ------------------------------------------------------------------------- Loghub layouts

# Loghub's templates (loghub's benchmark settings): HDFS '<Date> <Time> <Pid> <Level>
# <Component>: <Content>', Hadoop '<Date> <Time> <Level> \[<Process>\] <Component>:
# <Content>', Spark '<Date> <Time> <Level> <Component>: <Content>'. One pattern covers them.
_LEVEL_WORDS = r"(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|SEVERE|FATAL|CRITICAL)"
_LOGHUB = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2}|\d{2}/\d{2}/\d{2}|\d{6}) "
    r"(?P<time>\d{2}:\d{2}:\d{2}(?:[.,]\d+)?|\d{6}) +(?:(?P<pid>\d+) +)?"
    r"(?P<level>" + _LEVEL_WORDS + r") +(?:\[(?P<process>[^\]]*)\] +)?"
    r"(?P<component>[^\s:]+(?::[^\s:]+)*): (?P<content>.*)\Z")
_OPENSTACK = re.compile(
    r"(?:(?P<logrecord>\S+\.log\S*) )?(?P<date>\d{4}-\d{2}-\d{2}) (?P<time>\d{2}:\d{2}:\d{2}"
    r"(?:\.\d+)?) (?P<pid>\d+) (?P<level>" + _LEVEL_WORDS + r") (?P<component>\S+) "
    r"\[(?P<addr>[^\]]*)\] (?P<content>.*)\Z")

LOGHUB = fixed(
    "loghub", "date time [pid] level [process] component: content (log4j-style Java logs: "
    "HDFS, Hadoop, Spark)", "https://github.com/logpai/loghub",
    (Field("date", "string", "date as written (2015-10-18, 17/06/09, 081109)"),
     Field("time", "string", "time as written"),
     Field("pid", "integer", "process id (null when the layout has none)"),
     Field("level", "string", "level word", facet=True),
     Field("process", "string", "[thread] (null when absent)"),
     Field("component", "string", "logger / class", facet=True),
     Field("content", "string", "the message")),
    regex_row(_LOGHUB, ints=(2,)),
    "081109 203615 148 INFO dfs.DataNode$PacketResponder: PacketResponder 1 terminating")
OPENSTACK = fixed(
    "openstack", "OpenStack service log (oslo.log default layout)",
    "https://github.com/logpai/loghub/tree/master/OpenStack",
    (Field("logrecord", "string", "source file name Loghub prefixes (null when absent)",
           facet=True),
     Field("date", "string", "YYYY-MM-DD"), Field("time", "string", "hh:mm:ss.mmm"),
     Field("pid", "integer", "process id"), Field("level", "string", "level word", facet=True),
     Field("component", "string", "logger name", facet=True),
     Field("addr", "string", "request context in [...]"),
     Field("content", "string", "the message")),
    regex_row(_OPENSTACK, ints=(3,)),
    "2017-05-16 00:00:00.008 25746 INFO nova.osapi_compute.wsgi.server [req-1 - - -] GET")

# Python's logging module, '%(asctime)s - %(name)s - %(levelname)s - %(message)s' (the
# layout its documentation shows); field names are LogRecord attributes.
_PYLOG = re.compile(
    r"(?P<asctime>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3}) - (?P<name>\S+) - "
    r"(?P<levelname>[A-Z]+) - (?P<message>.*)\Z")
PYTHON_LOGGING = fixed(
    "python", "Python logging: asctime - name - levelname - message",
    "https://docs.python.org/3/library/logging.html#logrecord-attributes",
    (Field("asctime", "string", "YYYY-MM-DD hh:mm:ss,mmm"),
     Field("name", "string", "logger name", facet=True),
     Field("levelname", "string", "level", facet=True),
     Field("message", "string", "the message")),
    regex_row(_PYLOG),
    "2016-11-21 11:13:07,750 - custodian.policy - INFO - Running policy")

# --------------------------------------------------------------------------------- logfmt

_LOGFMT_PAIR = re.compile(r'([^\s="]+)(?:=(?:"((?:[^"\\]|\\.)*)"|([^\s"]*)))?(?:\s+|\Z)')
_TS_PREFIX = re.compile(r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})) ")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(\.\d+)?(?:[eE][+-]?\d+)?\Z")


def _logfmt_value(text: str) -> str | int | float:
    m = _NUMBER.match(text)
    if m is None:
        return text
    if m.group(1) is None and "e" not in text and "E" not in text:
        return int(text)
    value = float(text)
    return value if value not in (float("inf"), float("-inf")) else text


def _unquote(text: str) -> str:
    if "\\" not in text:
        return text
    try:
        return str(json.loads('"' + text + '"'))
    except ValueError:  # an escape JSON does not know: keep what was written
        return text


def _logfmt(line: str) -> Record | None:
    """key=value pairs (go-logfmt / logrus); the whole line must be pairs, at least two of
    them with ``=``, the first among them, and most of the pairs. A leading RFC 3339 time
    (``kubectl logs --timestamps``) becomes ``timestamp`` unless the line has a key of that
    name."""
    d: Record = {}
    pos = 0
    m = _TS_PREFIX.match(line)
    if m is not None:
        d["timestamp"] = m.group(1)
        pos = m.end()
    n = len(line)
    valued = 0
    pairs = 0
    while pos < n:
        pm = _LOGFMT_PAIR.match(line, pos)
        if pm is None or pm.end() == pos:
            return None
        key, quoted, bare = pm.groups()
        pairs += 1
        if quoted is not None:
            d[key] = _unquote(quoted)
            valued += 1
        elif bare is not None:
            d[key] = _logfmt_value(bare) if bare else ""
            valued += 1
        elif pairs == 1:
            return None  # a line of words is not logfmt: the first pair must have a value
        else:
            d[key] = True
        pos = pm.end()
    if valued < 2 or valued * 2 < pairs:
        return None
    return d


LOGFMT = LogFormat(
    "logfmt", "logfmt key=value lines (logrus, go-kit, slog's text handler)",
    "https://brandur.org/logfmt", (), _logfmt,
    'time="2021-05-24T16:37:58Z" level=info msg="processing file"', dynamic=True)

# Order: specific before loose (combined before common, CEF before syslog, which a CEF line
# with a syslog header also is, 5424 before 3164, auditd before logfmt, logfmt last). The
# formats a header declares (Zeek, W3C) are bound from the header first: HEADER_FAMILIES.
FORMATS: tuple[LogFormat, ...] = (COMBINED, COMMON, *cloudlogs.FORMATS, eventlogs.CEF, RFC5424,
                                  RFC3164, KLOG, OPENSTACK, LOGHUB, PYTHON_LOGGING,
                                  eventlogs.AUDITD, LOGFMT)
BY_NAME: dict[str, LogFormat] = {f.name: f for f in FORMATS}
HEADER_FAMILIES = headerlogs.FAMILIES
_REBUILD = {name: rebuild for name, _, rebuild in HEADER_FAMILIES}
NAMES: tuple[str, ...] = tuple(name for name, _, _ in HEADER_FAMILIES) + tuple(BY_NAME)


def get_format(name: str, layout: Layout | None = None) -> LogFormat:
    """The format called ``name``; a header-declared one (zeek, w3c) rebuilt from the
    ``layout`` the index kept. KeyError if there is none (or no layout for a header format)."""
    rebuild = _REBUILD.get(name)
    if rebuild is not None:
        if layout is None:
            raise KeyError(name)
        return rebuild(layout)
    return BY_NAME[name]


def detect(lines: Iterable[str], *, sample: int = DETECT_SAMPLE,
           min_share: float = DETECT_MIN_SHARE) -> tuple[LogFormat | None, int, int]:
    """(format, lines it parsed, sampled lines) over the first ``sample`` record lines.

    A format a header among them declares (Zeek's ``#fields``, W3C's ``#Fields:``) is tried
    first, over the lines that are not its directives, each read with the header above it.
    The format is None when none parses at least ``min_share`` of the lines it was tried on."""
    picked: list[str] = []
    for line in lines:
        if line.strip() and not line[0].isspace():
            picked.append(line)
            if len(picked) >= sample:
                break
    if not picked:
        return None, 0, 0
    candidates: list[LogFormat] = []
    if picked[0].startswith("#") or any(ln.startswith("#") for ln in picked[:64]):
        for _, bind, _ in HEADER_FAMILIES:
            bound = bind(picked)
            if bound is not None:
                candidates.append(bound)
    candidates += FORMATS
    best: LogFormat | None = None
    best_n = 0
    best_pool = len(picked)
    for fmt in candidates:
        if fmt.layout is not None:  # a header format: each part read with its own header
            n, pool_n = _header_hits(fmt, picked)
            if n > best_n:
                best, best_n, best_pool = fmt, n, pool_n
            continue
        pool = picked if not fmt.comment else [ln for ln in picked
                                               if not ln.startswith(fmt.comment)]
        n = sum(1 for ln in pool if fmt.parse(ln) is not None)
        if n > best_n:
            best, best_n, best_pool = fmt, n, len(pool)
    if best is None or best_n < best_pool * min_share:
        return None, best_n, len(picked)
    return best, best_n, best_pool


def _header_hits(fmt: LogFormat, lines: list[str]) -> tuple[int, int]:
    """(record lines parsed, record lines) of a header format, following its headers."""
    tracker = headerlogs.Segments(fmt)
    n = pool = 0
    for i, line in enumerate(lines, 1):
        if line.startswith(fmt.comment):
            tracker.directive(i, line)
            continue
        pool += 1
        if tracker.fmt.parse(line) is not None:
            n += 1
    return n, pool


def records(lines: Iterable[str], fmt: LogFormat, *, first_line: int = 1
            ) -> Iterator[Record]:
    """One record per line, so record i is line ``first_line + i``: ``{"_line": n,
    **fields}``, or ``{"_line": n, "_raw": text}`` for a line the format does not parse (a
    blank line too, with ``_raw`` as it is)."""
    parse = fmt.parse
    for n, line in enumerate(lines, first_line):
        d = parse(line) if line else None
        if d is None:
            yield {"_line": n, "_raw": line}
        else:
            rec: Record = {"_line": n}
            rec.update(d)
            yield rec


def help_text() -> str:
    """One paragraph per format: name, title, fields with types, and the reference."""
    out = ["zeek: Zeek TSV logs. Fields: the #fields header's names, typed by its #types "
           f"(count/int/port integer, time/interval/double number, bool boolean, set/vector "
           f"list, - null, (empty) empty). See {headerlogs.ZEEK_DOC}",
           "w3c: W3C extended log (IIS, CloudFront). Fields: the #Fields: directive's names "
           f"(sc-status, sc-bytes, time-taken ... numbers). See {headerlogs.W3C_DOC}"]
    for f in FORMATS:
        names = ", ".join(f"{x.name} ({x.type})" for x in f.fields)
        if f.dynamic:
            names = (names + ", then " if names else "") + "the keys of each line"
        out.append(f"{f.name}: {f.title}. Fields: {names}. See {f.doc}")
    return "\n".join(out)
