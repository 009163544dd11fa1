"""get-in pages of big containers come straight from the stored lines, and equal the pages of
the value rendered whole."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from tests.helpers import cli, count, shell_of, shells

BIG_CAP = {"SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS": "10000000",
           "SCRATCH_BUDGET_CONTEXT_WINDOW": "100000000000"}

DOC = {
    "kind": "List",
    "items": [
        {"metadata": {"name": f"pod-{i}", "labels": {"app.kubernetes.io/name": "web", "i": i},
                      "annotations": {} if i % 3 else {"note": "naïve café ☕ \"quoted\""}},
         "spec": {"containers": [{"name": "c", "args": ["--x", str(i)], "ports": []}],
                  "float": 1.5e-7 * i, "big": 2 ** 70 if i == 7 else i, "none": None,
                  "flag": i % 2 == 0}}
        for i in range(120)  # items: over 2000 lines, refused from the stored lines
    ],
    "empty": {"list": [], "obj": {}},
    "1": {"a.b": [1, 2, [3, [4, {}]]]},
}


@pytest.fixture
def doc(scratch_home: Path) -> str:
    # pages are the stored lines, which keep the input's own spelling of strings (escapes as
    # written); written as orjson writes them, the whole rendering and the pages agree
    text = json.dumps(DOC, ensure_ascii=False).encode()
    r = cli("ingest", "doc", "--store-always", "--json", input=text)
    assert r.code == 0, r.out
    return "doc"


def _whole(name: str, path: str) -> list[str]:
    """The value rendered whole (in memory), as a person at a terminal reads it."""
    r = cli("get-in", name, path, env=BIG_CAP)
    assert r.code == 0, r.out
    return r.text.splitlines(keepends=True)


PATHS = [".", "items", "items.7", "items.7.spec", "items.39", "items.0.metadata.labels",
         "empty", "'1'", "'1'.'a.b'", "/items/3/spec/containers", "$.items[5].metadata"]


def _item(name: str, path: str, i: int) -> str:
    """Item ``i`` of the array at ``path`` as the whole array's rendering shows it."""
    r = cli("get-in", name, f"{path}/{i}" if path.startswith("/") else f"{path}.{i}", "--json",
            env=BIG_CAP)
    assert r.code == 0, r.out
    d = r.json["data"]
    text = d["text"] if "text" in d else json.dumps(d["value"], indent=2, ensure_ascii=False) + "\n"
    if d["type"] == "string":
        text = json.dumps(d["text"].removesuffix("\n")) + "\n"
    return "".join("  " + line for line in text.splitlines(keepends=True))


@pytest.mark.parametrize("path", PATHS)
def test_pages_equal_the_whole_rendering(doc: str, path: str) -> None:
    whole = _whole(doc, path)
    vtype = cli("get-in", doc, path, "--json", env=BIG_CAP).json["data"]["type"]
    if vtype == "array" and len(whole) > 1:  # --offset/--limit count items: whole items shown
        n = len(json.loads("".join(whole)))
        for offset, limit in [(0, 1), (0, 3), (1, 5), (n - 2, 10), (n - 1, 1)]:
            if not 0 <= offset < n:
                continue
            r = cli("get-in", doc, path, "--offset", str(offset), "--limit", str(limit),
                    "--json", env=BIG_CAP)
            assert r.code == 0, r.out
            d = r.json["data"]
            shown = range(offset, min(n, offset + limit))
            items = [_item(doc, path, i) for i in shown]
            assert d["text"] == "[\n" + ",\n".join(x.removesuffix("\n") for x in items) + "\n]\n"
            assert (d["offset"], d["items"], d["total_items"]) == (offset, len(shown), n)
        return
    for offset, limit in [(0, 1), (0, 3), (1, 5), (len(whole) - 2, 10), (len(whole) - 1, 1)]:
        if offset < 0:
            continue
        r = cli("get-in", doc, path, "--offset", str(offset), "--limit", str(limit), "--json",
                env=BIG_CAP)
        assert r.code == 0, r.out
        d = r.json["data"]
        assert d["text"] == "".join(whole[offset:offset + limit]), (path, offset, limit)
        assert (d["offset"], d["lines"], d["total_lines"]) == (
            offset, len(whole[offset:offset + limit]), len(whole))


def test_big_integers_and_unicode_survive_paging(doc: str) -> None:
    r = cli("get-in", doc, "items.7.spec", "--offset", "0", "--limit", "100")
    assert r.code == 0
    assert f'"big": {2 ** 70},' in r.text
    r = cli("get-in", doc, "items.0.metadata", "--limit", "100")
    assert '"note": "naïve café ☕ \\"quoted\\""' in r.text
    assert r.text.startswith("{\n") and r.text.endswith("}\n")


def test_fit_pages_join_to_the_whole(doc: str) -> None:
    whole = _whole(doc, "items")
    env = {"SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS": "400"}
    r = cli("get-in", doc, "items", "--fit", "--json", env=env)
    pages = []
    while True:
        assert r.code == 0, r.out
        pages.append(r.json["data"]["text"])
        nxt = r.json["data"].get("next")
        if not nxt:
            break
        assert r.json["meta"]["tokens"]["count"] <= 400
        args = shlex.split(shell_of(nxt))
        r = cli(*args[1:], "--json", env=env)
    assert len(pages) > 3
    # --fit on an array pages whole items: each page is an array, together the whole one
    assert [x for page in pages for x in json.loads(page)] == json.loads("".join(whole))


def test_a_window_longer_than_the_cap_is_refused_with_an_estimate(doc: str) -> None:
    total = len(_whole(doc, "items"))
    used = cli("budget", "--json").json["data"]["used"]
    cap = {"SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS": "400"}
    r = cli("get-in", doc, "items", "--offset", "2", "--json", env=cap)
    assert r.code == 3
    refusals = count(r.text)
    err = r.json["error"]
    assert err["code"] == "get_in_too_large"
    assert err["estimated_tokens"] >= total - 2  # every line costs at least one token
    assert err["limit"] == 400
    assert "scratch get-in doc items --offset 2 --fit" in shells(err["suggestions"])
    r = cli("get-in", doc, "items", "--json", env=cap)
    assert r.code == 3 and r.json["error"]["code"] == "get_in_too_large"
    refusals += count(r.text)
    assert total > 2000 and r.json["error"]["estimated_tokens"] >= total
    suggestions = shells(r.json["error"]["suggestions"])
    assert suggestions[0] == "scratch get-in doc items.0"
    assert suggestions[-1] == "scratch get-in doc items --fit"
    # refusals cost what they print, and nothing more: the window was never read
    assert cli("budget", "--json").json["data"]["used"] == used + refusals
    for suggestion in suggestions:  # each fits the cap it was refused under
        assert cli(*shlex.split(suggestion)[1:], "--json", env=cap).code == 0, suggestion


def test_fit_that_fits_answers_the_value(doc: str) -> None:
    r = cli("get-in", doc, "items.3.metadata", "--fit", "--json")
    assert r.code == 0
    assert r.json["data"]["value"] == DOC["items"][3]["metadata"]
    assert "next" not in r.json["meta"]


def test_offset_past_the_end(doc: str) -> None:
    total = len(_whole(doc, "items.3"))
    r = cli("get-in", doc, "items.3", "--offset", str(total), "--json")
    assert r.code == 4
    assert r.json["error"]["code"] == "offset_out_of_range"
    assert r.json["error"]["total_lines"] == total


def test_raw_and_yaml_entries_page_the_same_way(scratch_home: Path) -> None:
    raw = json.dumps(DOC).encode()
    assert cli("ingest", "raw", "--store-always", "--raw", input=raw).code == 0
    yaml_text = "a:\n  b:\n    - x: 1\n      y: [1, 2]\n    - x: 2\n  c: text\n"
    assert cli("ingest", "y", "--store-always", "--format", "yaml", input=yaml_text).code == 0
    r = cli("get-in", "raw", "items.2.spec", "--offset", "1", "--limit", "2", "--json")
    assert r.code == 0
    assert r.json["data"]["text"] == '  "containers": [\n    {\n'
    r = cli("get-in", "y", "a.b", "--offset", "1", "--limit", "3", "--json")
    assert r.code == 0  # an array's window counts items: the second (and last) one
    assert r.json["data"]["text"] == '[\n  {\n    "x": 2\n  }\n]\n'
