"""The index on real corpus files, checked against values computed independently
(json/yaml/csv modules, plain Python line splitting, direct token counts)."""

from __future__ import annotations

import csv
import io
import json
import random
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import toktok
import yaml

from scratch.index import EntryIndex, build_index
from scratch.index.lines import decode_text, run_line_pass
from scratch.index.normalizer import normalize

pytestmark = pytest.mark.corpus


def count_lines(lines: Sequence[str], base: str) -> list[int]:
    return toktok.batch_count(list(lines), base)  # type: ignore[no-any-return]


def index_of(corpus: Path, rel: str, tmp_path: Path, raw: bool = False) -> EntryIndex:
    content = tmp_path / "content"
    with open(corpus / rel, "rb") as f:
        n = normalize(f, content, raw=raw)
    return build_index(content, tmp_path / "index", n.format, bases=["o200k_base"],
                       count_lines=count_lines, analysis=n.analysis)


def test_line_offsets_of_every_file(corpus_dir: Path) -> None:
    for p in sorted(corpus_dir.rglob("*")):
        if not p.is_file():
            continue
        data = p.read_bytes()
        out = io.BytesIO()
        lp = run_line_pass(p, out, {}, None)
        offs = memoryview(out.getvalue()).cast("Q")
        lines = data.split(b"\n") if data else []  # an empty file has no lines
        if data.endswith(b"\n"):
            lines.pop()
        assert lp.line_count == len(lines) == len(offs) - 1, p
        assert offs[-1] == len(data)
        pos = 0
        for i, line in enumerate(lines):
            assert offs[i] == pos, (p, i)
            pos += len(line) + 1


@pytest.mark.parametrize("rel", [
    "logs/loghub/Mac_2k.log", "logs/app/kafkaServer-gc.log", "MANIFEST.md",
    "csv/country-codes.csv", "yaml/kube-prometheus-stack-values.yaml", "json/utf8/blns.txt",
    "suites/jq/jq.test", "json/utf8/twitter.json", "ndjson/amazon_cellphones.ndjson",
])
def test_token_counts(corpus_dir: Path, tmp_path: Path, rel: str) -> None:
    ix = index_of(corpus_dir, rel, tmp_path)
    stored = (tmp_path / "content").read_bytes()
    whole = count_lines([decode_text(stored)], "o200k_base")[0]
    assert ix.total_tokens("o200k_base") == whole
    rng = random.Random(rel)
    lines = stored.split(b"\n")
    for _ in range(20):
        a = rng.randint(1, ix.line_count)
        b = min(ix.line_count, a + rng.randint(0, 40))
        texts = [decode_text(x + b"\n") for x in lines[a - 1:b]]
        if b == ix.line_count and not stored.endswith(b"\n"):
            texts[-1] = texts[-1][:-1]
        assert ix.range_tokens(a, b, "o200k_base") == sum(count_lines(texts, "o200k_base"))


def sample_paths(value: Any, rng: random.Random, prefix: tuple[Any, ...] = (),
                 depth: int = 0) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if depth >= 7:
        return
    if isinstance(value, dict):
        items = list(value.items())
        for k, v in rng.sample(items, min(4, len(items))):
            yield from sample_paths(v, rng, prefix + (k,), depth + 1)
    elif isinstance(value, list) and value:
        picks = {0, len(value) - 1, rng.randrange(len(value))}
        for i in sorted(picks):
            yield from sample_paths(value[i], rng, prefix + (i,), depth + 1)


def at(value: Any, path: Sequence[Any]) -> Any:
    for seg in path:
        value = value[seg]
    return value


def parse_member(text: str, has_key: bool) -> Any:
    text = text.strip()
    if has_key:
        _, end = json.decoder.scanstring(text, 1)  # type: ignore[attr-defined]
        text = text[end:].lstrip()[1:].strip()
    return json.loads(text.removesuffix(","))


JSON_FILES = [
    "k8s/honeycomb/pods.json", "aws/custodian/ec2.DescribeInstances.json",
    "github/github_events.json", "json/minified/kubernetes-openapi-v1.14-aggregated.json",
    "json/utf8/twitter.json", "k8s/sonobuoy/kube-system_Events.json",
    "json/openapi/kubernetes-swagger-v1.27.json", "json/large/citm_catalog.json",
]


@pytest.mark.parametrize("rel", JSON_FILES)
def test_json_nodes_match_json_load(corpus_dir: Path, tmp_path: Path, rel: str) -> None:
    ref = json.loads((corpus_dir / rel).read_bytes())
    ix = index_of(corpus_dir, rel, tmp_path)
    rng = random.Random(rel)
    n = 0
    for path in sample_paths(ref, rng):
        want = at(ref, path)
        assert ix.value_at(list(path)) == want, path
        info = ix.node(list(path))
        assert info is not None and info.complete and info.path == path
        text = b"".join(ix.read_lines(info.start_line, info.end_line)).decode()
        has_key = bool(path) and isinstance(path[-1], str)
        assert parse_member(text, has_key) == want, path
        if isinstance(want, list) and want:
            starts = ix.item_starts(list(path))
            assert len(starts) == len(want)
            for k in {0, len(want) - 1}:
                assert ix.node([*path, k]).start_line == starts[k]  # type: ignore[union-attr]
        n += 1
    assert n > 10


def test_raw_minified_nodes_are_byte_exact(corpus_dir: Path, tmp_path: Path) -> None:
    rel = "k8s/sonobuoy/kube-system_Pods.json"  # one minified line
    ref = json.loads((corpus_dir / rel).read_bytes())
    ix = index_of(corpus_dir, rel, tmp_path, raw=True)
    assert ix.layout == "raw" and ix.line_count == 1
    for path in sample_paths(ref, random.Random(1)):
        assert ix.value_at(list(path)) == at(ref, path)
        assert ix.node(list(path)).complete  # type: ignore[union-attr]


def test_big_list_items_touch_only_their_lines(corpus_dir: Path, tmp_path: Path) -> None:
    rel = "k8s/sonobuoy/kube-system_Events.json"  # 135 items: positions, not records
    ref = json.loads((corpus_dir / rel).read_bytes())
    ix = index_of(corpus_dir, rel, tmp_path)
    items = ref["items"] if isinstance(ref, dict) else ref
    prefix: list[Any] = ["items"] if isinstance(ref, dict) else []
    info = ix.node([*prefix, 100])
    assert info is not None and not info.indexed  # resolved from the item's own lines
    assert info.lines < 40
    assert ix.value_at([*prefix, 100, "reason"]) == items[100]["reason"]
    schema = ix.info["schema"]
    node = schema if not prefix else next(c for c in schema["children"] if c["path"] == "items")
    union = node["items"]
    assert union["count"] == len(items) == union["scanned"]
    counts = {k["key"]: k["count"] for k in union["keys"]}
    assert counts["metadata.name"] == sum(1 for it in items if "name" in it["metadata"])
    assert len(union["samples"]) == 3


def test_yaml_multi_document(corpus_dir: Path, tmp_path: Path) -> None:
    rel = "yaml/argo-cd-install.yaml"
    docs = list(yaml.load_all((corpus_dir / rel).read_bytes(), Loader=yaml.CSafeLoader))
    ix = index_of(corpus_dir, rel, tmp_path)
    assert ix.format == "yaml" and ix.info["documents"] == len(docs) == 59
    rng = random.Random(7)
    for path in list(sample_paths(docs, rng))[:150]:
        assert ix.value_at(list(path)) == at(docs, path), path
        info = ix.node(list(path))
        assert info is not None and info.complete
    for k in (0, 30, 58):
        info = ix.node([k])
        assert info is not None
        text = b"\n".join(ix.read_lines(info.start_line, info.end_line)).decode()
        assert yaml.load(text, Loader=yaml.CSafeLoader) == docs[k]


def test_kubectl_yaml_list(corpus_dir: Path, tmp_path: Path) -> None:
    rel = "k8s/kubectl-neat/list1-raw.yaml"
    ref = yaml.safe_load((corpus_dir / rel).read_bytes())
    ix = index_of(corpus_dir, rel, tmp_path)
    assert ix.value_at(["items", 1, "metadata", "name"]) == ref["items"][1]["metadata"]["name"]
    starts = ix.item_starts(["items"])
    assert len(starts) == len(ref["items"])
    assert ix.read_lines(starts[1], starts[1])[0].lstrip().startswith(b"- ")


def test_ndjson_journald(corpus_dir: Path, tmp_path: Path) -> None:
    rel = "ndjson/journald_ip-10-0-9-16.ndjson"
    rows = [json.loads(x) for x in (corpus_dir / rel).read_bytes().splitlines() if x.strip()]
    ix = index_of(corpus_dir, rel, tmp_path)
    assert ix.node([]).length == len(rows) == 1313  # type: ignore[union-attr]
    for k in (0, 500, 1312):
        assert ix.value_at([k]) == rows[k]
        assert ix.node([k, "MESSAGE"]).start_line == k + 1  # type: ignore[union-attr]


def test_csv_rows_match_csv_module(corpus_dir: Path, tmp_path: Path) -> None:
    rel = "csv/loghub_OpenStack_2k.log_structured.csv"
    data = (corpus_dir / rel).read_bytes().decode()
    records = list(csv.reader(io.StringIO(data, newline="")))
    ix = index_of(corpus_dir, rel, tmp_path)
    info = ix.info
    assert info["header"] == records[0] and info["rows"] == len(records) - 1 == 2000
    rows = ix.section("rows")
    assert rows is not None and len(rows) == len(records)
    for k in (1, 777, 2000):
        first = ix.read_lines(rows[k], rows[k])[0].decode()
        assert first.startswith(records[k][0] + ",")


def test_log_levels_hdfs(corpus_dir: Path, tmp_path: Path) -> None:
    rel = "logs/loghub/HDFS_2k.log"
    lines = (corpus_dir / rel).read_bytes().decode().split("\r\n")[:-1]
    want: dict[str, list[int]] = {}
    for n, line in enumerate(lines, 1):  # "081109 203615 148 INFO dfs...": 4th field
        want.setdefault(line.split()[3].replace("WARN", "WARN"), []).append(n)
    ix = index_of(corpus_dir, rel, tmp_path)
    info = ix.info
    assert info["timestamp_format"] == "yymmdd_hhmmss"
    assert info["levels"] == {k: len(v) for k, v in want.items()}
    for level, numbers in want.items():
        assert list(ix.section(f"level:{level}") or []) == numbers
    assert info["time_range"] == [lines[0][:13], lines[-1][:13]]
    assert info["last_lines"][-1] == lines[-1]
