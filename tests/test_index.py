"""The per-version index on synthetic content: lines, tokens, structure, info, invalidation."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import toktok

from scratch.errors import IndexInvalid, KeyPathNotFound, OutOfRange
from scratch.index import EntryIndex, build_index
from scratch.index.lines import decode_text
from scratch.index.normalizer import normalize


def count_lines(lines: Sequence[str], base: str) -> list[int]:
    return toktok.batch_count(list(lines), base)  # type: ignore[no-any-return]


def store(tmp_path: Path, data: bytes, *, declared: str | None = None, raw: bool = False,
          bases: Sequence[str] = ("o200k_base",)) -> EntryIndex:
    content = tmp_path / "content"
    n = normalize(io.BytesIO(data), content, declared=declared, raw=raw)
    return build_index(content, tmp_path / "index", n.format, bases=list(bases),
                       count_lines=count_lines, analysis=n.analysis)


def split_lines(data: bytes) -> list[bytes]:
    parts = data.split(b"\n")
    if data.endswith(b"\n"):
        parts.pop()
    return [p[:-1] if p.endswith(b"\r") else p for p in parts]


def token_lines(data: bytes) -> list[str]:
    parts = data.split(b"\n")
    out = [decode_text(p + b"\n") for p in parts[:-1]]
    if parts[-1]:
        out.append(decode_text(parts[-1]))
    return out


DOC = {
    "apiVersion": "v1",
    "kind": "List",
    "metadata": {"annotations": {"a.b/c": "dotted", "0": "zero"}, "n": 5},
    "items": [{"name": f"pod-{i}", "labels": {"app": "web" if i % 2 else "db"},
               "ports": [80, 443], "spec": {"containers": [{"image": f"img:{i}", "env": []}]}}
              for i in range(100)],
    "small": [1, [2, [3, [4, [5]]]], {"deep": {"deeper": {"deepest": True}}}],
    "empty": {},
    "text": "line1\nline2",
    "unicode": "héllo ✓ 日本",
}


def at(value: Any, path: Sequence[str | int]) -> Any:
    for seg in path:
        value = value[seg]
    return value


def member_value(ix: EntryIndex, path: Sequence[str | int]) -> Any:
    """Parse a node's lines independently of the index code: strip key prefix and comma."""
    info = ix.node(list(path))
    assert info is not None and info.complete
    text = b"".join(ix.read_lines(info.start_line, info.end_line, keepends=True)).decode().strip()
    if path and isinstance(path[-1], str):
        _, end = json.decoder.scanstring(text, 1)  # type: ignore[attr-defined]
        text = text[end:].lstrip()[1:].strip()
    return json.loads(text.removesuffix(","))


def test_lines_and_tokens(tmp_path: Path) -> None:
    data = ("first line\r\nsecond ✓\n\n\n/etc/passwd\n  indented\n\tlast without newline"
            ).encode() + b"\xff"
    ix = store(tmp_path, data)
    lines = split_lines(data)
    assert ix.format == "text" and ix.line_count == len(lines) == 7
    assert ix.read_lines(1, 7) == lines
    assert ix.read_lines(2, 3, keepends=True) == [b"second \xe2\x9c\x93\n", b"\n"]
    assert ix.line_offset(1) == 0 and ix.line_offset(8) == len(data)
    want_starts = [0]
    for line in data.split(b"\n")[:-1]:
        want_starts.append(want_starts[-1] + len(line) + 1)
    assert list(ix.line_starts()) == [*want_starts, len(data)]
    per_line = count_lines(token_lines(data), "o200k_base")
    for a in range(1, 8):
        for b in range(a, 8):
            assert ix.range_tokens(a, b, "o200k_base") == sum(per_line[a - 1:b])
    # The exact total is the count of the whole text, not the sum of lines (blank lines and
    # the "/" line are not safe cuts).
    whole = count_lines([decode_text(data)], "o200k_base")[0]
    assert ix.total_tokens("o200k_base") == whole
    assert ix.range_tokens(1, 1, "cl100k_base") is None
    with pytest.raises(OutOfRange) as exc:
        ix.read_lines(5, 8)
    assert exc.value.details["total_lines"] == 7
    with pytest.raises(OutOfRange):
        ix.read_lines(3, 2)


def test_lines_fitting(tmp_path: Path) -> None:
    data = b"".join(f"line {i} {'word ' * (i % 7)}\n".encode() for i in range(200))
    ix = store(tmp_path, data)
    per = count_lines(token_lines(data), "o200k_base")
    for start in (1, 17, 150, 200, 201):
        for budget in (0, 1, 5, 40, 400, 10**6):
            for overhead in (0, 3):
                want = start - 1
                cost = 0
                for ln in range(start, 201):
                    cost += per[ln - 1] + overhead
                    if cost > budget:
                        break
                    want = ln
                assert ix.lines_fitting(start, budget, "o200k_base", overhead) == want


def test_add_base_later(tmp_path: Path) -> None:
    data = b"alpha beta\ngamma delta\n"
    ix = store(tmp_path, data)
    assert not ix.has_base("cl100k_base")
    ix.add_base("cl100k_base", count_lines=count_lines)
    assert ix.total_tokens("cl100k_base") == count_lines([data.decode()], "cl100k_base")[0]
    again = EntryIndex.open(tmp_path / "content", tmp_path / "index")
    assert again.has_base("cl100k_base") and again.has_base("o200k_base")
    assert again.range_tokens(2, 2, "cl100k_base") == count_lines(["gamma delta\n"],
                                                                  "cl100k_base")[0]


def test_json_structure(tmp_path: Path) -> None:
    data = json.dumps(DOC, separators=(",", ":"), ensure_ascii=False).encode()
    ix = store(tmp_path, data)
    assert (ix.format, ix.layout) == ("json", "canonical")
    paths: list[list[str | int]] = [
        [], ["apiVersion"], ["metadata"], ["metadata", "annotations", "a.b/c"],
        ["metadata", "annotations", "0"], ["items"], ["items", 0], ["items", 57],
        ["items", 99, "spec", "containers", 0, "image"], ["items", 3, "ports", 1],
        ["small", 1, 1, 1, 1, 0], ["small", 2, "deep", "deeper", "deepest"], ["empty"],
        ["text"], ["unicode"], ["items", 42, "spec", "containers", 0, "env"],
    ]
    for path in paths:
        want = at(DOC, path)
        assert ix.value_at(path) == want, path
        assert member_value(ix, path) == want, path
    info = ix.node(["items", 57])
    assert info is not None
    assert (info.type, info.length, info.keys, info.indexed) == (
        "object", 4, ("name", "labels", "ports", "spec"), False)
    root = ix.node([])
    assert root is not None and root.start_line == 1 and root.end_line == ix.line_count
    assert root.keys == tuple(DOC)
    # an int on an object is the key str(int); negative indexes count from the end
    assert ix.value_at(["metadata", "annotations", 0]) == "zero"
    assert ix.value_at(["items", -1, "name"]) == "pod-99"
    assert ix.node(["items", -1]) == ix.node(["items", 99])


def test_item_starts(tmp_path: Path) -> None:
    ix = store(tmp_path, json.dumps(DOC).encode())
    starts = ix.item_starts(["items"])
    assert len(starts) == 100
    for k in (0, 1, 50, 99):
        info = ix.node(["items", k])
        assert info is not None and info.start_line == starts[k]
        assert json.loads(b"".join(ix.read_lines(starts[k], info.end_line)).rstrip(b",")) == \
            DOC["items"][k]
    small = ix.item_starts(["small"])
    assert [ix.read_lines(s, s)[0].strip() for s in small] == [b"1,", b"[", b"{"]
    inner = ix.item_starts(["items", 7, "ports"])
    assert [ix.read_lines(s, s)[0].strip() for s in inner] == [b"80,", b"443"]


def test_missing_paths(tmp_path: Path) -> None:
    ix = store(tmp_path, json.dumps(DOC).encode())
    info = ix.node(["metadata", "nope", "x"])
    assert info is not None and not info.complete and info.missing == "nope"
    assert info.path == ("metadata",)
    with pytest.raises(KeyPathNotFound) as exc:
        ix.value_at(["metadata", "nope"])
    assert exc.value.code == "key_path_not_found"
    assert exc.value.details["valid_prefix"] == "metadata"
    assert exc.value.details["failed_segment"] == "nope"
    assert exc.value.details["available_keys"] == ["annotations", "n"]
    with pytest.raises(KeyPathNotFound) as exc:
        ix.value_at(["items", 100])
    assert exc.value.details["array_length"] == 100
    with pytest.raises(KeyPathNotFound) as exc:
        ix.value_at(["items", 3, "ports", 0, "x"])
    assert exc.value.details["valid_prefix"] == "items.3.ports.0"
    assert exc.value.details["value_type"] == "integer"
    with pytest.raises(KeyPathNotFound):
        ix.value_at(["items", "0"])  # a string key never indexes an array


def test_raw_layout(tmp_path: Path) -> None:
    data = json.dumps(DOC, indent=4).encode()
    ix = store(tmp_path, data, raw=True)
    assert ix.layout == "raw" and (tmp_path / "content").read_bytes() == data
    for path in (["items", 70, "spec", "containers", 0], ["metadata", "annotations", "a.b/c"],
                 ["small", 1, 1], ["items", 99], []):
        assert ix.value_at(path) == at(DOC, path)
        info = ix.node(path)
        assert info is not None and info.complete
        start = ix.line_offset(info.start_line)
        end = ix.line_offset(info.end_line + 1)
        assert json.dumps(at(DOC, path), indent=4).split("\n")[-1].strip() in \
            data[start:end].decode()
    starts = ix.item_starts(["items"])
    assert len(starts) == 100 and starts[0] == ix.node(["items", 0]).start_line  # type: ignore


def test_ndjson(tmp_path: Path) -> None:
    rows = [{"i": i, "msg": f"m{i}", "nested": {"ok": i % 3 == 0}} for i in range(80)]
    lines = [json.dumps(r).encode() for r in rows]
    data = b"\n".join(lines[:40]) + b"\n\n" + b"\n".join(lines[40:]) + b"\n"
    ix = store(tmp_path, data)
    assert ix.format == "ndjson" and ix.line_count == 81
    assert ix.value_at([39]) == rows[39] and ix.value_at([40, "nested", "ok"]) is False
    info = ix.node([41, "msg"])
    assert info is not None and (info.start_line, info.end_line, info.type) == (43, 43, "string")
    starts = ix.item_starts([])
    assert list(starts[38:42]) == [39, 40, 42, 43]
    assert ix.value_at([]) == rows
    schema = ix.info["schema"]
    assert schema["length"] == 80
    keys = {k["key"]: k["count"] for k in schema["items"]["keys"]}
    assert keys == {"i": 80, "msg": 80, "nested": 80, "nested.ok": 80}


KUBECTL_YAML = b"""apiVersion: v1
kind: Pod
metadata:
  name: web-0
  labels:
    app: web
  annotations:
    note: |
      multi
      line
spec:
  containers:
  - name: nginx
    image: nginx:1.25
    ports:
    - containerPort: 80
  - name: sidecar
    image: busybox
on: push
created: 2024-01-02T03:04:05Z
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports: [80, 443]
"""


def test_yaml_multi_document(tmp_path: Path) -> None:
    import yaml

    ix = store(tmp_path, KUBECTL_YAML)
    assert ix.format == "yaml" and ix.info["documents"] == 2
    docs = list(yaml.safe_load_all(KUBECTL_YAML))
    assert ix.value_at([0, "metadata", "annotations"]) == {"note": "multi\nline\n"}
    assert ix.value_at([0, "spec", "containers", 1]) == docs[0]["spec"]["containers"][1]
    assert ix.value_at([1, "spec", "ports"]) == [80, 443]
    assert ix.value_at([0, "on"]) == "push"  # keys are their text; YAML 1.1 booleans too
    assert ix.value_at([0, "created"]) == "2024-01-02T03:04:05Z"  # timestamps stay strings
    info = ix.node([0, "spec", "containers", 0])
    assert info is not None and (info.start_line, info.end_line) == (13, 16)
    info = ix.node([1])
    assert info is not None and (info.start_line, info.end_line) == (22, 27)
    info = ix.node([0, "metadata", "annotations", "note"])
    assert info is not None and (info.start_line, info.end_line) == (8, 10)


TRICKY_YAML = b"""base: &base {cpu: 1, mem: 2Gi}
svc:
  <<: *base
  mem: 4Gi
tags: !custom {a: 1}
when: 2024-01-02
bin: !!binary aGVsbG8=
yes: on
list: &l [1, 2.5, .inf, ~, "07", 0x1F, 1_000]
again: *l
? [complex, key]
: value
text: >
  folded
  text
"""


def test_yaml_values_from_events_match_the_loader(tmp_path: Path) -> None:
    from scratch.index.yamlskel import load_all, yaml_skeleton

    path = tmp_path / "tricky.yaml"
    path.write_bytes(TRICKY_YAML)
    _, docs, values = yaml_skeleton(path, values=True)
    assert docs == 1 and values == load_all(TRICKY_YAML)
    assert values[0]["svc"] == {"cpu": 1, "mem": "4Gi"}
    assert values[0]["when"] == "2024-01-02" and values[0]["yes"] is True
    ix = store(tmp_path, TRICKY_YAML)
    assert ix.format == "yaml"
    assert ix.value_at(["svc", "mem"]) == "4Gi" and ix.value_at(["again", 5]) == 31
    assert ix.value_at(["tags"]) == {"a": 1}


def test_yaml_single_document_is_the_root(tmp_path: Path) -> None:
    data = KUBECTL_YAML.split(b"---\n")[1]
    ix = store(tmp_path, data)
    assert ix.value_at(["metadata", "name"]) == "web"
    assert ix.node([]).type == "object"  # type: ignore[union-attr]


def test_csv_rows(tmp_path: Path) -> None:
    data = (b'id,name,score,when\r\n1,ann,3.5,2024-01-01\r\n2,"bob\r\nsmith",,2024-01-02\r\n'
            b"3,cy,7,2024-01-03\r\n4,dee,x,\r\n")
    ix = store(tmp_path, data)
    assert ix.format == "csv"
    info = ix.info
    assert info["header"] == ["id", "name", "score", "when"] and info["rows"] == 4
    assert [c["type"] for c in info["column_info"]] == ["integer", "string", "string", "date"]
    assert [c["empty"] for c in info["column_info"]] == [0, 0, 1, 1]
    assert list(ix.section("rows") or []) == [1, 2, 3, 5, 6]


def test_log_info(tmp_path: Path) -> None:
    data = (b"2024-01-01 10:00:00,001 INFO start\r\n2024-01-01 10:00:01,002 WARN slow\r\n"
            b"  continuation line\r\n2024-01-01 10:00:02,003 ERROR boom\r\n"
            b"2024-01-01 10:00:03,004 INFO done\r\n")
    ix = store(tmp_path, data)
    assert ix.format == "log"
    info = ix.info
    assert info["timestamp_format"] == "iso8601"
    assert info["time_range"] == ["2024-01-01 10:00:00,001", "2024-01-01 10:00:03,004"]
    assert info["levels"] == {"INFO": 2, "WARN": 1, "ERROR": 1}
    assert list(ix.section("level:ERROR") or []) == [4]
    assert list(ix.section("level:INFO") or []) == [1, 5]
    assert ix.section("level:FATAL") is None
    assert info["first_lines"][0] == "2024-01-01 10:00:00,001 INFO start"
    assert info["last_lines"][-1] == "2024-01-01 10:00:03,004 INFO done"


def test_long_line(tmp_path: Path) -> None:
    long = b"2024-01-01T00:00:00Z ERROR " + b"x" * (9 << 20)  # over two 4 MB blocks
    data = (b"2024-01-01T00:00:00Z INFO a\n" + long + b"\n2024-01-01T00:00:01Z WARN b\n"
            b"2024-01-01T00:00:02Z INFO c")
    ix = store(tmp_path, data)
    assert ix.format == "log" and ix.line_count == 4
    assert ix.read_lines(2, 2) == [long]
    assert ix.info["levels"] == {"INFO": 2, "WARN": 1, "ERROR": 1}
    assert list(ix.section("level:WARN") or []) == [3]
    assert ix.info["last_lines"][-1] == "2024-01-01T00:00:02Z INFO c"
    assert ix.info["first_lines"][1].endswith("x…")
    assert ix.total_tokens("o200k_base") == count_lines([data.decode()], "o200k_base")[0]


def test_markdown_headings(tmp_path: Path) -> None:
    data = (b"# Top\n\ntext with a [link](x)\n\n## A\n\n- one\n- two\n\n```\n# not a heading\n```\n"
            b"## B\n\nSetext\n------\n\nmore\n")
    ix = store(tmp_path, data)
    assert ix.format == "markdown"
    heads = ix.info["headings"]
    assert [(h["title"], h["line"], h["end_line"]) for h in heads] == [("Top", 1, 18)]
    kids = heads[0]["children"]
    assert [(h["title"], h["level"], h["line"], h["end_line"]) for h in kids] == [
        ("A", 2, 5, 12), ("B", 2, 13, 14), ("Setext", 2, 15, 18)]


def test_invalid_index_is_detected(tmp_path: Path) -> None:
    content = tmp_path / "content"
    idx = tmp_path / "index"
    store(tmp_path, json.dumps(DOC).encode()).close()
    EntryIndex.open(content, idx).close()

    def reason() -> str:
        with pytest.raises(IndexInvalid) as exc:
            EntryIndex.open(content, idx)
        assert exc.value.code == "index_invalid"
        return str(exc.value.details["reason"])

    with pytest.raises(IndexInvalid):
        EntryIndex.open(content, tmp_path / "nowhere")
    meta = (idx / "meta.json").read_bytes()
    (idx / "meta.json").write_bytes(meta[:20])
    assert reason() == "corrupt_meta"
    from scratch.index.files import INDEX_FORMAT
    (idx / "meta.json").write_bytes(meta.replace(b'"scratch_index":%d' % INDEX_FORMAT,
                                                 b'"scratch_index":0'))
    assert reason() == "version"
    (idx / "meta.json").write_bytes(meta)
    lines = (idx / "lines.bin").read_bytes()
    (idx / "lines.bin").write_bytes(lines[:-8])
    assert reason() == "bad_size"
    (idx / "lines.bin").write_bytes(lines)
    (idx / "nodes.bin").unlink()
    assert reason() == "missing_file"
    original = content.read_bytes()
    content.write_bytes(original.replace(b'"List"', b'"Lisp"'))  # same size, other bytes
    assert reason() == "content_mismatch"
    content.write_bytes(original + b" ")
    assert reason() == "content_mismatch"
    content.write_bytes(original)
    # rebuilding over a broken index replaces it
    ix = build_index(content, idx, "json", bases=["o200k_base"], count_lines=count_lines)
    assert ix.info["layout"] == "canonical"


def test_corrupt_token_file_is_not_indexed(tmp_path: Path) -> None:
    ix = store(tmp_path, b"a\nb\n")
    path = tmp_path / "index" / "tokens-o200k_base.bin"
    path.write_bytes(path.read_bytes()[:40])
    ix = EntryIndex.open(tmp_path / "content", tmp_path / "index")
    assert not ix.has_base("o200k_base") and ix.range_tokens(1, 1, "o200k_base") is None


def test_rebuild_keeps_a_valid_existing_index(tmp_path: Path) -> None:
    content = tmp_path / "c"
    content.write_bytes(b"x\ny\n")
    first = build_index(content, tmp_path / "i", "text", bases=[], count_lines=count_lines)
    inode = os.stat(tmp_path / "i" / "meta.json").st_ino
    second = build_index(content, tmp_path / "i", "text", bases=[], count_lines=count_lines)
    assert second.line_count == first.line_count == 2
    assert os.stat(tmp_path / "i" / "meta.json").st_ino == inode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c", "i"]  # no temporary left


def test_empty_content(tmp_path: Path) -> None:
    ix = store(tmp_path, b"")
    assert (ix.format, ix.line_count, ix.bytes) == ("text", 0, 0)
    assert ix.total_tokens("o200k_base") == 0
    assert ix.lines_fitting(1, 100, "o200k_base") == 0


def test_reader_import_is_light() -> None:
    code = ("import sys, scratch.index; "
            "bad = [m for m in ('typer', 'rich', 'yaml', 'toktok', 'tiktoken', 'orjson', "
            "'scratch.index.build', 'scratch.index.analyze') if m in sys.modules]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
