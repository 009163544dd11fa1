"""Ingest's gate on the redaction scan (scratch.answers.capture.ingest, scratch.redact.core.FileScan).

Input spooled to a file is scanned by a child process while it is normalised as received;
nothing of that may reach the store before the scan's answer. These tests ingest big inputs
(big JSON takes the path whose git object is written from memory during normalisation) with
and without a secret, through the C and the pure-Python reindent, and search every byte under
the store afterwards: every file (the .git directory included) and every git object, loose or
packed, reachable or not (`git cat-file --batch-all-objects`).
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scratch.answers.capture.ingest import IngestOptions, ingest_spooled
from scratch.answers.kernel.context import Context
from scratch.redact.core import FileScan, redact_bytes, scan_file
from scratch.redact.markers import marker, store_key
from scratch.store.spool import spool

GH = "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"  # detect-secrets' own test token
PW = "cGFzc3dvcmQxMjM="  # base64 of password123, a Secret's value


def big_list(*, secret: bool) -> bytes:
    """A minified `kubectl get secrets,pods -o json` of about 1.5 MB (over the size from which
    the canonical text is written and hashed beside the parsing); with ``secret``, a Secret's
    value and a token in a pod's env, far apart."""
    pods = [{"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": f"web-{i}", "uid": f"62a187fd-756e-11ea-b27b-{i:012d}"},
             "spec": {"containers": [{"name": "c", "image": "nginx:1.25",
                                      "env": [{"name": "MODE", "value": f"m{i % 7}"}]}]}}
            for i in range(6000)]
    if secret:
        pods[4000]["spec"]["containers"][0]["env"].append(  # type: ignore[index]
            {"name": "GITHUB_TOKEN", "value": GH})
        pods.insert(0, {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                        "metadata": {"name": "db"}, "data": {"password": PW}})
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": pods},
                      separators=(",", ":")).encode()


def every_byte_under(home: Path) -> bytes:
    """Every file under the store (the .git directory too) and every git object's content."""
    objects = subprocess.run(["git", "-C", str(home), "cat-file", "--batch-all-objects",
                              "--batch"], capture_output=True, check=True).stdout
    files = [p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file()]
    return b"\0".join([objects, *files])


def ingest_file(home: Path, data: bytes, tool: str) -> tuple[dict[str, object], Path]:
    """Ingest ``data`` through the Python entry, spooled to a file whatever its size (as
    input over 8 MiB is), as ``scratch ingest --store-always --tool TOOL``: the pointer's data
    and the stored file."""
    got, stored, _ = ingest_spool_inode(home, data, tool)
    return got, stored


def ingest_spool_inode(home: Path, data: bytes, tool: str
                       ) -> tuple[dict[str, object], Path, int]:
    """:func:`ingest_file`, and the inode of the file the input was spooled to."""
    ctx = Context.build(store=str(home))
    store = ctx.store()
    spooled = spool(io.BytesIO(data), store.cache_dir / "tmp", memory_limit=0)
    assert spooled.path is not None
    inode = spooled.path.stat().st_ino
    try:
        result = ingest_spooled(ctx, spooled, IngestOptions(tool=tool, store_always=True))
    finally:
        spooled.discard()
    assert isinstance(result.data, dict)
    return result.data, store.files_dir / str(result.data["name"]), inode


@pytest.fixture(params=["c", "python"])
def reindent_impl(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
                  ) -> Iterator[str]:
    """Each test runs with the C reindent (when built) and with the pure-Python one (and
    checks that it ran)."""
    import scratch.reindent as reindent
    calls: list[int] = []
    if request.param == "c":
        if not reindent.HAVE_C:
            pytest.skip("the C accelerator is not built")
    else:
        monkeypatch.setattr(reindent, "_c_reindent", None)
        pure = reindent.reindent_py

        def counted(data: bytes, limit: int, max_depth: int) -> tuple[bytes, int, int]:
            calls.append(len(data))
            return pure(data, limit, max_depth)

        monkeypatch.setattr(reindent, "reindent_py", counted)
    yield str(request.param)
    if request.param == "python":
        assert calls and max(calls) > 1 << 20  # the big input went through it


def test_a_secret_in_big_json_never_reaches_the_store(scratch_home: Path,
                                                      reindent_impl: str) -> None:
    data = big_list(secret=True)
    got, stored_file = ingest_file(scratch_home, data, "kubectl_get_all")
    assert got["redacted"] == {"count": 2, "rules": {"github-pat": 1, "k8s-secret-data": 1}}
    everything = every_byte_under(scratch_home)
    assert GH.encode() not in everything
    assert PW.encode() not in everything
    key = store_key(scratch_home)
    assert marker("github-pat", GH.encode(), key).encode() in everything  # stored, redacted
    # the stored form is the redacted input, laid out: the same as redacting it in memory
    stored = json.loads(stored_file.read_bytes())
    assert stored == json.loads(redact_bytes(data, key).data)
    assert not list((scratch_home / "cache" / "tmp").iterdir())  # no copy left behind


def test_big_json_without_a_secret_is_stored_as_normalised(scratch_home: Path,
                                                           reindent_impl: str) -> None:
    data = big_list(secret=False)
    got, stored_file = ingest_file(scratch_home, data, "kubectl_get_pods")
    assert "redacted" not in got  # said only when something was
    stored = stored_file.read_bytes()
    rel = stored_file.relative_to(scratch_home).as_posix()
    assert json.loads(stored) == json.loads(data)
    blob = subprocess.run(["git", "-C", str(scratch_home), "rev-parse", f"HEAD:{rel}"],
                          capture_output=True, check=True, text=True).stdout.strip()
    assert subprocess.run(["git", "-C", str(scratch_home), "cat-file", "blob", blob],
                          capture_output=True, check=True).stdout == stored


def test_a_secret_in_a_big_log_never_reaches_the_store(scratch_home: Path) -> None:
    lines = [f"2024-05-01T10:{i // 60 % 60:02d}:{i % 60:02d}Z GET /api/items/{i} 200"
             for i in range(40000)]
    lines[30000] = f"2024-05-01T18:20:00Z export GITHUB_TOKEN={GH}"
    data = ("\n".join(lines) + "\n").encode()
    got, _ = ingest_file(scratch_home, data, "app_log")
    assert got["redacted"] == {"count": 1, "rules": {"github-pat": 1}}
    assert GH.encode() not in every_byte_under(scratch_home)


def test_the_scan_is_the_same_in_the_child_and_here(tmp_path: Path) -> None:
    path = tmp_path / "in.json"
    path.write_bytes(big_list(secret=True) + b"\npassword=hunter2hunter2 AKIAIOSFODNN7EXAMPLQ\n")
    here = scan_file(path)
    assert [h.rule for h in here[0]] == ["secret-field", "github-pat", "secret-assignment",
                                         "aws-access-token"]
    scanning = FileScan(path)
    try:
        assert scanning.result() == here
        assert scanning.answered_by == "child"
        assert scanning.result() == here  # asked again (another thread): the same answer
    finally:
        scanning.close()
    allowed = FileScan(path, ("^hunter2",))
    assert [h.rule for h in allowed.result()[0]] == ["secret-field", "github-pat",
                                                     "aws-access-token"]
    assert allowed.answered_by == "child"
    allowed.close()


@pytest.mark.parametrize("program", ["/nonexistent/python", "true", "false"])
def test_a_scan_whose_child_fails_is_done_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               program: str) -> None:
    import shutil
    path = tmp_path / "in.txt"
    path.write_bytes(b"export GITHUB_TOKEN=" + GH.encode() + b"\n")
    monkeypatch.setattr(sys, "executable", shutil.which(program) or program)
    scanning = FileScan(path)
    assert [h.rule for h in scanning.result()[0]] == ["github-pat"]
    assert scanning.answered_by == "here"


@pytest.mark.parametrize("program", ["/nonexistent/python", "true", "false"])
def test_a_child_that_fails_leaves_the_scan_to_this_process(
        scratch_home: Path, monkeypatch: pytest.MonkeyPatch, program: str) -> None:
    """No child (it cannot start), one that says nothing, one that fails: the same scan runs
    in this process, and nothing unredacted is stored."""
    import shutil
    found = shutil.which(program) if not program.startswith("/") else program
    monkeypatch.setattr(sys, "executable", found or program)
    got, _ = ingest_file(scratch_home, big_list(secret=True), "kubectl_get_all")
    assert got["redacted"] == {"count": 2, "rules": {"github-pat": 1, "k8s-secret-data": 1}}
    assert GH.encode() not in every_byte_under(scratch_home)


def test_a_scan_given_up_keeps_its_gate_shut(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"nothing to see here\n" * 1000)
    scanning = FileScan(path)
    scanning.close()  # as ingest does when it fails before the answer
    assert scanning.found_nothing() is False  # nothing is written on the way out
    assert FileScan(path).found_nothing() is True


def canonical(data: bytes) -> bytes:
    from scratch.reindent import SAME, reindent

    body = reindent(data)[0] + b"\n"
    assert reindent(body)[2] & SAME
    return body


def test_input_already_in_the_layout_is_stored_without_a_copy(scratch_home: Path,
                                                               reindent_impl: str) -> None:
    """Big JSON already in the canonical layout (as jq, az and json.dumps(indent=2) print it)
    and a big log are stored as the very file they were spooled to (one name left, so the
    store opens it), with the blob git holds; other JSON is written anew."""
    lines = [f"2024-05-01T10:{i // 60 % 60:02d}:{i % 60:02d}Z GET /api/items/{i} 200"
             for i in range(40000)]
    for data, tool, same in [(canonical(big_list(secret=False)), "kubectl_get_pods", True),
                             (("\n".join(lines) + "\n").encode(), "app_log", True),
                             (big_list(secret=False), "kubectl_get_pods", False)]:
        got, stored_file, spooled_inode = ingest_spool_inode(scratch_home, data, tool)
        stat = stored_file.stat()
        assert (stat.st_ino == spooled_inode, stat.st_nlink, stat.st_mode & 0o777) == \
            (same, 1, 0o600), tool
        stored = stored_file.read_bytes()
        if tool == "app_log":
            assert stored == data
        else:
            assert (stored == data, json.loads(stored)) == (same, json.loads(data))
        rel = stored_file.relative_to(scratch_home).as_posix()
        blob = subprocess.run(["git", "-C", str(scratch_home), "rev-parse", f"HEAD:{rel}"],
                              capture_output=True, check=True, text=True).stdout.strip()
        assert subprocess.run(["git", "-C", str(scratch_home), "cat-file", "blob", blob],
                              capture_output=True, check=True).stdout == stored
        assert got["lines"] == stored.count(b"\n")
        assert not list((scratch_home / "cache" / "tmp").iterdir())  # no copy left behind


def test_a_secret_in_big_json_in_the_layout_never_reaches_the_store(scratch_home: Path,
                                                                    reindent_impl: str
                                                                    ) -> None:
    """The spooled file stood for the stored form until the scan answered: the redacted text
    is written to a new file, and neither the secret nor the spooled file reaches the store."""
    data = canonical(big_list(secret=True))
    got, stored_file, spooled_inode = ingest_spool_inode(scratch_home, data, "kubectl_get_all")
    assert got["redacted"] == {"count": 2, "rules": {"github-pat": 1, "k8s-secret-data": 1}}
    everything = every_byte_under(scratch_home)
    assert GH.encode() not in everything and PW.encode() not in everything
    assert stored_file.stat().st_ino != spooled_inode
    key = store_key(scratch_home)
    assert json.loads(stored_file.read_bytes()) == json.loads(redact_bytes(data, key).data)
    assert not list((scratch_home / "cache" / "tmp").iterdir())


def _index_files(home: Path, name: str) -> dict[str, bytes]:
    """The entry's index files (line ends, token sums), by name."""
    from scratch.answers.kernel.target import open_target

    target = open_target(Context.build(store=str(home)), name)
    try:
        folder = target.index.index_dir
    finally:
        target.index.close()
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.suffix == ".bin"}


@pytest.mark.parametrize("impl", ["python", "c"])
@pytest.mark.parametrize("tail", ["same layout", "4 spaces after 1 MiB"])
def test_the_line_pass_started_on_a_guess_is_kept_only_when_right(
        scratch_home: Path, monkeypatch: pytest.MonkeyPatch, tail: str, impl: str) -> None:
    """Big JSON whose first lines are in the stored layout has its line pass started on the
    spooled file before the pure-Python re-indent pass has read it all. When the stored form
    is that file, the pass is kept; when the layout changes further on, it is dropped and the
    stored form gets its own. Either way the index is the one ingest builds without guessing,
    and nothing is left behind. The C pass tells soon enough: no guess there."""
    import scratch.answers.capture.ingest as ingest_mod
    import scratch.reindent as R
    from scratch.index import lines as lines_mod

    if impl == "python":
        monkeypatch.setattr(R, "_c_reindent", None)
        monkeypatch.setattr(R, "HAVE_C", False)
    elif not R.HAVE_C:
        pytest.skip("the C accelerator is not built")
    body = canonical(big_list(secret=False))
    if tail != "same layout":  # the items after the first MiB indented by 4 spaces a level
        cut = body.index(b"\n", 1 << 20)
        body = body[:cut] + body[cut:].replace(b"\n  ", b"\n    ")
    started: list[Path] = []
    real = lines_mod.LinesAhead

    class Seen(real):  # type: ignore[misc, valid-type]
        def __init__(self, source: Path, *args: Any, **kwargs: Any) -> None:
            started.append(source)
            super().__init__(source, *args, **kwargs)

    monkeypatch.setattr(lines_mod, "LinesAhead", Seen)
    ctx = Context.build(store=str(scratch_home))
    tmp_dir = ctx.store().cache_dir / "tmp"
    for name, guess in (("guessed", True), ("not-guessed", False)):
        with monkeypatch.context() as m:
            if not guess:
                m.setattr(ingest_mod, "_laid_out", lambda *a: None)
            spooled = spool(io.BytesIO(body), tmp_dir, memory_limit=0)
            assert spooled.path is not None
            spool_path = spooled.path
            started.clear()
            try:
                ingest_spooled(ctx, spooled, IngestOptions(name=name, store_always=True))
            finally:
                spooled.discard()
        # guessed: the first pass read the spooled file (kept, or dropped for a second one)
        want = [spool_path] if tail == "same layout" else [spool_path, Path("stored")]
        seen = [p if p == spool_path else Path("stored") for p in started]
        assert seen == (want if guess and impl == "python" else [Path("stored")]), \
            (name, started)
        assert not list(tmp_dir.iterdir()), name
    assert _index_files(scratch_home, "guessed") == _index_files(scratch_home, "not-guessed")
    assert _index_files(scratch_home, "guessed")
