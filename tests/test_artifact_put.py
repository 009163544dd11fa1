"""artifact put (issue 29 point 2): an artifact is stored through the store's one write path,
versioned like an entry, held to write's limits, into the putter's own run only; a refusal
stores nothing."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.test_artifact_read import REPORT, as_, commits, data, error


def test_versions_from_stdin_and_from_a_file(scratch_home: Path, tmp_path: Path) -> None:
    first = data(as_("w1", "artifact", "put", "r1", "out/report.json", input=REPORT))
    assert (first["version"], first["unchanged"]) == (1, False)
    source = tmp_path / "report.json"
    source.write_bytes(REPORT + b"\n")
    second = data(as_("w2", "artifact", "put", "r1", "out/report.json", str(source)))
    assert (second["version"], second["bytes"]) == (2, len(REPORT) + 1)
    same = data(as_("w1", "artifact", "put", "r1", "out/report.json", input=REPORT + b"\n"))
    assert (same["version"], same["unchanged"]) == (2, True)
    log = subprocess.run(["git", "-C", str(scratch_home), "log", "--format=%an|%s"],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert log[:2] == [
        "scratch agent w2|Put artifact out/report.json (agent w2), version 2. Run r1, iteration 1.",
        "scratch agent w1|Put artifact out/report.json (agent w1), version 1. Run r1, iteration 1."]
    assert (scratch_home / "runs" / "r1" / "files" / "out" / "report.json").read_bytes() == (
        REPORT + b"\n")
    assert oct((scratch_home / "runs" / "r1" / "files" / "out" / "report.json").stat()
               .st_mode & 0o777) == "0o600"


def test_a_refused_put_stores_nothing(scratch_home: Path, monkeypatch: pytest.MonkeyPatch
                                      ) -> None:
    data(as_("w1", "artifact", "put", "r1", "a.txt", input=b"a\n"))
    before = commits(scratch_home)
    cases = [
        (("artifact", "put", "r1", "events"), b"x\n", "invalid_name", 2),  # the run's log
        (("artifact", "put", "r1", "../x"), b"x\n", "invalid_name", 2),
        (("artifact", "put", "r1", "b.txt"), b"", "empty_input", 2),
    ]
    for args, content, code, rc in cases:
        assert error(as_("w1", *args, input=content), rc)["code"] == code
    assert error(as_("w9", "artifact", "put", "r1", "c.txt", run="r2", input=b"c\n"), 2)[
        "code"] == "not_in_run"  # a worker of r2 puts into r2 only
    monkeypatch.setenv("SCRATCH_LIMITS_MAX_WRITE_BYTES", "1024")
    assert error(as_("w1", "artifact", "put", "r1", "big.txt", input=b"x" * 2000), 3)[
        "code"] == "write_too_large"
    assert commits(scratch_home) == before
    assert sorted(p.name for p in (scratch_home / "runs" / "r1" / "files").iterdir()) == [
        "a.txt"]
    assert not (scratch_home / "runs" / "r2").exists()


def test_put_answers_as_write_does_redaction_said_in_both(scratch_home: Path) -> None:
    # one builder answers every stored version (write, artifact put): the same figures, the
    # same text; artifact put once said nothing in its text of what redaction replaced
    from tests.helpers import cli
    from tests.test_redactions import GH
    body = f"step 1\nexport GITHUB_TOKEN={GH}\n".encode()
    said = "1 value redacted at capture (github-pat 1)"
    wrote = cli("write", "env.sh", input=body)
    put = cli("artifact", "put", "r1", "env.sh", "--agent", "w1", input=body)
    for run, shown in ((wrote, "env.sh"), (put, "artifact:r1/env.sh")):
        assert run.code == 0, run.err
        first, second, end = run.text.split("\n")
        assert first.startswith(f"{shown}: version 1 (") and first.endswith(" bytes, 2 lines)")
        assert (second, end) == (f"{shown}: {said}", "")
    assert wrote.text.replace("env.sh", "artifact:r1/env.sh") == put.text
    got = cli("artifact", "put", "r1", "env.sh", "--agent", "w1", "--json", input=body).json
    assert got["data"] == {"run": "r1", "name": "env.sh", "ref": "artifact:r1/env.sh",
                           "version": 1, "bytes": got["data"]["bytes"], "lines": 2,
                           "unchanged": True,
                           "redacted": {"count": 1, "rules": {"github-pat": 1}}}
    assert list(got["data"]) == ["run", "name", "ref", "version", "bytes", "lines",
                                 "unchanged", "redacted"]
    again = cli("write", "env.sh", input=body)
    assert again.text == f"env.sh: unchanged (version 1)\nenv.sh: {said}\n"
