"""Nothing scratch opens inside the store is reached through a symlink or a hard link.

Each case places a real link where an agent with write access to the store could (real files,
a real outside directory, the real CLI) and checks that no outside file is shown, written or
created: a rebuildable cache file is replaced, anything else is refused with ``unsafe_path``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.helpers import cli


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    out = tmp_path / "outside"
    out.mkdir()
    (out / "secret").write_text("SECRET\n")
    return out


def _blob(home: Path, name: str, version: int) -> str:
    meta = json.loads((home / "agents/default/meta" / f"{name}.json").read_text())
    return str(meta["versions"][version - 1]["blob"])


def _listing(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def test_a_symlinked_cached_blob_is_replaced(scratch_home: Path, outside: Path) -> None:
    cli("write", "f", input="v1\n")
    cli("write", "f", input="v2\n")
    blobs = scratch_home / "cache/blobs"
    blobs.mkdir(parents=True, exist_ok=True)
    cached = blobs / _blob(scratch_home, "f", 1)
    cached.unlink(missing_ok=True)
    cached.symlink_to(outside / "secret")
    r = cli("read", "f@1")
    assert r.code == 0 and r.out == b"v1\n"  # from git, not the outside file
    assert not cached.is_symlink() and cached.read_bytes() == b"v1\n"
    assert (outside / "secret").read_text() == "SECRET\n"


def test_a_hard_linked_cached_blob_is_replaced(scratch_home: Path, outside: Path) -> None:
    cli("write", "f", input="v1\n")
    cli("write", "f", input="v2\n")
    blobs = scratch_home / "cache/blobs"
    blobs.mkdir(parents=True, exist_ok=True)
    cached = blobs / _blob(scratch_home, "f", 1)
    cached.unlink(missing_ok=True)
    os.link(outside / "secret", cached)
    assert cli("read", "f@1").out == b"v1\n"
    assert os.stat(cached).st_nlink == 1 and os.stat(outside / "secret").st_nlink == 1


@pytest.mark.parametrize("top", ["cache", "state", "agents", "cache/index", "cache/tmp"])
@pytest.mark.parametrize("command", [("read", "f"), ("head", "f"), ("budget",),
                                     ("write", "g")])
def test_a_symlinked_store_directory_is_refused(scratch_home: Path, outside: Path, top: str,
                                                command: tuple[str, ...]) -> None:
    cli("write", "f", input="v1\n")
    cli("head", "f")  # an index and budget state exist
    real = scratch_home / top
    real.mkdir(parents=True, exist_ok=True)
    real.rename(scratch_home / (top.replace("/", "_") + ".moved"))
    real.symlink_to(outside, target_is_directory=True)
    before = _listing(outside)
    r = cli(*command, "--json", input="x\n")
    if command == ("budget",) and top != "state":  # it reads nothing there: answers
        assert r.code == 0 and _listing(outside) == before
        return
    assert r.code != 0
    err = r.json["error"]
    assert err["code"] == "unsafe_path" and err["reason"] == "symlink"
    assert err["path"] == top
    assert _listing(outside) == before  # nothing written, nothing created out there


def test_a_symlinked_index_directory_is_rebuilt_in_place(scratch_home: Path,
                                                         outside: Path) -> None:
    cli("write", "f", input="line 1\nline 2\n")
    assert cli("head", "f").code == 0
    index_root = scratch_home / "cache/index"
    (key,) = [p for p in index_root.iterdir() if not p.name.startswith(".")]
    decoy = outside / "decoy-index"
    key.rename(decoy)
    key.symlink_to(decoy, target_is_directory=True)
    before = _listing(decoy)
    r = cli("head", "f", "--no-numbers")
    assert r.code == 0 and r.out == b"line 1\nline 2\n"
    assert key.is_dir() and not key.is_symlink()
    assert _listing(decoy) == before


def test_a_hard_linked_log_is_refused_and_the_outside_file_untouched(
        scratch_home: Path, outside: Path) -> None:
    cli("log", "append", "lg", input="first")
    log = scratch_home / "agents/default/logs/lg.jsonl"
    target = outside / "bashrc"
    target.write_text("# outside\n")
    log.unlink()
    os.link(target, log)
    r = cli("log", "append", "lg", "--json", input="second")
    assert r.code != 0
    err = r.json["error"]
    assert (err["code"], err["reason"], err["links"]) == ("unsafe_path", "hard_link", 2)
    assert target.read_text() == "# outside\n"
    r = cli("log", "read", "lg", "--json")
    assert r.json["error"]["code"] == "unsafe_path"


def test_a_symlinked_log_is_refused(scratch_home: Path, outside: Path) -> None:
    cli("log", "append", "lg", input="first")
    log = scratch_home / "agents/default/logs/lg.jsonl"
    log.unlink()
    log.symlink_to(outside / "secret")
    for command in (("log", "append", "lg"), ("log", "read", "lg"), ("log", "tail", "lg")):
        r = cli(*command, "--json", input="x")
        assert r.code != 0 and r.json["error"]["code"] == "unsafe_path", command
    assert (outside / "secret").read_text() == "SECRET\n"


@pytest.mark.parametrize("kind", ["symlink", "hardlink"])
def test_linked_content_and_metadata_are_refused(scratch_home: Path, outside: Path,
                                                 kind: str) -> None:
    cli("write", "f", input="v1\n")
    cli("write", "m", input="m1\n")
    content = scratch_home / "agents/default/files/f"
    meta = scratch_home / "agents/default/meta/m.json"
    fake_meta = outside / "meta.json"
    fake_meta.write_bytes(meta.read_bytes())
    for path, source in ((content, outside / "secret"), (meta, fake_meta)):
        path.unlink()
        if kind == "symlink":
            path.symlink_to(source)
        else:
            os.link(source, path)
    for command in (("read", "f"), ("head", "f"), ("read", "m")):
        r = cli(*command, "--json")
        assert r.code != 0, command
        assert r.json["error"]["code"] == "unsafe_path", (command, r.json)
        assert b"SECRET" not in r.out
    assert (outside / "secret").read_text() == "SECRET\n"


def test_a_symlinked_lock_file_is_refused(scratch_home: Path, outside: Path) -> None:
    cli("write", "f", input="v1\n")
    lock = scratch_home / ".lock"
    lock.unlink(missing_ok=True)
    lock.symlink_to(outside / "secret")
    r = cli("write", "f", "--json", input="v2\n")
    assert r.code != 0 and r.json["error"]["code"] == "unsafe_path"
    assert (outside / "secret").read_text() == "SECRET\n"


def test_a_store_root_that_is_a_symlink_still_works(tmp_path: Path) -> None:
    real = tmp_path / "real-store"
    real.mkdir()
    link = tmp_path / "store-link"
    link.symlink_to(real, target_is_directory=True)
    env = {"SCRATCH_HOME": str(link)}
    assert cli("write", "f", input="v1\n", env=env).code == 0
    assert cli("read", "f", env=env).out == b"v1\n"
    assert (real / "agents/default/files/f").read_bytes() == b"v1\n"


def test_a_directory_checked_before_is_walked_again_once_a_link_replaces_it_or_one_above(
        tmp_path: Path, outside: Path) -> None:
    # a long-lived process remembers directories it found real; a link placed since, at the
    # directory or above it, leading anywhere else, is still refused
    from scratch.errors import UnsafePath
    from scratch.safefs import check_dirs
    root = tmp_path / "store"
    (root / "state/budget/a").mkdir(parents=True)
    (outside / "a").mkdir()
    target = root / "state/budget/a/s.json"
    check_dirs(root, target)
    check_dirs(root, target)  # remembered: one lstat
    (root / "state/budget").rename(tmp_path / "moved")
    (root / "state/budget").symlink_to(outside, target_is_directory=True)
    with pytest.raises(UnsafePath) as above:
        check_dirs(root, target)
    assert above.value.details["path"] == "state/budget"
    (root / "state/budget").unlink()
    (root / "state/budget").mkdir()
    check_dirs(root, target)  # missing below a real directory: fine (made later)
    (root / "state/budget/a").symlink_to(outside / "a", target_is_directory=True)
    with pytest.raises(UnsafePath) as at:
        check_dirs(root, target)
    assert at.value.details["path"] == "state/budget/a"
    (root / "state/budget/a").unlink()
    (root / "state/budget/a").mkdir()  # a new real directory where the link was: fine
    check_dirs(root, target)
    check_dirs(root, target)


def test_write_all_writes_every_byte(tmp_path: Path) -> None:
    """Every byte arrives, in order, from bytes, a memoryview and a buffer of wider items,
    also through a pipe that takes a little per write."""
    import array
    import threading

    from scratch.safefs import write_all

    data = os.urandom(3 * (1 << 18) + 5)
    wide = array.array("Q", range(70_000))
    for given, want in ((data, data), (memoryview(data)[7:], data[7:]), (wide, wide.tobytes()),
                        (b"", b"")):
        path = tmp_path / "out"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            write_all(fd, given)
        finally:
            os.close(fd)
        assert path.read_bytes() == want
    read_fd, write_fd = os.pipe()
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(b"".join(iter(
        lambda: os.read(read_fd, 10_000), b""))))
    reader.start()
    write_all(write_fd, data)
    os.close(write_fd)
    reader.join()
    os.close(read_fd)
    assert got == [data]
