"""Format detection and normalisation of stored content.

- :func:`sniff` guesses a format from a bounded prefix (:mod:`scratch.formats.sniffer`).
- :func:`normalize` streams an input to its stored form and validates it
  (:mod:`scratch.formats.normalizer`); JSON parsing/rendering rules are in
  :mod:`scratch.formats.jsontext`, embedded documents in :mod:`scratch.formats.embedded`,
  log timestamps and levels in :mod:`scratch.formats.logs`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scratch.lazy import lazy_exports

# Names load from their modules on first use (PEP 562): the index reader imports
# scratch.formats.jsontext for every structured answer and must not pay for the ~60 sniffing
# and log-format regular expressions the other modules compile. (The modules are called
# sniffer and normalizer so that importing them never rebinds the functions' names here.)
_HOME = {"Embedded": "embedded", "slug": "embedded", "ALIASES": "normalizer",
         "Normalized": "normalizer", "canonical_format": "normalizer",
         "normalize": "normalizer", "FORMATS": "sniffer", "SNIFF_BYTES": "sniffer",
         "sniff": "sniffer"}

if TYPE_CHECKING:
    from scratch.formats.embedded import Embedded, slug
    from scratch.formats.normalizer import ALIASES, Normalized, canonical_format, normalize
    from scratch.formats.sniffer import FORMATS, SNIFF_BYTES, sniff

__all__ = ["ALIASES", "FORMATS", "SNIFF_BYTES", "Embedded", "Normalized", "canonical_format",
           "normalize", "sniff", "slug"]


__getattr__ = lazy_exports(__name__, _HOME, globals())
