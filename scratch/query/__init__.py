"""Pure query engines: paths (dot path, JSON Pointer, RFC 9535 JSONPath), grep, item schemas.

Everything here works on plain Python values (what ``json.loads``/``yaml.safe_load`` give) or on
lines/byte buffers. Nothing here touches the store, the index or the CLI; callers wire results to
stored entries and render them. Heavy modules (``re2``, ``jsonpath_rfc9535``) are imported inside
the functions that need them so that importing this package stays cheap.
"""

from __future__ import annotations
