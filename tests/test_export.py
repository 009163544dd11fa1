"""``scratch export``: an entry's stored bytes back whole, for people: no cap, no charge."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import cli

PODS = Path(__file__).resolve().parents[1] / "scratch" / "samples" / "pods.json"


def test_export_writes_the_stored_bytes_exactly_without_a_cap_or_a_charge(
        scratch_home: Path, tmp_path: Path) -> None:
    cli("ingest", "pods", "--store-always", input=PODS.read_bytes())
    stored = (scratch_home / "agents/default/files/pods").read_bytes()
    cap = {"SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS": "100"}
    used = cli("budget", "--json").json["data"]["used"]
    r = cli("export", "pods", env=cap)
    assert r.code == 0 and r.out == stored  # 62k tokens through a cap of 100
    out = tmp_path / "pods.json"
    r = cli("export", "pods", "-o", str(out), "--json", env=cap)
    assert r.code == 0 and out.read_bytes() == stored
    assert r.json["data"] == {"name": "pods", "version": 1, "bytes": len(stored),
                              "output": str(out)}
    assert cli("budget", "--json").json["data"]["used"] == used


def test_export_of_an_old_version_and_of_binary_content(scratch_home: Path) -> None:
    cli("write", "f", input="one\n")
    cli("write", "f", input="two\n")
    assert cli("export", "f@1").out == b"one\n"
    blob = bytes(range(256))
    cli("write", "b", input=blob)
    assert cli("export", "b").out == blob
    r = cli("export", "b", "--json")
    assert r.json["data"]["binary"] is True and r.json["data"]["content"] is None


def test_export_says_what_is_wrong(scratch_home: Path, tmp_path: Path) -> None:
    assert cli("export", "nope", "--json").json["error"]["code"] == "entry_not_found"
    cli("write", "f", input="x\n")
    r = cli("export", "f", "-o", str(tmp_path), "--json")
    assert r.code == 2 and r.json["error"]["code"] == "invalid_argument"
