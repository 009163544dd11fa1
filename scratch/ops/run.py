"""`scratch run`: run a command, ingest its stdout, exit with its exit status."""

from __future__ import annotations

import signal
import subprocess
from typing import Any

from scratch.context import Context
from scratch.errors import ScratchError, UsageError
from scratch.result import Result


def run_command(ctx: Context, words: list[str], *, name: str | None, tool: str | None,
                fmt: str | None, raw: bool, store_always: bool, progress: Any = None) -> Result:
    """The command's stderr goes straight to ours; its stdout is spooled, then ingested.

    The exit status is only known once stdout closes, so the output is spooled first and
    flagged ``partial`` when the command failed or was killed after writing something.
    """
    from scratch.ingest import IngestOptions, check_options, default_tool, ingest_spooled
    from scratch.spool import spool
    if not words:
        raise UsageError("nothing to run: scratch run [NAME] -- CMD ARGS...",
                         code="invalid_argument")
    opts = IngestOptions(name=name, tool=tool or default_tool(words), fmt=fmt, raw=raw,
                         store_always=store_always)
    store = ctx.store()
    check_options(opts, store)  # a bad NAME or --format must not cost a command run and output
    tmp_dir = store.cache_dir / "tmp"
    tmp_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        # stdin is inherited like any wrapper (time, nice) does: `scratch run -- jq . < f`
        # must feed the command, not hand it an empty input
        proc = subprocess.Popen(words, stdout=subprocess.PIPE)
    except FileNotFoundError:
        raise ScratchError(f"command not found: {words[0]}", code="command_not_found",
                           command=words[0]) from None
    except PermissionError:
        raise ScratchError(f"cannot execute {words[0]}: permission denied",
                           code="command_not_executable", command=words[0]) from None
    assert proc.stdout is not None
    try:
        spooled = spool(proc.stdout, tmp_dir,
                        progress=(lambda n: progress("read", n, None)) if progress else None)
        code = proc.wait()
    except KeyboardInterrupt:
        proc.send_signal(signal.SIGINT)
        proc.wait()
        raise
    exit_code = 128 - code if code < 0 else code  # killed by signal N -> 128 + N
    opts.partial = code != 0 and spooled.size > 0
    try:
        result = ingest_spooled(ctx, spooled, opts, progress)
    finally:
        spooled.discard()
    notices = result.notices
    if code != 0:
        how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
        notices = (*notices, f"scratch: {words[0]} {how}")
    return Result("run", data=result.data, text=result.text, table=result.table,
                  meta={**result.meta, "command_exit": exit_code}, warnings=result.warnings,
                  notices=notices, exit_code=exit_code, style=result.style)
