"""What a pointer says about records: a parsed log's breakdown, and the counting calls an
agent's next question usually is.

A parsed log (its index holds ``info["records"]``, :mod:`scratch.index.logrecords`) is shown
by the counts that matter for it: HTTP status classes and methods for an access log (the
status under each format's own name: ``status``, ``sc-status``, ``elb_status_code``,
``http_status``), levels (syslog severities; CEF's 0-10 severity, higher worse) and the top
components otherwise (auditd's record type, Zeek's service), all from the index's facet
counts. Its next calls are a count-by, the rows of its errors (5xx, then 4xx; the most severe
level present; auditd's failed results) and a SQL query over its records, instead of a
generic error grep. Field names that are no plain identifiers are quoted where they are
spelled: ``@["sc-status"]`` in a filter, ``"sc-status"`` in SQL.

An array of objects gets a count-by of the field that reads most like a category
(``status.phase``, ``PRIORITY``, ``level``), when one of its keys does. Everything here is
read from the index's info: nothing runs a query at ingest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scratch.calls import Call, call

if TYPE_CHECKING:
    from scratch.answers.sources.items import Info, Item

import re

LEVEL_FIELDS = ("level", "levelname", "severity")
STATUS_FIELDS = ("status", "sc-status", "elb_status_code", "http_status", "status_code")
METHOD_FIELDS = ("method", "cs-method", "request_verb", "operation")
PATH_FIELDS = ("path", "cs-uri-stem", "request_url", "key", "uri")
# a format's own component, before the generic names (auditd's PATH records have a ``name``)
FORMAT_COMPONENTS = {"auditd": ("type",), "zeek": ("service", "proto", "qtype_name"),
                     "cef": ("name", "device_product")}
FORMAT_LEVELS = {"cef": ("severity",)}  # a CEF extension may have a level key too
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
COMPONENT_FIELDS = ("component", "tag", "app_name", "name", "logger", "caller", "module",
                    "file", "source", "logrecord")
TIME_FIELDS = ("time_local", "timestamp", "time", "asctime", "ts")
MESSAGE_FIELDS = ("content", "msg", "message", "request", "path")
SEVERE = ("FATAL", "CRITICAL", "PANIC", "SEVERE", "ERROR", "ERR", "error", "fatal", "crit",
          "WARN", "WARNING", "warning", "warn")
SYSLOG_SEVERITY = ("emerg", "alert", "crit", "err", "warning", "notice", "info", "debug")
CATEGORY_HINTS = ("phase", "status", "state", "level", "severity", "priority", "kind", "type",
                  "reason", "code", "method", "identifier", "unit", "component", "category",
                  "country", "region", "namespace")
TOP = 5


def _facet(rec: Info, name: str) -> list[tuple[Item, int]]:
    facet = (rec.get("facets") or {}).get(name)
    if not isinstance(facet, dict) or not facet.get("values"):
        return []
    return [(v, int(n)) for v, n in facet["values"] if v is not None]


def _first(rec: Info, names: tuple[str, ...]) -> str | None:
    return next((n for n in names if _facet(rec, n)), None)


def _field(rec: Info, names: tuple[str, ...]) -> str | None:
    have = {f["name"] for f in rec.get("fields") or []}
    return next((n for n in names if n in have), None)


def _at(name: str) -> str:
    """The filter path of a field: ``@.status``, ``@["sc-status"]``."""
    return f"@.{name}" if _PLAIN.match(name) else '@["' + name + '"]'


def _col(name: str) -> str:
    """The SQL column of a field: ``status``, ``"sc-status"``."""
    return name if _PLAIN.match(name) else '"' + name + '"'


def _status(rec: Info) -> str | None:
    """The field that holds HTTP status codes (integers), if the log has one."""
    for name in STATUS_FIELDS:
        values = _facet(rec, name)
        if values and any(isinstance(v, int) and not isinstance(v, bool) for v, _ in values):
            return name
    return None


def _components(rec: Info) -> tuple[str, ...]:
    return FORMAT_COMPONENTS.get(str(rec.get("format")), ()) + COMPONENT_FIELDS


def _levels(rec: Info) -> tuple[str, ...]:
    return FORMAT_LEVELS.get(str(rec.get("format")), LEVEL_FIELDS)


def _syslog(rec: Info) -> bool:
    """Is ``severity`` the syslog one (0 emergency .. 7 debug)? CEF's is 0-10, higher worse."""
    return rec.get("format") != "cef"


def status_classes(values: list[tuple[Item, int]]) -> list[tuple[str, int]]:
    out: dict[str, int] = {}
    for v, n in values:
        if isinstance(v, int):
            key = f"{v // 100}xx"
            out[key] = out.get(key, 0) + n
    return sorted(out.items())


def breakdown(rec: Info) -> list[tuple[str, list[tuple[Item, int]], int]]:
    """``[(label, [(value, count), ...], values left out), ...]`` for the pointer."""
    out: list[tuple[str, list[tuple[Item, int]], int]] = []
    status_field = _status(rec)
    if status_field is not None:
        out.append((status_field, list(status_classes(_facet(rec, status_field))), 0))
        method_field = _first(rec, METHOD_FIELDS)
        if method_field is not None:
            method = _facet(rec, method_field)
            out.append((method_field, method[:TOP], max(0, len(method) - TOP)))
        return out
    level = _first(rec, _levels(rec))
    if level is not None:
        values = _facet(rec, level)
        if level == "severity" and _syslog(rec):
            values = [(f"{v} {SYSLOG_SEVERITY[v]}" if isinstance(v, int) and 0 <= v < 8
                       else v, n) for v, n in values]
        out.append((level, values, 0))
    component = _first(rec, _components(rec))
    if component is not None:
        values = _facet(rec, component)
        out.append((component, values[:TOP], max(0, len(values) - TOP)))
    return out


def _errors(rec: Info) -> tuple[str, str] | None:
    """(the --where of the log's most severe records, the field it is about), or None."""
    status_field = _status(rec)
    if status_field is not None:
        codes = {v for v, _ in _facet(rec, status_field) if isinstance(v, int)}
        for floor in (500, 400):
            if any(c >= floor for c in codes):
                return f"{_at(status_field)} >= {floor}", status_field
        return None
    if rec.get("format") == "auditd":
        for field, word in (("res", "failed"), ("success", "no")):
            if word in [v for v, _ in _facet(rec, field)]:
                return f'@.{field} == "{word}"', field
        return None
    level = _first(rec, _levels(rec))
    if level is None:
        return None
    values = [v for v, _ in _facet(rec, level)]
    if level == "severity" and not _syslog(rec):
        high = [v for v in values if isinstance(v, int) and v >= 7]
        return ("@.severity >= 7", level) if high else None
    if level == "severity":
        worst = min((v for v in values if isinstance(v, int)), default=None)
        return (f"@.severity <= {max(3, worst)}", level) if worst is not None and worst <= 4 \
            else None
    for word in SEVERE:
        if word in values:
            return f'@.{level} == "{word}"', level
    return None


def log_calls(ref: str, rec: Info) -> list[Call]:
    """The next calls for a parsed log: count-by, its errors' rows, a SQL query."""
    out: list[Call] = []
    status_field = _status(rec)
    by = status_field or (_first(rec, _levels(rec)) or _first(rec, _components(rec)))
    if by is not None:
        out.append(call("iterate-over", ref=ref, path=".", count_by=[by]))
    errors = _errors(rec)
    access = status_field is not None
    fields = [f for f in (_field(rec, TIME_FIELDS), errors[1] if errors else None,
                          None if access else _field(rec, _components(rec)),
                          _field(rec, PATH_FIELDS if access else MESSAGE_FIELDS)) if f]
    if errors is not None and fields:
        out.append(call("iterate-over", ref=ref, path=".", fields=list(dict.fromkeys(fields)),
                        where=errors[0], limit=20))
    out.append(sql_call(ref, rec, errors))
    return out


def sql_call(ref: str, rec: Info, errors: tuple[str, str] | None) -> Call:
    """A GROUP BY over the log's records where one reads naturally, else --describe."""
    status_field = _status(rec)
    path_field = _field(rec, PATH_FIELDS)
    if status_field is not None and path_field is not None:
        floor = errors[0].rsplit(" ", 1)[-1] if errors else "400"
        path, status = _col(path_field), _col(status_field)
        return call("sql", ref=ref, query=f"SELECT {path}, count(*) AS n FROM entry WHERE "
                    f"{status} >= {floor} GROUP BY {path} ORDER BY n DESC LIMIT 10")
    component = _first(rec, _components(rec))
    level = _first(rec, _levels(rec))
    if component is not None and level is not None:
        return call("sql", ref=ref, query=f"SELECT {_col(level)}, {_col(component)}, count(*) "
                    f"AS n FROM entry GROUP BY ALL ORDER BY n DESC LIMIT 10")
    if component is not None and rec.get("format") in FORMAT_COMPONENTS:
        return call("sql", ref=ref, query=f"SELECT {_col(component)}, count(*) AS n FROM "
                    f"entry GROUP BY ALL ORDER BY n DESC LIMIT 10")
    return call("sql", ref=ref, describe=True)


def category_field(items: Info) -> str | None:
    """The key of an array's items that reads most like a category (see the module)."""
    keys = items.get("keys") or []
    total = items.get("scanned") or items.get("count") or 1
    best: tuple[int, int, str] | None = None
    for pos, k in enumerate(keys):
        types = set((k.get("types") or {}).keys())
        if not types or types - {"string", "integer", "boolean", "null"}:
            continue
        if (k.get("max_length") or 0) > 40 or k.get("count", 0) * 2 < total:
            continue
        last = k["key"].rsplit(".", 1)[-1].strip('"').lower()
        hint = next((i for i, h in enumerate(CATEGORY_HINTS) if h in last), None)
        if hint is None:
            continue
        exact = 0 if last in CATEGORY_HINTS else 1
        score = (exact * 100 + hint, pos, k["key"])
        if best is None or score < best:
            best = score
    return best[2] if best is not None else None


def csv_category(header: list[str], column_info: list[Info]) -> str | None:
    """A CSV column that reads like a category (a string column named like one)."""
    types = {c.get("name"): c.get("type") for c in column_info or []}
    for hint in CATEGORY_HINTS:
        for name in header:
            if isinstance(name, str) and hint in name.lower() and \
                    types.get(name) in (None, "string", "integer", "boolean"):
                return name
    return None
