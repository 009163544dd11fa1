"""A call run beside the caller (scratch.beside.Beside): its answer, what it raised, and
whether it is still running, told without racing the clock (the call waits on an event)."""

from __future__ import annotations

import threading

import pytest

from scratch.beside import Beside


def test_the_answer_and_whether_it_still_runs() -> None:
    go = threading.Event()
    seen: list[str] = []

    def call(a: int, b: int) -> int:
        seen.append(threading.current_thread().name)
        go.wait()
        return a + b

    job = Beside(call, 2, 3, name="scratch-test", daemon=True)
    assert job.running()  # started (Beside returns once the thread runs) and held
    assert seen == ["scratch-test"]
    go.set()
    assert job.result() == 5 and not job.running()
    assert job.result() == 5  # asked again: the same answer


def test_what_the_call_raised_is_raised_to_the_caller() -> None:
    def call() -> None:
        raise OSError(28, "No space left on device")

    job = Beside(call)
    job.wait()  # waiting does not raise
    with pytest.raises(OSError, match="No space left"):
        job.result()
    with pytest.raises(OSError):
        job.result()
