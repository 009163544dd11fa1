"""The public index of one stored version: the reader's lines and tokens, and paths into the
structure.

:class:`EntryIndex` is :class:`scratch.index.reader.IndexReader` (opening, lines, token costs,
node records) plus what :mod:`scratch.index.structure` answers from it: :meth:`~EntryIndex.node`
follows recorded children as far as the records go, then parses only the text of the deepest
recorded node (or of one item of a big array, or one NDJSON line) to finish the path;
:meth:`~EntryIndex.value_at` does the same and returns the value. The reader stays below the
structure (it never imports it); this class sits above both, so neither imports the other's
user.

Importing this module is cheap: the structure code (and its parsers) load on the first path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scratch.index.reader import IndexReader, NodeInfo, Segment


class EntryIndex(IndexReader):
    """The index of one stored version. Use :meth:`open`; close when done (or ``with``)."""

    # -- structure (scratch.index.structure) -------------------------------------------------

    def node(self, segments: Sequence[Segment]) -> NodeInfo | None:
        """Info on the node at ``segments`` or on its deepest existing prefix (``complete``
        false, ``missing`` set). None for formats without structure."""
        from scratch.index import structure

        return structure.resolve(self, list(segments))

    def value_at(self, segments: Sequence[Segment]) -> Any:  # JSON edge: the stored value
        """The value at ``segments`` (a :data:`scratch.jsonvalues.JSON` read from the stored
        entry: its callers narrow it as they read it); raises ``key_path_not_found``
        (KeyPathNotFound) with ``valid_prefix``, ``failed_segment`` and ``available_keys`` /
        ``array_length`` / ``value_type``."""
        from scratch.index import structure

        return structure.value_at(self, list(segments))

    def item_starts(self, segments: Sequence[Segment]) -> Sequence[int]:
        """Start line of every item of the array at ``segments``."""
        from scratch.index import structure

        return structure.item_starts(self, list(segments))
