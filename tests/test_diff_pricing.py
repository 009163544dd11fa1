"""scratch diff is priced and held to the cap like read --since-version."""

from __future__ import annotations

from tests.helpers import cli, count, human_error


def write_two_versions() -> None:
    old = "".join(f"line {i}\n" for i in range(400))
    new = old.replace("line 100\n", "line one hundred\n").replace("line 300\n", "")
    assert cli("write", "n", input=old).code == 0
    assert cli("write", "n", input=new).code == 0


def test_diff_reports_its_cost_and_charges_it(scratch_home) -> None:
    write_two_versions()
    before = cli("budget", "--json").json["data"]["used"]
    r = cli("diff", "n", "1", "2")
    assert r.code == 0
    assert r.err.endswith(f"-- {count(r.text):,} tokens (o200k_base) · budget "
                          f"{102400 - before - count(r.text):,} of 102,400 left\n")
    assert cli("budget", "--json").json["data"]["used"] == before + count(r.text)
    assert cli("diff", "n", "1", "2").text == cli("read", "n", "--since-version", "1").text


def test_a_diff_over_the_cap_is_refused_with_a_smaller_one(scratch_home) -> None:
    old = "".join(f"line {i}\n" for i in range(400))
    new = "".join(f"line {i}\n" if i % 20 else f"changed {i}\n" for i in range(400))
    assert cli("write", "n", input=old).code == 0 and cli("write", "n", input=new).code == 0
    full = count(cli("diff", "n", "1", "2").text)
    bare = count(cli("diff", "n", "1", "2", "-U", "0").text)
    assert bare < full
    cap = (bare + full) // 2
    env = {"SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS": str(cap)}
    used = cli("budget", "--json").json["data"]["used"]
    r = cli("diff", "n", "1", "2", env=env)  # people read the hunks; --json carries ops
    assert r.code == 3 and r.out == b""
    err = human_error(r.err)
    assert err["code"] == "diff_too_large"
    assert err["message"] == (f"this answer costs ~{full} tokens, over the per-call cap of {cap} "
                              "(budget.max_extraction_tokens)")
    assert err["suggestions"] == ["scratch diff n 1 2 -U 0"]
    # a refusal costs what it prints: its line and its suggestion
    printed = "\n".join(r.err.splitlines()[:2]) + "\n"
    assert cli("budget", "--json").json["data"]["used"] == used + count(printed)
    assert cli("diff", "n", "1", "2", "-U", "0", env=env).code == 0
