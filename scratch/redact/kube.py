"""Kubernetes Secrets: the values of ``data`` and ``stringData``, wherever they are written.

A ``Secret``'s values are secrets whatever they look like (base64 of anything), so they are
found by place: the document is parsed (JSON, else YAML), every object whose ``kind`` is
``Secret`` gives its ``data``/``stringData`` pairs, and each pair is then found in the text as
it is written there: ``"key": "value"`` in JSON, ``\\"key\\":\\"value\\"`` in JSON kept in a
string (the ``kubectl.kubernetes.io/last-applied-configuration`` annotation, which holds a
copy of the whole object), and ``key: value`` in YAML. Only the value is redacted; the key,
ConfigMaps, ``secretName``/``secretKeyRef`` references and the rest stay as they are.

Invariants:
- Only run when the prefilter saw a ``kind: Secret`` (see :mod:`scratch.redact.scan`) and the
  document is at most :data:`MAX_DOCUMENT` bytes (a bigger one is left to the other rules,
  and the finding says so).
- A value written over several lines (a YAML block scalar) is not found in the text; its key
  is reported as not redacted (``missed``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from scratch.jsonvalues import JSON
from scratch.redact.scan import Hit

MAX_DOCUMENT = 256 << 20
_YAML_DOCS = re.compile(rb"(?m)^---[ \t]*(?:#.*)?\r?$")
_YAML_SECRET = re.compile(rb"(?m)^[ \t-]*kind:[ \t]*[\"']?Secret[\"']?[ \t]*\r?$")
ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"


def _secrets(doc: JSON, path: list[str | int]) -> Iterator[tuple[list[str | int], str, str]]:
    """(path of the value, field, value) of every Secret's data/stringData entry. The copy in
    the last-applied annotation is the same object's: it is found by its escaped form."""
    stack: list[tuple[JSON, list[str | int]]] = [(doc, path)]
    while stack:
        node, where = stack.pop()
        if isinstance(node, dict):
            if node.get("kind") == "Secret":
                for field in ("data", "stringData"):
                    values = node.get(field)
                    if isinstance(values, dict):
                        for k, v in values.items():
                            if isinstance(v, str) and v:
                                yield [*where, field, str(k)], field, v
            for k, v in reversed(list(node.items())):
                if isinstance(v, (dict, list)):
                    stack.append((v, [*where, str(k)]))
        elif isinstance(node, list):
            for i in range(len(node) - 1, -1, -1):
                if isinstance(node[i], (dict, list)):
                    stack.append((node[i], [*where, i]))


def _parse(data: bytes) -> list[JSON]:
    import orjson
    try:
        return [orjson.loads(data)]
    except ValueError:
        pass
    try:  # NDJSON
        return [orjson.loads(line) for line in data.splitlines() if line.strip()]
    except ValueError:
        pass
    import yaml
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    out: list[JSON] = []
    # only the documents that hold a Secret are parsed (a big install manifest holds a few)
    for doc in _YAML_DOCS.split(data):
        if _YAML_SECRET.search(doc) is None:
            continue
        try:
            out.extend(d for d in yaml.load_all(doc, Loader=loader) if d is not None)  # noqa: S506
        except yaml.YAMLError:
            continue
    return out


def path_text(path: list[str | int]) -> str:
    return ".".join(str(p) for p in path)


def find(data: bytes) -> tuple[list[Hit], list[str]]:
    """Spans of every Secret value in ``data`` (bytes of one output), and the paths of values
    that could not be found in the text."""
    if len(data) > MAX_DOCUMENT:
        return [], []
    pairs: list[tuple[str, str, str, str]] = []  # (field, key, value, path)
    for doc in _parse(data):
        for where, field, value in _secrets(doc, []):
            pairs.append((field, str(where[-1]), value, path_text(where)))
    if not pairs:
        return [], []
    import orjson
    import re2

    from scratch.redact.rules import compile_bytes
    hits: list[Hit] = []
    missed: list[str] = []
    claimed: set[tuple[int, int]] = set()
    for field, key, value, place in pairs:
        rule = "k8s-secret-data" if field == "data" else "k8s-secret-stringdata"
        enc_key = orjson.dumps(key)[1:-1]
        enc_val = orjson.dumps(value)[1:-1]
        escaped_val = orjson.dumps(enc_val.decode("utf-8"))[1:-1]
        escaped_key = orjson.dumps(enc_key.decode("utf-8"))[1:-1]
        plain = value.encode("utf-8")
        forms = [  # (pattern, which copy)
            (b'"' + re2.escape(enc_key) + rb'"\s*:\s*"(' + re2.escape(enc_val) + rb')"', place),
            (rb'\\"' + re2.escape(escaped_key) + rb'\\"\s*:\s*\\"(' + re2.escape(escaped_val)
             + rb')\\"', f"{place} (copy in {ANNOTATION})"),
        ]
        if b"\n" not in plain:
            forms.append((rb"(?m)^[ \t]*" + re2.escape(key.encode("utf-8"))
                          + rb"[ \t]*:[ \t]*[\"']?(" + re2.escape(plain) + rb")[\"']?[ \t]*\r?$",
                          place))
        found = False
        for pattern, label in forms:
            compiled = compile_bytes(pattern)
            for m in compiled.finditer(data):
                span = (m.start(1), m.end(1))
                if span in claimed:
                    continue
                claimed.add(span)
                hits.append(Hit(span[0], span[1], rule, 3, key, label))
                found = True
                break
        if not found:
            missed.append(place)
    return hits, missed


__all__ = ["ANNOTATION", "MAX_DOCUMENT", "find", "path_text"]
