"""scratch.heap: the free memory a thread's allocations leave in glibc's arenas goes back to
the system when asked (a big ingest's end counted ~30 MB more without it)."""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# A thread allocates 160 blocks of 1 MB and keeps every other one: the freed blocks are holes
# in its arena (not its top, which glibc gives back by itself), resident until trimmed.
# The mmap threshold is set, not left to glibc's own adjustment, so the blocks come from the
# arena whatever ran before.
CHURN = """
import ctypes
import threading
from scratch.heap import trim

ctypes.CDLL(None).mallopt(-3, 8 << 20)  # M_MMAP_THRESHOLD

def anon():
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("RssAnon:")) >> 10

kept = []

def churn():
    blocks = [bytearray(b"x" * (1 << 20)) for _ in range(160)]
    kept.extend(blocks[1::2])
    blocks.clear()

worker = threading.Thread(target=churn)
worker.start()
worker.join()
before = anon()
print(before, trim(), anon(), len(kept))
"""


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
                    reason="malloc_trim is glibc's")
def test_trim_returns_what_a_thread_freed_and_keeps_what_is_held() -> None:
    out = subprocess.run([sys.executable, "-c", CHURN], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.split()
    before, trimmed, after, held = int(out[0]), out[1], int(out[2]), int(out[3])
    assert (trimmed, held) == ("True", 80)
    assert before >= 160  # the 80 freed megabytes were still resident
    assert 80 <= after <= before - 60  # they are gone; the 80 held are not
