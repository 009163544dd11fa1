"""The JSONPath Compliance Test Suite run through scratch's own path API.

Valid selectors: the values we return must equal ``result`` (or one of ``results`` when the
order is not determined), and the locations we report, written as RFC 9535 normalized paths,
must equal ``result_paths``. Invalid selectors must raise ``invalid_path``. Every location is
also written as a dot path with ``format_path`` and resolved back to the very same node, which
exercises quoting on the suite's odd keys. Goal: pass rate >= 99% (printed with ``-s``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scratch.errors import InvalidPattern
from scratch.pathnames import format_path
from scratch.query.paths import evaluate, locate, parse_path

CTS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "suites" / "jsonpath-cts" / "cts.json"

pytestmark = pytest.mark.corpus


def _same(a: Any, b: Any) -> bool:
    """JSON equality that tells true from 1 and 1 from 1.0."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return bool(a == b)


def _normalized(location: tuple[str | int, ...]) -> str:
    # RFC 9535 section 2.7, written independently of the library's serializer.
    out = ["$"]
    for seg in location:
        if isinstance(seg, int):
            out.append(f"[{seg}]")
            continue
        esc = []
        for ch in seg:
            if ch == "\\":
                esc.append("\\\\")
            elif ch == "'":
                esc.append("\\'")
            elif ch in "\b\f\n\r\t":
                esc.append({"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch])
            elif ord(ch) < 0x20:
                esc.append(f"\\u{ord(ch):04x}")
            else:
                esc.append(ch)
        out.append("['" + "".join(esc) + "']")
    return "".join(out)


def _run_case(case: dict[str, Any]) -> str | None:
    """None when the case passes, else a reason."""
    selector = case["selector"]
    if case.get("invalid_selector"):
        try:
            parse_path(selector, syntax="jsonpath")
        except InvalidPattern as exc:
            if exc.code != "invalid_path" or not isinstance(exc.details.get("position"), int):
                return f"wrong error {exc.code} {exc.details}"
            return None
        return "accepted an invalid selector"
    doc = case["document"]
    try:
        matches = evaluate(doc, parse_path(selector, syntax="jsonpath"), explain_missing=False)
    except Exception as exc:  # noqa: BLE001 - any exception is a failure of this case
        return f"raised {exc!r}"
    values = [m.value for m in matches]
    paths = [_normalized(m.location) for m in matches]
    if "result" in case:
        if not _same(values, case["result"]):
            return f"values {values!r} != {case['result']!r}"
        if "result_paths" in case and paths != case["result_paths"]:
            return f"paths {paths!r} != {case['result_paths']!r}"
    else:
        options = list(zip(case["results"], case.get("results_paths", [None] * len(case["results"]))))
        if not any(_same(values, r) and (p is None or paths == p) for r, p in options):
            return f"values {values!r} not among {case['results']!r}"
    for m in matches:
        back = locate(doc, parse_path(format_path(m.location)).segments or ())
        if back.value is not m.value or back.location != m.location:
            return f"dot path {format_path(m.location)!r} does not lead back to {m.location!r}"
    return None


@pytest.fixture(scope="module")
def cts_cases() -> list[dict[str, Any]]:
    if not CTS.is_file():
        pytest.skip("JSONPath CTS not available")
    return json.loads(CTS.read_text(encoding="utf-8"))["tests"]


def test_cts_pass_rate(cts_cases: list[dict[str, Any]]) -> None:
    failures = {}
    for case in cts_cases:
        reason = _run_case(case)
        if reason is not None:
            failures[case["name"]] = reason
    passed = len(cts_cases) - len(failures)
    rate = passed / len(cts_cases)
    print(f"\nJSONPath CTS: {passed}/{len(cts_cases)} passed ({rate:.2%})")
    for name, reason in list(failures.items())[:20]:
        print(f"  FAIL {name}: {reason}")
    assert len(cts_cases) > 600
    assert rate >= 0.99, failures
