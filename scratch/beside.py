"""One call run in a thread beside the caller, its answer (or what it raised) kept for later.

Ingest runs several such calls while it parses a big input: C calls that release the GIL for
their whole length (a hash, a write), and reads that mostly run in RE2 or wait for a file (the
pointer's error grep, the count of the input as received). :class:`Beside` starts the call
and returns once the thread is about to make it (so the caller's next C call, which may hold
the GIL, does not keep it from starting); :meth:`Beside.result` gives its answer or raises
what it raised, in the caller's thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

R = TypeVar("R")


class Beside(Generic[R]):
    """``call(*args)`` run in a thread named ``name``, started now. ``daemon``: the process
    may end without waiting for it (a read whose answer may go unasked)."""

    def __init__(self, call: Callable[..., R], *args: object, name: str = "scratch-beside",
                 daemon: bool = False) -> None:
        self._out: list[R | BaseException] = []
        ready = threading.Event()

        def run() -> None:
            ready.set()
            try:
                self._out.append(call(*args))
            except BaseException as exc:  # noqa: BLE001 - raised again by result()
                self._out.append(exc)

        self._thread = threading.Thread(target=run, name=name, daemon=daemon)
        self._thread.start()
        ready.wait()

    def running(self) -> bool:
        """Whether the call has not returned yet."""
        return self._thread.is_alive()

    def wait(self) -> None:
        """Until the call has returned (its answer left unread)."""
        self._thread.join()

    def result(self) -> R:
        """The call's answer once it has returned; raises what it raised."""
        self._thread.join()
        got = self._out[0]
        if isinstance(got, BaseException):
            raise got
        return got
