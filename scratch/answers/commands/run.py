"""run: run a command, ingest its stdout, exit with its exit status (no MCP tool: an agent's
MCP client runs its own tools; the MCP proxy stores their results)."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from typing import IO, TYPE_CHECKING, Annotated, cast

from scratch.answers.commands._args import NO_REDACT
from scratch.answers.commands._store_args import FORMAT, RAW, STORE_ALWAYS, TOOL
from scratch.answers.kernel.result import Meta, Result
from scratch.declare import Arg, Command
from scratch.errors import ScratchError, UsageError

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import FrameType

    from scratch.answers.kernel.context import Context
    from scratch.answers.kernel.rendering import Rendering
    from scratch.progress import Progress

FORWARDED = (signal.SIGINT, signal.SIGTERM)


class CommandNotRun(ScratchError):
    """The command could not be started: exit 127 (not found) or 126 (not executable), the
    statuses a shell, env, nice or timeout give, so a caller sees what it would without us."""

    def __init__(self, message: str, *, code: str, status: int, **details: object) -> None:
        super().__init__(message, code=code, **details)
        self.exit_code = status  # type: ignore[assignment]


class Interrupts:
    """SIGINT and SIGTERM sent to scratch while the command runs.

    The first is passed on to the command and its output is read on until the pipe closes, so
    what it writes while it shuts down is kept. A second kills the command (SIGKILL) and stops
    waiting: what is already in the pipe is read, then the spool ends even if a process the
    command started still holds the pipe open. The handler never raises, so blocking reads
    resume after it (PEP 475) and nothing that arrived is thrown away.

    Handlers are installed only in the main thread and only over a signal that is not ignored
    (an ignored SIGINT, as in a background job, stays ignored for the command too).
    """

    def __init__(self) -> None:
        self.received: list[int] = []
        self.proc: subprocess.Popen[bytes] | None = None
        self._previous: dict[int, Callable[[int, FrameType | None], object] | int] = {}

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in FORWARDED:
            previous = signal.getsignal(sig)
            if previous is None or previous == signal.SIG_IGN:
                continue  # not set from Python (cannot be restored) or deliberately ignored
            self._previous[sig] = previous
            signal.signal(sig, self._handle)

    def restore(self) -> None:
        while self._previous:
            sig, previous = self._previous.popitem()
            signal.signal(sig, previous)

    def attach(self, proc: subprocess.Popen[bytes]) -> None:
        """The command has started: pass on what arrived while it was being started."""
        self.proc = proc
        if self.received:
            self._pass_on()

    @property
    def first(self) -> int | None:
        return self.received[0] if self.received else None

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.received.append(signum)
        if self.proc is not None:
            self._pass_on()

    def _pass_on(self) -> None:
        proc = self.proc
        assert proc is not None
        try:
            if len(self.received) == 1:
                proc.send_signal(self.received[0])
            else:
                proc.kill()
        except ProcessLookupError:
            pass  # it has exited already; its pipe closes on its own
        if len(self.received) > 1 and proc.stdout is not None:
            try:
                # a child of the command may hold the pipe open: read what is in it, not more
                # (a non-blocking read with nothing left returns b"", which ends the spool)
                os.set_blocking(proc.stdout.fileno(), False)
            except (OSError, ValueError):
                pass


class WakingPipe:
    """The command's stdout, read so the main thread wakes every :data:`WAKE` seconds.

    A signal sent to scratch may be taken by another thread of the process (a library's
    worker); the main thread, blocked in ``read`` on a pipe, is then not interrupted, so the
    handler that passes the signal on would wait for output the command may never write (it
    waits to be told to stop). Waking regularly lets the handler run. After a second signal
    nothing more is waited for: what is in the pipe is read, then the read ends.
    """

    def __init__(self, fd: int, interrupts: Interrupts) -> None:
        self.fd = fd
        self.interrupts = interrupts

    def fileno(self) -> int:
        return self.fd

    def read1(self, n: int) -> bytes:
        import select
        while not select.select([self.fd], [], [], WAKE)[0]:
            if len(self.interrupts.received) > 1:
                return b""  # killed: a child of the command may hold the pipe open
        try:
            return os.read(self.fd, n)
        except BlockingIOError:  # made non-blocking by a second signal, and nothing left
            return b""

    read = read1


WAKE = 0.1  # seconds: how often the main thread wakes while the command is silent


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


NAME = Arg("Entry name (same as NAME before the command's --).", flags=("--name",),
           metavar="NAME", max_length=1024, show_default=False)
# the words after "--" on the command line (its hook gives them: no option spells them)
WORDS = Arg("The command to run and its arguments.", cli=False, mcp=False)


def run(ctx: Context, tool: Annotated[str | None, TOOL] = None,
        format: Annotated[str | None, FORMAT] = None, raw: Annotated[bool, RAW] = False,
        store_always: Annotated[bool, STORE_ALWAYS] = False,
        name: Annotated[str | None, NAME] = None,
        no_redact: Annotated[bool, NO_REDACT] = False,
        words: Annotated[list[str] | None, WORDS] = None, *,
        rendering: Rendering | None = None) -> Result[object]:
    """``run``: see :func:`run_command`."""
    words = words or []
    return run_command(ctx, words, name=name, tool=tool, fmt=format, raw=raw,
                       store_always=store_always, rendering=rendering, no_redact=no_redact)


def run_command(ctx: Context, words: list[str], *, name: str | None, tool: str | None,
                fmt: str | None, raw: bool, store_always: bool, progress: Progress | None = None,
                rendering: Rendering | None = None, no_redact: bool = False) -> Result[object]:
    """The command's stderr goes straight to ours; its stdout is spooled, then ingested.

    The exit status is only known once stdout closes, so the output is spooled first and
    flagged ``partial`` when the command failed or was killed after writing something, or when
    scratch itself was interrupted (SIGINT, SIGTERM) while reading it; then scratch exits with
    128 + that signal's number.
    """
    from scratch import progress as reporting
    from scratch.answers.capture.ingest import (
        IngestOptions,
        check_options,
        default_tool,
        ingest_spooled,
    )
    from scratch.store.spool import spool
    progress = progress or reporting.report
    if not words:
        raise UsageError("nothing to run: no command was given", code="invalid_argument")
    opts = IngestOptions(name=name, tool=tool or default_tool(words), fmt=fmt, raw=raw,
                         store_always=store_always, no_redact=no_redact)
    store = ctx.store()
    check_options(opts, store)  # a bad NAME or format must not cost a command run and output
    tmp_dir = store.cache_dir / "tmp"
    tmp_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    interrupts = Interrupts()
    # installed before the command starts, so no signal falls between start and spool; once
    # the output is read and the command reaped they are restored, and an interruption of the
    # ingest below aborts as usual (the store's crash journal undoes a half-made change)
    interrupts.install()
    try:
        try:
            # stdin is inherited like any wrapper (time, nice) does: `scratch run -- jq . < f`
            # must feed the command, not hand it an empty input
            proc = subprocess.Popen(words, stdout=subprocess.PIPE)
        except FileNotFoundError:
            raise CommandNotRun(f"command not found: {words[0]}", code="command_not_found",
                                status=127, command=words[0]) from None
        except PermissionError:
            raise CommandNotRun(f"cannot execute {words[0]}: permission denied",
                                code="command_not_executable", status=126,
                                command=words[0]) from None
        interrupts.attach(proc)
        assert proc.stdout is not None
        try:
            pipe = cast("IO[bytes]", WakingPipe(proc.stdout.fileno(), interrupts))
            spooled = spool(pipe, tmp_dir, progress=lambda n: progress("read", n, None))
            code = proc.wait()
        except KeyboardInterrupt:  # only where no handler could be installed
            proc.send_signal(signal.SIGINT)
            proc.wait()
            raise
    finally:
        interrupts.restore()
    proc.stdout.close()
    command_exit = 128 - code if code < 0 else code  # killed by signal N -> 128 + N
    interrupted = interrupts.first
    exit_code = command_exit if interrupted is None else 128 + interrupted
    opts.partial = (code != 0 or interrupted is not None) and spooled.size > 0
    try:
        result = ingest_spooled(ctx, spooled, opts, progress, rendering)
    finally:
        spooled.discard()
    notices = result.notices
    meta: Meta = {**result.meta, "command_exit": command_exit}
    if code != 0:
        how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
        notices = (*notices, f"scratch: {words[0]} {how}")
    if interrupted is not None:
        what = (f"kept the {spooled.size:,} bytes that arrived" if spooled.size
                else "nothing had arrived")
        notices = (*notices, f"scratch: interrupted by {signal_name(interrupted)}; {what}")
        meta["interrupted"] = signal_name(interrupted)
    return Result("run", data=result.data, text=result.text, table=result.table,
                  meta=meta, warnings=result.warnings, charge=result.charge,
                  notices=notices, exit_code=exit_code, style=result.style)


COMMAND = Command(
    "run", "Run CMD, pass its stderr through, treat its stdout like 'ingest', and exit with its "
    "exit code. Output of a command that fails or is killed is kept and flagged partial.\n\n"
    "On Ctrl-C or SIGTERM to scratch itself the signal is passed on to CMD (a second one kills "
    "it); what arrived is kept and flagged partial, and scratch exits with 128 + the signal's "
    "number. A CMD that is not found exits 127, one that cannot be executed 126, as in a "
    "shell.\n\nTOOL defaults to the program and its first non-option word (kubectl_get).\n\n"
    "Usage: scratch run [OPTIONS] [NAME] -- CMD [ARGS]...\n\n"
    "Example: scratch run -- kubectl get pods -A -o json",
    run,
    # the command's own options are its own: they are not parsed as scratch's
    cli_settings={"allow_interspersed_args": False, "allow_extra_args": True})
