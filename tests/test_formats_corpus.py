"""Sniffing and normalisation on the real corpus (skipped when ../shared/corpus is absent)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from scratch.formats import sniff
from scratch.formats.sniffer import SNIFF_BYTES
from scratch.index.normalizer import normalize

pytestmark = pytest.mark.corpus

# Files whose format is not what their directory/extension says, with the reason.
EXCEPTIONS = {
    "MANIFEST.md": "markdown",
    "json/utf8/blns.txt": "text",  # one string per line with '#' comment blocks
    "logs/k8s/metrics-server-previous.log": "text",  # a usage message, few log lines
    "logs/loghub/LICENSE": "text",
    "suites/jsontestsuite/LICENSE": "text",
    "suites/jq/jq.test": "text",
    "suites/jq/man.test": "text",
    "suites/jq/onig.test": "text",
    "suites/jq/optional.test": "text",
    "k8s/custodian/clusterroles.vcr-cassette.yaml": "yaml",
    "logs/k8s/kube-sonobuoy.txt": "log",
    "logs/k8s/sonobuoy_e2e.txt": "log",
}
BY_SUFFIX = {".json": "json", ".ndjson": "ndjson", ".yaml": "yaml", ".yml": "yaml",
             ".csv": "csv", ".log": "log"}


JSONTESTSUITE = "suites/jsontestsuite/test_parsing/"
# the JSONTestSuite parsing cases (y_ valid, n_ invalid, i_ either): what each is, reviewed
GOLDEN = {name: fmt for name, fmt in (
    line.split("\t") for line in (Path(__file__).parent / "golden/jsontestsuite-sniff.tsv")
    .read_text().splitlines() if line and not line.startswith("#"))}


def expected_format(rel: str) -> str:
    if rel in EXCEPTIONS:
        return EXCEPTIONS[rel]
    if rel.startswith(JSONTESTSUITE):
        return GOLDEN[rel[len(JSONTESTSUITE):]]
    return BY_SUFFIX[Path(rel).suffix]


def corpus_files(corpus: Path) -> list[Path]:
    return sorted(p for p in corpus.rglob("*") if p.is_file())


def test_sniff_table(corpus_dir: Path) -> None:
    table = []
    wrong = []
    for p in corpus_files(corpus_dir):
        rel = p.relative_to(corpus_dir).as_posix()
        with open(p, "rb") as f:
            got = sniff(f.read(SNIFF_BYTES), complete=p.stat().st_size <= SNIFF_BYTES)
        table.append((rel, got))
        if got != expected_format(rel):
            wrong.append((rel, got, expected_format(rel)))
    assert not wrong
    assert len(table) >= 140
    assert sum(rel.startswith(JSONTESTSUITE) for rel, _ in table) == len(GOLDEN) == 318


def test_every_corpus_json_round_trips(corpus_dir: Path, tmp_path: Path) -> None:
    dest = tmp_path / "stored"
    count = 0
    for p in corpus_files(corpus_dir):
        # the JSONTestSuite's cases are mostly not valid JSON: tests/test_json_exact.py
        if p.suffix != ".json" or JSONTESTSUITE in p.as_posix():
            continue
        data = p.read_bytes()
        n = normalize(io.BytesIO(data), dest)
        stored = dest.read_bytes()
        assert n.format == "json" and n.layout == "canonical", p
        # Same values in the same key order (json.dumps compares order; == on dicts would not).
        assert json.dumps(json.loads(stored)) == json.dumps(json.loads(data)), p
        assert stored.endswith(b"\n")
        count += 1
    assert count == 88


def test_minified_multi_megabyte_line_becomes_lines(corpus_dir: Path, tmp_path: Path) -> None:
    src = corpus_dir / "json/minified/kubernetes-openapi-v1.14-aggregated.json"
    assert src.read_bytes().count(b"\n") == 0
    dest = tmp_path / "stored"
    with open(src, "rb") as f:
        n = normalize(f, dest)
    stored = dest.read_bytes()
    assert n.bytes_in == 3_150_995 and n.bytes_out == len(stored)
    assert stored.count(b"\n") == 86_178
    assert max(len(x) for x in stored.split(b"\n")) < 10_000


@pytest.mark.parametrize("rel", [
    "logs/loghub/HDFS_2k.log", "csv/loghub_HDFS_2k.log_structured.csv",
    "yaml/argo-cd-install.yaml", "ndjson/journald_ip-10-0-9-16.ndjson", "json/utf8/blns.txt",
    "MANIFEST.md"])
def test_other_formats_are_stored_byte_exact(corpus_dir: Path, tmp_path: Path, rel: str) -> None:
    data = (corpus_dir / rel).read_bytes()
    dest = tmp_path / "stored"
    n = normalize(io.BytesIO(data), dest)
    assert dest.read_bytes() == data
    assert n.format == expected_format(rel) and n.layout == "raw" and not n.warnings
    if rel.startswith(("logs/loghub", "csv/loghub")):
        assert b"\r\n" in data  # CRLF kept


def test_mcp_tool_result_companions(corpus_dir: Path, tmp_path: Path) -> None:
    tool = json.loads((corpus_dir / "mcp/github-mcp-server/list_issues.tool.json").read_bytes())
    listing = json.loads((corpus_dir / "k8s/kubectl-neat/list1-raw.json").read_bytes())
    result = json.loads((corpus_dir / "mcp/spec/CallToolResultResponse.json").read_bytes())
    result["result"]["content"] = [
        {"type": "text", "text": json.dumps(listing, indent=2)},
        {"type": "text", "text": json.dumps(tool)},  # minified: still a document
    ]
    n = normalize(io.BytesIO(json.dumps(result).encode()), tmp_path / "stored")
    assert [(e.slug, e.kind) for e in n.embedded] == [("result-content-0-text", "json"),
                                                      ("result-content-1-text", "json")]
    assert json.loads(n.embedded[0].text) == listing
    assert json.loads(n.embedded[1].text) == tool
