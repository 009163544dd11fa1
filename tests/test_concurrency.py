"""Many processes on one store: nothing lost, ids unique, git history clean."""

from __future__ import annotations

import os
import subprocess
from multiprocessing import get_context
from pathlib import Path

import orjson

from scratch.redact import Redaction


def _worker(args: tuple[str, int, int]) -> None:
    home, worker, rounds = args
    os.environ["SCRATCH_HOME"] = home
    from scratch.store import Store, logs

    store = Store.open(Path(home), "default")
    for i in range(rounds):
        store.write(f"w{worker}/f{i % 5}", f"worker {worker} round {i}\n".encode(), redaction=Redaction())
        logs.append(store, "shared", [f"w{worker}-{i}".encode()], redaction=Redaction())


def test_four_processes_fifty_writes_and_appends(scratch_home: Path) -> None:
    from scratch.store import Store

    Store.open(scratch_home, "default")
    rounds = 50
    with get_context("spawn").Pool(4) as pool:
        pool.map(_worker, [(str(scratch_home), w, rounds) for w in range(4)])
    lines = (scratch_home / "agents/default/logs/shared.jsonl").read_bytes().splitlines()
    records = [orjson.loads(line) for line in lines]
    assert sorted(r["id"] for r in records) == list(range(1, 4 * rounds + 1))
    assert sorted(r["entry"] for r in records) == sorted(
        f"w{w}-{i}" for w in range(4) for i in range(rounds))
    store = Store.open(scratch_home, "default")
    for w in range(4):
        for f in range(5):
            ver = store.resolve(f"w{w}/f{f}")
            assert ver.version == 10  # every round changed the content: 50 / 5 files
            assert store.read_bytes(ver) == f"worker {w} round {45 + f}\n".encode()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    fsck = subprocess.run(["git", "-C", str(scratch_home), "fsck", "--strict"],
                          capture_output=True, text=True, env=env)
    assert fsck.returncode == 0, fsck.stderr
    status = subprocess.run(["git", "-C", str(scratch_home), "status", "--porcelain"],
                            capture_output=True, text=True, env=env)
    assert status.stdout == ""
    count = subprocess.run(["git", "-C", str(scratch_home), "rev-list", "--count", "HEAD"],
                           capture_output=True, text=True, env=env).stdout
    assert int(count) == 1 + 4 * rounds * 2  # store creation + one commit per change
