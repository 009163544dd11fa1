"""The context budget: arithmetic, refusals, ground-truth reports, corrupt state, and
check-and-record from several processes at once."""

from __future__ import annotations

import json
import multiprocessing
import stat
from pathlib import Path

import pytest

from scratch.errors import BudgetExceeded, LimitExceeded, UsageError
from scratch.tokens.budget import Budget, clamp_margin


def make(tmp_path: Path, window: int = 1000, margin: float = 0.2, cap: int = 300) -> Budget:
    return Budget(tmp_path / "budget" / "agent-a.json", window=window, safety_margin=margin,
                  max_extraction_tokens=cap)


def test_fresh_status(tmp_path: Path) -> None:
    status = make(tmp_path).status()
    assert {k: status[k] for k in ("window", "window_source", "margin", "usable", "used",
                                   "remaining", "intercepted", "extracted", "calls",
                                   "reported", "max_extraction_tokens")} == {
        "window": 1000, "window_source": "model", "margin": 0.2, "usable": 800, "used": 0,
        "remaining": 800, "intercepted": 0, "extracted": 0, "calls": 0, "reported": None,
        "max_extraction_tokens": 300}
    assert "warnings" not in status
    assert not (tmp_path / "budget" / "agent-a.json").exists()  # reading writes nothing


@pytest.mark.parametrize("margin, clamped, usable", [
    (0.2, 0.2, 800), (0, 0.0, 1000), (-0.5, 0.0, 1000), (0.95, 0.95, 50), (0.99, 0.95, 50),
    (3, 0.95, 50), (0.333, 0.333, 667), (float("nan"), 0.2, 800), ("junk", 0.2, 800),
])
def test_margin_is_clamped(tmp_path: Path, margin: object, clamped: float, usable: int) -> None:
    assert clamp_margin(margin) == clamped  # type: ignore[arg-type]
    status = make(tmp_path, margin=margin).status()  # type: ignore[arg-type]
    assert (status["margin"], status["usable"]) == (clamped, usable)


def test_charge_and_refuse(tmp_path: Path) -> None:
    budget = make(tmp_path)
    after = budget.charge(500)
    assert (after["used"], after["remaining"], after["extracted"], after["calls"]) == (
        500, 300, 500, 1)
    budget.charge(100, kind="passthrough")
    with pytest.raises(BudgetExceeded) as exc:
        budget.charge(201)
    err = exc.value
    assert err.code == "budget_exceeded" and err.exit_code == 3
    assert (err.details["estimated_tokens"], err.details["remaining"], err.details["usable"],
            err.details["used"]) == (201, 200, 800, 600)
    # what always runs when the budget is spent, as calls (the interfaces spell them)
    assert [(c.command, c.args) for c in err.details["suggestions"]] == [
        ("budget", {}), ("budget used", {"tokens": 600}), ("budget reset", {}),
        ("budget set-window", {"tokens": 1000})]
    status = budget.status()
    # the refused charge recorded nothing
    assert (status["used"], status["calls"], status["extracted"]) == (600, 2, 500)
    assert status["kinds"] == {"extracted": 500, "passthrough": 100}
    with pytest.raises(BudgetExceeded):
        budget.check(201)
    assert budget.check(200)["used"] == 600  # check records nothing
    assert budget.charge(200)["remaining"] == 0
    assert budget.charge(0)["remaining"] == 0
    forced = budget.charge(50, enforce=False)  # already in the context: recorded anyway
    assert (forced["used"], forced["remaining"]) == (850, 0)
    with pytest.raises(UsageError):
        budget.charge(-1)


def test_intercepted_does_not_spend(tmp_path: Path) -> None:
    budget = make(tmp_path)
    status = budget.record_intercepted(12_345)
    assert (status["intercepted"], status["used"], status["remaining"]) == (12_345, 0, 800)


def test_report_used_takes_the_maximum(tmp_path: Path) -> None:
    budget = make(tmp_path)
    budget.charge(100)
    assert budget.report_used(400)["used"] == 400
    status = budget.report_used(250)  # lower report: the estimate stays
    assert (status["used"], status["reported"], status["remaining"]) == (400, 250, 400)
    assert budget.report_used(5000)["remaining"] == 0


def test_reset_and_set_window(tmp_path: Path) -> None:
    budget = make(tmp_path)
    budget.charge(300)
    budget.record_intercepted(50)
    status = budget.set_window(2000)
    assert (status["window"], status["window_source"], status["usable"], status["remaining"]) == (
        2000, "set-window", 1600, 1300)
    status = budget.reset()
    assert (status["used"], status["intercepted"], status["calls"], status["window"]) == (
        0, 0, 0, 2000)
    assert budget.set_window(None)["window"] == 1000
    # another Budget on the same file (a later CLI call) sees the same state
    assert make(tmp_path, window=5000).status()["window"] == 5000
    for bad in (0, -5):
        with pytest.raises(UsageError):
            budget.set_window(bad)


def test_files_are_private(tmp_path: Path) -> None:
    budget = make(tmp_path)
    budget.charge(1)
    assert stat.S_IMODE(budget.state_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(budget.lock_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(budget.state_file.parent.stat().st_mode) == 0o700
    state = json.loads(budget.state_file.read_text())
    assert state["version"] == 1 and state["used"] == 1


@pytest.mark.parametrize("content", [
    b"", b"{not json", b"[]", b'{"version": 1}', b"\xff\xfe\x00",
    b'{"version": 1, "used": -4, "extracted": 0, "intercepted": 0, "calls": 0, "kinds": {}}',
    b'{"version": 99, "used": 0, "extracted": 0, "intercepted": 0, "calls": 0, "kinds": {}}',
])
def test_corrupt_state_resets_with_a_warning(tmp_path: Path, content: bytes) -> None:
    budget = make(tmp_path)
    budget.state_file.parent.mkdir(parents=True)
    budget.state_file.write_bytes(content)
    status = budget.charge(10)
    assert status["used"] == 10
    assert len(status["warnings"]) == 1 and "reset" in status["warnings"][0]
    again = budget.status()
    assert "warnings" not in again and again["used"] == 10


def test_counts_past_64_bits_are_kept_exactly(tmp_path: Path) -> None:
    # the state is read with orjson where it can be, which takes such a number for a float
    huge = 10**25 + 7
    budget = make(tmp_path)
    assert budget.report_used(huge)["used"] == huge
    again = budget.charge(3, enforce=False)
    assert again["used"] == huge + 3 and "warnings" not in again
    assert json.loads(budget.state_file.read_bytes())["used"] == huge + 3
    assert budget.state_file.read_bytes().startswith(b'{"calls":1,')  # compact, sorted keys


def test_a_kept_state_is_a_guess_the_charge_checks(tmp_path: Path) -> None:
    from scratch.tokens.budget import StaleBudget, keep_states
    keep_states(True)
    try:
        budget, other = make(tmp_path), make(tmp_path)  # two processes' views of one file
        assert budget.kept_view() is None
        budget.charge(10)
        kept = budget.kept_view()
        assert kept is not None and kept[0]["used"] == 10
        view, state = kept
        assert budget.charge(5, expect=state)["used"] == 15  # unchanged: charged
        stale = budget.kept_view()
        assert stale is not None
        keep_states(False)  # what another process does is not seen by this one's memory
        other.report_used(500)
        keep_states(True)
        budget.charge(0)  # ... until it reads the file under the lock
        assert budget.kept_view()[0]["used"] == 500  # type: ignore[index]
        other.reset()
        with pytest.raises(StaleBudget):
            budget.charge(7, expect=stale[1])
        assert other.status()["used"] == 0  # nothing recorded by the refused charge
    finally:
        keep_states(False)


def test_state_that_is_a_directory_is_reported_not_fatal(tmp_path: Path) -> None:
    budget = make(tmp_path)
    budget.state_file.mkdir(parents=True)
    status = budget.status()
    assert status["used"] == 0 and "unreadable" in status["warnings"][0]
    status = budget.charge(5)
    assert "could not be saved" in status["warnings"][-1]


def test_check_cap(tmp_path: Path) -> None:
    budget = make(tmp_path, cap=300)
    budget.check_cap(300, "head_too_large")
    with pytest.raises(LimitExceeded) as exc:
        budget.check_cap(301, "head_too_large")
    err = exc.value
    assert (err.code, err.exit_code) == ("head_too_large", 3)
    assert (err.details["estimated_tokens"], err.details["limit"]) == (301, 300)
    make(tmp_path, cap=0).check_cap(10**9)  # 0: no cap


def _spender(path: str, amount: int, queue: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    budget = Budget(Path(path), window=10_000, safety_margin=0.0, max_extraction_tokens=0)
    spent = 0
    refused = 0
    while refused < 3:
        try:
            budget.charge(amount)
            spent += amount
        except BudgetExceeded:
            refused += 1
    queue.put((amount, spent))


def test_concurrent_check_and_record(tmp_path: Path) -> None:
    path = tmp_path / "budget" / "shared.json"
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    amounts = [7, 13, 50, 111]
    procs = [ctx.Process(target=_spender, args=(str(path), a, queue)) for a in amounts]
    for p in procs:
        p.start()
    results = dict(queue.get(timeout=120) for _ in procs)
    spent = [results[a] for a in amounts]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    status = Budget(path, window=10_000, safety_margin=0.0, max_extraction_tokens=0).status()
    assert status["used"] == sum(spent)  # no lost updates
    assert status["used"] <= status["usable"] == 10_000  # never overspent
    assert status["remaining"] < min(amounts)  # everyone stopped only when nothing fitted
    assert status["calls"] == sum(s // a for s, a in zip(spent, amounts))


def test_peek_reads_the_state_and_writes_nothing(tmp_path: Path) -> None:
    b = make(tmp_path)
    fresh = b.peek()
    assert (fresh["stored"], fresh["used"], fresh["usable"], fresh["remaining"]) == (
        False, 0, 800, 800)
    assert not b.state_file.exists()  # a reader makes no state
    b.charge(120)
    b.record_intercepted(5000)
    view = b.peek()
    status = b.status()
    assert view == {**status, "stored": True}
    assert (view["used"], view["remaining"], view["intercepted"], view["max_extraction_tokens"]
            ) == (120, 680, 5000, 300)
    b.state_file.write_bytes(b"{torn")
    corrupt = b.peek()
    assert corrupt["used"] == 0 and corrupt["warnings"] == [
        f"budget state {b.state_file.name} was corrupt; the budget was reset"]
    assert b.state_file.read_bytes() == b"{torn"  # left as it is
