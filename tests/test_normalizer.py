"""The stored form as another name of the input (scratch.index.normalizer.normalize's
``adopt``): only when it is the input byte for byte, only for the file the source reads, and
never written through afterwards."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from scratch.index.normalizer import PARALLEL_BYTES, normalize
from scratch.reindent import reindent


def _pods(n: int) -> bytes:
    return json.dumps({"kind": "PodList", "items": [
        {"kind": "Pod", "metadata": {"name": f"web-{i}", "namespace": "default"},
         "status": {"phase": "Running"}} for i in range(n)]}).encode()


@pytest.fixture
def canonical_input(tmp_path: Path) -> Path:
    data = reindent(_pods(12000))[0] + b"\n"
    assert len(data) > PARALLEL_BYTES
    path = tmp_path / "spool"
    path.write_bytes(data)
    return path


def _normalized(src: Path, dest: Path, adopt: Path | None) -> tuple[bool, bytes, str]:
    with open(src, "rb") as source:
        got = normalize(source, dest, adopt=adopt)
    return got.adopted, dest.read_bytes(), got.format


def test_the_input_in_the_layout_becomes_the_stored_file(canonical_input: Path,
                                                         tmp_path: Path) -> None:
    data = canonical_input.read_bytes()
    dest = tmp_path / "dest"
    dest.write_bytes(b"what mkstemp left")
    assert _normalized(canonical_input, dest, canonical_input) == (True, data, "json")
    assert os.path.samefile(dest, canonical_input)
    copy = tmp_path / "copy"  # without adopt: the same bytes, written
    assert _normalized(canonical_input, copy, None) == (False, data, "json")
    assert not os.path.samefile(copy, canonical_input)
    assert copy.stat().st_mode & 0o777 == 0o600


def test_only_the_file_the_source_reads_is_adopted(canonical_input: Path,
                                                   tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.write_bytes(canonical_input.read_bytes())  # the same bytes, another file
    dest = tmp_path / "dest"
    assert _normalized(canonical_input, dest, other)[0] is False
    assert not os.path.samefile(dest, other) and not os.path.samefile(dest, canonical_input)


def test_json_not_in_the_layout_and_text_as_received(tmp_path: Path) -> None:
    spaced = tmp_path / "spaced"  # kubectl's 4-space indentation: laid out anew
    spaced.write_bytes(json.dumps(json.loads(_pods(12000)), indent=4).encode() + b"\n")
    dest = tmp_path / "dest"
    adopted, stored, fmt = _normalized(spaced, dest, spaced)
    assert (adopted, fmt, stored == reindent(spaced.read_bytes())[0] + b"\n") == \
        (False, "json", True)
    log = tmp_path / "log"  # stored as received: adopted
    log.write_bytes(b"".join(b"2024-05-01T10:00:%02dZ GET /items/%d 200\n" % (i % 60, i)
                             for i in range(50000)))
    assert _normalized(log, dest, log) == (True, log.read_bytes(), "log")
    assert os.path.samefile(dest, log)


def test_a_later_write_to_the_same_dest_leaves_the_adopted_file_alone(
        canonical_input: Path, tmp_path: Path) -> None:
    """Ingest normalises a second input into the same file when the first had secrets: the
    new stored form is a new file, and the input (the spool) keeps every byte."""
    data = canonical_input.read_bytes()
    dest = tmp_path / "dest"
    assert _normalized(canonical_input, dest, canonical_input)[0]
    for second in (_pods(5), _pods(12000), b"plain text\n" * 200_000):
        redone = tmp_path / "redone"
        redone.write_bytes(second)
        assert _normalized(redone, dest, None)[0] is False
        assert canonical_input.read_bytes() == data
        assert not os.path.samefile(dest, canonical_input)
        assert dest.stat().st_mode & 0o777 == 0o600


def test_a_stream_in_memory_is_never_adopted(canonical_input: Path, tmp_path: Path) -> None:
    import io

    data = canonical_input.read_bytes()
    dest = tmp_path / "dest"
    got = normalize(io.BytesIO(data), dest, adopt=canonical_input)
    assert (got.adopted, dest.read_bytes()) == (False, data)
    assert not os.path.samefile(dest, canonical_input)


@pytest.mark.parametrize("layout", ["canonical", "4 spaces"])
def test_whole_is_told_once_the_file_is_complete_before_its_blob_id(tmp_path: Path,
                                                                     layout: str) -> None:
    """Big JSON: ``whole(dest)`` comes once the stored form is complete on disk (adopted or
    written), then ``written(dest, blob, parts)`` with the blob id; each once, in that order."""
    import hashlib

    data = reindent(_pods(12000))[0] + b"\n"
    if layout != "canonical":
        data = json.dumps(json.loads(data), indent=4).encode() + b"\n"
    src = tmp_path / "spool"
    src.write_bytes(data)
    stored = reindent(data)[0] + b"\n"
    told: list[tuple[str, bytes, str]] = []
    dest = tmp_path / "dest"

    def whole(path: Path) -> None:
        told.append(("whole", path.read_bytes(), ""))

    def written(path: Path, blob: str, parts: object) -> None:
        told.append(("written", path.read_bytes(), blob))

    with open(src, "rb") as source:
        got = normalize(source, dest, adopt=src, whole=whole, written=written)
    blob = hashlib.sha1(b"blob %d\0" % len(stored) + stored).hexdigest()
    assert told == [("whole", stored, ""), ("written", stored, blob)]
    assert (got.adopted, got.blob) == (layout == "canonical", blob)
