"""`log read` and `log tail` are priced, capped and paged like every other answer."""

from __future__ import annotations

import shlex
from typing import Any

import pytest

from scratch.tokens import count_text, resolve_encoding
from tests.helpers import cli, human_error, shell_of, shells

O200K = resolve_encoding(None, "o200k_base")
N = 3000
CAP = 1500


def _entry(i: int) -> str:
    if i % 7 == 0:
        return f'{{"step": {i}, "ok": {str(i % 2 == 0).lower()}, "msg": "héllo \\"{i}\\""}}'
    return (f"Nov 30 10:{i % 60:02d}:00 host sshd[{i}]: Failed password for invalid user "
            f"u{i} from 10.0.{i % 256}.{i % 200} port {1000 + i} ssh2")


@pytest.fixture
def big() -> str:
    text = "".join(_entry(i) + "\n" for i in range(1, N + 1))
    r = cli("log", "append", "big", "--lines", input=text)
    assert r.code == 0, r.err
    return "big"


@pytest.fixture
def capped(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setenv("SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS", str(CAP))
    return CAP


def footer_tokens(err: str) -> int:
    return int(err.rsplit("-- ", 1)[1].split(" tokens")[0].replace(",", ""))


def used() -> int:
    return int(cli("budget", "--json").json["data"]["used"])


def run(cmd: Any, *, json: bool = True):
    args = shlex.split(shell_of(cmd))
    assert args[0] == "scratch", cmd
    return cli(*args[1:], *(["--json"] if json else []))


def ids_of(text: str) -> list[int]:
    return [int(line.split("\t", 1)[0]) for line in text.splitlines()]


def test_human_answers_report_the_exact_tokens_of_what_they_print(big: str) -> None:
    for args, ids in ((("log", "read", big, "--limit", "50"), range(1, 51)),
                      (("log", "read", big, "--since", "100", "--limit", "30"), range(101, 131)),
                      (("log", "tail", big, "-n", "40"), range(N - 39, N + 1))):
        before = used()
        r = cli(*args)
        assert r.code == 0, (args, r.err)
        assert ids_of(r.text) == list(ids)
        reported = footer_tokens(r.err)
        assert reported == count_text(r.text, O200K), args
        assert used() == before + reported, args


def test_json_answers_are_priced_on_the_envelope(big: str) -> None:
    for args in (("log", "read", big, "--limit", "50"), ("log", "tail", big, "-n", "40"),
                 ("log", "read", big, "--since", str(N))):
        before = used()
        r = cli(*args, "--json")
        assert r.code == 0, (args, r.out[:300])
        meta = r.json["meta"]
        exact = count_text(r.text, O200K)
        assert abs(meta["tokens"]["count"] - exact) <= 2, args
        assert meta["tokens"]["encoding"] == "o200k_base"
        assert used() == before + meta["tokens"]["count"] == meta["budget"]["used"], args
    page = cli("log", "read", big, "--limit", "10", "--json").json["data"]
    assert (page["has_more"], page["next_since"]) == (True, 10)  # the cursor is unchanged


@pytest.mark.parametrize("json", [True, False])
@pytest.mark.parametrize("args,code", [
    (("log", "read", "big", "--limit", "100000"), "log_read_too_large"),
    (("log", "read", "big", "--since", "1000", "--limit", "900"), "log_read_too_large"),
    (("log", "tail", "big", "-n", "100000"), "log_tail_too_large"),
])
def test_refusals_cost_what_they_print_and_their_suggestions_fit(
        big: str, capped: int, json: bool, args: tuple[str, ...], code: str) -> None:
    before = used()
    r = cli(*args, "--json")
    assert r.code == 3
    err = r.json["error"]
    assert err["code"] == code
    assert err["limit"] == capped and err["estimated_tokens"] > capped
    assert used() == before + count_text(r.text, O200K)  # the agent read the refusal
    before = used()
    human = cli(*args)
    assert human.code == 3 and human.out == b"" and f"error [{code}]: " in human.err
    printed = human.err.split("\n-- ", 1)[0] + "\n"  # the error and its suggestions
    assert used() == before + count_text(printed, O200K)
    # each mode sizes its suggestions to what it prints: the same calls, maybe other sizes
    in_json = shells(err["suggestions"])
    in_text = human_error(human.err)["suggestions"]
    assert [s.split(" --limit")[0].split(" -n")[0] for s in in_json] == \
        [s.split(" --limit")[0].split(" -n")[0] for s in in_text]
    suggestions = in_json if json else in_text
    assert any("--limit" in s and "--fit" not in s for s in suggestions)
    assert suggestions[-1].endswith("--fit")
    for suggestion in suggestions:  # each runs as given, in either mode, under the same cap
        follow = run(suggestion, json=json)
        assert follow.code == 0, (suggestion, follow.out[:300], follow.err)
        spent = (follow.json["meta"]["tokens"]["count"] if json
                 else footer_tokens(follow.err))
        assert 0 < spent <= capped, suggestion


def test_refusal_estimate_is_close_to_the_real_cost(big: str, capped: int,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # the text's price, as human mode prices it
    estimate = int(human_error(cli("log", "read", big, "--limit", "600").err)["message"]
                   .split("~")[1].split(" ")[0])
    monkeypatch.setenv("SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS", "0")
    r = cli("log", "read", big, "--limit", "600")
    assert r.code == 0
    exact = count_text(r.text, O200K)
    assert abs(estimate - exact) <= 0.05 * exact


def test_suggested_page_is_about_the_largest_that_fits(big: str, capped: int) -> None:
    # sized in the mode refused: here --json
    err = cli("log", "read", big, "--limit", "5000", "--json").json["error"]
    assert err["suggestions"][0]["args"] == {"name": big, "limit": err["suggestions"][0]["args"][
        "limit"]}
    k = int(shell_of(err["suggestions"][0]).split("--limit ")[1])
    assert cli("log", "read", big, "--limit", str(k), "--json").code == 0
    assert cli("log", "read", big, "--limit", str(k + 3), "--json").code == 3
    tail = shell_of(cli("log", "tail", big, "-n", "5000", "--json").json["error"][
        "suggestions"][0])
    k = int(tail.split("-n ")[1])
    assert cli("log", "tail", big, "-n", str(k), "--json").code == 0
    assert cli("log", "tail", big, "-n", str(k + 3), "--json").code == 3


def _follow(first: str, *, json: bool, cap: int = CAP) -> tuple[list[int], int]:
    """Ids shown by ``first`` and every ``next`` after it; checks each page's price."""
    ids: list[int] = []
    pages = 0
    r = run(first, json=json)
    while True:
        assert r.code == 0, (r.out[:300], r.err)
        pages += 1
        if json:
            data, meta = r.json["data"], r.json["meta"]
            assert meta["tokens"]["count"] <= cap
            assert "next" not in meta  # once, under data
            ids += [e["id"] for e in data["entries"]]
            nxt = data.get("next")
            if nxt:  # the cursor fields describe the page shown
                assert data.get("has_more", True) and data.get("next_since", ids[-1]) == ids[-1]
        else:
            assert footer_tokens(r.err) == count_text(r.text, O200K) <= cap
            ids += ids_of(r.text)
            nxt = r.err.split("more: ", 1)[1].splitlines()[0] if "more: " in r.err else None
        if not nxt:
            return ids, pages
        r = run(nxt, json=json)


@pytest.mark.parametrize("json", [True, False])
def test_fit_pages_cover_every_entry_once(big: str, capped: int, json: bool,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCRATCH_BUDGET_CONTEXT_WINDOW", "10000000")  # room for every page
    monkeypatch.setenv("SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS", "5000")  # fewer pages: faster
    before = used()
    ids, pages = _follow(f"scratch log read {big} --limit 100000 --fit", json=json, cap=5000)
    assert ids == list(range(1, N + 1)) and pages > 10
    assert used() > before
    monkeypatch.setenv("SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS", str(capped))
    ids, pages = _follow(f"scratch log read {big} --since 40 --limit 500 --fit", json=json)
    assert ids == list(range(41, 541)) and pages > 2
    ids, pages = _follow(f"scratch log tail {big} -n 700 --fit", json=json)
    assert ids == list(range(N - 699, N + 1)) and pages > 2
    ids, pages = _follow(f"scratch log tail {big} -n 5 --fit", json=json)  # fits at once
    assert ids == list(range(N - 4, N + 1)) and pages == 1


def test_fit_page_is_charged_what_it_reports(big: str, capped: int) -> None:
    before = used()
    r = cli("log", "read", big, "--limit", "100000", "--fit")
    assert used() == before + footer_tokens(r.err)
    before = used()
    r = cli("log", "tail", big, "-n", "100000", "--fit", "--json")
    assert used() == before + r.json["meta"]["tokens"]["count"]


def test_budget_left_is_the_limit_when_smaller_than_the_cap(big: str) -> None:
    cli("budget", "set-window", "3000")  # usable 2400
    cli("budget", "used", "1900")
    r = cli("log", "read", big, "--limit", "60", "--json")
    assert r.code == 3 and r.json["error"]["code"] == "budget_exceeded"
    assert r.json["error"]["estimated_tokens"] > r.json["error"]["remaining"] == 500
    after = used()
    assert after == 1900 + count_text(r.text, O200K)
    for suggestion in r.json["error"]["suggestions"]:
        follow = run(suggestion)
        assert follow.code == 0, (suggestion, follow.out[:300])
        assert follow.json["meta"]["tokens"]["count"] <= 2400 - after
        cli("budget", "reset")
        cli("budget", "used", str(after))
    r = cli("log", "tail", big, "-n", "60", "--fit", "--json")
    assert r.code == 0 and r.json["meta"]["budget"]["used"] <= 2400
    assert "next" in r.json["data"]


def test_an_entry_too_big_alone_is_refused_with_a_way_past_it(capped: int) -> None:
    cli("log", "append", "L", "small one")
    cli("log", "append", "L", " ".join(f"word{i}" for i in range(3000)))
    cli("log", "append", "L", "small two")
    cli("log", "append", "L", "small three")
    for args in (("log", "read", "L", "--since", "1", "--fit"),
                 ("log", "tail", "L", "-n", "3", "--fit"),
                 ("log", "read", "L", "--since", "1")):
        before = used()
        r = cli(*args, "--json")
        assert r.code == 3, args
        err = r.json["error"]
        assert err["code"] == f"log_{args[1]}_too_large" and err["estimated_tokens"] > capped
        assert used() == before + count_text(r.text, O200K)
        follow = run(err["suggestions"][0])
        assert follow.code == 0, err["suggestions"]
        assert [e["entry"] for e in follow.json["data"]["entries"]] == ["small two",
                                                                          "small three"]
    r = cli("log", "read", "L", "--limit", "1", "--fit", "--json")  # the one before fits
    assert [e["id"] for e in r.json["data"]["entries"]] == [1]


def test_small_log_answers_are_unchanged_apart_from_the_price() -> None:
    cli("log", "append", "ev", '{"step": 1}')
    cli("log", "append", "ev", "--lines", input="plain text\n[1, 2]\n")
    r = cli("log", "read", "ev")
    lines = r.text.splitlines()
    assert [line.split("\t")[0] for line in lines] == ["1", "2", "3"]
    assert [line.split("\t")[2] for line in lines] == ['{"step":1}', "plain text", "[1,2]"]
    assert "more" not in r.err and footer_tokens(r.err) == count_text(r.text, O200K)
    r = cli("log", "tail", "ev", "-n", "2", "--fit")
    assert ids_of(r.text) == [2, 3] and "more" not in r.err
