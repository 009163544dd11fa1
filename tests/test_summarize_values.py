"""summarize's value counts: every field with up to 1,000 distinct values gets its top 10 and
what the rest hold; a parsed log gets its facets; counted against plain Python."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from tests.helpers import cli

ITEMS = [{"id": i, "country": f"c{(i * 7) % 240:03d}" if i % 9 else "big",
          "kind": ["Pod", "Service"][i % 2], "code": i % 1500, "msg": f"m{i}" * 20}
         for i in range(6000)]


def summary(name: str, data: bytes) -> str:
    r = cli("ingest", name, "--store-always", input=data)
    assert r.code == 0, r.err
    r = cli("summarize", name)
    assert r.code == 0, r.err
    return r.text


def line_of(text: str, field: str) -> str:
    return next(ln for ln in text.splitlines() if ln.startswith(f"  {field}: "))


def test_top_ten_values_and_the_rest_for_up_to_a_thousand_distinct(scratch_home: Path) -> None:
    text = summary("nd", "".join(json.dumps(x) + "\n" for x in ITEMS).encode())
    counts = Counter(x["country"] for x in ITEMS)
    order = list(dict.fromkeys(x["country"] for x in ITEMS))  # ties: first seen
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], order.index(kv[0])))
    rest = ranked[10:]
    want = ", ".join(f"{v} {n}" for v, n in ranked[:10])
    want += f", … {sum(n for _, n in rest):,} more in {len(rest)} values"
    assert line_of(text, "country") == f"  country: {want}"
    assert line_of(text, "kind") == "  kind: Pod 3000, Service 3000"
    # 1,500 distinct values: a range, no counts
    assert line_of(text, "code") == "  code: 0 .. 1499 (1500 distinct)"
    assert not any(ln.startswith("  msg: ") for ln in text.splitlines())  # all unique


def test_a_parsed_log_summary_lists_its_facets(scratch_home: Path) -> None:
    lines = [f'10.0.0.1 - - [01/Jan/2024:00:00:00 +0000] "{["GET", "POST"][i % 3 == 0]} /x '
             f'HTTP/1.1" {[200, 404, 500][i % 4 % 3]} 5 "-" "a"' for i in range(4000)]
    text = summary("a.log", ("\n".join(lines) + "\n").encode())
    assert "records: combined (combined access log (Apache, nginx)), 4,000 lines: 4,000 " \
           "parsed" in text
    statuses = Counter([200, 404, 500][i % 4 % 3] for i in range(4000)).most_common()
    assert line_of(text, "status") == "  status: " + ", ".join(f"{v} {n}" for v, n in statuses)
