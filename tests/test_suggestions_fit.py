"""A refusal's suggestions run as given and fit; --fit --json never goes over the cap.

Every refusal here is followed by running each of its suggestions, in the same mode and under
the same cap, right after it: each must answer (exit 0) within the cap, and none may be the
refused command itself. --fit --json answers are checked against the exact count of the
envelope they print, on an entry whose name is long (the name is repeated in ``name``,
``next`` and meta).
"""

from __future__ import annotations

import json
import random
import shlex
from pathlib import Path

import pytest

from scratch.tokens import count_text, resolve_encoding
from tests.helpers import Run, cli, error_of, shell_of

O200K = resolve_encoding(None, "o200k_base")
LONG_NAME = "runs/" + "-".join(["very-long-tool-output-name"] * 4) + "/" + "x" * 7
assert len(LONG_NAME) == 120


def cap_env(cap: int) -> dict[str, str]:
    return {"SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS": str(cap)}


def run(args: list[str], json_mode: bool, env: dict[str, str]) -> Run:
    return cli(*args, *(["--json"] if json_mode else []), env=env)


def refusal(r: Run, json_mode: bool) -> dict:
    assert r.code == 3, r.out
    return error_of(r, json_mode)


def check_suggestions(args: list[str], *, cap: int, json_mode: bool, code: str,
                      at_least: int = 1) -> list[str]:
    """Refuse ``scratch ARGS``, then run each suggestion under the same cap: all answer."""
    env = cap_env(cap)
    err = refusal(run(args, json_mode, env), json_mode)
    assert err["code"] == code, err
    suggestions = err["suggestions"]
    assert len(suggestions) >= at_least, err
    for suggestion in suggestions:
        words = shlex.split(suggestion)
        assert words[0] == "scratch", suggestion
        assert words[1:] != args, f"suggested the refused command: {suggestion}"
        cli("budget", "reset")  # run right after, with the budget as it was
        r = run(words[1:], json_mode, env)
        assert r.code == 0, (args, suggestion, r.out[:400], r.err[:400])
        if json_mode:
            assert r.json["meta"]["tokens"]["count"] <= cap, suggestion
    return suggestions


def write_ndjson(name: str, lines: int, seed: int = 1) -> None:
    """NDJSON whose lines cost ~2,000 tokens each (words and numbers, some 'error's)."""
    rng = random.Random(seed)
    words = ["alpha", "beta", "gamma", "delta", "error", "timeout", "node", "pod", "zone"]
    out = []
    for i in range(lines):
        item = {"i": i, "msg": " ".join(rng.choice(words) for _ in range(200)),
                "vals": [rng.randint(0, 10 ** 6) for _ in range(300)],
                "tags": {f"k{j}": rng.choice(words) for j in range(120)}}
        out.append(json.dumps(item))
    r = cli("ingest", name, "--store-always", "--json", input="\n".join(out) + "\n")
    assert r.code == 0, r.out
    assert r.json["data"]["format"] == "ndjson"


@pytest.fixture
def ndj(scratch_home: Path) -> str:
    write_ndjson("ndj", 60)
    return "ndj"


BIG_FIRST = {
    "big": [{"id": i, "text": "lorem ipsum dolor sit amet " * 20, "n": list(range(30))}
            for i in range(300)],
    "small": {"a": 1, "b": [1, 2, 3]},
    "name": "example",
    "meta": {"owner": "team", "tags": ["x", "y"]},
}


@pytest.fixture
def bigfirst(scratch_home: Path) -> str:
    r = cli("ingest", "bigfirst", "--store-always", "--json", input=json.dumps(BIG_FIRST))
    assert r.code == 0, r.out
    return "bigfirst"


MODES = [pytest.param(True, id="json"), pytest.param(False, id="text")]


# -- line ranges ------------------------------------------------------------------------------

@pytest.mark.parametrize("json_mode", MODES)
def test_line_range_refusals_suggest_ranges_that_fit(ndj: str, json_mode: bool) -> None:
    for args, code in [(["slice", ndj, "1", "40"], "slice_too_large"),
                       (["slice", ndj, "11", "40", "--no-numbers"], "slice_too_large"),
                       (["head", ndj, "-n", "50"], "head_too_large"),
                       (["tail", ndj, "-n", "40"], "tail_too_large"),
                       (["read", ndj], "read_too_large")]:
        suggestions = check_suggestions(args, cap=10000, json_mode=json_mode, code=code,
                                        at_least=2)
        assert any("--fit" in s for s in suggestions)


def test_tail_refusal_has_its_own_code(ndj: str) -> None:
    r = cli("tail", ndj, "-n", "40", "--json", env=cap_env(10000))
    assert r.code == 3 and r.json["error"]["code"] == "tail_too_large"
    assert shell_of(r.json["error"]["suggestions"][0]).startswith("scratch tail ndj -n ")
    r = cli("tail", ndj, "-n", "40", "--fit", "--json", env=cap_env(1000))
    assert r.code == 0  # line 21 alone is over the cap: it comes in pieces
    assert r.json["data"]["line_part"]["line"] == 21
    assert r.json["data"]["next"]["shell"].startswith("scratch slice ndj 21 60 --from-byte ")
    assert r.json["data"]["next"]["command"] == "slice"
    assert r.json["data"]["next"]["args"]["from_byte"] > 0


def test_a_line_alone_over_the_cap_suggests_its_item_and_a_schema(ndj: str) -> None:
    # every line is ~2,000 tokens: under a cap of 1,000 no line range can fit
    for json_mode in (True, False):
        for args, code in [(["slice", ndj, "5", "9"], "slice_too_large"),
                           (["grep", ndj, "error", "-m", "3"], "grep_too_large"),
                           (["grep", ndj, "error", "--fit"], "grep_too_large")]:
            suggestions = check_suggestions(args, cap=1000, json_mode=json_mode, code=code)
            assert f"scratch get-in {ndj} 4 --fit" in suggestions or \
                f"scratch get-in {ndj} 0 --fit" in suggestions, suggestions


def test_binary_read_suggests_the_head_that_fits(scratch_home: Path) -> None:
    rng = random.Random(5)
    cli("write", "blob", input=bytes(rng.randrange(256) for _ in range(60000)))
    for json_mode in (True, False):
        # binary content is read only with --raw (issue 30 item 11); head shows it escaped
        suggestions = check_suggestions(["read", "blob", "--raw"], cap=3000,
                                        json_mode=json_mode, code="read_too_large")
        assert len(suggestions) == 1 and suggestions[0].startswith("scratch head blob -n ")


def test_read_since_suggests_no_context_only_when_it_fits(scratch_home: Path) -> None:
    cli("write", "doc", input="".join(f"line {i} some stable text\n" for i in range(3000)))
    cli("write", "doc", input="".join(f"line {i} some stable text\n" if i % 10 else
                                      f"changed {i}\n" for i in range(3000)))
    bare = run(["read", "doc", "--since-version", "1", "-U", "0"], False, cap_env(10 ** 6))
    price = int(bare.err.rsplit("-- ", 1)[1].split(" tokens")[0].replace(",", ""))
    suggestions = check_suggestions(["read", "doc", "--since-version", "1"], cap=price,
                                    json_mode=False, code="read_too_large")
    assert suggestions == ["scratch read doc --since-version 1 -U 0"]
    err = refusal(run(["read", "doc", "--since-version", "1"], False, cap_env(price - 1)),
                  False)
    assert err["suggestions"] == ["scratch read doc@2 --fit"]  # no diff fits: page the new one
    # --json gives the edit ops, which are the same whatever -U: fewer context lines would
    # not be cheaper, so a refusal there does not offer them
    bare = run(["read", "doc", "--since-version", "1", "-U", "0"], True, cap_env(10 ** 6))
    price = bare.json["meta"]["tokens"]["count"]
    err = refusal(run(["read", "doc", "--since-version", "1"], True, cap_env(price // 2)),
                  True)
    assert err["code"] == "read_too_large"
    assert err["suggestions"] == ["scratch read doc@2 --fit"]


@pytest.mark.parametrize("json_mode", MODES)
def test_suggestions_fit_what_is_left_of_the_budget(ndj: str, json_mode: bool) -> None:
    cli("budget", "set-window", "7000")
    cli("head", ndj, "-n", "1")  # something used already
    used = cli("budget", "--json").json["data"]["used"]
    left = cli("budget", "--json").json["data"]["remaining"]
    assert 2500 < left < 6000  # answers of ~6k tokens: the budget, not the cap, refuses
    for args in (["slice", ndj, "1", "3"], ["tail", ndj, "-n", "3"],
                 ["grep", ndj, "error", "-m", "3"], ["get-in", ndj, "0"]):
        err = refusal(run(args, json_mode, {}), json_mode)
        assert err["code"] == "budget_exceeded", err
        # the refusal was read, so it was charged: the suggestions fit what is left after it
        after = cli("budget", "--json").json["data"]
        assert after["used"] > used
        left = after["remaining"]
        commands = [s for s in err["suggestions"] if s.startswith("scratch ")]
        assert commands, err
        for suggestion in commands:
            cli("budget", "reset")
            cli("budget", "used", str(after["used"]))  # as it was once refused
            r = run(shlex.split(suggestion)[1:], json_mode, {})
            assert r.code == 0, (args, suggestion, r.out[:300])
            spent = cli("budget", "--json").json["data"]["used"] - after["used"]
            if suggestion.startswith("scratch budget"):  # what always runs: not priced
                assert spent <= 0, suggestion
            else:
                assert 0 < spent <= left, (suggestion, spent, left)


# -- grep -------------------------------------------------------------------------------------

@pytest.mark.parametrize("json_mode", MODES)
def test_grep_refusals_suggest_a_smaller_max_count(ndj: str, json_mode: bool) -> None:
    args = ["grep", ndj, "error|fail|fatal", "-i", "-m", "20"]
    suggestions = check_suggestions(args, cap=10000, json_mode=json_mode, code="grep_too_large",
                                    at_least=2)
    m = int(shlex.split(suggestions[0])[-1])
    assert shlex.split(suggestions[0])[-2] == "-m" and 1 <= m < 20
    assert suggestions[1].endswith(" -m 20 --fit")


def test_grep_with_context_suggests_dropping_it_when_the_matches_fit(scratch_home: Path
                                                                      ) -> None:
    filler = "".join(f"filler line {i} " + "padding words " * 30 + "\n" for i in range(400))
    lines = filler.splitlines()
    for i in range(0, 400, 40):
        lines[i] = f"ERROR at {i}"
    cli("write", "log.txt", input="\n".join(lines) + "\n")
    for json_mode in (True, False):
        suggestions = check_suggestions(["grep", "log.txt", "ERROR", "-C", "3"], cap=1500,
                                        json_mode=json_mode, code="grep_too_large", at_least=3)
        assert "scratch grep log.txt ERROR -C 0" in suggestions


def test_grep_all_refusal_suggestions_fit(scratch_home: Path) -> None:
    write_ndjson("a", 8, seed=2)
    write_ndjson("b", 8, seed=3)
    for json_mode in (True, False):
        suggestions = check_suggestions(["grep", "--all", "error"], cap=9000,
                                        json_mode=json_mode, code="grep_too_large")
        assert suggestions[0].startswith("scratch grep --all error -m ")


def test_the_old_identical_grep_suggestion_is_gone(ndj: str) -> None:
    # one region of 20 adjacent matching lines used to suggest "-m 20" again
    r = cli("grep", ndj, "error", "-m", "20", "--json", env=cap_env(10000))
    assert f"scratch grep {ndj} error -m 20" not in error_of(r, True)["suggestions"]


# -- get-in -----------------------------------------------------------------------------------

@pytest.mark.parametrize("json_mode", MODES)
def test_get_in_suggests_only_children_that_fit(bigfirst: str, json_mode: bool) -> None:
    suggestions = check_suggestions(["get-in", bigfirst, "."], cap=2000, json_mode=json_mode,
                                    code="get_in_too_large", at_least=3)
    assert f"scratch get-in {bigfirst} big" not in suggestions
    assert suggestions[:3] == [f"scratch get-in {bigfirst} {k}" for k in ("small", "name",
                                                                         "meta")]
    suggestions = check_suggestions(["get-in", bigfirst, "big"], cap=2000,
                                    json_mode=json_mode, code="get_in_too_large")
    assert suggestions[0] == f"scratch get-in {bigfirst} big.0"
    # an item too big for the cap: item-schema instead, which does fit
    suggestions = check_suggestions(["get-in", bigfirst, "big"], cap=200,
                                    json_mode=json_mode, code="get_in_too_large")
    assert not any(s.endswith(" big.0") for s in suggestions)
    assert suggestions[0].startswith(f"scratch item-schema {bigfirst} big")


@pytest.mark.parametrize("json_mode", MODES)
def test_get_in_windows_matches_and_ndjson(bigfirst: str, ndj: str, json_mode: bool) -> None:
    suggestions = check_suggestions(["get-in", bigfirst, "big", "--offset", "10", "--limit",
                                     "3000"], cap=2000, json_mode=json_mode,
                                    code="get_in_too_large")
    assert any(s.endswith("--offset 10 --limit 3000 --fit") for s in suggestions)
    check_suggestions(["get-in", bigfirst, "$.big[*].text"], cap=2000, json_mode=json_mode,
                      code="get_in_too_large")
    check_suggestions(["get-in", ndj, "."], cap=10000, json_mode=json_mode,
                      code="get_in_too_large")
    check_suggestions(["get-in", ndj, "3"], cap=1000, json_mode=json_mode,
                      code="get_in_too_large")


# -- schema -----------------------------------------------------------------------------------

@pytest.mark.parametrize("json_mode", MODES)
def test_schema_suggests_a_depth_that_fits_or_the_first_lines(scratch_home: Path,
                                                              json_mode: bool) -> None:
    # no two values share keys: a map of alike records would show one of them only
    doc = {f"group{i}": {f"field{i}_{j}": {f"leaf{i}_{j}_{k}": k for k in range(12)}
                         for j in range(12)} for i in range(12)}
    cli("ingest", "wide", "--store-always", input=json.dumps(doc))
    suggestions = check_suggestions(["schema", "wide"], cap=3000, json_mode=json_mode,
                                    code="schema_too_large")
    assert len(suggestions) == 1 and suggestions[0].startswith("scratch schema wide --depth ")
    # no depth fits: the first lines that do (a refusal is no dead end), when any does
    err = refusal(run(["schema", "wide", "--depth", "2"], json_mode, cap_env(20)), json_mode)
    assert err["code"] == "schema_too_large"
    assert err["suggestions"] == ([] if json_mode else ["scratch head wide -n 2"])


@pytest.mark.parametrize("json_mode", MODES)
def test_summarize_refusal_suggests_what_fits(scratch_home: Path, json_mode: bool) -> None:
    pods = Path(__file__).resolve().parents[1] / "scratch" / "samples" / "pods.json"
    cli("ingest", "pods", "--store-always", input=pods.read_bytes())
    suggestions = check_suggestions(["summarize", "pods"], cap=250, json_mode=json_mode,
                                    code="summarize_too_large", at_least=2)
    assert suggestions[0].startswith("scratch schema pods")
    assert suggestions[1].startswith("scratch head pods -n ")


# -- --fit --json measures the whole envelope ----------------------------------------------------

def _fit_checks(name: str) -> list[list[str]]:
    return [["head", name, "-n", "5000", "--fit"], ["tail", name, "-n", "5000", "--fit"],
            ["slice", name, "3", "5000", "--fit"], ["read", name, "--fit"],
            ["grep", name, "a", "--fit"], ["grep", name, "a", "-C", "1", "--fit"],
            ["get-in", name, ".", "--fit"], ["get-in", name, "items", "--fit"],
            ["get-in", name, "items.2", "--fit"]]


def _long_name_entry() -> None:
    doc = {"items": [{"name": f"item-{i}", "note": "a quoted \"value\" \\ with escapes " * 3,
                      "n": list(range(i % 7))} for i in range(400)]}
    r = cli("ingest", LONG_NAME, "--store-always", input=json.dumps(doc))
    assert r.code == 0, r.err


@pytest.mark.parametrize("cap", [10000, 2000, 700])
def test_fit_json_never_exceeds_the_cap_with_a_long_name(scratch_home: Path, cap: int) -> None:
    _long_name_entry()
    for args in _fit_checks(LONG_NAME):
        r = cli(*args, "--json", env=cap_env(cap))
        assert r.code == 0, (args, r.out[:300])
        printed = count_text(r.text, O200K)
        assert r.json["meta"]["tokens"]["count"] == printed, args
        assert printed <= cap, (args, printed)
        if "next" in r.json["data"]:  # a page is cut close to the cap, not far below it
            assert printed > cap * 0.8, (args, printed)


def test_fit_json_follows_next_to_the_end_within_the_cap(scratch_home: Path) -> None:
    _long_name_entry()
    cap = 1500
    for args in (["read", LONG_NAME, "--fit"], ["grep", LONG_NAME, "item-1", "--fit"],
                 ["get-in", LONG_NAME, "items", "--fit"]):
        pages = 0
        r = cli(*args, "--json", env=cap_env(cap))
        while True:
            assert r.code == 0, (args, r.out[:300])
            assert r.json["meta"]["tokens"]["count"] == count_text(r.text, O200K) <= cap
            pages += 1
            nxt = r.json["data"].get("next")
            if not nxt:
                break
            r = cli(*shlex.split(nxt["shell"])[1:], "--json", env=cap_env(cap))
        assert pages > 2


def test_fit_json_within_what_is_left_of_the_budget(scratch_home: Path) -> None:
    _long_name_entry()
    cli("budget", "set-window", "5000")
    left = cli("budget", "--json").json["data"]["remaining"]
    r = cli("slice", LONG_NAME, "1", "5000", "--fit", "--json")
    assert r.code == 0
    assert count_text(r.text, O200K) == r.json["meta"]["tokens"]["count"] <= left
    assert r.json["meta"]["budget"]["remaining"] >= 0


# -- the shared corpus --------------------------------------------------------------------------

def test_corpus_fit_json_on_a_long_automatic_name(corpus_dir: Path) -> None:
    data = (corpus_dir / "aws/custodian/ecs.DescribeServices.json").read_bytes()
    r = cli("ingest", "--tool", "t", "--store-always", "--json", input=data)
    name = r.json["data"]["name"]
    for args in (["get-in", name, "data.services.0", "--fit"], ["read", name, "--fit"],
                 ["head", name, "-n", "3000", "--fit"], ["grep", name, "a", "--fit"]):
        r = cli(*args, "--json")
        assert r.code == 0, (args, r.out[:300])
        assert r.json["meta"]["tokens"]["count"] == count_text(r.text, O200K) <= 10000


def test_corpus_refusals_suggest_commands_that_fit(corpus_dir: Path) -> None:
    cli("ingest", "ng", "--store-always",
        input=(corpus_dir / "ndjson/nginxplus_json_logs.ndjson").read_bytes())
    for json_mode in (True, False):
        check_suggestions(["grep", "ng", "error|fail|fatal|exception|panic", "-i", "-m", "20"],
                          cap=10000, json_mode=json_mode, code="grep_too_large", at_least=2)
        check_suggestions(["slice", "ng", "1", "40"], cap=10000, json_mode=json_mode,
                          code="slice_too_large", at_least=2)
        check_suggestions(["tail", "ng", "-n", "40"], cap=10000, json_mode=json_mode,
                          code="tail_too_large", at_least=2)


def test_corpus_big_documents(corpus_dir: Path) -> None:
    cli("ingest", "api", "--store-always",
        input=(corpus_dir / "json/openapi/kubernetes-swagger-v1.27.json").read_bytes())
    cli("ingest", "canada", "--store-always",
        input=(corpus_dir / "json/large/canada.json").read_bytes())
    for json_mode in (True, False):
        # its maps of records (paths, definitions) show one record each: 684 tokens whole
        check_suggestions(["schema", "api"], cap=400, json_mode=json_mode,
                          code="schema_too_large")
        check_suggestions(["get-in", "api", "."], cap=10000, json_mode=json_mode,
                          code="get_in_too_large")
        suggestions = check_suggestions(["get-in", "canada", "features.0"], cap=10000,
                                        json_mode=json_mode, code="get_in_too_large")
        assert "scratch get-in canada features.0.geometry" not in suggestions
        check_suggestions(["get-in", "canada", "features"], cap=10000, json_mode=json_mode,
                          code="get_in_too_large")
        check_suggestions(["read", "canada"], cap=10000, json_mode=json_mode,
                          code="read_too_large")
