"""The rules of the stored formats, below the index (nothing here imports it).

- :func:`sniff` guesses a format from a bounded prefix and :func:`canonical_format` names a
  declared one (:mod:`scratch.formats.sniffer`); JSON parsing/rendering rules are in
  :mod:`scratch.formats.jsontext`, embedded documents in :mod:`scratch.formats.embedded`,
  log timestamps and levels in :mod:`scratch.formats.logs`, log line formats in
  :mod:`scratch.formats.logformats` (its parts in :mod:`~scratch.formats.logbase`; the formats
  a header declares, Zeek and W3C, in :mod:`~scratch.formats.headerlogs`; AWS access logs in
  :mod:`~scratch.formats.cloudlogs`; CEF and auditd in :mod:`~scratch.formats.eventlogs`).
- Streaming an input to its stored form (``normalize``) ends in the index's analysis, so it
  lives above: :mod:`scratch.index.normalizer`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scratch.lazy import lazy_exports

# Names load from their modules on first use (PEP 562): the index reader imports
# scratch.formats.jsontext for every structured answer and must not pay for the ~60 sniffing
# and log-format regular expressions the other modules compile. (The module is called
# sniffer so that importing it never rebinds the function's name here.)
_HOME = {"Embedded": "embedded", "slug": "embedded", "ALIASES": "sniffer",
         "canonical_format": "sniffer", "FORMATS": "sniffer", "SNIFF_BYTES": "sniffer",
         "sniff": "sniffer"}

if TYPE_CHECKING:
    from scratch.formats.embedded import Embedded, slug
    from scratch.formats.sniffer import ALIASES, FORMATS, SNIFF_BYTES, canonical_format, sniff

__all__ = ["ALIASES", "FORMATS", "SNIFF_BYTES", "Embedded", "canonical_format", "sniff", "slug"]


__getattr__ = lazy_exports(__name__, _HOME, globals())
