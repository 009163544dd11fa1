"""export: the stored bytes of a version exactly, to a file or stdout, for people.

Invariants: no cap and no charge (the bytes go to a person or a file, not into a model's
context), so no MCP tool runs it; a log is exported whole.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from scratch.answers.commands._args import REF
from scratch.answers.kernel.result import Result
from scratch.declare import Arg, Command
from scratch.errors import UsageError

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context

OUTPUT = Arg("Write to this file instead of stdout.", flags=("-o", "--output"), metavar="FILE",
             show_default=False)


def export(ctx: Context, ref: Annotated[str, REF],
           output: Annotated[str | None, OUTPUT] = None) -> Result[dict[str, object]]:
    """The stored bytes of REF exactly, to ``output`` or stdout: no cap, no charge."""
    from scratch.answers.kernel.target import entry_name
    from scratch.store.names import split_ref
    store = ctx.store()
    name, version = split_ref(ref)
    name = entry_name(store, name, deleted=version is not None)
    meta = store.require(name, allow_deleted=version is not None)
    if meta["kind"] == "log":
        path = store.content_path(name, "log")
        shown_version = None
    else:
        ver = store.resolve(name, version)
        path = store.version_file(ver)
        shown_version = ver.version
    data = path.read_bytes()
    info: dict[str, object] = {"name": name, "version": shown_version, "bytes": len(data)}
    if output is None:  # the bytes on stdout; the JSON answer carries them as text when they are
        try:
            info["content"] = data.decode("utf-8")
        except UnicodeDecodeError:
            info.update(content=None, binary=True)
        return Result("export", data=info, text=data)
    target = Path(output)
    if target.is_dir():
        raise UsageError(f"{output} is a directory; give a file name", code="invalid_argument",
                         output=output)
    try:
        target.write_bytes(data)
    except OSError as exc:
        raise UsageError(f"cannot write {output}: {exc.strerror}", code="cannot_write",
                         output=output) from None
    info["output"] = str(target)
    return Result("export", data=info,
                  text=f"{name}: wrote {len(data):,} bytes to {output}\n")


COMMAND = Command(
    "export", "Write the stored bytes of REF exactly, to FILE or stdout: no cap, no charge, no "
    "pointer. For people getting an entry back whole; agents explore with head, grep, get-in "
    "and the rest, which are priced and held to the budget.\n\n"
    "Example: scratch export kubectl_get/20261130T071502Z-1a2b3c4d -o pods.json",
    export)
