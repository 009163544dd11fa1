"""Operations on versioned files and the store. Each returns a Result."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scratch.answers.kernel.context import Context
from scratch.answers.kernel.result import Result, Table, Words
from scratch.calls import call
from scratch.diffing import CR_SYMBOL, compare, summarize_ops
from scratch.errors import UsageError
from scratch.gitstore import GitStore
from scratch.names import STORE_DIR_NAME, split_ref, validate_name
from scratch.store import Store


def init(directory: Path) -> Result:
    root = (directory / STORE_DIR_NAME).absolute()
    existed = GitStore(root).exists()
    Store.open(root)
    data = {"store": str(root), "created": not existed}
    verb = "Already a scratch store" if existed else "Created a scratch store"
    return Result("init", data=data, text=f"{verb} at {root}\n")


def write(ctx: Context, name: str, content: bytes | None = None, source: str | None = None,
          allow_empty: bool = False) -> Result:
    """Store ``content`` (or the bytes of the file ``source``) as the next version of NAME.

    Every interface is held to the same limits here: content over ``limits.max_write_bytes``
    and empty content (unless ``allow_empty``) are refused before anything is stored."""
    validate_name(name)
    limit = ctx.config["limits.max_write_bytes"]
    if content is None:
        content = read_file(source, limit=limit, what="content", allow_empty=allow_empty)
    elif len(content) > limit:
        from scratch.errors import LimitExceeded
        raise LimitExceeded(f"the content is {len(content):,} bytes, over "
                            f"limits.max_write_bytes ({limit:,} bytes)", code="write_too_large",
                            limit="limits.max_write_bytes", limit_value=limit,
                            attempted_at_least=len(content))
    elif not content and not allow_empty:
        raise UsageError("the content was empty: nothing to store (allow_empty stores an "
                         "empty file)", code="empty_input")
    data = content
    rec = ctx.store().write(name, data)
    out = {k: rec[k] for k in ("name", "version", "bytes", "lines", "unchanged")}
    if rec["unchanged"]:
        text = f"{name}: unchanged (version {rec['version']})\n"
    else:
        size = (f"{rec['bytes']:,} byte{'' if rec['bytes'] == 1 else 's'}, "
                f"{rec['lines']:,} line{'' if rec['lines'] == 1 else 's'}")
        text = f"{name}: version {rec['version']} ({size})\n"
    return Result("write", data=out, text=text)


def read_since(ctx: Context, ref: str, since: int, context: int = 3) -> Result:
    name, version = split_ref(ref)
    store = ctx.store()
    new = store.resolve(name, version)
    old = store.resolve(name, since)
    return _diff_result("read", store, name, old, new, context)


def diff(ctx: Context, name: str, a: int, b: int, context: int = 3) -> Result:
    store = ctx.store()
    return _diff_result("diff", store, name, store.resolve(name, a), store.resolve(name, b),
                        context)


def _diff_result(command: str, store: Store, name: str, old: Any, new: Any,
                 context: int) -> Result:
    if context < 0:
        raise UsageError("-U must be >= 0", code="invalid_argument")
    if old.info.get("binary") or new.info.get("binary"):
        raise _not_text(name)
    base = {"name": name, "from_version": old.version, "to_version": new.version}
    if old.info["blob"] == new.info["blob"]:
        data = dict(base, unchanged=True, ops=[], added=0, removed=0)
        return Result(command, data=data, text="",
                      notices=(f"{name}: unchanged between versions {old.version} and "
                               f"{new.version}",))
    try:
        diff = compare(store.read_bytes(old), store.read_bytes(new),
                       old_label=f"{name}@{old.version}", new_label=f"{name}@{new.version}",
                       context=context)
    except UnicodeDecodeError:  # not UTF-8 past the sniffed head: no exact line diff exists
        raise _not_text(name) from None
    data = dict(base, unchanged=False, ops=diff.ops, **summarize_ops(diff.ops))
    notices = ((f"{name}: {CR_SYMBOL} in this diff marks a carriage return and is also a "
                f"literal character of the content; --json shows the exact lines",)
               if diff.literal_cr_symbol else ())
    return Result(command, data=data, text=diff.text, style="diff", notices=notices)


def _not_text(name: str) -> UsageError:
    return UsageError(f"{name!r} holds binary content; line diffs need text",
                      code="binary_content", name=name)


def history(ctx: Context, name: str) -> Result:
    rows = ctx.store().history(name)
    table = Table(["version", "time", "bytes", "lines", "commit", "message"],
                  [[r["version"], r["time"], r["bytes"], r["lines"], r["commit"], r["message"]]
                   for r in rows])
    return Result("history", data={"name": name, "versions": rows}, table=table)


def restore(ctx: Context, ref: str) -> Result:
    name, version = split_ref(ref)
    if version is None:
        raise UsageError("restore needs a version: restore NAME@N", code="invalid_ref",
                         suggestions=[call("history", name=name)])
    rec = ctx.store().restore(name, version)
    data = {"name": name, "restored_from": version, "version": rec["version"],
            "unchanged": rec["unchanged"]}
    text = (f"{name}: version {version} is already the current content\n" if rec["unchanged"]
            else f"{name}: restored version {version} as version {rec['version']}\n")
    return Result("restore", data=data, text=text)


def remove(ctx: Context, name: str) -> Result:
    rec = ctx.store().remove(name)
    if rec["kind"] == "log":
        return Result("rm", data=rec, text=f"Deleted log {name}\n")
    back = call("restore", ref=f"{name}@{rec['versions']}")
    return Result("rm", data=rec, text=Words((f"Deleted {rec['kind']} {name}; ", back,
                                              " brings it back\n")))


def ls(ctx: Context, prefix: str = "") -> Result:
    rows = ctx.store().list(prefix)
    table = Table(["name", "kind", "version", "bytes", "lines", "updated"],
                  [[r["name"], r["kind"], r["version"] if r["version"] is not None else "-",
                    r["bytes"], r["lines"], r["updated"]] for r in rows])
    return Result("ls", data={"agent": ctx.agent, "entries": rows}, table=table)


def git_passthrough(ctx: Context, args: list[str]) -> int:
    """Run git on the whole store (every agent's entries): a tool for people, not agents."""
    return ctx.store(create=False).git.run_user(args)


def read_file(source: str | None, *, limit: int | None = None, what: str = "input",
              allow_empty: bool = False) -> bytes:
    """The bytes of the file ``source`` (at most ``limit``; an empty one refused unless
    allowed), with a clear error for what cannot be read."""
    if source is None:
        raise UsageError(f"no {what} given", code="no_input")
    try:
        with open(source, "rb") as fh:
            data = fh.read(limit + 1) if limit is not None else fh.read()
    except FileNotFoundError:
        from scratch.errors import ScratchError
        raise ScratchError(f"no such file: {source}", code="file_not_found",
                           path=source) from None
    except IsADirectoryError:
        raise UsageError(f"{source} is a directory, not a file",
                         code="invalid_argument") from None
    except PermissionError:
        from scratch.errors import ScratchError
        raise ScratchError(f"cannot read {source}: permission denied",
                           code="permission_denied", path=source) from None
    if limit is not None and len(data) > limit:
        from scratch.errors import LimitExceeded
        raise LimitExceeded(f"{what} from {source} is over limits.max_write_bytes ({limit:,} "
                            "bytes)", code="write_too_large", limit="limits.max_write_bytes",
                            limit_value=limit, attempted_at_least=len(data))
    if not data and not allow_empty:
        hint = " (use --allow-empty to store an empty file)" if what == "content" else ""
        raise UsageError(f"{source} was empty: nothing to store{hint}", code="empty_input")
    return data
