"""Per-token rate limits: a token bucket of ``per_minute`` requests, refilled continuously.

Invariants: a request either takes one unit now or is refused with the seconds until one unit
is back (the ``Retry-After`` of the 429); buckets are per key (a token's id), so one client's
burst never slows another's; ``per_minute`` <= 0 turns the limit off.
"""

from __future__ import annotations

import math
import threading
import time


class RateLimiter:
    def __init__(self, per_minute: int, burst: int | None = None) -> None:
        self.per_minute = per_minute
        self.capacity = float(burst if burst is not None else max(per_minute, 1))
        self.rate = per_minute / 60.0  # units per second
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (units, at)
        self._lock = threading.Lock()

    def take(self, key: str, now: float | None = None) -> int:
        """0 when the request may go on; else the whole seconds to wait (at least 1)."""
        if self.per_minute <= 0:
            return 0
        now = time.monotonic() if now is None else now
        with self._lock:
            units, at = self._buckets.get(key, (self.capacity, now))
            units = min(self.capacity, units + (now - at) * self.rate)
            if units >= 1.0:
                self._buckets[key] = (units - 1.0, now)
                return 0
            self._buckets[key] = (units, now)
            return max(1, math.ceil((1.0 - units) / self.rate))
