"""The pointer on its own: what build_pointer keeps, how render_pointer shows it, and how
fit_pointer enforces the size rule with the real tokenizer."""

from __future__ import annotations

from typing import Any

import pytest

from scratch.answers.pointer.build import (
    BIG_OUTPUT_TOKENS,
    MAX_POINTER_TOKENS,
    build_pointer,
    fit_pointer,
    pick_fields,
    render_pointer,
)
from scratch.cli.spelling import shell_line


def count(text: str) -> int:
    from scratch.tokens import count_text, resolve_encoding

    return count_text(text, resolve_encoding(None, None))


def make(info: dict[str, Any], *, name: str = "t/x", fmt: str = "json", tokens: int = 100_000,
         **kw: Any) -> dict[str, Any]:
    args: dict[str, Any] = dict(name=name, version=1, fmt=fmt, size=123_456, lines=4_000,
                                tokens=tokens, encoding="o200k_base", exact=True, info=info,
                                companions=[], warnings=[], partial=False)
    args.update(kw)
    return build_pointer(**args)


def item_schema(n: int, keys: list[str]) -> dict[str, Any]:
    return {"path": ".", "type": "object", "length": 2, "lines": [1, 10 * n + 4], "children": [
        {"path": "kind", "type": "string", "length": 4, "lines": [2, 2], "value": "List"},
        {"path": "items", "type": "array", "length": n, "lines": [3, 10 * n + 3], "items": {
            "count": n, "types": {"object": n},
            "keys": [{"key": k, "count": n, "types": {"string": n}, "max_length": 12}
                     for k in keys],
            "samples": [{"index": i, "value": {k: f"{k}-{i}" for k in keys}}
                        for i in sorted({0, n // 2, n - 1})]}},
    ]}


def test_csv_pointer_shows_the_header() -> None:
    # the CSV index gives a column count and the names under "header" (it crashed on an int)
    info = {"delimiter": ",", "header": ["LineId", "Date", "Level"], "columns": 3, "rows": 2000}
    p = make(info, fmt="csv", tokens=143_020)
    assert p["text"] == {"columns": 3, "header": ["LineId", "Date", "Level"], "rows": 2000,
                         "delimiter": ","}
    text = render_pointer(p, shell_line)
    assert "columns (3, 2,000 rows): LineId, Date, Level\n" in text
    assert "  scratch schema t/x\n" in text


def test_columns_given_as_a_list_still_render() -> None:
    p = make({"columns": [{"name": "a"}, {"name": "b"}]}, fmt="csv")
    assert "columns (2): a, b\n" in render_pointer(p, shell_line)


def test_many_columns_are_cut_with_a_count() -> None:
    header = [f"col{i}" for i in range(56)]
    p = make({"header": header, "columns": 56, "rows": 250}, fmt="csv")
    line = next(ln for ln in render_pointer(p, shell_line, detail=3).splitlines()
                if ln.startswith("columns"))
    assert line.startswith("columns (56, 250 rows): col0, col1,")
    assert line.endswith("col29, … 26 more")
    line1 = next(ln for ln in render_pointer(p, shell_line, detail=1).splitlines()
                 if ln.startswith("columns"))
    assert line1.endswith("col11, … 44 more")


def test_array_pointer_and_next_commands() -> None:
    p = make({"schema": item_schema(500, ["name", "namespace", "phase"])}, name="k/pods")
    assert p["array"]["path"] == "items" and p["array"]["length"] == 500
    assert p["array"]["keys"] == {"name": "500/500", "namespace": "500/500", "phase": "500/500"}
    assert len(p["array"]["samples"]) == 3
    assert [shell_line(c) for c in p["next"]] == [
        "scratch schema k/pods",
        "scratch item-schema k/pods items --depth 2",
        "scratch iterate-over k/pods items --fields name,phase,namespace --limit 20",
        "scratch iterate-over k/pods items --count-by phase",
        "scratch get-in k/pods items.0",
        "scratch sql k/pods 'SELECT phase, namespace, count(*) AS n FROM entry GROUP BY ALL "
        "ORDER BY n DESC LIMIT 10'",
        "scratch slice k/pods 1 40",
        "scratch tail k/pods -n 40",
    ]  # no error grep: none was checked to find anything; no number to average: flat records
    # are a table, crossed by two categories (issue 30 item 10)
    text = render_pointer(p, shell_line)
    assert text.startswith("stored k/pods (version 1): json, 123,456 bytes, 4,000 lines, "
                           "100,000 tokens (o200k_base)\nschema:\n  .: object{2} L1-5004\n")
    assert "    items: array[500] L3-5003\n" in text
    assert "items of items (500): keys name 500/500, namespace 500/500, phase 500/500\n" in text
    assert ("  item 0: {\"name\":\"name-0\",\"namespace\":\"namespace-0\",\"phase\":\"phase-0\"}\n"
            "  item 250: {\"name\":\"name-250\",\"namespace\":\"namespace-250\",\"phase\":"
            "\"phase-250\"}\n"
            "  item 499, the last: {\"name\":\"name-499\",\"namespace\":\"namespace-499\","
            "\"phase\":\"phase-499\"}\n") in text


def test_names_with_odd_characters_are_quoted_in_commands() -> None:
    p = make({"schema": item_schema(3, ["a"])}, name="it's")
    assert shell_line(p["next"][0]) == "scratch schema 'it'\"'\"'s'"


def test_pick_fields_prefers_identifiers_present_everywhere() -> None:
    items = {"count": 10, "keys": [
        {"key": "blob", "count": 10, "types": {"string": 10}, "max_length": 500},
        {"key": "spec", "count": 10, "types": {"object": 10}},
        {"key": "extra", "count": 3, "types": {"string": 3}, "max_length": 5},
        {"key": "metadata.name", "count": 10, "types": {"string": 10}, "max_length": 20},
        {"key": "size", "count": 10, "types": {"integer": 10}, "max_length": 3},
        {"key": "status", "count": 10, "types": {"string": 10}, "max_length": 9},
    ]}
    assert pick_fields(items) == ["metadata.name", "status", "size"]


def test_flags_warnings_and_companions_render() -> None:
    p = make({"first_lines": ["a"], "last_lines": ["z"], "last_lines_start": 9}, fmt="text",
             partial=True, existing=True, warnings=["content does not parse as JSON"],
             companions=["t/x.content-0-text"])
    text = render_pointer(p, shell_line)
    assert text.splitlines()[1:4] == [
        "already stored: identical content was ingested before under this name",
        "PARTIAL: the command failed, was killed or was interrupted mid-output; this is what arrived",
        "warning: content does not parse as JSON",
    ]
    assert "embedded documents stored as: t/x.content-0-text\n" in text
    assert "last lines (from line 9):\n  z\n" in text
    assert shell_line(p["next"][-1]) == "scratch head t/x.content-0-text"


@pytest.mark.parametrize("raw_tokens,cap", [
    (200_000, MAX_POINTER_TOKENS),          # big: the 800 cap
    (BIG_OUTPUT_TOKENS, 500),              # 50k: 1%
    (60_000, 600),
    (BIG_OUTPUT_TOKENS - 1, 800),           # under 50k only "smaller than the output"
    (300, 299),
])
def test_fit_pointer_meets_the_size_rule(raw_tokens: int, cap: int) -> None:
    p = make({"schema": item_schema(5000, [f"key{i}" for i in range(40)])}, tokens=raw_tokens)
    full = count(render_pointer(p, shell_line, detail=3))
    text, n, _ = fit_pointer(p, raw_tokens, count, shell_line)
    assert n == count(text) <= cap
    if full <= cap:
        assert text == render_pointer(p, shell_line, detail=3)  # the most detailed that fits


def test_fit_pointer_steps_down_detail() -> None:
    p = make({"schema": item_schema(5000, [f"key_number_{i}" for i in range(40)])})
    sizes = [count(render_pointer(p, shell_line, detail=d)) for d in (3, 2, 1, 0)]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] > sizes[-1]
    text, n, _ = fit_pointer(p, sizes[1] * 100, count, shell_line)  # 1% cap equal to detail 2's size
    assert (text, n) == (render_pointer(p, shell_line, detail=2), sizes[1])


def test_fit_pointer_returns_the_smallest_when_nothing_fits() -> None:
    p = make({}, fmt="text", tokens=5)
    text, n, _ = fit_pointer(p, 5, count, shell_line)
    assert text == render_pointer(p, shell_line, detail=0) and n == count(text) > 5


def test_integers_beyond_64_bits_render() -> None:
    big = 123456789012345678901234567890
    schema = {"path": ".", "type": "object", "length": 2, "lines": [1, 40], "children": [
        {"path": "big", "type": "integer", "lines": [2, 2], "value": big},
        {"path": "items", "type": "array", "length": 2, "lines": [3, 39], "items": {
            "count": 2, "keys": [{"key": "n", "count": 2, "types": {"integer": 2}}],
            "samples": [{"index": 0, "value": {"n": big}}, {"index": 1, "value": {"n": -big}}]}}]}
    text = render_pointer(make({"schema": schema}), shell_line)
    assert f"    big: integer {big} L2-2\n" in text
    assert f'  item 0: {{"n":{big}}}\n  item 1, the last: {{"n":-{big}}}\n' in text


def test_shape_pointer_mirrors_the_rendered_detail() -> None:
    from scratch.answers.pointer.build import shape_pointer

    info = {"schema": item_schema(500, [f"key{i}" for i in range(40)]),
            "first_lines": [f"line {i} " + "x" * 300 for i in range(5)],
            "last_lines": [f"end {i}" for i in range(10)], "last_lines_start": 491}
    p = make(info, warnings=["w1", "w2", "w3", "w4"])
    full = shape_pointer(p, 3)
    assert full["schema"] == p["schema"] and "schema_more" not in full
    assert list(full["array"]["keys"]) == [f"key{i}" for i in range(30)]
    assert full["array"]["keys_more"] == 10 and len(full["array"]["samples"]) == 3
    assert full["text"]["first_lines"][0] == ("line 0 " + "x" * 300)[:199] + "…"
    assert full["text"]["last_lines"] == [f"end {i}" for i in range(5, 10)]
    assert full["text"]["last_lines_start"] == 496
    assert full["warnings"] == ["w1", "w2", "w3"] and full["next"] == p["next"][:8]
    small = shape_pointer(p, 1)
    assert [n["depth"] for n in small["schema"]] == [0, 1, 1]
    assert len(small["array"]["keys"]) == 12 and small["array"]["samples"] == []
    assert len(small["text"]["first_lines"]) == 1 and len(small["next"]) == 5
    bare = shape_pointer(p, 0)
    assert not {"schema", "array", "text"} & set(bare)
    assert {k: bare[k] for k in ("name", "version", "tokens")} == {
        "name": "t/x", "version": 1, "tokens": 100_000}


def test_fit_data_meets_the_cap_with_an_envelope_reserve() -> None:
    from scratch.answers.pointer.build import fit_data, pointer_json, shape_pointer
    from scratch.cli.render import call_json

    p = make({"schema": item_schema(5000, [f"key_number_{i}" for i in range(40)])})

    def json_count(d):
        return count(pointer_json(d, call_json))

    sizes = [json_count(shape_pointer(p, d)) for d in (3, 2, 1, 0)]
    data, n, _ = fit_data(p, 60_000, json_count, overhead=80)
    assert n <= 600 - 80 and n == json_count(data)
    assert n == max(s for s in sizes if s <= 520)


def test_the_outline_shows_every_top_level_key_before_deeper_ones() -> None:
    # a first key with a big subtree used to push the later top-level keys out of the pointer
    deep = {"path": "shapes", "type": "object", "length": 400, "lines": [2, 9000],
            "children": [{"path": f"shapes.S{i}", "type": "object", "length": 3,
                          "lines": [3 + i, 3 + i]} for i in range(400)]}
    tail = [{"path": k, "type": "string", "lines": [9001 + i, 9001 + i]}
            for i, k in enumerate(("version", "metadata", "operations"))]
    p = make({"schema": {"path": ".", "type": "object", "length": 4, "lines": [1, 9100],
                         "children": [deep, *tail]}})
    for detail in (3, 2, 1):
        text = render_pointer(p, shell_line, detail=detail)
        for key in ("shapes", "version", "metadata", "operations"):
            assert f"  {key}: " in text, (detail, key)
        lines = text.splitlines()
        # shown in document order: the deeper rows kept stay under their parent
        assert lines.index("    version: string L9001-9001") > lines.index(
            "    shapes: object{400} L2-9000")
        assert ("more paths" in text) == (detail > 1)


def test_items_of_is_the_largest_array_of_objects() -> None:
    def arr(path: str, n: int, item_type: str, lines: tuple[int, int]) -> dict[str, Any]:
        return {"path": path, "type": "array", "length": n, "lines": list(lines),
                "items": {"count": n, "types": {item_type: n}, "keys": [], "samples": []}}
    schema = {"path": ".", "type": "object", "length": 3, "lines": [1, 999], "children": [
        arr("tags", 500, "string", (2, 502)), arr("small", 10, "object", (503, 600)),
        arr("pods", 60, "object", (601, 900)), arr("same", 60, "object", (901, 950))]}
    p = make({"schema": schema})
    assert p["array"]["path"] == "pods"  # objects first; then most items; then most lines
