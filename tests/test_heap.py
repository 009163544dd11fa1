"""scratch.heap: the free memory a thread's allocations leave in glibc's arenas goes back to
the system when asked (a big ingest's end counted ~30 MB more without it)."""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CHURN = """
import threading
from scratch.heap import trim

def anon():
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("RssAnon:")) >> 10

big = bytearray(30 << 20)  # freed: glibc then serves blocks below 30 MB from its arenas
del big

def churn():
    kept = [bytearray(b"x" * (1 << 20)) for _ in range(120)]
    del kept

worker = threading.Thread(target=churn)
worker.start()
worker.join()
before = anon()
print(before, trim(), anon())
"""


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
                    reason="malloc_trim is glibc's")
def test_trim_returns_what_a_thread_freed() -> None:
    out = subprocess.run([sys.executable, "-c", CHURN], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.split()
    before, trimmed, after = int(out[0]), out[1], int(out[2])
    assert before >= 40 and trimmed == "True"  # the freed megabytes were still resident
    assert after <= before - 40
