"""scratch.store.spool: every byte read is kept exactly, in memory or in a temp file, with its sha256.

A regular file past the memory limit is copied by the kernel and hashed from the copy in a
thread; a pipe, a stream with bytes read ahead into its buffer, and small inputs take the
block-by-block path. Each case checks the kept bytes, the size and the sha256 against the
input, computed independently with ``hashlib``; one ingest runs the real CLI with stdin
redirected from a file.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

from scratch.store.spool import CHUNK, Spooled, spool

LIMIT = 2 * CHUNK  # the memory limit used here: a few MiB make a "big" input


def content(n: int) -> bytes:
    """``n`` bytes that differ from block to block (a misplaced block changes the hash)."""
    line = b"".join(b"%08d some log text\n" % i for i in range(4096))
    reps = n // len(line) + 1
    return b"".join(line.replace(b"some", b"%04x" % r) for r in range(reps))[:n]


def kept(s: Spooled) -> bytes:
    return b"".join(s.chunks())


def test_regular_file_past_the_limit_is_copied_exactly(tmp_path: Path) -> None:
    data = content(5 * CHUNK + 12345)
    src = tmp_path / "in.bin"
    src.write_bytes(data)
    seen: list[int] = []
    with open(src, "rb") as fh:
        s = spool(fh, tmp_path / "tmp", memory_limit=LIMIT, progress=seen.append)
    try:
        assert s.digest is None and s.hashing is not None  # the kernel's copy, hashed beside
        assert s.data is None and s.path is not None
        assert s.path.parent == tmp_path / "tmp" and s.path.name.startswith(".tmp-spool-")
        assert (s.path.stat().st_mode & 0o777) == 0o600
        assert s.size == len(data) and kept(s) == data
        assert s.head(100) == data[:100]
        assert s.sha256 == hashlib.sha256(data).hexdigest()
        assert seen and seen[-1] == len(data)
    finally:
        s.discard()
    assert not s.path.exists()


def test_regular_file_changed_after_the_spool_keeps_what_was_read(tmp_path: Path) -> None:
    data = content(3 * CHUNK + 7)
    src = tmp_path / "in.bin"
    src.write_bytes(data)
    with open(src, "rb") as fh:
        s = spool(fh, tmp_path, memory_limit=LIMIT)
    try:
        with open(src, "r+b") as out:  # rewritten in place, then grown
            out.write(b"X" * len(data))
            out.write(b"more")
        assert kept(s) == data and s.size == len(data)
        assert s.sha256 == hashlib.sha256(data).hexdigest()
    finally:
        s.discard()


def test_regular_file_read_from_its_current_position(tmp_path: Path) -> None:
    data = content(4 * CHUNK)
    src = tmp_path / "in.bin"
    src.write_bytes(data)
    fd = os.open(src, os.O_RDONLY)
    os.lseek(fd, 1000, os.SEEK_SET)  # as `(head -c 1000 >/dev/null; scratch ingest) < file`
    with os.fdopen(fd, "rb") as fh:
        s = spool(fh, tmp_path, memory_limit=LIMIT)
    try:
        assert kept(s) == data[1000:] and s.sha256 == hashlib.sha256(data[1000:]).hexdigest()
    finally:
        s.discard()


def test_bytes_already_in_the_stream_buffer_are_kept(tmp_path: Path) -> None:
    # the buffered reader holds more than the 10 bytes taken: the kernel copy would skip them
    data = content(4 * CHUNK)
    src = tmp_path / "in.bin"
    src.write_bytes(data)
    with open(src, "rb") as fh:
        assert fh.read(10) == data[:10]
        s = spool(fh, tmp_path, memory_limit=LIMIT)
    try:
        assert s.digest is not None  # read block by block, through the buffer
        assert kept(s) == data[10:] and s.sha256 == hashlib.sha256(data[10:]).hexdigest()
    finally:
        s.discard()


def test_small_regular_file_stays_in_memory(tmp_path: Path) -> None:
    data = content(LIMIT)  # exactly the limit: not past it
    src = tmp_path / "in.bin"
    src.write_bytes(data)
    with open(src, "rb") as fh:
        s = spool(fh, tmp_path, memory_limit=LIMIT)
    assert s.path is None and s.data == data
    assert s.sha256 == hashlib.sha256(data).hexdigest()
    assert list(tmp_path.iterdir()) == [src]


def test_pipe_past_the_limit_goes_to_a_file(tmp_path: Path) -> None:
    data = content(5 * CHUNK + 1)
    r, w = os.pipe()

    def feed() -> None:
        with os.fdopen(w, "wb") as out:
            out.write(data)

    writer = threading.Thread(target=feed)
    writer.start()
    with os.fdopen(r, "rb") as fh:
        s = spool(fh, tmp_path, memory_limit=LIMIT)
    writer.join()
    try:
        assert s.data is None and s.path is not None
        assert kept(s) == data and s.sha256 == hashlib.sha256(data).hexdigest()
    finally:
        s.discard()


def test_file_on_another_file_system_is_copied_exactly(tmp_path: Path) -> None:
    # /dev/shm is tmpfs: the kernel may refuse a copy across file systems (then it is read)
    shm = Path("/dev/shm")
    base = shm if shm.is_dir() and os.access(shm, os.W_OK) else tmp_path
    data = content(3 * CHUNK + 99)
    src = base / f"scratch-spool-test-{os.getpid()}"
    src.write_bytes(data)
    try:
        with open(src, "rb") as fh:
            s = spool(fh, tmp_path / "tmp", memory_limit=LIMIT)
    finally:
        src.unlink()
    try:
        assert kept(s) == data and s.sha256 == hashlib.sha256(data).hexdigest()
    finally:
        s.discard()


def test_ingest_from_a_redirected_file_names_and_finds_it_by_hash(tmp_path: Path,
                                                                  scratch_home: Path) -> None:
    # past the 8 MiB spool limit, through the real CLI with stdin a regular file
    data = content(9 * CHUNK)
    src = tmp_path / "big.log"
    src.write_bytes(data)
    env = {**os.environ, "SCRATCH_HOME": str(scratch_home)}
    names = []
    for _ in range(2):
        with open(src, "rb") as fh:
            r = subprocess.run([sys.executable, "-m", "scratch", "ingest", "--tool", "big",
                                "--format", "text", "--json"], stdin=fh, capture_output=True,
                               env=env, timeout=120)
        assert r.returncode == 0, r.stderr
        names.append(r.stdout)
    first, second = (json.loads(out)["data"] for out in names)
    assert first["name"].endswith("-" + hashlib.sha256(data).hexdigest()[:8])
    assert second["name"] == first["name"] and second.get("already_stored") is True
    stored = scratch_home / "agents" / "default" / "files" / first["name"]
    assert stored.read_bytes() == data
    assert not [p for p in (scratch_home / "cache" / "tmp").iterdir()
                if p.name.startswith(".tmp-")]
