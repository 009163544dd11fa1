"""GitStore reads history with git plumbing, in scratch's own environment.

GitPython is the independent reader here: run in a clean environment it must see the same
commits, times, messages and blobs as :meth:`GitStore.path_history`. And a caller whose
environment points git at another repository (as inside a git hook) changes nothing.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from scratch.redact import Redaction
from scratch.store import Store
from scratch.store.gitstore import blob_sha


def _entry_history(home: Path) -> Store:
    store = Store.open(home)
    store.write("notes", b"one\n", redaction=Redaction())
    store.write("notes", b"two\n", redaction=Redaction())
    store.write("other", b"x\n", redaction=Redaction())
    store.remove("notes")
    store.write("notes", b"three\nwith a second line\n", redaction=Redaction())
    store.write("notes-x", b"a neighbour, not in the history of notes\n", redaction=Redaction())
    return store


def test_path_history_agrees_with_gitpython(scratch_home: Path) -> None:
    from git import Repo

    store = _entry_history(scratch_home)
    rel = "agents/default/files/notes"
    ours = store.git.path_history(rel)
    with Repo(scratch_home) as repo:
        theirs = [{"commit": c.hexsha, "time": c.committed_datetime.astimezone().isoformat(),
                   "timestamp": c.committed_date, "message": str(c.message).strip()}
                  for c in repo.iter_commits("HEAD", paths=rel)][::-1]
    assert [{k: v for k, v in c.items() if k != "blob"} for c in ours] == theirs
    assert [c["blob"] for c in ours] == [blob_sha(b"one\n"), blob_sha(b"two\n"), None,
                                         blob_sha(b"three\nwith a second line\n")]
    assert [c["message"] for c in ours] == [
        "Write notes (agent default), version 1.", "Write notes (agent default), version 2.",
        "Delete notes (agent default).", "Write notes (agent default), version 3."]


def test_history_of_an_entry_that_became_a_folder_has_no_tree_as_a_blob(
        scratch_home: Path) -> None:
    store = Store.open(scratch_home)
    store.write("m", b"file\n", redaction=Redaction())
    store.remove("m")
    store.write("m/k", b"inside\n", redaction=Redaction())
    history = store.git.path_history("agents/default/files/m")
    assert [c["blob"] for c in history] == [blob_sha(b"file\n"), None, None]


def test_a_callers_git_environment_does_not_reach_history(
        scratch_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    other = tmp_path / "other"
    clean = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    subprocess.run(["git", "init", "-q", str(other)], check=True, env=clean)
    store = _entry_history(scratch_home)
    expected = store.history("notes")
    for var, value in (("GIT_DIR", other / ".git"), ("GIT_WORK_TREE", other),
                       ("GIT_OBJECT_DIRECTORY", other / ".git" / "objects"),
                       ("GIT_COMMON_DIR", other / ".git"),
                       ("GIT_INDEX_FILE", other / ".git" / "index")):
        monkeypatch.setenv(var, str(value))
    before = dict(os.environ)
    assert store.history("notes") == expected
    assert [r["version"] for r in expected] == [1, 2, 3]
    assert all(len(r["commit"]) == 12 for r in expected)
    # metadata rebuilt from history under the same environment
    (scratch_home / "agents/default/meta/notes.json").unlink()
    rebuilt = Store.open(scratch_home).require("notes")
    assert [v["message"] for v in rebuilt["versions"]] == [r["message"] for r in expected]
    assert dict(os.environ) == before  # the process environment is never rewritten


def test_big_objects_written_in_process_are_what_git_writes(tmp_path: Path) -> None:
    """Ingest writes a big document's blob itself, from its parts in memory, in a thread:
    the object git then finds has the id and content ``git hash-object`` gives the bytes."""
    from scratch.store import gitstore as G

    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    body = b"".join(b'  "k%d": "%s",\n' % (i, b"v" * (i % 50)) for i in range(300_000))
    parts = (body, b"\n")
    whole = body + b"\n"
    assert len(whole) > G.COMPRESS_SLICE // 8
    writer = G.GitStore(repo).write_blob_async(parts)
    sha = writer.wait()
    path = tmp_path / "whole"
    path.write_bytes(whole)
    want = subprocess.run(["git", "hash-object", str(path)], capture_output=True,
                          check=True).stdout.decode().strip()
    assert sha == want == G.parts_blob(parts) == blob_sha(whole)
    shown = subprocess.run(["git", "cat-file", "blob", sha], cwd=repo, capture_output=True,
                           check=True).stdout
    assert shown == whole
    assert subprocess.run(["git", "fsck", "--full"], cwd=repo, capture_output=True).returncode == 0
    # written again (the object is there already): nothing changes, the id is the same
    assert G.write_loose_parts(repo / ".git", parts, sha) == sha


def test_big_files_written_in_process_are_what_git_writes(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A file past LOOSE_OBJECT_MAX (a big log, NDJSON, CSV) is hashed and compressed in one
    read, from a thread during ingest or in the commit: the object has the id ``git
    hash-object`` gives the file and git reads it back."""
    import os

    from scratch.store import gitstore as G

    monkeypatch.setattr(G, "FILE_SLICE", 1 << 20)  # several slices of a 6 MB file
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    path = tmp_path / "big.log"
    path.write_bytes(b"".join(b"%08d GET /x/%d 200 %s\n" % (i, i % 97, os.urandom(i % 7).hex()
                                                           .encode()) for i in range(200_000)))
    size = path.stat().st_size
    assert size > G.LOOSE_OBJECT_MAX + G.FILE_SLICE
    want = subprocess.run(["git", "hash-object", str(path)], capture_output=True,
                          check=True).stdout.decode().strip()
    assert G.GitStore(repo).store_object_async(path).wait() == want
    shown = subprocess.run(["git", "cat-file", "blob", want], cwd=repo, capture_output=True,
                           check=True).stdout
    assert shown == path.read_bytes()
    assert subprocess.run(["git", "fsck", "--full", "--strict"], cwd=repo,
                          capture_output=True).returncode == 0
    objects = repo / ".git" / "objects"
    assert not [p for p in objects.iterdir() if p.name.startswith("tmp_obj_")]
    # the commit's path for a big file is the same writer: there already, nothing changes
    assert G.GitStore(repo)._store_blob(path, size) == want
    assert G.write_loose_file(repo / ".git", path) == want


def test_a_file_that_changes_while_stored_is_refused(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Another writer appends to the file while it is read (the hook below, at the second
    read): the object is refused, and nothing is left in the objects."""
    from scratch.store import gitstore as G

    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    grows = tmp_path / "grows"
    monkeypatch.setattr(G, "FILE_SLICE", 1 << 20)
    grows.write_bytes(b"x" * (3 << 20))
    real_readv = os.readv
    calls = []

    def growing(fd: int, buffers: list[memoryview]) -> int:
        calls.append(fd)
        if len(calls) == 2:  # another writer appends after the size was taken
            with open(grows, "ab") as more:
                more.write(b"y" * (1 << 20))
        return real_readv(fd, buffers)

    monkeypatch.setattr(os, "readv", growing)
    with pytest.raises(OSError, match="changed size"):
        G.write_loose_file(repo / ".git", grows)
    monkeypatch.setattr(os, "readv", real_readv)
    objects = repo / ".git" / "objects"
    assert sorted(p.name for p in objects.iterdir()) == ["info", "pack"]


@pytest.mark.parametrize("accelerated", [True, False])
def test_both_compressors_write_objects_git_reads(tmp_path: Path, accelerated: bool) -> None:
    """The loose object's deflate is ISA-L's where the isal package is installed (a
    dependency where it has wheels) and zlib's elsewhere: git reads either one as its own,
    streamed slice by slice as the object writer does."""
    from scratch.store import gitstore as G

    if accelerated:
        pytest.importorskip("isal")
    zobj = G.compressor(accelerated)
    assert type(zobj).__module__ == ("isal_zlib" if accelerated else "zlib")
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    text = b"".join(b'{"n": %d, "s": "%s"}\n' % (i, b"x\xc3\xa9" * (i % 9)) for i in range(50_000))
    sha = blob_sha(text)
    stream = zobj.compress(b"blob %d\x00" % len(text))
    for start in range(0, len(text), 100_000):
        stream += zobj.compress(memoryview(text)[start:start + 100_000])
    stream += zobj.flush()
    target = repo / ".git" / "objects" / sha[:2] / sha[2:]
    target.parent.mkdir()
    target.write_bytes(stream)
    shown = subprocess.run(["git", "cat-file", "blob", sha], cwd=repo, capture_output=True,
                           check=True).stdout
    assert shown == text
    assert subprocess.run(["git", "fsck", "--full", "--strict"], cwd=repo,
                          capture_output=True).returncode == 0


def test_without_isal_objects_are_deflated_by_zlib(tmp_path: Path) -> None:
    """Where the isal package is not installed (no wheel for the platform), the object writers
    fall back to zlib: run in a process that cannot import it, both writers' objects are
    zlib's stream and git reads them."""
    import sys

    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    big = tmp_path / "big.ndjson"
    big.write_bytes(b"".join(b'{"i": %d}\n' % i for i in range(600_000)))
    code = (
        "import sys; sys.modules['isal'] = None\n"  # import isal now raises ImportError
        "from pathlib import Path\n"
        "from scratch.store import gitstore as G\n"
        "z = G.compressor()\n"
        "print(type(z).__module__)\n"
        f"git = Path({str(repo / '.git')!r})\n"
        "print(G.write_loose_parts(git, (b'small text\\n' * 1000,)))\n"
        f"print(G.write_loose_file(git, Path({str(big)!r})))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).resolve().parents[1]).stdout.split()
    assert out[0] == "zlib"
    for sha, want in ((out[1], b"small text\n" * 1000), (out[2], big.read_bytes())):
        shown = subprocess.run(["git", "cat-file", "blob", sha], cwd=repo,
                               capture_output=True, check=True).stdout
        assert shown == want
    assert subprocess.run(["git", "fsck", "--full", "--strict"], cwd=repo,
                          capture_output=True).returncode == 0


def test_a_staged_object_enters_git_only_through_its_gate(tmp_path: Path) -> None:
    """Ingest compresses a big document's object while the secret scan still runs: into its
    own staging directory, moved into the objects on the gate's True, removed on False; the
    gate is asked once the file is compressed (a gate that waits on the scan holds up only
    the move)."""
    import os
    import threading

    from scratch.store import gitstore as G
    from scratch.store.locking import temp_owner

    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    staging = tmp_path / "staging"
    staging.mkdir()
    objects = repo / ".git" / "objects"
    before = sorted(p.name for p in objects.iterdir())
    for answer in (False, True):
        parts = (b"secret-free text %s\n" % str(answer).encode() * 1000,)
        asked = threading.Event()
        told = threading.Event()

        def gate(asked: threading.Event = asked, told: threading.Event = told,
                 answer: bool = answer) -> bool:
            asked.set()
            assert sorted(p.name for p in objects.iterdir()) == before  # nothing in git yet
            staged = [p.name for p in staging.iterdir()]  # compressed here, named so that
            assert len(staged) == 1 and temp_owner(staged[0]) == os.getpid()  # it is swept
            told.wait()
            return answer

        writer = G.GitStore(repo).write_blob_async(parts, gate=gate, staging=staging)
        asked.wait()
        told.set()
        sha = writer.wait()
        assert list(staging.iterdir()) == []
        if not answer:
            assert sha is None
            assert sorted(p.name for p in objects.iterdir()) == before
            continue
        assert sha == G.parts_blob(parts)
        shown = subprocess.run(["git", "cat-file", "blob", sha], cwd=repo, capture_output=True,
                               check=True).stdout
        assert shown == b"".join(parts)


def test_an_object_write_that_fails_raises_at_wait(tmp_path: Path) -> None:
    from scratch.store import gitstore as G

    missing = tmp_path / "no-repo" / ".git"
    writer = G.BlobWriter(lambda: G.write_loose_parts(missing, (b"x" * 100,)))
    with pytest.raises(FileNotFoundError):
        writer.wait()
    assert not missing.exists()
