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

import re
from typing import TYPE_CHECKING

from scratch.calls import Call, call
from scratch.words import plural

if TYPE_CHECKING:
    from scratch.answers.rows.items import Info, Item

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
TEMPLATES = "templates"  # the records format of a log read by its mined line templates
EXACT_CODES = 6  # an access log with at most this many status codes shows them all


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


def status_codes(values: list[tuple[Item, int]], field: str = "status"
                 ) -> list[tuple[str, list[tuple[Item, int]], int]]:
    """An access log's status rows (labelled by its ``field``: ``status``, ``sc-status``,
    ``elb_status_code``): the exact codes, commonest first, when there are at most
    :data:`EXACT_CODES` of them; else the classes, and the error codes (400 and up) apart."""
    codes = sorted(((v, n) for v, n in values if isinstance(v, int)),
                   key=lambda vn: (-vn[1], vn[0]))
    if len(codes) <= EXACT_CODES:
        return [(field, list(codes), 0)]
    rows: list[tuple[str, list[tuple[Item, int]], int]] = [
        (field, list(status_classes(values)), 0)]
    errors = [(v, n) for v, n in codes if isinstance(v, int) and v >= 400]
    if errors:
        rows.append((f"{field} >= 400", errors[:TOP], max(0, len(errors) - TOP)))
    return rows


def _templates(rec: Info) -> list[tuple[Item, int]]:
    """A mined log's templates, the most lines first: ``[({"id", "text"}, lines), ...]``."""
    if rec.get("format") != TEMPLATES:
        return []
    return [(v, n) for v, n in _facet(rec, "_template") if isinstance(v, dict)]


def breakdown(rec: Info) -> list[tuple[str, list[tuple[Item, int]], int]]:
    """``[(label, [(value, count), ...], values left out), ...]`` for the pointer."""
    out: list[tuple[str, list[tuple[Item, int]], int]] = []
    if rec.get("format") == TEMPLATES:  # a mined log: its commonest templates
        templates = _templates(rec)
        return [("templates", templates[:TOP], max(0, len(templates) - TOP))] \
            if templates else []
    status_field = _status(rec)
    if status_field is not None:
        out += status_codes(_facet(rec, status_field), status_field)
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


def template_calls(ref: str, rec: Info) -> list[Call]:
    """The next calls for a mined log: the count by template, the rows of its commonest
    template with variable parts (its timestamp and parts), and per day the lines of each
    template when its timestamps are ISO 8601 (else the tables' columns)."""
    out = [call("iterate-over", ref=ref, path=".", count_by=["_template"])]
    timed = any(f.get("name") == "timestamp" for f in rec.get("fields") or [])
    for value, _ in _templates(rec):
        text = str(value.get("text") or "")
        n = text.count("<*>")
        if n:
            fields = (["timestamp"] if timed else []) + [f"p{k}" for k in range(1, min(n, 4) + 1)]
            out.append(call("iterate-over", ref=ref, path=".", fields=fields,
                            where=f"@._template.id == {value.get('id')}", limit=20))
            break
    if timed and rec.get("timestamp_format") == "iso8601":
        out.append(call("sql", ref=ref, query="SELECT substr(CAST(timestamp AS VARCHAR), 1, 10) "
                        "AS day, _template.id AS template, count(*) AS n FROM entry "
                        "GROUP BY ALL ORDER BY day, n DESC LIMIT 20"))
    else:
        out.append(call("sql", ref=ref, describe=True))
    return out


def log_calls(ref: str, rec: Info) -> list[Call]:
    """The next calls for a parsed log: count-by, its errors' rows, a SQL query."""
    if rec.get("format") == TEMPLATES:
        return template_calls(ref, rec)
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


def category_field(items: Info, besides: str | None = None) -> str | None:
    """The key of an array's items that reads most like a category (see the module), other
    than ``besides``."""
    keys = items.get("keys") or []
    total = items.get("scanned") or items.get("count") or 1
    best: tuple[int, int, str] | None = None
    for pos, k in enumerate(keys):
        if k["key"] == besides:
            continue
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


# ------------------------------------------------------------------------------- kubernetes


def _counts(values: list[list[Item]], top: int, word: str = "") -> str:
    shown = values[:top]
    text = ", ".join(f"{v} {word}{n:,}" for v, n in shown)
    return text + (f", … {len(values) - len(shown)} more" if len(values) > len(shown) else "")


def kube_lines(sig: Info, detail: int) -> list[str]:
    """What stands out in Kubernetes objects (:mod:`scratch.index.kube`), for the pointer and
    ``summarize``; ``detail`` 1 shows fewer values per count."""
    top = 6 if detail >= 2 else 3
    kind = f" ({sig['kind']})" if sig.get("kind") else ""
    objects, pods = sig.get("objects", 0), sig.get("pods", 0)
    what = (plural(pods, "pod", grouped=True) if pods == objects else
            plural(objects, "object", grouped=True)
            + (f", {plural(pods, 'pod', grouped=True)}" if pods else ""))
    phases = f" ({_counts(sig['phases'], top)})" if sig.get("phases") else ""
    out = [f"kubernetes{kind}: {what}{phases}"]
    restarts = sig.get("restarts")
    if isinstance(restarts, dict):
        name = f" {restarts['name']}" if restarts.get("name") else ""
        of = plural(sig["pods"], "pod", grouped=True)
        out.append(f"  restarts: {restarts['pods']:,} of {of}, "
                   f"{restarts['total']:,} in all; most {restarts['max']:,}: "
                   f"{restarts['item']}{name}")
    elif sig.get("pods"):
        out.append("  restarts: none")
    if sig.get("exit_codes"):
        out.append("  exit codes (not 0): " + _counts(sig["exit_codes"], top, "×"))
    if sig.get("reasons"):
        out.append("  reasons: " + _counts(sig["reasons"], top))
    if sig.get("not_true"):
        out.append("  conditions not True: " + _counts(sig["not_true"], top))
    if sig.get("events"):
        warn = (f"; Warning reasons: {_counts(sig['warnings'], top)}"
                if sig.get("warnings") else "")
        out.append("  events: " + _counts(sig["events"], top) + warn)
    short = sig.get("short")
    if isinstance(short, list) and len(short) == 2:
        out.append(f"  short of replicas: {short[0]:,} of {short[1]:,}")
    return out


def kube_calls(ref: str, sig: Info) -> list[Call]:
    """The rows of the objects that stand out, the likeliest question first: pods that
    restarted, pods not Running, Warning events (at most two calls)."""
    path = sig.get("path") or "."
    if sig.get("objects") == 1 and path == ".":
        return []
    out: list[Call] = []
    if isinstance(sig.get("restarts"), dict):
        out.append(call("iterate-over", ref=ref, path=path,
                        fields=["metadata.name", "status.containerStatuses.0.restartCount"],
                        where="@.status.containerStatuses[?@.restartCount > 0]", limit=20))
    phases = [p for p, _ in sig.get("phases") or []]
    if any(p != "Running" for p in phases):
        out.append(call("iterate-over", ref=ref, path=path,
                        fields=["metadata.name", "status.phase"],
                        where='@.status.phase != "Running"', limit=20))
    if sig.get("warnings"):
        out.append(call("iterate-over", ref=ref, path=path,
                        fields=["reason", "involvedObject.name", "message"],
                        where='@.type == "Warning"', limit=20))
    return out[:2]


# ------------------------------------------------------------------------------------- sql

NUMBER_TYPES = ("integer", "number")
NOT_MEASURES = ("id", "index", "uid", "port", "year", "version", "generation")  # whole words
NOT_MEASURE_PARTS = ("code", "numeric", "number", "iso", "zip", "phone", "_id", "uuid")


def _sql_name(path: str) -> str:
    """A dot path as DuckDB names it (struct fields dotted; odd names quoted)."""
    parts = path.split(".")
    return ".".join(p if re.fullmatch(r"[a-z_][a-z0-9_]*", p) else '"' + p.replace('"', '""')
                    + '"' for p in parts)


def _measure(candidates: list[tuple[str, set[str], int]], total: int,
             body: str | None = None) -> str | None:
    """The first top-level numeric field present in most rows that is not an identifier
    (else one of the record's ``body``, see :func:`record_body`)."""
    for name, types, count in candidates:
        if "." in name and not (body is not None and name.startswith(body + ".")
                                and "." not in name[len(body) + 1:]):
            continue  # a nested number (a pod's grace period) is rarely what one averages
        leaf = name.rsplit(".", 1)[-1]
        words = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+", leaf)  # Geoname ID, restartCount
        lower = leaf.lower()
        if types and types <= {*NUMBER_TYPES, "null"} and types & set(NUMBER_TYPES) \
                and count * 2 >= total \
                and not any(w.lower() in NOT_MEASURES for w in words) \
                and not any(h in lower for h in NOT_MEASURE_PARTS) and not lower.endswith("id") \
                and not (leaf.isupper() and len(leaf) <= 5):  # GAUL, FIPS, M49: codes
            return name
    return None


def group_sql(ref: str, category: str | None, measure: str | None) -> Call:
    """``GROUP BY`` the category with the average of a numeric field (what a count-by cannot
    answer); without both, the tables' columns (``describe``)."""
    if category is None or measure is None:
        return call("sql", ref=ref, describe=True)
    alias = re.sub(r"[^a-z0-9_]+", "_", measure.rsplit(".", 1)[-1].lower()).strip("_") \
        or "value"
    return call("sql", ref=ref, query=f"SELECT {_sql_name(category)}, count(*) AS n, "
                f"round(avg({_sql_name(measure)}), 2) AS avg_{alias} FROM entry "
                f"GROUP BY ALL ORDER BY n DESC LIMIT 10")


SQL_KEYS = 60  # records with more top-level keys than this are no table to group
SCALARS = frozenset({"string", "integer", "number", "boolean", "null"})
FLAT_SHARE = 0.8  # records are flat when this share of their top-level keys hold scalars


def children_of(items: Info, key: str) -> list[str]:
    """The direct child keys of the object-valued top-level key ``key`` of an item union (a
    quoted one, ``"hg.nginx.org"``, as its name)."""
    prefix = key + "."
    out = []
    for k in items.get("keys") or []:
        rest = str(k["key"])[len(prefix):] if str(k["key"]).startswith(prefix) else ""
        if rest.startswith('"') and rest.endswith('"') and '"' not in rest[1:-1]:
            out.append(rest[1:-1])
        elif rest and "." not in rest and '"' not in rest:
            out.append(rest)
    return out


BODY_OTHERS = 3  # the other object keys of a record with a body hold at most this many keys


def record_body(items: Info) -> str | None:
    """The top-level key whose object holds the record's fields (GeoJSON's ``properties``):
    the one object key with more than :data:`BODY_OTHERS` child keys, and more than the
    record's own scalar keys; None when there is no such key, or more than one (a pod's
    metadata, spec and status: a nested number there is rarely what one averages)."""
    tops = [k for k in items.get("keys") or [] if "." not in k["key"]]
    objects = [(len(children_of(items, k["key"])), k["key"]) for k in tops
               if set(k.get("types") or {}) - {"null"} == {"object"}]
    big = [(n, key) for n, key in objects if n > BODY_OTHERS]
    scalars = sum(1 for k in tops if set(k.get("types") or {}) <= SCALARS)
    if len(big) != 1 or big[0][0] <= scalars:
        return None
    return str(big[0][1])


def flat_records(items: Info) -> bool:
    """Whether an array's items are flat records: objects whose top-level keys mostly hold
    scalars (a table as it is)."""
    tops = [k for k in items.get("keys") or [] if "." not in k["key"]]
    flat = sum(1 for k in tops if set(k.get("types") or {}) <= SCALARS)
    return bool(tops) and flat >= FLAT_SHARE * len(tops)


def records_sql(ref: str, path: str, items: Info, category: str | None) -> Call | None:
    """The SQL next call of an array of records (see :func:`group_sql`): only for a table
    DuckDB reads well, the root array (or NDJSON lines) or the array under a top-level key
    (a deeper one sits in a document DuckDB must read whole), whose items are objects with
    a modest set of top-level keys, and only with a category to group by and a measure (of
    the record's body too, GeoJSON's ``properties.mag``); else None."""
    types = items.get("types") or {}
    columns = [k for k in items.get("keys") or [] if "." not in k["key"]]
    if "." in path.strip(".") or "[" in path or not types or \
            max(types, key=lambda t: types[t]) != "object" or len(columns) > SQL_KEYS:
        return None
    total = items.get("scanned") or items.get("count") or 1
    keys = [(k["key"], set((k.get("types") or {}).keys()), int(k.get("count") or 0))
            for k in items.get("keys") or [] if "*" not in k["key"]]
    body = record_body(items)
    measure = _measure(keys, total) or (_measure(keys, total, body) if body else None)
    if category is None or '"' in category or measure is None:  # the count-by says it all
        return None
    return group_sql(ref, category, measure)


NESTED_TABLE_BYTES = 16 << 20  # a document DuckDB reads whole for a deeper array, at most


def flat_table_sql(ref: str, path: str, items: Info, category: str | None,
                   doc_bytes: int | None = None) -> Call | None:
    """The SQL next call of flat records that :func:`records_sql` gives none: they are a
    table as they are, so two categories crossed (what one count-by does not), else the
    table's columns; None for records that are not flat, or not a table DuckDB reads well
    (deeper in a document of more than :data:`NESTED_TABLE_BYTES`, ``doc_bytes``)."""
    types = items.get("types") or {}
    if not flat_records(items) or "[" in path or not types or \
            max(types, key=lambda t: types[t]) != "object" or \
            ("." in path.strip(".") and (doc_bytes is None or doc_bytes > NESTED_TABLE_BYTES)):
        return None
    second = category_field(items, besides=category) if category else None
    if category is None or second is None or '"' in category + second:
        return call("sql", ref=ref, describe=True)
    return call("sql", ref=ref, query=f"SELECT {_sql_name(category)}, {_sql_name(second)}, "
                "count(*) AS n FROM entry GROUP BY ALL ORDER BY n DESC LIMIT 10")


def csv_sql(ref: str, header: list[str], column_info: list[Info], rows: int,
            category: str | None) -> Call:
    """The SQL next call of a CSV/TSV table (see :func:`group_sql`)."""
    cols = {c.get("name"): c for c in column_info or []}
    measures = [(h, {str(cols[h].get("type"))}, rows - int(cols[h].get("empty") or 0))
                for h in header if h in cols and "." not in h]
    return group_sql(ref, category if category is None or "." not in category else None,
                     _measure(measures, rows))
