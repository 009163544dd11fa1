"""scratch.answers.kernel.kept_indexes: indexes a long-lived process keeps open between calls."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from scratch.answers.kernel import kept_indexes
from scratch.answers.kernel.context import Context
from scratch.answers.kernel.execution import execute
from scratch.answers.kernel.kept_indexes import KeptIndex, keep_indexes
from scratch.answers.kernel.rendering import PlainCalls
from scratch.answers.kernel.target import open_target
from scratch.calls import call
from scratch.index import EntryIndex


@pytest.fixture
def kept() -> Iterator[None]:
    keep_indexes(8)
    yield
    keep_indexes(0)


def write(name: str, content: bytes) -> None:
    execute(Context.build(), PlainCalls(), call("write", name=name, content=content))


def head(name: str) -> str:
    return str(execute(Context.build(), PlainCalls(), call("head", ref=name, numbers=False)).text)


def is_open(index: EntryIndex) -> bool:
    return bool(index._maps)  # noqa: SLF001 (the maps an open index holds)


def test_nothing_is_kept_unless_asked(scratch_home: Path) -> None:
    write("a", b"one\n")
    target = open_target(Context.build(), "a")
    assert type(target.index) is EntryIndex
    target.index.close()


def test_a_kept_index_serves_the_next_call_until_the_content_changes(kept: None,
                                                                     scratch_home: Path) -> None:
    write("a", b"one\ntwo\n")
    first = open_target(Context.build(), "a")
    assert isinstance(first.index, KeptIndex)
    real = first.index._kept_index  # noqa: SLF001
    assert first.index.read_lines(1, 2) == [b"one", b"two"]
    first.index.close()
    first.index.close()  # a second close releases nothing more
    assert is_open(real)  # kept: still mapped for the next call
    again = open_target(Context.build(), "a")
    assert again.index._kept_index is real  # noqa: SLF001
    again.index.close()
    write("a", b"three\n")  # a new current file: the old index is not used for it
    assert head("a") == "three\n"
    now = open_target(Context.build(), "a")
    assert now.index._kept_index is not real  # noqa: SLF001
    now.index.close()
    old = open_target(Context.build(), "a@1")  # the old version, from its own file
    assert old.index._kept_index is not real  # noqa: SLF001
    assert old.index.read_lines(1, 2) == [b"one", b"two"]
    old.index.close()
    # the same bytes current again (a new file, same index directory): reopened, the old
    # handle's index closed
    execute(Context.build(), PlainCalls(), call("restore", ref="a@1"))
    assert head("a") == "one\ntwo\n"
    assert not is_open(real)


def test_a_log_that_grew_is_read_from_a_fresh_index(kept: None, scratch_home: Path) -> None:
    ctx = Context.build()
    execute(ctx, PlainCalls(), call("log append", name="ev", entries=[b"one"]))
    assert head("ev").count("\n") == 1
    execute(ctx, PlainCalls(), call("log append", name="ev", entries=[b"two"]))
    assert head("ev").count("\n") == 2


def test_an_index_pushed_out_closes_once_its_last_handle_is_released(kept: None,
                                                                    scratch_home: Path) -> None:
    keep_indexes(2)
    for name in ("a", "b", "c"):
        write(name, f"{name}\n".encode())
    held = open_target(Context.build(), "a")  # a parallel call still reading "a"
    real = held.index._kept_index  # noqa: SLF001
    assert held.index.read_lines(1, 1) == [b"a"]
    for name in ("b", "c"):  # the cache keeps 2: "a" is pushed out
        open_target(Context.build(), name).index.close()
    assert is_open(real)  # still in use
    assert held.index.read_lines(1, 1) == [b"a"]
    held.index.close()
    assert not is_open(real)
    cache = kept_indexes._cache  # noqa: SLF001
    assert cache is not None and len(cache._entries) == 2  # noqa: SLF001


def test_turning_it_off_closes_what_was_kept(scratch_home: Path) -> None:
    keep_indexes(4)
    try:
        write("a", b"x\n")
        target = open_target(Context.build(), "a")
        real = target.index._kept_index  # noqa: SLF001
        assert target.index.read_lines(1, 1) == [b"x"]
        target.index.close()
    finally:
        keep_indexes(0)
    assert not is_open(real)
    assert type(open_target(Context.build(), "a").index) is EntryIndex
