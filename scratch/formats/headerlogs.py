"""Log formats whose fields a header declares: Zeek TSV logs and the W3C extended log format.

Each family has ``bind(lines) -> LogFormat | None`` (the format the header among ``lines``
declares, or None when there is no such header) and ``from_layout(layout) -> LogFormat`` (the
same format again from ``LogFormat.layout``, the JSON the index keeps).

Zeek TSV (https://docs.zeek.org/en/master/log-formats.html#zeek-tsv-format-logs): ``#separator
\\x09``, ``#set_separator``, ``#empty_field``, ``#unset_field``, ``#path``, ``#fields`` and
``#types`` directives, then one record a line. Values by type: ``count``, ``int`` and ``port``
are integers, ``time``, ``interval`` and ``double`` numbers, ``bool`` (``T``/``F``) booleans,
``set[..]``, ``vector[..]`` and ``table[..]`` lists of their element type; every other type
(string, addr, subnet, enum, pattern) a string as written (Zeek's ``\\xHH`` escapes are kept).
The unset field (``-``) is null, the empty field (``(empty)``) an empty string, or an empty
list for a container. A line with the wrong number of fields, or a value its type cannot read,
stays a raw line.

W3C extended (https://www.w3.org/TR/WD-logfile.html; IIS, CloudFront, Oracle Web Cache):
``#Version:``, ``#Fields:`` (the names, separated by whitespace), ``#Software:``, ``#Date:``
... directives, then records of whitespace-separated values (tab-separated when the line has a
tab, as CloudFront writes them; a tab after the last value is no value); a value in double
quotes may hold spaces (a doubled quote is one quote). Fields keep the header's names
(``cs(User-Agent)``, ``sc-status``). The identifiers the specification and IIS/CloudFront
document as numbers are typed (``sc-status``, ``sc-bytes``, ``time-taken`` ...): ``-`` there
is null; every other field is a string as written (``-``
included, as in the access logs).

A later header that names other fields (IIS after a logging change, Zeek logs of two kinds
concatenated) starts a new part of the file, read with that header's fields:
:class:`Segments` follows the directives line by line, and the index keeps each part's first
line and layout.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import cast

from scratch.formats.logbase import Field, Layout, LogFormat, Row, as_int, as_number, fixed
from scratch.jsonvalues import JSON

# ----------------------------------------------------------------------------------- Zeek

ZEEK_DOC = "https://docs.zeek.org/en/master/log-formats.html#zeek-tsv-format-logs"
_ZEEK_INT = frozenset({"count", "int", "port", "counter"})
_ZEEK_NUM = frozenset({"time", "interval", "double"})
_ZEEK_CONTAINER = re.compile(r"(?:set|vector|table)\[(.+)\]\Z")
# fields with few values, worth counting at index time (besides every enum and bool); the
# index counts their values jointly, so none with many (ports, hosts) is among them
_ZEEK_FACETS = frozenset({"proto", "service", "conn_state", "method", "status_code",
                          "qtype_name", "rcode_name", "version", "source", "level"})


def _zeek_type(ztype: str) -> str:
    if ztype in _ZEEK_INT:
        return "integer"
    if ztype in _ZEEK_NUM:
        return "number"
    if ztype == "bool":
        return "boolean"
    if _ZEEK_CONTAINER.match(ztype):
        return "array"
    return "string"


def _unescape_directive(text: str) -> str:
    """``\\x09`` -> a tab: how ``#separator`` writes its value."""
    return re.sub(r"\\x([0-9a-fA-F]{2})", lambda m: chr(int(m.group(1), 16)), text)


_BOOLS = {"T": True, "F": False}
_DIGITS = re.compile(r"-?\d+\Z")


def _zeek_int(v: str) -> int:
    # int() alone would take " 1", "+1" and "1_0", which Zeek never writes for a count
    if _DIGITS.match(v) is None:
        raise ValueError(v)
    return int(v)


Reader = Callable[[str], JSON]  # text -> value (ValueError or KeyError if it cannot read it)


def _zeek_scalar(kind: str) -> Reader | None:
    """The reader of one Zeek scalar type: text -> value (ValueError or KeyError if it cannot
    read it); None for a string, kept as written."""
    if kind == "integer":
        return _zeek_int
    if kind == "number":
        return float
    if kind == "boolean":
        return _BOOLS.__getitem__
    return None


def _zeek_container(elem: Reader | None, set_sep: str, unset: str, empty: str
                    ) -> Callable[[str], Sequence[JSON]]:
    def read(v: str) -> Sequence[JSON]:
        if v == empty:
            return []
        parts = v.split(set_sep)
        return parts if elem is None else [None if p == unset else elem(p) for p in parts]
    return read


def zeek_from_layout(layout: Layout) -> LogFormat:
    names: list[str] = [str(x) for x in cast("list[JSON]", layout["fields"])]
    ztypes: list[str] = [str(x) for x in cast("list[JSON]", layout["types"])]
    sep = str(layout.get("separator", "\t"))
    set_sep = str(layout.get("set_separator", ","))
    unset = str(layout.get("unset_field", "-"))
    empty = str(layout.get("empty_field", "(empty)"))
    path = layout.get("path")
    width = len(names)
    fields = []
    plain: list[int] = []  # string columns: only the unset and empty marks change
    typed: list[tuple[int, Reader]] = []  # (column, reader of a set value)
    for i, (name, zt) in enumerate(zip(names, ztypes, strict=True)):
        kind = _zeek_type(zt)
        facet = zt in ("enum", "bool") or (name in _ZEEK_FACETS and kind != "array")
        fields.append(Field(name, kind, f"Zeek {zt}", facet=facet,
                            status=name == "status_code" and kind == "integer"))
        m = _ZEEK_CONTAINER.match(zt)
        if m is not None:
            elem = _zeek_scalar(_zeek_type(m.group(1)))
            typed.append((i, _zeek_container(elem, set_sep, unset, empty)))
        elif (scalar := _zeek_scalar(kind)) is not None:
            typed.append((i, scalar))
        else:
            plain.append(i)

    def row(line: str) -> Row | None:
        texts = line.split(sep)
        if len(texts) != width:
            return None
        # one list, read as text and written with values: each column is read once, before
        # it is written (str is JSON; the ignore is list's invariance, free where a cast
        # call would cost every line)
        values: list[JSON] = texts  # type: ignore[assignment]
        for i in plain:
            v = texts[i]
            if v == unset:
                values[i] = None
            elif v == empty:
                values[i] = ""
        try:
            for i, read in typed:
                v = texts[i]
                values[i] = None if v == unset else read(v)
        except (ValueError, KeyError):
            return None
        return tuple(values)

    title = f"Zeek {path} log (TSV)" if path else "Zeek log (TSV)"
    return fixed("zeek", title, ZEEK_DOC, tuple(fields), row, "", comment="#",
                 layout=dict(layout), nulls=f"{unset!r} (Zeek's unset field) is NULL, "
                                           f"{empty!r} an empty string or list")


def zeek_bind(lines: list[str]) -> LogFormat | None:
    """The Zeek format the first ``#fields``/``#types`` header among ``lines`` declares."""
    layout: Layout = {}
    sep = "\t"
    seen_separator = False
    for line in lines:
        if not line.startswith("#"):
            if "fields" in layout:
                break
            continue
        if line.startswith("#separator "):
            sep = _unescape_directive(line[len("#separator "):])
            seen_separator = True
            layout["separator"] = sep
            continue
        if not seen_separator:
            continue
        key, _, value = line[1:].partition(sep)
        if key in ("set_separator", "empty_field", "unset_field", "path"):
            layout[key] = value
        elif key in ("fields", "types"):
            if key in layout:
                break  # a second header: the first one rules
            layout[key] = value.split(sep)
    if not seen_separator or "fields" not in layout or "types" not in layout:
        return None
    names, types = cast("list[str]", layout["fields"]), cast("list[str]", layout["types"])
    if len(names) != len(types) or len(set(names)) != len(names):  # split above: lists
        return None
    return zeek_from_layout(layout)


# ------------------------------------------------------------------------------------ W3C

W3C_DOC = "https://www.w3.org/TR/WD-logfile.html"
_W3C_INT = frozenset({"sc-status", "sc-substatus", "sc-win32-status", "sc-bytes", "cs-bytes",
                      "s-port", "c-port", "bytes", "sc-content-len", "sc-range-start",
                      "sc-range-end", "cached", "status"})
_W3C_NUM = frozenset({"time-taken", "time-to-first-byte"})
_W3C_FACETS = frozenset({"cs-method", "sc-status", "sc-substatus", "sc-win32-status", "s-port",
                         "s-ip", "s-sitename", "s-computername", "cs-version", "cs-protocol",
                         "cs-protocol-version", "x-edge-location", "x-edge-result-type",
                         "x-edge-response-result-type", "x-edge-detailed-result-type",
                         "ssl-protocol", "c-ip-version", "status"})
_W3C_TOKEN = re.compile(r'"((?:[^"]|"")*)"(?=\s|\Z)|(\S+)')


def _w3c_type(name: str) -> str:
    if name in _W3C_INT:
        return "integer"
    if name in _W3C_NUM:
        return "number"
    return "string"


def _w3c_tokens(line: str) -> list[str] | None:
    if "\t" in line:
        return line.split("\t")
    if '"' not in line:
        return line.split()  # IIS: no quoted values (spaces are written as +)
    out = []
    pos = 0
    n = len(line)
    while pos < n:
        while pos < n and line[pos] in " \t":
            pos += 1
        if pos >= n:
            break
        m = _W3C_TOKEN.match(line, pos)
        if m is None:
            return None
        quoted, bare = m.groups()
        out.append(quoted.replace('""', '"') if quoted is not None else bare)
        pos = m.end()
    return out


def w3c_from_layout(layout: Layout) -> LogFormat:
    names: list[str] = [str(x) for x in cast("list[JSON]", layout["fields"])]
    width = len(names)
    fields = tuple(Field(n, _w3c_type(n), "W3C field", facet=n in _W3C_FACETS,
                         status=n in ("sc-status", "status")) for n in names)
    ints = [i for i, f in enumerate(fields) if f.type == "integer"]
    nums = [i for i, f in enumerate(fields) if f.type == "number"]
    software = layout.get("software")

    def row(line: str) -> Row | None:
        if line.startswith("#"):
            return None
        texts = _w3c_tokens(line)
        if texts is not None and len(texts) == width + 1 and texts[-1] == "":
            texts.pop()  # a separator after the last value
        if texts is None or len(texts) != width:
            return None
        # one list, read as text and written with values (see zeek_from_layout's row)
        values: list[JSON] = texts  # type: ignore[assignment]
        try:
            for i in ints:
                v = texts[i]
                values[i] = None if v == "-" else as_int(v)
            for i in nums:
                v = texts[i]
                values[i] = None if v == "-" else as_number(v)
        except ValueError:
            return None
        return tuple(values)

    title = "W3C extended log" + (f" ({software})" if software else "")
    numbers = ", ".join(f.name for f in fields if f.type in ("integer", "number"))
    return fixed("w3c", title, W3C_DOC, fields, row, "", comment="#", layout=dict(layout),
                 nulls=f"'-' is NULL in a number field ({numbers}), text elsewhere"
                 if numbers else "")


def w3c_bind(lines: list[str]) -> LogFormat | None:
    """The W3C format the first ``#Fields:`` directive among ``lines`` declares."""
    layout: Layout = {}
    for line in lines:
        if not line.startswith("#"):
            if "fields" in layout:
                break
            continue
        key, colon, value = line[1:].partition(":")
        if not colon:
            continue
        key = key.strip().lower()
        if key == "fields":
            if "fields" in layout:
                break
            names = value.split()
            if not names or len(set(names)) != len(names):
                return None
            layout["fields"] = names
        elif key == "software" and "software" not in layout:
            layout["software"] = value.strip()
    if "fields" not in layout:
        return None
    return w3c_from_layout(layout)


def fields_directive(fmt: LogFormat, line: str) -> list[str] | None:
    """The field names a directive line of ``fmt``'s family declares (None when the line is
    no ``#fields``/``#Fields:`` directive): how the index notices a header that changes."""
    if fmt.name == "zeek" and fmt.layout is not None:
        sep = str(fmt.layout.get("separator", "\t"))
        if line.startswith("#fields" + sep):
            return line.split(sep)[1:]
        return None
    if fmt.name == "w3c" and line[:8].lower() == "#fields:":
        return line[8:].split()
    return None


class Segments:
    """The format in effect line by line in a file of a header format: feed it every
    directive line in order (``directive(n, line)``); ``fmt`` is then the format of the record
    lines that follow, and ``changes`` lists ``(line, layout)`` where a header named other
    fields (for Zeek the ``#fields`` line, which its ``#types`` line completes)."""

    def __init__(self, fmt: LogFormat) -> None:
        self.fmt = fmt
        self.changes: list[tuple[int, Layout]] = []
        self._pending: tuple[int, list[str]] | None = None
        self._path: str | None = None  # Zeek's #path of the header being read

    def _fields(self) -> list[str]:
        layout = self.fmt.layout or {}
        return [str(x) for x in cast("list[JSON]", layout.get("fields") or [])]

    def directive(self, n: int, line: str) -> None:
        layout = dict(self.fmt.layout or {})
        names = fields_directive(self.fmt, line)
        if self.fmt.name == "zeek":
            sep = str(layout.get("separator", "\t"))
            if names is not None:
                self._pending = (n, names) if names != self._fields() else None
            elif line.startswith("#path" + sep):
                self._path = line.split(sep, 1)[1]
            elif self._pending is not None and line.startswith("#types" + sep):
                at, pending = self._pending
                self._pending = None
                types = line.split(sep)[1:]
                if len(types) == len(pending) and len(set(pending)) == len(pending):
                    if self._path is not None:
                        layout["path"] = self._path
                    self.fmt = zeek_from_layout({**layout, "fields": pending, "types": types})
                    self.changes.append((at, dict(self.fmt.layout or {})))
            return
        if names is not None and names != self._fields() and names and len(set(names)) == len(
                names):
            self.fmt = w3c_from_layout({**layout, "fields": names})
            self.changes.append((n, dict(self.fmt.layout or {})))


Binder = Callable[[list[str]], "LogFormat | None"]
Rebuilder = Callable[[Layout], LogFormat]

# (name, bind, from_layout), tried in this order by detection
FAMILIES: tuple[tuple[str, Binder, Rebuilder], ...] = (("zeek", zeek_bind, zeek_from_layout),
                                                       ("w3c", w3c_bind, w3c_from_layout))
