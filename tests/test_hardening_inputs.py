"""Bad inputs the torture run found: each now gets a clear answer or a clear error, at once.

Every case is the real CLI on real files: a YAML alias bomb, undefined and recursive aliases,
an integer of 100,000 digits, a --where of a 5,000-digit number, of 1,000 '!' or 10,000 '(',
5,000 --fields, ``scratch tokens DIR``, ``--store /proc/self``, and a piece of a line of
tens of megabytes (which must cost what the piece costs: only its bytes are read).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from tests.helpers import cli, shell_of

BOMB = (b'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
        + "".join(f"{k}: &{k} [{','.join(['*' + p] * 9)}]\n"
                  for p, k in zip("abcdefghi", "bcdefghij")).encode())


def _error(r) -> dict:  # type: ignore[no-untyped-def]
    assert r.code != 0, r.out
    return r.json["error"]  # type: ignore[no-any-return]


def test_a_yaml_alias_bomb_is_stored_as_text_saying_why(scratch_home: Path) -> None:
    assert len(BOMB) == 377
    r = cli("ingest", "bomb", "--store-always", "--format", "yaml", "--json", input=BOMB)
    assert r.code == 0
    assert (scratch_home / "agents/default/files/bomb").read_bytes() == BOMB
    (warning,) = r.json["meta"]["warnings"]
    assert warning.startswith("content does not parse as yaml at line ")
    assert "aliases expand this document by more than 1,000,000 nodes" in warning
    for args in (("get-in", "bomb", "j"), ("get-in", "bomb", "$..*"), ("schema", "bomb")):
        r = cli(*args, "--json")
        assert r.code != 0 or "text" in r.text  # text has no structure: a clear answer
    assert _error(cli("get-in", "bomb", "j", "--json"))["code"] == "format_error"


def test_a_yaml_entry_indexed_before_the_bound_refuses_to_expand(tmp_path: Path) -> None:
    """Loading through the loader is bounded too (an entry stored by an older version)."""
    import yaml

    from scratch.index.yamlskel import AliasError, Loader

    with pytest.raises(AliasError, match="billion-laughs"):
        yaml.load(BOMB.decode(), Loader=Loader)
    assert yaml.load("a: &x [1, 2]\nb: *x\n", Loader=Loader) == {"a": [1, 2], "b": [1, 2]}


@pytest.mark.parametrize("doc,why", [
    (b"a: 1\nb: *nope\nc: 3\n", "found undefined alias *nope"),
    (b"a: &x\n  - 1\n  - *x\n", "refers to a node that contains it"),
])
def test_undefined_and_recursive_aliases(scratch_home: Path, doc: bytes, why: str) -> None:
    r = cli("ingest", "y", "--store-always", "--format", "yaml", "--json", input=doc)
    assert r.code == 0  # stored, not a crash
    (warning,) = r.json["meta"]["warnings"]
    assert why in warning and warning.endswith("; stored as text")
    assert (scratch_home / "agents/default/files/y").read_bytes() == doc


def test_yaml_with_ordinary_aliases_still_reads(scratch_home: Path) -> None:
    doc = b"base: &b {k: 1, l: [1, 2]}\nother: *b\nmerged:\n  <<: *b\n  m: 2\n"
    assert cli("ingest", "y", "--store-always", "--format", "yaml", input=doc).code == 0
    r = cli("get-in", "y", "merged", "--json")
    assert r.json["data"]["value"] == {"k": 1, "l": [1, 2], "m": 2}
    assert cli("get-in", "y", "other.l.1", "--json").json["data"]["value"] == 2


def test_an_integer_of_100000_digits(scratch_home: Path) -> None:
    digits = b"9" * 100_000
    r = cli("ingest", "n", "--store-always", "--json", input=b'{"n": ' + digits + b', "m": 1}')
    assert r.code == 0 and r.json["data"]["format"] == "json" and "warnings" not in r.json["meta"]
    env = {"SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS": "1000000"}
    r = cli("get-in", "n", "n", "--json", env=env)
    assert r.code == 0 and b'"value":' + digits + b"}" in r.out
    r = cli("schema", "n", "--json")  # the sample is cut, like a long string's
    assert r.code == 0 and "… (100,000 characters)" in r.text
    r = cli("ingest", "bare", "--store-always", "--format", "json", "--json", input=digits)
    assert r.code == 0


@pytest.mark.parametrize("where,problem", [
    ("@.a > " + "9" * 5000, "a number longer than 100 characters"),
    ("!" * 1000 + "@.a", "more than 64 '!' in a row"),
    ("(" * 10_000 + "@.a" + ")" * 10_000, "nested more than 64 levels deep"),
    ("[" * 5000 + "@.a", "nested more than 64 levels deep"),
])
def test_where_expressions_too_deep_or_too_long_are_refused(scratch_home: Path, where: str,
                                                            problem: str) -> None:
    cli("ingest", "d", "--store-always", input=b'{"items": [{"a": 1}, {"a": 2}]}')
    err = _error(cli("iterate-over", "d", "items", "--fields", "a", "--where", where, "--json"))
    assert err["code"] == "invalid_path"
    assert problem in err["message"]
    assert len(err["message"]) < 400  # the expression is quoted cut short


def test_a_long_jsonpath_of_plain_steps_still_works(scratch_home: Path) -> None:
    doc = {"a": {"b": [1, {"c": "deep"}]}}
    cli("ingest", "d", "--store-always", input=json.dumps(doc))
    r = cli("get-in", "d", "$.a.b[1].c", "--json")
    assert r.json["data"]["text"] == "deep\n"
    err = _error(cli("get-in", "d", "$" + "[0]" * 3000, "--json"))
    assert err["code"] == "key_path_not_found"  # 3,000 steps: a plain answer, no recursion


def test_five_thousand_fields_are_refused_before_any_work(scratch_home: Path) -> None:
    cli("ingest", "d", "--store-always", input=b'{"items": [{"a": 1}, {"a": 2}]}')
    err = _error(cli("iterate-over", "d", "items", "--fields", ",".join(["a"] * 5000),
                     "--json"))
    assert (err["code"], err["fields"], err["limit"]) == ("too_many_fields", 5000, 100)
    r = cli("iterate-over", "d", "items", "--fields", ",".join(["a"] * 100), "--json")
    assert r.code == 0


def test_tokens_of_a_directory(tmp_path: Path) -> None:
    err = _error(cli("tokens", str(tmp_path), "--json"))
    assert err["code"] == "is_a_directory" and err["path"] == str(tmp_path)
    err = _error(cli("tokens", str(tmp_path / "missing"), "--json"))
    assert err["code"] == "file_not_found"


@pytest.mark.parametrize("store", ["/proc/self", "/proc/self/nonexistent", "/proc"])
def test_a_store_where_no_store_can_be(store: str) -> None:
    if not Path("/proc/self").is_dir():
        pytest.skip("no /proc here")
    err = _error(cli("--store", store, "ls", "--json"))
    assert err["code"] == "store_unusable" and store in err["message"]


# ---------------------------------------------------------------------------------------------
# a piece of a very long line


def test_a_piece_of_a_long_line_reads_only_the_piece(scratch_home: Path) -> None:
    from scratch.answers.kernel.context import Context
    from scratch.answers.kernel.target import open_target

    big = "x" * 20_000_000
    r = cli("ingest", "k", "--store-always", "--json", input=json.dumps({"k": big}))
    assert r.code == 0 and r.json["data"]["lines"] == 3
    target = open_target(Context.build(), "k")
    ix = target.index
    assert ix.line_length(2) == len(big) + 9  # '  "k": "' + big + '"'
    assert ix.read_line_part(2, 0, 10) == b'  "k": "xx'
    assert ix.read_line_part(2, len(big) + 5, 100) == b'xxx"'
    assert ix.read_line_part(2, len(big) + 9, 100) == b""
    reads: list[int] = []
    real = ix._pread
    ix._pread = lambda n, off: reads.append(n) or real(n, off)  # type: ignore[method-assign]
    ix.read_line_part(2, 1000, 64)
    assert reads == [2, 64]  # the line's end (its terminator) and the piece: nothing else
    ix.close()


def test_pieces_of_a_long_line_cover_it_exactly(scratch_home: Path) -> None:
    line = "".join(f"word{i} " for i in range(300_000)) + "é" * 1000  # ~2.5 MB, one line
    cli("write", "t", input=line + "\n")
    env = {"SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS": "3000"}
    r = cli("slice", "t", "1", "1", "--fit", "--json", env=env)
    pieces = []
    while True:
        assert r.code == 0, r.out
        d = r.json["data"]
        pieces.append(d["lines"][0])
        assert r.json["meta"]["tokens"]["count"] <= 3000
        part = d["line_part"]
        assert part["line_bytes"] == len(line.encode())
        if "next" not in d or len(pieces) > 4:
            break
        r = cli(*shlex.split(shell_of(d["next"]))[1:], "--json", env=env)
    joined = "".join(pieces)
    assert line.startswith(joined) and len(pieces) == 5
    assert part["to_byte"] == len(joined.encode())
    # the last piece, at the end of the line
    start = len(line.encode()) - 500
    r = cli("slice", "t", "1", "1", "--from-byte", str(start), "--fit", "--json", env=env)
    assert r.json["data"]["lines"][0].encode() == line.encode()[start:]
    assert "next" not in r.json["data"]
