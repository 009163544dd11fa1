"""restore: make an old version of an entry the new current one (a deleted entry comes back)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from scratch.answers.commands._args import NAME
from scratch.answers.kernel.result import Result
from scratch.calls import call
from scratch.declare import Arg, Command, Param, Tool
from scratch.errors import UsageError
from scratch.store.names import split_ref

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context
    from scratch.calls import ArgValue

REF = Arg("Entry and the version to bring back.", metavar="NAME@N", max_length=1024,
          complete="names")
VERSION = Arg("The version to bring back.", minimum=1)


def restore(ctx: Context, ref: Annotated[str, REF]) -> Result[dict[str, object]]:
    from scratch.answers.kernel.target import entry_name
    name, version = split_ref(ref)
    if version is None:
        raise UsageError("restore needs a version: restore NAME@N", code="invalid_ref",
                         suggestions=[call("history", name=name)])
    store = ctx.store()
    name = entry_name(store, name, deleted=True)
    rec = store.restore(name, version)
    data = {"name": name, "restored_from": version, "version": rec["version"],
            "unchanged": rec["unchanged"]}
    text = (f"{name}: version {version} is already the current content\n" if rec["unchanged"]
            else f"{name}: restored version {version} as version {rec['version']}\n")
    return Result("restore", data=data, text=text)


def _to_core(args: dict[str, ArgValue]) -> dict[str, ArgValue]:
    """The tool's name and version as the core's one ref, NAME@N."""
    return {"ref": f"{args.pop('name')}@{args.pop('version')}", **args}


def _from_core(args: dict[str, ArgValue]) -> dict[str, ArgValue]:
    name, _, version = str(args.get("ref", "")).rpartition("@")
    return {"name": name, "version": int(version) if version.isdigit() else version}


COMMAND = Command(
    "restore", "Make version N of NAME the new current version.\n\n"
    "Also brings back a deleted entry. Example: scratch restore notes/plan.md@2",
    restore,
    tools=(Tool("restore", "Make an old version of an entry the new current version (also "
                "brings back a deleted entry).", names={"name": "path"},
                own=(Param("name", "str", False, True, None, NAME),
                     Param("version", "int", False, True, None, VERSION)),
                args=("name", "version"), reshape=(_to_core, _from_core),
                read_only=False, idempotent=True, toolset="files"),))
