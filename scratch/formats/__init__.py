"""Format detection and normalisation of stored content.

- :func:`sniff` guesses a format from a bounded prefix (:mod:`scratch.formats.sniff`).
- :func:`normalize` streams an input to its stored form and validates it
  (:mod:`scratch.formats.normalize`); JSON parsing/rendering rules are in
  :mod:`scratch.formats.jsontext`, embedded documents in :mod:`scratch.formats.embedded`,
  log timestamps and levels in :mod:`scratch.formats.logs`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Names load from their modules on first use (PEP 562): the index reader imports
# scratch.formats.jsontext on every structured answer and must not pay for the sniffing and
# log-format regular expressions compiled by the other modules.
_HOME = {"Embedded": "embedded", "slug": "embedded", "ALIASES": "normalize",
         "Normalized": "normalize", "canonical_format": "normalize", "normalize": "normalize",
         "FORMATS": "sniff", "SNIFF_BYTES": "sniff", "sniff": "sniff"}

if TYPE_CHECKING:
    from scratch.formats.embedded import Embedded, slug
    from scratch.formats.normalize import ALIASES, Normalized, canonical_format, normalize
    from scratch.formats.sniff import FORMATS, SNIFF_BYTES, sniff

__all__ = ["ALIASES", "FORMATS", "SNIFF_BYTES", "Embedded", "Normalized", "canonical_format",
           "normalize", "sniff", "slug"]


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module 'scratch.formats' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"scratch.formats.{module}"), name)
    globals()[name] = value
    return value
