"""A word of a dash and a digit is an argument on every command (issue 30, item 7).

``item-schema REF -1.server_zones`` was ``No such option: -1``: only get-in had opted out of
click's rule that a word starting with ``-`` is an option. The rule now lives in the parser
every generated command shares (scratch/cli/negative_paths.py), so each command with a
positional argument takes ``-1``, ``-2.name`` there; options, their negative values
(``--offset -20``) and unknown options are read as before.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scratch.answers.kernel.catalogue import every_command
from scratch.declare import argument_word, params
from tests.helpers import cli

ROWS = [{"name": f"r{i}", "server_zones": [f"z{i}", f"z{i + 1}"], "n": i} for i in range(6)]


@pytest.fixture
def rows(scratch_home: Path) -> str:
    r = cli("ingest", "rows", "--store-always", input=json.dumps(ROWS))
    assert r.code == 0, r.err
    return "rows"


def test_no_declared_flag_reads_as_an_argument() -> None:
    flags = [f for c in every_command() for p in params(c) for f in (*p.arg.flags, p.arg.negate)
             if f]
    assert flags and not [f for f in flags if argument_word(f)]


def _positional_commands() -> list[tuple[list[str], int]]:
    """(the command's words, how many positional arguments it takes) of every CLI command
    with positional arguments, its words handed on unparsed (run) left out."""
    out = []
    for c in every_command():
        if not c.cli or c.cli_settings.get("allow_extra_args"):
            continue
        n = sum(1 for p in params(c) if p.arg.cli and p.positional)
        if n:
            out.append((list(c.words), n))
    return out


@pytest.mark.parametrize(("words", "n"), _positional_commands(),
                         ids=lambda v: " ".join(v) if isinstance(v, list) else str(v))
def test_every_positional_argument_takes_a_negative_word(rows: str, words: list[str],
                                                         n: int) -> None:
    for at in range(n):
        given = ["rows"] * n
        given[at] = "-1.server_zones"
        r = cli(*words, *given, input=b"")
        assert "No such option" not in r.err, (words, given, r.err[-300:])
        assert "no such option" not in r.err, (words, given, r.err[-300:])


def test_item_schema_of_a_negative_path(rows: str) -> None:
    r = cli("item-schema", rows, "-1.server_zones", "--json")
    assert r.code == 0, r.err
    assert r.json["data"]["path"] == "-1.server_zones"
    assert r.json["data"]["items"] == 2


def test_get_in_schema_and_iterate_over_take_negative_paths(rows: str) -> None:
    r = cli("get-in", rows, "-1.server_zones", "--json")
    assert r.code == 0 and r.json["data"]["value"] == ["z5", "z6"]
    r = cli("get-in", rows, "-2.n", "--json")
    assert r.code == 0 and r.json["data"]["value"] == 4
    r = cli("schema", rows, "-1", "--json")
    assert r.code == 0, r.err
    assert r.json["data"]["path"] == "-1"
    r = cli("iterate-over", rows, "-1.server_zones", "--json")
    assert r.code == 0, r.err
    assert [row["item"] for row in r.json["data"]["rows"]] == ["z5", "z6"]
    # options around the path, before and after it, and a negative option value
    r = cli("iterate-over", "--json", rows, "-1.server_zones", "--offset", "-1")
    assert r.code == 0, r.err
    assert [row["item"] for row in r.json["data"]["rows"]] == ["z6"]


def test_options_are_read_as_before(rows: str) -> None:
    r = cli("get-in", rows, "--no-such-flag")
    assert r.code == 2 and "No such option: --no-such-flag" in r.err
    r = cli("item-schema", rows, "-1", "-x")
    assert r.code == 2 and "No such option: -x" in r.err
    r = cli("head", rows, "-n", "2", "--json")
    assert r.code == 0 and len(r.json["data"]["lines"]) == 2
    # after --, everything is an argument, as click has it
    r = cli("get-in", rows, "--json", "--", "-1.n")
    assert r.code == 0 and r.json["data"]["value"] == 5


def test_completion_reads_a_negative_path_as_the_argument() -> None:
    from scratch.cli import command_tree
    from scratch.docs.model import Tree
    from scratch.docs.resolve import complete
    tree = Tree(command_tree())
    # REF and a negative PATH given: nothing positional is left to complete, and the word
    # after them is not read as an unknown option that ends the reading
    assert complete(tree, ["item-schema", "rows", "-1.server_zones"], "") == []
    got = [c.value for c in complete(tree, ["item-schema", "rows", "-1.server_zones"], "--d")]
    assert got == ["--depth"]
