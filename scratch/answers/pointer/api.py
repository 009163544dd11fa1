"""What a pointer says about an API description (an OpenAPI or Swagger document, a JSON
Schema, a CustomResourceDefinition): the part its questions are about.

An OpenAPI document is asked about its operations: the pointer shows them per method, the
deprecated ones and the tags (:mod:`scratch.index.openapi` counted them when the index was
built), and its next calls list ``paths`` (operations, the deprecated ones, one tag's) before
the schemas, which are the biggest part by size but rarely the question.

An API model describes shapes, so its "error words" are names of shapes (``Error``,
``basic-error``, ``validation-error``) and words of their descriptions, not failures of a run:
no error grep is checked or suggested on one (:func:`api_model`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scratch.calls import Call, call
from scratch.words import plural

if TYPE_CHECKING:
    from scratch.answers.rows.items import Info

JSON_SCHEMA = "json-schema.org"


def api_model(info: Info) -> str | None:
    """What kind of API model the indexed document is ("openapi", "json schema",
    "custom resource definition"), or None."""
    if isinstance(info.get("openapi"), dict):
        return "openapi"
    schema = info.get("schema")
    top = {str(c.get("path")).strip('"'): c for c in (schema.get("children") or ())
           } if isinstance(schema, dict) else {}
    if JSON_SCHEMA in str(top.get("$schema", {}).get("value") or ""):
        return "json schema"
    spec = {str(c.get("path")) for c in top.get("spec", {}).get("children") or ()}
    if top.get("kind", {}).get("value") == "CustomResourceDefinition" or \
            {"spec.group", "spec.names", "spec.versions"} <= spec:
        return "custom resource definition"
    return None


def _counts(values: list[list[object]], top: int, more: int = 0) -> str:
    """``a 3, b 2, … N more`` (``more``: values counted beyond ``values``)."""
    shown = values[:top]
    left = len(values) - len(shown) + more
    return ", ".join(f"{v} {n:,}" for v, n in shown) + (f", … {left:,} more" if left else "")


def openapi_lines(sig: Info, detail: int) -> list[str]:
    """The operations of an API description, for the pointer (``detail`` 1: fewer values)."""
    top = 8 if detail >= 2 else 4
    about = " ".join(f'"{v}"' if i == 0 else str(v) for i, v in
                     enumerate(x for x in (sig.get("title"), sig.get("version")) if x))
    out = [f"{sig['spec']}{' ' + about if about else ''}: "
           f"{plural(int(sig['paths']), 'path', grouped=True)}, "
           f"{plural(int(sig['operations']), 'operation', grouped=True)} "
           f"({_counts(sig.get('methods') or [], top)})"]
    deprecated = int(sig.get("deprecated") or 0)
    if deprecated:
        examples = ", ".join(sig.get("deprecated_examples") or [])
        out.append(f"  deprecated: {deprecated:,}" + (f" ({examples}, …)" if examples and
                                                     detail >= 2 else ""))
    tags = sig.get("tags") or []
    if tags:
        out.append(f"  operations by tag: {_counts(tags, top, int(sig.get('tags_more') or 0))}")
    if sig.get("schemas"):
        out.append(f"  schemas: {int(sig['schemas']):,} at {sig.get('schemas_path')}")
    return out


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def openapi_calls(ref: str, sig: Info) -> list[Call]:
    """The operations' rows, the deprecated ones, one tag's, and their keys: the calls that
    answer what an API description is asked."""
    methods = [m for m, _ in sig.get("methods") or []]
    fields = ["_key"] + ([f"{methods[0]}.operationId"] if methods else [])
    out = [call("iterate-over", ref=ref, path="paths", fields=fields, limit=20)]
    if sig.get("deprecated"):
        out.append(call("iterate-over", ref=ref, path="paths", fields=["_key"],
                        where="@[?@.deprecated == true]", limit=20))
    tags = sig.get("tags") or []
    if len(tags) > 1:
        out.append(call("iterate-over", ref=ref, path="paths", fields=["_key"],
                        where=f"@[?@.tags[?@ == {_quoted(str(tags[0][0]))}]]", limit=20))
    out.append(call("item-schema", ref=ref, path="paths", depth=2))
    return out
