"""``scratch hook CLIENT``: what a client's hook settings run after every tool call (for Codex,
before every Bash command: :mod:`scratch.hooks.hint`).

It reads the client's payload on stdin. A result below its tool's threshold (the
``[thresholds]`` globs, matched on the client's tool name: ``Bash``, ``mcp__github__*``)
passes: nothing is printed (Cursor: ``{}``) and the client shows the result as it came. At or
over it, the result is stored through ``ingest`` (the answers pipeline: redaction, the ledger,
the budget) and the answer names the client's replacement field holding the pointer, its
``next:`` commands spelled so they run as printed from the model's own shell (``--agent`` and
``--session`` always, ``--store`` when that shell would not find the store by itself).

Invariants (never in the agent's way):
- The exit status is always 0 (Claude Code reads 2 as "block"); on any failure (a bad
  payload, a store locked too long, a full disk, a bug) nothing is replaced, one line goes to
  stderr and one record to the agent's call ledger (when the store exists).
- A run past its deadline (``--timeout`` x 0.8, below the timeout the hook settings give the
  client) stores nothing and passes the result through; only a deadline reached while the
  store commits lets the commit finish (then the pointer is shown).
- The pass-through path imports no Typer, Rich, MCP stack or tokenizer: bytes decide it (a
  token is at least one byte). Everything else is imported inside :mod:`scratch.hooks.capture`.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, NamedTuple

from scratch.hooks.clients import HOOK_CLIENTS, Codex, Found, HookClient, JSONObject
from scratch.hooks.identity import HookIdentity, identity

if TYPE_CHECKING:
    from types import FrameType

    from scratch.calls import Call
    from scratch.jsonvalues import Incoming

Speller = Callable[["Call"], str]
DEFAULT_TIMEOUT = 60.0  # seconds; what `scratch hooks install` gives the client
DEADLINE_SHARE = 0.8  # of the client's timeout: scratch gives up before the client does
# A test hook, off unless this variable names a folder: before storing, the hook waits while
# the file ``hold`` exists there, after creating ``held``. Tests use it to hold a run past its
# deadline without racing the clock.
HOLD_ENV = "SCRATCH_HOOK_TEST_HOLD"


class HookDeadline(BaseException):
    """The run reached its deadline (a BaseException: nothing on the way catches it)."""


class Options(NamedTuple):
    client: HookClient
    store: str | None
    agent: str | None
    timeout: float


class Outcome(NamedTuple):
    code: str  # why nothing was replaced
    message: str
    recorded: bool  # the answers pipeline put it in the ledger already


def parse_args(argv: list[str]) -> Options:
    """``CLIENT [--store DIR] [--agent NAME] [--timeout SECONDS]`` (ValueError: unusable)."""
    words = list(argv)
    values: dict[str, str] = {}
    rest: list[str] = []
    while words:
        word = words.pop(0)
        key, eq, inline = word.partition("=")
        if key in ("--store", "--agent", "--timeout"):
            if not eq:
                if not words:
                    raise ValueError(f"{key} needs a value")
                inline = words.pop(0)
            values[key] = inline
        else:
            rest.append(word)
    if len(rest) != 1 or rest[0] not in HOOK_CLIENTS:
        raise ValueError(f"give one client: {', '.join(HOOK_CLIENTS)} (got {' '.join(rest)!r})")
    timeout = float(values.get("--timeout", DEFAULT_TIMEOUT))
    if not timeout > 0:
        raise ValueError("--timeout must be a positive number of seconds")
    return Options(HOOK_CLIENTS[rest[0]], values.get("--store"), values.get("--agent"),
                   timeout)


def main(argv: list[str], *, stdin: IO[bytes] | None = None, stdout: IO[str] | None = None,
         stderr: IO[str] | None = None, speller: Callable[[], Speller] | None = None) -> int:
    """Answer one hook call; always 0. ``speller`` gives the shell spelling of a call (the
    CLI's), asked for only when a result is stored."""
    started = process_start()
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    try:
        opts = parse_args(argv)
    except ValueError as exc:
        err.write(f"scratch hook: {exc}; nothing replaced\n")
        return 0
    client = opts.client
    quiet = "{}\n" if client.name == "cursor" else ""
    payload: Incoming = None
    who: HookIdentity | None = None
    root: Path | None = None
    found: Found | None = None
    try:
        data = (stdin or sys.stdin.buffer).read()
        payload = _parse(data)
        del data
        if not isinstance(payload, dict):
            raise BadPayload("the payload is not a JSON object")
        who = identity(payload, client.name, opts.agent)
        if client.hint:
            return _hint(client, payload, who, opts, out)
        found = client.found(payload)
        if found is None:
            out.write(quiet)
            return 0
        from scratch.store.names import find_store_root, validate_agent
        validate_agent(who.agent)
        root, root_source = find_store_root(opts.store)
        from scratch.store.config import load_config
        from scratch.thresholds import resolve_threshold
        config = load_config(root, agent=who.agent)
        threshold = resolve_threshold(found.tool, config["thresholds"]).min_tokens
        if found.size() < threshold:  # a token is at least one byte
            out.write(quiet)
            return 0
        from scratch.hooks.capture import capture
        _forget(payload, found)
        deadline = started + opts.timeout * DEADLINE_SHARE
        with Deadline(deadline, root):
            _hold_for_tests()
            shown = capture(client, payload, found, who, root, root_source, speller)
    except HookDeadline:
        fail = _late(root, opts.timeout)
        return _pass(out, err, quiet, client, who, root, found, fail)
    except BadPayload as exc:
        return _pass(out, err, quiet, client, who, root, found,
                     Outcome("hook_bad_payload", str(exc), False))
    except Exception as exc:  # noqa: BLE001 - never in the agent's way: say it, pass
        return _pass(out, err, quiet, client, who, root, found, _failure(exc))
    if shown is None:  # below the threshold in tokens, or shorter than its pointer
        out.write(quiet)
        return 0
    import json
    answer = client.answer(payload, found, shown.pointer, shown.stderr)
    out.write(json.dumps(answer, ensure_ascii=False) + "\n")
    return 0


def _parse(data: bytes) -> Incoming:
    """The payload: the standard library's parser for the small ones (nearly every call;
    orjson's import alone costs more than their parse), orjson for big ones."""
    if len(data) < 1 << 20:
        import json
        try:
            return json.loads(data)
        except ValueError as exc:
            raise BadPayload(f"the payload is not JSON ({exc})") from None
    import orjson
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise BadPayload(f"the payload is not JSON ({exc})") from None


def _hint(client: HookClient, payload: JSONObject, who: HookIdentity, opts: Options,
          out: IO[str]) -> int:
    """Before a tool runs: the client's hint when the command's output is usually big
    (:mod:`scratch.hooks.hint`), else nothing; never a decision that blocks it."""
    if payload.get("hook_event_name", client.event) != client.event \
            or payload.get("tool_name") != "Bash":
        return 0
    from scratch.store.names import find_store_root, validate_agent
    validate_agent(who.agent)
    root, root_source = find_store_root(opts.store)
    from scratch.hooks.hint import hint
    from scratch.store.config import load_config
    config = load_config(root, agent=who.agent)
    store = None
    if root_source == "--store" and find_store_root(None)[0] != root:
        store = str(root)
    text = hint(payload, who, config, store, client.note)
    if text is not None:
        import json
        assert isinstance(client, Codex)
        out.write(json.dumps(client.hinted(text), ensure_ascii=False) + "\n")
    return 0


def _forget(payload: JSONObject, found: Found) -> None:
    """Blank the payload's copies of the text about to be stored (the answer is built from
    the payload's other fields), so that once ingest has spooled it nothing holds it: a
    100 MB result is not kept in memory while ingest indexes it."""
    text = found.text
    if text is None:
        return
    resp = payload.get("tool_response")
    holders = [resp, resp.get("file") if isinstance(resp, dict) else None]
    for holder in holders:
        if not isinstance(holder, dict):
            continue
        for key, value in holder.items():
            if key == "stderr":  # shown beside the pointer, whatever it holds
                continue
            if value is text or (isinstance(value, str) and len(value) == len(text)
                                 and value == text):
                holder[key] = ""


def process_start() -> float:
    """When this process started, on the ``time.monotonic()`` clock: the client's timeout
    counts from the spawn, so the interpreter's start-up counts too (Linux: ``/proc``; else
    now)."""
    now = time.monotonic()
    try:
        with open("/proc/self/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        with open("/proc/uptime", "rb") as fh:
            uptime = float(fh.read().split()[0])
        ticks = os.sysconf("SC_CLK_TCK")
        age = uptime - int(fields[19]) / ticks  # starttime, the 22nd field
    except (OSError, ValueError, IndexError):
        return now
    return now - age if 0 <= age < 10 else now  # else the clocks disagree: trust neither


class BadPayload(Exception):
    """The payload is not a client's hook input."""


def _failure(exc: Exception) -> Outcome:
    code = getattr(exc, "code", None)
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    if isinstance(code, str):
        return Outcome(code, message, getattr(exc, "hook_recorded", False))
    if isinstance(exc, OSError):
        return Outcome("hook_os_error", f"{type(exc).__name__}: {exc}",
                       getattr(exc, "hook_recorded", False))
    return Outcome("internal_error", f"unexpected {type(exc).__name__}: {exc}",
                   getattr(exc, "hook_recorded", False))


def _late(root: Path | None, timeout: float) -> Outcome:
    limit = timeout * DEADLINE_SHARE
    if root is not None and _lock_busy(root):
        return Outcome("store_locked", f"the store stayed locked by another process past the "
                       f"hook's deadline ({limit:g} s, below the client's {timeout:g} s)", False)
    return Outcome("hook_deadline", f"storing would take longer than the hook's deadline "
                   f"({limit:g} s, below the client's {timeout:g} s)", False)


def _lock_busy(root: Path) -> bool:
    import fcntl
    try:
        fd = os.open(root / ".lock", os.O_RDWR | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def _pass(out: IO[str], err: IO[str], quiet: str, client: HookClient,
          who: HookIdentity | None, root: Path | None, found: Found | None,
          fail: Outcome) -> int:
    """Nothing replaced: one line on stderr, one record in the ledger (unless the pipeline
    wrote it), exit 0."""
    out.write(quiet)
    err.write(f"scratch hook {client.name}: {fail.code}: {fail.message}; the output was "
              "passed through\n")
    if not fail.recorded and root is not None and who is not None:
        record(root, who, found, fail)
    return 0


def record(root: Path, who: HookIdentity, found: Found | None, fail: Outcome) -> None:
    """A failed hook run in the agent's call ledger, as command ``hook`` (never raises)."""
    try:
        if not (root / ".git").is_dir():
            return
        from scratch.store import ledger
        args: dict[str, ledger.ArgPreview] = {"tool": ledger.preview(found.tool if found else "")}
        if who.worker:
            args["worker"] = who.worker
        rec = ledger.make(interface="hook", agent=who.agent, session=who.budget_session,
                          command="hook", args=args, outcome="error", code=fail.code,
                          message=fail.message)
        ledger.append(root, rec)
    except Exception:  # noqa: BLE001,S110 - the record is lost, never the pass-through
        pass


class Deadline:
    """SIGALRM at ``at`` (a monotonic time) raises :class:`HookDeadline` in the main thread,
    unless this process holds the store's write lock then (``state/writer`` names it): a
    commit under way finishes, so a deadline never leaves an entry half made."""

    def __init__(self, at: float, root: Path) -> None:
        self.at = at
        self.marker = root / "state" / "writer"
        self.late = False
        # SIGALRM's handler before ours (restored on exit); None: ours was never set
        self._previous: Callable[[int, FrameType | None], object] | int | None = None

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        try:
            committing = self.marker.read_bytes().strip() == str(os.getpid()).encode()
        except OSError:
            committing = False
        if committing:
            self.late = True  # the commit finishes; the pointer is shown
            return
        raise HookDeadline

    def __enter__(self) -> Deadline:
        import signal
        if not hasattr(signal, "setitimer"):
            return self
        left = self.at - time.monotonic()
        if left <= 0:
            raise HookDeadline
        self._previous = signal.signal(signal.SIGALRM, self._handle)
        signal.setitimer(signal.ITIMER_REAL, left)
        return self

    def __exit__(self, *exc: object) -> None:
        import signal
        if self._previous is None:
            return
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, self._previous)


def _hold_for_tests() -> None:
    folder = os.environ.get(HOLD_ENV)
    if not folder:
        return
    hold = os.path.join(folder, "hold")
    if os.path.exists(hold):
        with open(os.path.join(folder, "held"), "w"):
            pass
        while os.path.exists(hold):
            time.sleep(0.01)


__all__ = ["DEFAULT_TIMEOUT", "HOLD_ENV", "HookDeadline", "main", "parse_args"]
