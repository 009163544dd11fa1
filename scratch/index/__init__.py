"""The per-version index: line offsets, token prefix sums, structure and format info.

Built once per stored version (:func:`build_index`), read cheaply (:class:`EntryIndex`). The
on-disk layout and its guarantees are described in :mod:`scratch.index.files`; line and token
definitions in :mod:`scratch.index.lines`; node records in :mod:`scratch.index.skeleton`;
schema summaries in :mod:`scratch.index.schema`.

Importing this package is cheap (no parser or tokenizer is loaded until used).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scratch.errors import IndexInvalid
from scratch.index.files import INDEX_FORMAT
from scratch.index.reader import EntryIndex, NodeInfo


def build_index(content_path: Path, index_dir: Path, fmt: str, **kwargs: Any) -> EntryIndex:
    """See :func:`scratch.index.build.build_index` (imported lazily: readers stay light)."""
    from scratch.index.build import build_index as build

    return build(content_path, index_dir, fmt, **kwargs)  # type: ignore[no-any-return]


def default_count_lines() -> Any:
    from scratch.index.build import default_count_lines as dcl

    return dcl()

__all__ = ["EntryIndex", "NodeInfo", "IndexInvalid", "INDEX_FORMAT", "build_index",
           "default_count_lines"]
