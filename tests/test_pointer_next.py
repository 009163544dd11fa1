"""Every next command a pointer prints runs as printed, under the per-call cap."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from tests.helpers import cli

CAP = 3000


def next_commands(data: bytes, *extra: str) -> list[str]:
    r = cli("ingest", "--store-always", "--json", *extra, input=data,
            env={"SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS": str(CAP)})
    assert r.code == 0, r.out
    return r.json["data"]["next"]


def assert_all_run(commands: list[str]) -> None:
    env = {"SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS": str(CAP)}
    for cmd in commands:
        args = shlex.split(cmd)
        assert args[0] == "scratch"
        cli("budget", "reset")
        r = cli(*args[1:], "--json", env=env)
        assert r.code == 0, (cmd, r.out[:1500])


def test_long_lines_shrink_the_windows(scratch_home: Path) -> None:
    # NDJSON whose lines cost ~600 tokens each: 40 of them would be ~24k tokens
    lines = [json.dumps({"id": i, "blob": " ".join(f"w{i}x{j}" for j in range(300))})
             for i in range(200)]
    nxt = next_commands(("\n".join(lines) + "\n").encode())
    slices = [c for c in nxt if " slice " in c]
    tails = [c for c in nxt if " tail " in c]
    assert len(slices) == 1 and len(tails) == 1
    n_slice = int(slices[0].split()[-1])
    n_tail = int(tails[0].split()[-1])
    assert 1 <= n_slice < 40 and 1 <= n_tail < 40
    assert_all_run(nxt)


def test_a_value_too_big_to_print_is_asked_for_with_fit(scratch_home: Path) -> None:
    doc = {"items": [{"name": f"n{i}", "data": [f"value {i} {j}" for j in range(3000)]}
                     for i in range(3)]}
    nxt = next_commands(json.dumps(doc).encode())
    get_ins = [c for c in nxt if " get-in " in c]
    assert get_ins and get_ins[0].endswith(" items.0 --fit")
    assert_all_run(nxt)


def test_a_wide_schema_is_asked_for_at_a_depth_that_fits(scratch_home: Path) -> None:
    doc = {f"group{g}": {f"key{k}": {f"leaf{m}": m for m in range(6)} for k in range(40)}
           for g in range(8)}
    nxt = next_commands(json.dumps(doc).encode())
    schema = [c for c in nxt if " schema " in c]
    assert len(schema) == 1 and " --depth " in schema[0]
    assert_all_run(nxt)


def test_small_outputs_keep_the_usual_commands(scratch_home: Path) -> None:
    doc = {"items": [{"name": f"pod-{i}", "phase": "Running"} for i in range(300)]}
    nxt = next_commands(json.dumps(doc).encode())
    ref = shlex.split(nxt[0])[2]
    assert f"scratch schema {ref}" in nxt
    assert f"scratch get-in {ref} items.0" in nxt
    assert f"scratch slice {ref} 1 40" in nxt and f"scratch tail {ref} -n 40" in nxt


def test_markdown_pointer_suggests_the_outline(scratch_home: Path) -> None:
    parts = [f"# Part {i}\n\n" + "".join(f"## Section {i}.{j}\n\nSome words here.\n\n"
                                          for j in range(5)) for i in range(10)]
    text = "".join(parts) + "text line\n" * 500
    nxt = next_commands(text.encode(), "--format", "markdown")
    assert any(" schema " in c for c in nxt)
    assert_all_run(nxt)


CORPUS_FILES = ["ndjson/nginxplus_json_logs.ndjson", "aws/custodian/ecs.DescribeServices.json",
                "json/openapi/kubernetes-swagger-v1.27.json", "json/large/canada.json",
                "k8s/custodian/clusterroles.vcr-cassette.yaml", "json/large/citm_catalog.json"]


@pytest.mark.parametrize("rel", CORPUS_FILES)
def test_corpus_pointers_next_commands_run(scratch_home: Path, corpus_dir: Path,
                                           rel: str) -> None:
    path = corpus_dir / rel
    if not path.is_file():
        pytest.skip(f"{rel} is not in this corpus")
    assert_all_run(next_commands(path.read_bytes()))
