"""The per-version index: line offsets, token prefix sums, structure and format info.

Built once per stored content and format (:func:`open_version_index`), read cheaply
(:class:`EntryIndex`). The on-disk layout and its guarantees are described in
:mod:`scratch.index.files`; line and token definitions in :mod:`scratch.index.lines`; node
records in :mod:`scratch.index.skeleton`; schema summaries in :mod:`scratch.index.schema`.

Importing this package is cheap (no parser or tokenizer is loaded until used).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, Unpack

from scratch.errors import IndexInvalid
from scratch.index.entry import EntryIndex
from scratch.index.files import INDEX_FORMAT
from scratch.index.reader import NodeInfo

if TYPE_CHECKING:
    from scratch.index.analyze import Analysis
    from scratch.index.build import Progress
    from scratch.index.lines import CountLines, LinesAhead


class BuildOptions(TypedDict, total=False):
    """What :func:`scratch.index.build.build_index` takes besides the content and its bases."""

    count_lines: CountLines | None
    progress: Progress | None
    analysis: Analysis | None
    ahead: LinesAhead | None


def build_index(content_path: Path, index_dir: Path, fmt: str, *, bases: Sequence[str] = (),
                **kwargs: Unpack[BuildOptions]) -> EntryIndex:
    """See :func:`scratch.index.build.build_index` (imported lazily: readers stay light)."""
    from scratch.index.build import build_index as build

    index: EntryIndex = build(content_path, index_dir, fmt, bases=bases, **kwargs)
    return index


def version_index_dir(index_root: Path, blob: str, fmt: str) -> Path:
    """Where the index of stored content ``blob`` (its git blob id) indexed as ``fmt`` lives.

    The format is part of the key: the same bytes stored once as text (or CSV) and once as
    JSON have different indexes, and neither may answer for the other.
    """
    if not (blob.isalnum() and blob.isascii() and fmt.isalpha() and fmt.isascii()):
        raise ValueError(f"not a blob id and format: {blob!r}, {fmt!r}")
    return Path(index_root) / f"{blob}.{fmt}"


def open_version_index(content_path: Path, index_root: Path, blob: str, fmt: str, base: str,
                       **build_kwargs: Unpack[BuildOptions]) -> EntryIndex:
    """The index of a stored version, with token counts for ``base``: opened, else built.

    Looks under :func:`version_index_dir`, then at ``<index_root>/<blob>``, where indexes were
    kept before the format was part of the key: such an index is used in place when it was
    built for ``fmt``, and otherwise left alone (it may fit another version with these bytes).
    Anything missing, corrupt or built for another format is rebuilt under the new key;
    ``build_kwargs`` go to :func:`build_index` (``analysis``, ``progress``).
    """
    directory = version_index_dir(index_root, blob, fmt)
    for candidate in (directory, directory.with_name(blob)):
        try:
            index = EntryIndex.open(content_path, candidate, fmt)
        except IndexInvalid:
            continue
        try:
            index.add_base(base)
        except IndexInvalid:
            index.close()
            continue
        return index
    return build_index(content_path, directory, fmt, bases=[base], **build_kwargs)


def default_count_lines() -> CountLines:
    from scratch.index.lines import default_count_lines as dcl

    return dcl()

__all__ = ["EntryIndex", "NodeInfo", "IndexInvalid", "INDEX_FORMAT", "build_index",
           "default_count_lines", "open_version_index", "version_index_dir"]
