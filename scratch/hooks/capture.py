"""A hooked tool's result stored through ``ingest``, and the pointer the client shows instead.

The one way into the store is the answers pipeline (:func:`scratch.answers.kernel.execution.
execute` running ``ingest``), as for the CLI and the MCP proxy: secrets are redacted there,
the call lands in the agent's call ledger (interface ``hook``), storing is counted and the
pointer charged to the client's session. The result streams in: a file the client spilled
(Claude Code's ``persistedOutputPath``) is read by ingest's spool straight from disk; a text in
the payload is read as its UTF-8 bytes a slice at a time (:class:`TextStream`: never a whole
encoded copy) and let go once ingest has spooled it. An MCP result is read as the proxy reads one
(:func:`scratch.mcp.proxy.extract.extract`): its JSON and markdown blocks and its images are
stored as companions of the entry.

The pointer is the CLI's text (what ``scratch ingest`` prints), its warnings and notices on
lines after it, each ``next:`` command spelled to run as printed from the model's shell.
"""

from __future__ import annotations

import io
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from scratch.answers.kernel.rendering import Rendering
from scratch.hooks.clients import UTF8_STEP

if TYPE_CHECKING:
    from collections.abc import Callable

    from _typeshed import WriteableBuffer

    from scratch.calls import ArgValue, Call
    from scratch.errors import ScratchError
    from scratch.hooks.clients import Found, HookClient, JSONObject
    from scratch.hooks.identity import HookIdentity
    from scratch.tokens import EncodingSpec

# bytes of a Bash stderr shown whole beside the pointer: with a pointer (at most 800 tokens)
# the whole answer stays under the 10,000 characters past which Claude Code spills a hook's
# output to a file
STDERR_KEPT = 4 * 1024


class Shown(NamedTuple):
    pointer: str  # what the model reads instead of the result
    stderr: str | None  # Bash: the stderr to show beside it (None: as it came)
    name: str  # the entry stored


class HookText(Rendering):
    """The CLI's plain text, each call spelled ``scratch GLOBALS COMMAND ...`` so that it runs
    as printed from the model's shell, which has none of the hook's settings."""

    name = "text"

    def __init__(self, shell_line: Callable[[Call], str], globals_: list[str]) -> None:
        self.shell_line = shell_line
        self.prefix = " ".join(shlex.quote(w) for w in ["scratch", *globals_])

    def spell(self, call: Call) -> str:
        line = self.shell_line(call)
        return self.prefix + line[len("scratch"):] if line.startswith("scratch ") else line

    def error_cost(self, command: str, error: ScratchError, spec: EncodingSpec) -> int:
        from scratch.tokens import count_text
        return count_text(f"error [{error.code}]: {error.message}\n", spec)


class TextStream(io.RawIOBase):
    """A str read as its UTF-8 bytes (lone surrogates kept, as ``surrogatepass`` encodes
    them), at most ``size`` bytes a read, each read encoding one slice: the whole encoded
    copy a ``BytesIO`` would need is never made. At its end the str is let go."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self._text: str | None = text
        self._at = 0
        self._wide = 1 if text.isascii() else 4  # most bytes one character takes

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        text = self._text
        if text is None:
            return b""
        step = UTF8_STEP if size is None or size < 0 else max(1, size // self._wide)
        piece = text[self._at:self._at + step]
        self._at += len(piece)
        if self._at >= len(text):
            self._text = None
        return piece.encode("utf-8", errors="surrogatepass")

    def readall(self) -> bytes:
        return b"".join(iter(lambda: self.read(UTF8_STEP), b""))

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer)
        data = self.read(len(view))
        view[:len(data)] = data
        return len(data)


def spelled_globals(root: Path, root_source: str, who: HookIdentity) -> list[str]:
    """The options a next command needs in the model's shell: the agent and the budget
    session always; the store when the shell (the same environment and directory as this
    hook) would not find this one by itself."""
    from scratch.store.names import find_store_root
    out: list[str] = []
    if root_source == "--store" and find_store_root(None)[0] != root:
        out += ["--store", str(root)]
    return [*out, "--agent", who.agent, "--session", who.budget_session]


def capture(client: HookClient, payload: JSONObject, found: Found, who: HookIdentity,
            root: Path, root_source: str,
            speller: Callable[[], Callable[[Call], str]] | None) -> Shown | None:
    """Store ``found`` and return what to show, or None when ingest passed it through
    (fewer tokens than the threshold) or the output is shorter than any pointer to it."""
    from scratch.answers.kernel.context import Context
    from scratch.answers.kernel.execution import execute
    from scratch.calls import Call
    ctx = Context.build(store=str(root), agent=who.agent, session=who.budget_session)
    ctx.interface = "hook"
    if speller is None:
        raise RuntimeError("scratch hook needs the CLI's spelling of calls (a speller)")
    rendering = HookText(speller(), spelled_globals(root, root_source, who))
    args = _ingest_args(client, payload, found, who)
    stderr = _stderr(found, args)
    try:
        result = execute(ctx, rendering, Call("ingest", args))
    except Exception as exc:
        exc.hook_recorded = True  # type: ignore[attr-defined]  # the pipeline recorded it
        raise
    finally:
        stream = args.get("stream")
        if isinstance(stream, io.IOBase):  # ours: a TextStream or the spilled file
            stream.close()
    data = result.data if isinstance(result.data, dict) else {}
    from scratch.answers.kernel.result import spelled
    text = spelled(result.text, rendering.spell)
    if not data.get("name") or not isinstance(text, str):
        return None
    lines = [text.rstrip("\n")]
    lines += [f"warning: {w}" for w in result.warnings]
    lines += [spelled(n, rendering.spell) for n in result.notices]
    name = str(data["name"])
    if stderr is not None:
        stderr += f"\n[scratch: the whole stderr is stored as {name}.stderr]\n"
    return Shown("\n".join(lines) + "\n", stderr, name)


def _ingest_args(client: HookClient, payload: JSONObject, found: Found,
                 who: HookIdentity) -> dict[str, ArgValue]:
    info: dict[str, object] = {"client": client.name, "tool": found.tool, "session": who.session,
                            **found.info}
    if who.worker:
        info["worker"] = who.worker
    if isinstance(payload.get("tool_use_id"), str):
        info["tool_use_id"] = payload["tool_use_id"]
    args: dict[str, ArgValue] = {"tool": found.tool, "partial": found.partial}
    notices: list[str] = []
    if found.mcp is not None:
        args["stream"] = TextStream(_mcp_content(found.mcp, args, info, notices))
    elif found.path is not None:
        args["stream"] = open(found.path, "rb")  # noqa: SIM115 (closed by capture)
        info["spilled_file"] = found.path
    else:
        assert found.text is not None
        args["stream"] = TextStream(found.text)
        found.text = None  # the stream holds the only reference left: spooled, it is freed
    if found.partial:
        info["partial_reason"] = "the tool was interrupted: its output stops where it stopped"
    args["info"] = {"hook": info}
    if notices:
        args["notices"] = tuple(notices)
    return args


def _mcp_content(result: JSONObject, args: dict[str, ArgValue], info: dict[str, object],
                 notices: list[str]) -> str:
    """An MCP result's text as the proxy stores it; its documents and attachments go into
    ``args`` as companions."""
    from scratch.answers.capture.ingest import Companion
    from scratch.mcp.proxy.extract import extract
    ex = extract(result)
    text = ex.text
    if ex.prefix:
        text = ex.text[ex.json_at:]
        said = ex.prefix.strip()
        notices.append("scratch: the result's text began with "
                       f"{said if len(said) <= 80 else said[:77] + '...'!r} before the JSON "
                       "stored here")
        info["prefix"] = ex.prefix
    companions = tuple(Companion(slug, t.encode("utf-8", errors="surrogatepass"))
                       for slug, t in ex.documents)
    companions += tuple(Companion(a.slug, a.data, "binary", a.mime_type) for a in ex.attachments)
    if companions:
        args["companions"] = companions
    if ex.links:
        info["resource_links"] = [{k: v for k, v in link.items()
                                   if k in ("uri", "name", "mimeType")} for link in ex.links]
    return text


def _stderr(found: Found, args: dict[str, ArgValue]) -> str | None:
    """Bash's stderr as shown beside the pointer: whole up to :data:`STDERR_KEPT` bytes, else
    its head and tail around a marker, the whole of it stored as the companion ``stderr``."""
    if not found.stderr:
        return None
    raw = found.stderr.encode("utf-8", errors="surrogatepass")
    if len(raw) <= STDERR_KEPT:
        return None
    from scratch.answers.capture.ingest import Companion
    from scratch.mcp.proxy.intercept import cut_text
    had = args.get("companions", ())  # a tuple, when _mcp_content set them
    args["companions"] = (*(had if isinstance(had, tuple) else ()), Companion("stderr", raw))
    return cut_text(found.stderr, STDERR_KEPT)


__all__ = ["HookText", "Shown", "TextStream", "capture", "spelled_globals"]
