"""What an OpenAPI (or Swagger 2.0) description holds, read from its value when the index is
built.

The questions an API description answers are about its operations: how many, by method, which
are deprecated, under which tags. They sit under ``paths`` (``PATH -> METHOD -> operation``),
while the biggest parts of the document by size are ``components.schemas`` (``definitions``)
and a long ``tags`` list, which a generic pointer would aim at instead. Recognised shape: an
object with ``openapi`` (3.x) or ``swagger`` (2.0) and a ``paths`` object; anything else has no
signals (None). The result is JSON-serialisable and deterministic (counts sorted by count, then
value), so it can sit in the index's info.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from scratch.jsonvalues import JSON

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
TOP_TAGS = 12  # tags kept with their counts (the rest are counted)
DEPRECATED_KEPT = 5  # deprecated operations kept by name


class OpenApiSignals(TypedDict):
    """The operations of one API description (see the module)."""

    spec: str  # "openapi 3.0.3", "swagger 2.0"
    title: str | None
    version: str | None
    paths: int
    operations: int
    methods: list[list[str | int]]  # [[method, count], ...], the commonest first
    deprecated: int
    deprecated_examples: list[str]  # "GET /path", the first few in document order
    tags: list[list[str | int]]  # [[tag, operations], ...], the commonest first (TOP_TAGS)
    tags_more: int
    schemas: int  # components.schemas (definitions in 2.0)
    schemas_path: NotRequired[str]


def _counted(counts: dict[str, int]) -> list[list[str | int]]:
    return [[k, n] for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def openapi_signals(value: JSON) -> OpenApiSignals | None:
    """The operations of ``value`` when it is an OpenAPI or Swagger description, else None."""
    if not isinstance(value, dict) or not isinstance(value.get("paths"), dict):
        return None
    if isinstance(value.get("openapi"), str):
        spec = f"openapi {value['openapi']}"
    elif isinstance(value.get("swagger"), str):
        spec = f"swagger {value['swagger']}"
    else:
        return None
    methods: dict[str, int] = {}
    tags: dict[str, int] = {}
    deprecated: list[str] = []
    n_deprecated = 0
    for path, item in value["paths"].items():
        if not isinstance(item, dict):
            continue
        for method in METHODS:
            op = item.get(method)
            if not isinstance(op, dict):
                continue
            methods[method] = methods.get(method, 0) + 1
            if op.get("deprecated") is True:
                n_deprecated += 1
                if len(deprecated) < DEPRECATED_KEPT:
                    deprecated.append(f"{method.upper()} {path}")
            for tag in op.get("tags") or ():
                if isinstance(tag, str):
                    tags[tag] = tags.get(tag, 0) + 1
    found = value.get("info")
    info: dict[str, JSON] = found if isinstance(found, dict) else {}
    components = value.get("components")
    schemas = components.get("schemas") if isinstance(components, dict) else None
    where = "components.schemas"
    if not isinstance(schemas, dict):
        schemas, where = value.get("definitions"), "definitions"
    counted_tags = _counted(tags)
    out: OpenApiSignals = {
        "spec": spec, "title": title if isinstance(title := info.get("title"), str) else None,
        "version": ver if isinstance(ver := info.get("version"), str) else None,
        "paths": len(value["paths"]), "operations": sum(methods.values()),
        "methods": _counted(methods), "deprecated": n_deprecated,
        "deprecated_examples": deprecated, "tags": counted_tags[:TOP_TAGS],
        "tags_more": max(0, len(counted_tags) - TOP_TAGS),
        "schemas": len(schemas) if isinstance(schemas, dict) else 0}
    if isinstance(schemas, dict):
        out["schemas_path"] = where
    return out
