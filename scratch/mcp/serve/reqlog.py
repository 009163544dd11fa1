"""The request log: one JSON object per line for every request, for operators.

Fields: ``time`` (UTC, ms), ``request_id`` (unique per request), ``rpc_id`` (the JSON-RPC id),
``transport``, ``agent``, ``token`` (the token's id, never the token), ``method``, ``tool``,
``tokens`` (what the answer was charged), ``status`` (HTTP refusals), ``duration_ms``,
``outcome`` (``ok``, ``tool_error``, ``error``, or the HTTP refusal: ``unauthorized``,
``rate_limited``, ``forbidden``, ``too_large``) and ``code``. Invariant: never the content of a
request or an answer (no arguments, no text), so the log can be kept and shared.
"""

from __future__ import annotations

import sys
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from scratch.answers.kernel.result import compact_json
from scratch.mcp.wire import JSON


def _now() -> str:
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


class RequestLog:
    """Writes log lines to stderr, or appends them to a file (0600); thread-safe."""

    def __init__(self, path: str | Path | None = None, stream: IO[str] | None = None) -> None:
        self._lock = threading.Lock()
        self._own = None
        if path is not None:
            import os
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            self._own = os.fdopen(fd, "a", buffering=1, encoding="utf-8")
        self._stream = self._own or stream or sys.stderr

    def write(self, **fields: JSON) -> None:
        record = {"time": _now(), **{k: v for k, v in fields.items() if v is not None}}
        line = compact_json(record) + "\n"
        with self._lock:
            try:
                self._stream.write(line)
                self._stream.flush()
            except (OSError, ValueError):
                pass  # a closed log must not take the server down

    def close(self) -> None:
        if self._own is not None:
            self._own.close()
