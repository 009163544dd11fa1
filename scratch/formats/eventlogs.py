"""Security event lines: ArcSight CEF and Linux audit (auditd) records.

CEF (ArcSight Common Event Format, "Implementing ArcSight CEF" revision 25):
``[prefix ]CEF:Version|Device Vendor|Device Product|Device Version|Device Event Class ID|Name|
Severity|Extension``. The seven header fields are ``version`` (integer), ``device_vendor``,
``device_product``, ``device_version``, ``device_event_class_id``, ``name`` and ``severity``
(an integer 0-10 when written so, else the word: Low, Medium, High, Very-High); ``prefix`` is
what comes before ``CEF:`` (a syslog header), null when nothing does. In the header ``\\|``
and ``\\\\`` are a pipe and a backslash. The extension is ``key=value`` pairs separated by
spaces; a value runs to the next `` key=`` (values hold spaces), and ``\\=``, ``\\\\``, ``\\n``
and ``\\r`` in it are an equals sign, a backslash, a newline and a carriage return (any other
backslash stays as written). Its keys are fields as named (``src``, ``spt``, ``cs1Label``
...); the keys CEF types Integer (``spt``, ``dpt``, ``cnt``, ``in``, ``out``, ``cn1`` ...)
hold integers when written as one, the floating-point ones (``cfp1`` ...) numbers. An
extension key that repeats a header field's name is kept as ``ext.<key>``.

auditd (``/var/log/audit/audit.log``, the kernel's and auditd's record format):
``[node=NODE ]type=TYPE msg=audit(TIME:SERIAL): key=value ...``. Fields ``node`` (only when
the line has it), ``type``, ``time`` (epoch seconds, a number) and ``serial`` (integer), then
the record's keys as named. A value in double quotes is a string without the quotes; the
single-quoted ``msg='...'`` of user-space records holds more pairs, which become fields too
(a key already seen is kept as ``msg.<key>``), and its words that are no pair (``pam:``,
``changing system time``) become ``text``. Unquoted values stay strings as written (auditd
writes many in hex: ``a0``, ``saddr``, ``proctitle``), except the keys auditd documents as
decimal numbers (``pid``, ``uid``, ``auid``, ``ses``, ``syscall``, ``exit``, ``items`` ...),
which are integers when written as one. Which keys a line has depends on its type: the format
is dynamic, like logfmt.
"""

from __future__ import annotations

import re

from scratch.formats.logbase import Field, LogFormat, Record
from scratch.jsonvalues import JSON

# ----------------------------------------------------------------------------------- CEF

CEF_DOC = ("https://community.microfocus.com/cfs-file/__key/communityserver-wikis-components-"
           "files/00-00-00-00-23/3731.CommonEventFormatV25.pdf")
_CEF_HEAD = re.compile(r"CEF:(\d+)\|((?:[^|\\]|\\.)*)\|((?:[^|\\]|\\.)*)\|((?:[^|\\]|\\.)*)\|"
                       r"((?:[^|\\]|\\.)*)\|((?:[^|\\]|\\.)*)\|((?:[^|\\]|\\.)*)\|")
_CEF_HEAD_ESC = re.compile(r"\\([|\\])")
_CEF_EXT_KEY = re.compile(r"(?:\A|(?<= ))([A-Za-z0-9_.\-\[\]]+)=")
_CEF_EXT_ESC = re.compile(r"\\([=\\nr])")
_CEF_ESC = {"=": "=", "\\": "\\", "n": "\n", "r": "\r"}
_CEF_INT_KEYS = frozenset({"cnt", "cn1", "cn2", "cn3", "dpid", "dpt", "dvcpid", "fsize", "in",
                           "oldFileSize", "out", "spid", "spt", "type", "slat", "slong"})
_CEF_NUM_KEYS = frozenset({"cfp1", "cfp2", "cfp3", "cfp4"})
_DECIMAL = re.compile(r"-?\d+\Z")
_FLOAT = re.compile(r"-?\d+(?:\.\d+)?\Z")
_CEF_HEADER_FIELDS = ("prefix", "version", "device_vendor", "device_product",
                      "device_version", "device_event_class_id", "name", "severity")


def _cef_head_text(text: str) -> str:
    return _CEF_HEAD_ESC.sub(r"\1", text) if "\\" in text else text


def _cef_value(key: str, raw: str) -> str | int | float:
    text = _CEF_EXT_ESC.sub(lambda m: _CEF_ESC[m.group(1)], raw) if "\\" in raw else raw
    if key in _CEF_INT_KEYS and _DECIMAL.match(text):
        return int(text)
    if key in _CEF_NUM_KEYS and _FLOAT.match(text):
        return float(text) if "." in text else int(text)
    return text


def _cef(line: str) -> Record | None:
    at = line.find("CEF:")
    if at < 0:
        return None
    m = _CEF_HEAD.match(line, at)
    if m is None:
        return None
    version, vendor, product, dversion, class_id, name, severity = m.groups()
    sev = severity.strip()
    d: Record = {
        "prefix": line[:at].strip() or None, "version": int(version),
        "device_vendor": _cef_head_text(vendor), "device_product": _cef_head_text(product),
        "device_version": _cef_head_text(dversion),
        "device_event_class_id": _cef_head_text(class_id), "name": _cef_head_text(name),
        "severity": int(sev) if _DECIMAL.match(sev) else _cef_head_text(severity)}
    ext = line[m.end():]
    keys = list(_CEF_EXT_KEY.finditer(ext))
    if not keys and ext.strip():
        return None  # text that is no extension
    if keys and ext[:keys[0].start()].strip():
        return None
    for i, km in enumerate(keys):
        end = keys[i + 1].start() if i + 1 < len(keys) else len(ext)
        key = km.group(1)
        value = _cef_value(key, ext[km.end():end].rstrip(" "))
        if key in d:
            key = "ext." + key
        d[key] = value
    return d


CEF = LogFormat(
    "cef", "ArcSight Common Event Format (CEF): header fields and the extension's keys",
    CEF_DOC,
    (Field("prefix", "string", "what precedes CEF: (a syslog header), null if nothing"),
     Field("version", "integer", "CEF version"),
     Field("device_vendor", "string", "Device Vendor"),
     Field("device_product", "string", "Device Product"),
     Field("device_version", "string", "Device Version"),
     Field("device_event_class_id", "string", "Device Event Class ID (signature id)"),
     Field("name", "string", "Name: the event, human-readable"),
     Field("severity", "integer", "Severity: 0-10, or Low/Medium/High/Very-High")),
    _cef, "CEF:0|Security|threatmanager|1.0|100|worm successfully stopped|10|src=10.0.0.1 "
    "dst=2.1.2.2 spt=1232", dynamic=True)

# -------------------------------------------------------------------------------- auditd

AUDIT_DOC = ("https://github.com/linux-audit/audit-documentation/wiki/"
             "SPEC-Writing-Good-Events")
_AUDIT_HEAD = re.compile(r"(?:node=(\S+) )?type=([A-Za-z0-9_]+) msg=audit\((\d+(?:\.\d+)?):"
                         r"(\d+)\):?")
_AUDIT_PAIR = re.compile(r"""([A-Za-z0-9_\-]+)=("[^"]*"|'[^']*'|\S*)""")
_AUDIT_PAIRS = re.compile(r""" *+(?:[A-Za-z0-9_\-]++=(?:"[^"]*+"|'[^']*+'|\S*+)(?: ++|\Z))*+""")
_AUDIT_INT_KEYS = frozenset({
    "pid", "ppid", "uid", "gid", "auid", "euid", "suid", "fsuid", "egid", "sgid", "fsgid",
    "ses", "syscall", "exit", "items", "item", "argc", "ouid", "ogid", "inode", "old-auid",
    "old-ses", "spid", "rport", "lport", "ksize", "id", "entries", "family", "list", "sig",
    "old_prom", "prom", "obj_uid", "obj_gid", "opid", "oauid", "oses", "nargs", "len",
    "old-level", "new-level", "fver", "res_gid", "grp", "new_gid", "old_gid", "audit_pid",
    "old", "audit_enabled", "audit_failure", "backlog_limit", "rate_limit", "old_val",
    "new_val", "tty_pid", "flags", "uid_count", "saddr_fam"})


def _audit_put(d: Record, key: str, value: JSON, inner: bool) -> None:
    """``d[key] = value``; a key already there is kept as ``msg.<key>`` (from inside msg='')
    or ``<key>.2``, ``<key>.3`` ... so no value is lost."""
    if key in d:
        base = f"msg.{key}" if inner else key
        key = base
        n = 1
        while key in d:
            n += 1
            key = f"{base}.{n}"
    d[key] = value


def _audit_value(key: str, raw: str) -> str | int:
    if len(raw) >= 2 and raw[0] == '"' and raw[-1] == '"':
        return raw[1:-1]
    if key in _AUDIT_INT_KEYS and _DECIMAL.match(raw):
        return int(raw)
    return raw


def _audit_pairs(d: Record, body: str, inner: bool) -> None:
    if _AUDIT_PAIRS.fullmatch(body) is not None:  # the usual line: pairs only (one C pass)
        for key, raw in _AUDIT_PAIR.findall(body):
            if not inner and len(raw) >= 2 and raw[0] == "'" and raw[-1] == "'":
                _audit_pairs(d, raw[1:-1], True)
            else:
                _audit_put(d, key, _audit_value(key, raw), inner)
        return
    pos = 0
    words: list[str] = []
    for m in _AUDIT_PAIR.finditer(body):
        if m.start() > 0 and not body[m.start() - 1].isspace():
            continue  # key=value inside a word: not a pair
        gap = body[pos:m.start()]
        if gap.strip():
            words.append(gap.strip())
        pos = m.end()
        key, raw = m.groups()
        if not inner and len(raw) >= 2 and raw[0] == "'" and raw[-1] == "'":
            _audit_pairs(d, raw[1:-1], True)
            continue
        _audit_put(d, key, _audit_value(key, raw), inner)
    rest = body[pos:].strip()
    if rest:
        words.append(rest)
    if words:
        _audit_put(d, "text", " ".join(words), inner)


def _auditd(line: str) -> Record | None:
    m = _AUDIT_HEAD.match(line)
    if m is None:
        return None
    node, rtype, ts, serial = m.groups()
    d: Record = {}
    if node is not None:
        d["node"] = node
    d["type"] = rtype
    d["time"] = float(ts)
    d["serial"] = int(serial)
    _audit_pairs(d, line[m.end():], False)
    return d


AUDITD = LogFormat(
    "auditd", "Linux audit records (auditd): type=... msg=audit(TIME:SERIAL): key=value ...",
    AUDIT_DOC,
    (Field("type", "string", "record type (SYSCALL, PATH, USER_LOGIN ...)", facet=True),
     Field("time", "number", "event time, epoch seconds"),
     Field("serial", "integer", "event serial: records of one event share time and serial")),
    _auditd, 'type=SYSCALL msg=audit(1364481363.243:24287): arch=c000003e syscall=2 '
    'success=no exit=-13 pid=3538 auid=1000 uid=1000 comm="cat" exe="/bin/cat"', dynamic=True)

FORMATS: tuple[LogFormat, ...] = (CEF, AUDITD)
