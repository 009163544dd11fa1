"""scratch.store.locking: small state files rewritten in place under their lock."""

from __future__ import annotations

import json
import multiprocessing
import stat
from pathlib import Path

from scratch.store import stats
from scratch.store.locking import overwrite
from scratch.tokens.budget import Budget


def test_overwrite_creates_a_private_file_then_rewrites_it_in_place(tmp_path: Path) -> None:
    path = tmp_path / "state" / "s.json"
    overwrite(path, b'{"used": 123456}\n')
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    inode = path.stat().st_ino
    overwrite(path, b'{"used": 1}\n')  # shorter: padded, never cut, so never torn
    assert path.read_bytes() == b'{"used": 1}\n' + b" " * 5
    assert json.loads(path.read_bytes()) == {"used": 1}
    assert path.stat().st_ino == inode  # no rename: the same file
    overwrite(path, b'{"used": 1234567890}\n')
    assert path.read_bytes() == b'{"used": 1234567890}\n'


def test_a_much_shorter_state_starts_a_fresh_file(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    overwrite(path, b"[" + b"1," * 5000 + b"1]")
    overwrite(path, b"[]")
    assert path.read_bytes() == b"[]"


def test_a_budget_reset_to_less_reads_back_exactly(tmp_path: Path) -> None:
    budget = Budget(tmp_path / "b.json", window=1000, safety_margin=0.0)
    for _ in range(5):
        budget.charge(100, kind="a-long-kind-name-that-makes-the-state-longer")
    view = budget.reset()
    assert view["used"] == 0 and "warnings" not in view
    assert budget.status()["used"] == 0 and "warnings" not in budget.status()
    assert budget.charge(7)["used"] == 7


def _count(root: str, n: int) -> None:
    for _ in range(n):
        stats.record(Path(root), "a", "head", tokens_extracted=2)


def test_parallel_processes_lose_no_count(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    procs = [multiprocessing.get_context("fork").Process(target=_count, args=(str(tmp_path), 50))
             for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    data = stats.load(tmp_path, "a")
    assert data["operations"] == {"head": 200} and data["tokens_extracted"] == 400
