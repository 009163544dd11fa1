"""tokens: count the tokens of a text for the agent's model, or cut it by tokens (no MCP tool:
an agent has its own model's count)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from scratch.answers.kernel.result import Payload, Result
from scratch.declare import Arg, Command
from scratch.errors import UsageError, argument

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context

SPLIT_DELIMITER = "\x1e"  # ASCII record separator between split chunks on stdout
CHUNK = 1 << 20


def _spec_dict(ctx: Context) -> dict[str, str | bool | None]:
    spec = ctx.encoding()
    return {"encoding": spec.name, "model": spec.model, "exact": spec.exact}


def count(ctx: Context, chunks: Iterable[bytes]) -> Result[Payload]:
    from scratch.tokens import count_stream
    spec = ctx.encoding()
    n = count_stream(chunks, spec)
    data = {"count": n, **_spec_dict(ctx)}
    notices = () if spec.exact else (f"claude count is an estimate: ceil(cl100k_base x "
                                     f"{spec.factor})",)
    return Result("tokens", data=data, text=f"{n}\n", notices=notices)


def token_ids(ctx: Context, chunks: Iterable[bytes]) -> Result[Payload]:
    from scratch.tokens.stream import ids_stream
    spec = ctx.encoding()
    if not spec.exact:
        raise UsageError("the claude encoding is an estimate and has no token ids; use "
                         f"{argument('encoding')} cl100k_base", code="no_token_ids",
                         argument="encoding")
    out: list[int] = []
    for part in ids_stream(chunks, spec):
        out.extend(part)
    return Result("tokens", data={"ids": out, "count": len(out), **_spec_dict(ctx)},
                  text=" ".join(map(str, out)) + "\n")


def truncate_text(ctx: Context, chunks: Iterable[bytes], n: int, *, tail: bool) -> Result[Payload]:
    from scratch.tokens import tail_stream, truncate_stream
    spec = ctx.encoding()
    pieces = (tail_stream if tail else truncate_stream)(chunks, n, spec)
    data = b"".join(pieces)
    payload = {"text": data.decode("utf-8", errors="replace"), "limit": n,
               "bytes": len(data), **_spec_dict(ctx)}
    return Result("tokens", data=payload, text=data)


def split_text(ctx: Context, chunks: Iterable[bytes], n: int, split_dir: Path | None,
          delimiter: str) -> Result[Payload] | Iterator[bytes]:
    from scratch.tokens import split_stream
    spec = ctx.encoding()
    pieces = split_stream(chunks, n, spec)
    if split_dir is None:
        parts = list(pieces)
        sep = delimiter.encode("utf-8")
        data = {"chunks": [p.decode("utf-8", errors="replace") for p in parts],
                "count": len(parts), "max_tokens": n, **_spec_dict(ctx)}
        return Result("tokens", data=data, text=sep.join(parts))
    stale = sorted(split_dir.glob("chunk-*.txt")) if split_dir.is_dir() else []
    if stale:  # mixing two splits would make the chunks join to neither input
        raise UsageError(f"{split_dir} already holds {len(stale)} chunk file(s) of an earlier "
                         f"split; remove them or choose another {argument('split_dir')}",
                         code="split_dir_not_empty", split_dir=str(split_dir),
                         first=stale[0].name)
    split_dir.mkdir(parents=True, exist_ok=True)
    files = []
    for i, piece in enumerate(pieces, start=1):
        path = split_dir / f"chunk-{i:05d}.txt"
        path.write_bytes(piece)
        files.append(str(path))
    data = {"files": files, "count": len(files), "max_tokens": n, **_spec_dict(ctx)}
    return Result("tokens", data=data, text=f"wrote {len(files)} chunks to {split_dir}\n")


SOURCE = Arg("Input file; stdin when omitted or '-'.", metavar="[FILE|-]", show_default=False)
TRUNCATE = Arg("Print the text of the first N tokens.", flags=("--truncate",), metavar="N",
               show_default=False)
TAIL = Arg("Print the text of the last N tokens.", flags=("--tail",), metavar="N",
           show_default=False)
SPLIT = Arg("Cut into chunks of at most N tokens.", flags=("--split",), metavar="N",
            show_default=False)
SPLIT_DIR = Arg("With split: write chunk-00001.txt ... into DIR instead of the output.",
                flags=("--split-dir",), metavar="DIR", show_default=False)
DELIMITER = Arg("With split to the output: put TEXT between chunks (default: the ASCII record "
                "separator, \\x1e).", flags=("--delimiter",), metavar="TEXT", show_default=False)
IDS = Arg("Print the token ids.", flags=("--ids",))


def tokens(ctx: Context, source: Annotated[str | None, SOURCE] = None,
           truncate: Annotated[int | None, TRUNCATE] = None,
           tail: Annotated[int | None, TAIL] = None, split: Annotated[int | None, SPLIT] = None,
           split_dir: Annotated[str | None, SPLIT_DIR] = None,
           delimiter: Annotated[str, DELIMITER] = SPLIT_DELIMITER,
           ids: Annotated[bool, IDS] = False, *, chunks: Iterable[bytes] | None = None
           ) -> Result[Payload] | Iterator[bytes]:
    """Count, or one of truncate / tail / split / ids, of the file ``source`` or of the
    ``chunks`` the interface reads (the CLI's stdin)."""
    chosen = [name for name, v in (("truncate", truncate), ("tail", tail),
                                   ("split", split), ("ids", ids or None)) if v is not None]
    if len(chosen) > 1:
        raise UsageError(f"choose one of {', '.join(argument(n) for n in chosen)}",
                         code="invalid_argument", argument=chosen[1])
    if split_dir is not None and split is None:
        raise UsageError(f"{argument('split_dir')} goes with {argument('split')} N",
                         code="invalid_argument", argument="split_dir")
    if chunks is None:
        if source is None:
            raise UsageError(f"tokens needs {argument('source')}", code="no_input",
                             argument="source")
        chunks = _file_chunks(source)
    if truncate is not None:
        return truncate_text(ctx, chunks, truncate, tail=False)
    if tail is not None:
        return truncate_text(ctx, chunks, tail, tail=True)
    if split is not None:
        return split_text(ctx, chunks, split, Path(split_dir) if split_dir else None, delimiter)
    if ids:
        return token_ids(ctx, chunks)
    return count(ctx, chunks)


def _file_chunks(source: str) -> Iterator[bytes]:
    from scratch.store.spool import open_input
    with open_input(source) as fh:  # clear errors for a directory, a missing file, ...
        while block := fh.read(CHUNK):
            yield block


COMMAND = Command(
    "tokens", "Count the tokens of FILE or stdin for the agent's model (exact for OpenAI and "
    "Gemini tokenizers, an estimate for Claude).\n\n"
    "--truncate/--tail print the first/last N tokens' text; --split N cuts the input into "
    "chunks of at most N tokens at line ends (joined, they give the input back).\n\n"
    "Example: kubectl get pods -A -o json | scratch tokens --model gpt-4o",
    tokens)
