"""Pointers of markdown and CSV entries: the heading outline, and a row command that runs."""

from __future__ import annotations

from tests.helpers import cli


def doc(parts: int) -> str:
    out = ["## Preface\n\ntext\n\n"]
    for i in range(parts):
        out.append(f"# Part {i}\n\n")
        out += [f"## Section {i}.{j}\n\nSome words about it.\n\n" for j in range(3)]
    return "".join(out) + "filler\n" * 200


def test_headings_in_the_human_pointer(scratch_home) -> None:
    r = cli("ingest", "md", "--store-always", "--format", "markdown", input=doc(2))
    assert r.code == 0
    text = r.text
    assert text.startswith("stored md (version 1): markdown")
    outline = text.split("headings:\n", 1)[1].split("next:\n", 1)[0]
    assert outline == ("  ## Preface L1-4\n"
                       "  # Part 0 L5-18\n"
                       "    ## Section 0.0 L7-10\n"
                       "    ## Section 0.1 L11-14\n"
                       "    ## Section 0.2 L15-18\n"
                       "  # Part 1 L19-232\n"
                       "    ## Section 1.0 L21-24\n"
                       "    ## Section 1.1 L25-28\n"
                       "    ## Section 1.2 L29-232\n")
    assert "  scratch schema md\n" in text


def test_a_long_outline_is_cut_and_counted(scratch_home) -> None:
    r = cli("ingest", "md", "--store-always", "--format", "markdown", "--json", input=doc(40))
    text = r.json["data"]["text"]
    assert len(text["headings"]) <= 30
    assert text["headings"][0] == {"level": 2, "title": "Preface", "line": 1, "end_line": 4}
    assert len(text["headings"]) + text["headings_more"] == 1 + 40 * 4


def test_a_csv_pointer_suggests_iterating_over_its_rows(scratch_home) -> None:
    rows = "".join(f"{i},name {i},{i * 1.5},x\n" for i in range(400))
    r = cli("ingest", "t", "--store-always", "--json", input="id,name,score,id\n" + rows)
    assert r.json["data"]["format"] == "csv"
    cmd = "scratch iterate-over t . --fields name,score --limit 20"  # the repeated id is left out
    assert cmd in r.json["data"]["next"]
    out = cli(*cmd.split()[1:], "--json")
    assert out.code == 0
    assert out.json["data"]["rows"][1] == {"_index": 1, "_line": 3, "name": "name 1", "score": 1.5}
