"""What a write stores when it is given a file or a stream: read bounded, refused clearly.

One reader for every interface: the CLI hands it stdin or a FILE, the core a ``source`` path.
Invariants: at most ``limit + 1`` bytes are read (enough to tell the input is too big), in
blocks, so a limit of 64 MiB is never allocated up front; an empty input is refused unless
allowed, naming the argument that allows it.
"""

from __future__ import annotations

from typing import IO

from scratch.errors import LimitExceeded, ScratchError, UsageError, argument


def read_upto(stream: IO[bytes], limit: int | None) -> bytes:
    """All of ``stream``, or its first ``limit + 1`` bytes."""
    parts: list[bytes] = []
    size = 0
    while limit is None or size <= limit:
        want = 1 << 20 if limit is None else min(1 << 20, limit + 1 - size)
        block = stream.read(want)
        if not block:
            break
        parts.append(block)
        size += len(block)
    return b"".join(parts)


def checked(data: bytes, label: str, *, limit: int | None, what: str,
            allow_empty: bool) -> bytes:
    """``data`` read from ``label``, refused when over ``limit`` or (unless allowed) empty."""
    if limit is not None and len(data) > limit:
        raise LimitExceeded(f"{what} from {label} is over limits.max_write_bytes ({limit:,} "
                            "bytes)", code="write_too_large", limit="limits.max_write_bytes",
                            limit_value=limit, attempted_at_least=len(data))
    if not data and not allow_empty:
        hint = (f" (use {argument('allow_empty')} to store an empty file)" if what == "content"
                else "")
        raise UsageError(f"{label} was empty: nothing to store{hint}", code="empty_input",
                         argument="allow_empty" if hint else None)
    return data


def read_file(source: str, *, limit: int | None = None, what: str = "input",
              allow_empty: bool = False) -> bytes:
    """The bytes of the file ``source``, with a clear error for what cannot be read."""
    try:
        with open(source, "rb") as fh:
            data = read_upto(fh, limit)
    except FileNotFoundError:
        raise ScratchError(f"no such file: {source}", code="file_not_found",
                           path=source) from None
    except IsADirectoryError:
        raise UsageError(f"{source} is a directory, not a file",
                         code="invalid_argument") from None
    except PermissionError:
        raise ScratchError(f"cannot read {source}: permission denied",
                           code="permission_denied", path=source) from None
    return checked(data, source, limit=limit, what=what, allow_empty=allow_empty)


def content_to_store(content: bytes | None, source: str | None, *, limit: int,
                     allow_empty: bool, noun: str) -> bytes:
    """What ``write`` and ``artifact put`` store: ``content``, else the bytes of the file
    ``source``; refused over ``limit`` (``limits.max_write_bytes``) and, unless
    ``allow_empty``, when empty (``noun``: what an empty one would be, for the message)."""
    if content is None:
        if source is None:
            raise UsageError(f"no content given: {argument('content')} or "
                             f"{argument('source')}", code="no_input", argument="content")
        return read_file(source, limit=limit, what="content", allow_empty=allow_empty)
    if len(content) > limit:
        raise LimitExceeded(f"the content is {len(content):,} bytes, over "
                            f"limits.max_write_bytes ({limit:,} bytes)", code="write_too_large",
                            limit="limits.max_write_bytes", limit_value=limit,
                            attempted_at_least=len(content))
    if not content and not allow_empty:
        raise UsageError(f"the content was empty: nothing to store ({argument('allow_empty')} "
                         f"stores an empty {noun})", code="empty_input", argument="allow_empty")
    return content
