"""Format detection and normalisation of stored content.

- :func:`sniff` guesses a format from a bounded prefix (:mod:`scratch.formats.sniff`).
- :func:`normalize` streams an input to its stored form and validates it
  (:mod:`scratch.formats.normalize`); JSON parsing/rendering rules are in
  :mod:`scratch.formats.jsontext`, embedded documents in :mod:`scratch.formats.embedded`,
  log timestamps and levels in :mod:`scratch.formats.logs`.
"""

from __future__ import annotations

from scratch.formats.embedded import Embedded, slug
from scratch.formats.normalize import ALIASES, Normalized, canonical_format, normalize
from scratch.formats.sniff import FORMATS, SNIFF_BYTES, sniff

__all__ = ["ALIASES", "FORMATS", "SNIFF_BYTES", "Embedded", "Normalized", "canonical_format",
           "normalize", "sniff", "slug"]
