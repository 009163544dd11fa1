"""iterate-over / item-schema: warnings for fields no item has, and CSV/TSV rows as items.

Expected rows are written out by hand (small generated tables) or computed with the stdlib csv
module over the whole file (corpus tables); prices are checked against the real tokenizer.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scratch.tokens import count_text, resolve_encoding
from tests.helpers import cli, shell_of, shells

SAMPLE = Path(__file__).resolve().parents[1] / "scratch" / "samples" / "pods.json"
O200K = resolve_encoding(None, "o200k_base")


def ingest(name: str, data: bytes, *extra: str) -> dict:
    r = cli("ingest", name, "--store-always", "--json", *extra, input=data)
    assert r.code == 0, r.out
    return r.json["data"]


def reported(err: str) -> int:
    """The token count of the human footer on stderr."""
    return int(err.rsplit("-- ", 1)[1].split(" tokens")[0].replace(",", ""))


def warnings_of(err: str) -> list[str]:
    return [line[len("warning: "):] for line in err.splitlines() if line.startswith("warning: ")]


@pytest.fixture
def pods(scratch_home: Path) -> str:
    ingest("pods", SAMPLE.read_bytes())
    return "pods"


# ------------------------------------------------------------------------ fields no item has

METADATA_KEYS = ("name, namespace, uid, resourceVersion, creationTimestamp, labels, annotations, "
                 "ownerReferences")


def test_misspelled_field_warns_with_close_keys(pods: str) -> None:
    doc = json.loads(SAMPLE.read_text())
    r = cli("iterate-over", pods, "items", "--fields", "metadata.nme", "--limit", "3")
    assert r.code == 0
    assert r.text == "_index\tmetadata.nme\n0\tnull\n1\tnull\n2\tnull\n"
    assert warnings_of(r.err) == [
        "field metadata.nme is in none of items 0..2; did you mean metadata.name? "
        f"(keys at metadata: {METADATA_KEYS})"]
    assert reported(r.err) == count_text(r.text, O200K)
    r = cli("iterate-over", pods, "items", "--fields", "metadata.name,stauts.phase", "--offset",
            "5", "--limit", "2", "--json")
    assert r.code == 0
    assert r.json["data"]["rows"] == [
        {"_index": i, "metadata.name": doc["items"][i]["metadata"]["name"], "stauts.phase": None}
        for i in (5, 6)]
    assert r.json["meta"]["warnings"] == [
        "field stauts.phase is in none of items 5..6; did you mean status.phase? "
        "(keys of the items: apiVersion, kind, metadata, spec, status)"]
    assert abs(r.json["meta"]["tokens"]["count"] - count_text(r.text, O200K)) <= 2


def test_absent_field_warning_shapes(pods: str) -> None:
    def warned(*args: str) -> list[str]:
        r = cli("iterate-over", pods, "items", *args, "--json")
        assert r.code == 0, r.out
        return r.json["meta"].get("warnings", [])

    # one item: "is not in item N"; no close key: the keys alone
    assert warned("--fields", "nothing", "--offset", "7", "--limit", "1") == [
        "field nothing is not in item 7 (keys of the items: apiVersion, kind, metadata, spec, "
        "status)"]
    # past a leaf: the type found there
    assert warned("--fields", "metadata.name.first", "--limit", "2") == [
        "field metadata.name.first is in none of items 0..1 (metadata.name is string)"]
    # a misspelled prefix: the suggestion keeps the rest of the path
    assert warned("--fields", "metdata.name", "--limit", "2") == [
        "field metdata.name is in none of items 0..1; did you mean metadata.name? "
        "(keys of the items: apiVersion, kind, metadata, spec, status)"]
    # under a wildcard; two close keys
    assert warned("--fields", "status.containerStatuses[*].stat", "--limit", "1") == [
        "field status.containerStatuses[*].stat is not in item 0; did you mean "
        "status.containerStatuses[*].state or status.containerStatuses[*].started? (keys at "
        "status.containerStatuses[*]: name, image, ready, restartCount, started, state, imageID)"]
    # present somewhere in the window (even as null), or legitimately absent elsewhere: quiet
    assert warned("--fields", "metadata.name,status.phase", "--limit", "3") == []


def test_where_keys_no_item_has(pods: str) -> None:
    def run(where: str) -> tuple[list[int], list[str]]:
        r = cli("iterate-over", pods, "items", "--fields", "metadata.name", "--limit", "10",
                "--where", where, "--json")
        assert r.code == 0, r.out
        return [row["_index"] for row in r.json["data"]["rows"]], r.json["meta"].get(
            "warnings", [])

    rows, warned = run("@.status.phse == 'Failed'")
    assert rows == [] and warned == [
        "where key @.status.phse is in none of items 0..59; did you mean @.status.phase? "
        "(keys at status: phase, hostIP, podIP, qosClass, startTime, conditions, "
        "containerStatuses)"]
    # an existence test is about absence; a compared key that is absent with nothing close:
    # both normal, no warning
    assert run("!@.metadata.deletionTimestamp")[1] == []
    assert run("@.status.reason == 'Evicted'")[1] == []
    assert run("@.status.phase == 'Failed'")[1] == []


def test_absent_field_lists_at_most_eight_keys(scratch_home: Path) -> None:
    items = [{f"k{i}": i for i in range(6)}, {f"k{i}": i for i in range(4, 11)}, "text", None]
    ingest("wide", json.dumps(items).encode())
    r = cli("iterate-over", "wide", ".", "--fields", "K3,k99", "--json")
    assert r.code == 0
    assert r.json["data"]["rows"] == [{"_index": i, "K3": None, "k99": None} for i in range(4)]
    assert r.json["meta"]["warnings"] == [
        "field K3 is in none of items 0..3; did you mean k3? (keys of the items: k0, k1, k2, k3, "
        "k4, k5, k6, k7, ... 3 more)",
        "field k99 is in none of items 0..3; did you mean k9? (keys of the items: k0, k1, k2, "
        "k3, k4, k5, k6, k7, ... 3 more)"]
    r = cli("iterate-over", "wide", ".", "--fields", "k0.x", "--offset", "2", "--json")
    assert r.json["meta"]["warnings"] == ["field k0.x is in none of items 2..3 (the items are "
                                          "string|null)"]


# ----------------------------------------------------------------------------- CSV/TSV rows

# CRLF line endings, quoted fields holding the delimiter, a quote and a line break, empty cells
# (quoted and not), a blank line between records, a zero-padded number (its column is text)
TRICKY = (b'id,name,score,ok,when,note\r\n'
          b'1,"Smith, Jane",3.5,true,2024-01-02,"said ""hi""\r\nthen left"\r\n'
          b'2,Bob,,no,2024-02-03,\r\n'
          b'\r\n'
          b'007,"",10,yes,2024-03-04,plain\r\n')
TRICKY_ROWS = [
    {"_index": 0, "_line": 2, "id": "1", "name": "Smith, Jane", "score": 3.5, "ok": True,
     "when": "2024-01-02", "note": 'said "hi"\r\nthen left'},
    {"_index": 1, "_line": 4, "id": "2", "name": "Bob", "score": None, "ok": False,
     "when": "2024-02-03", "note": None},
    {"_index": 2, "_line": 6, "id": "007", "name": None, "score": 10, "ok": True,
     "when": "2024-03-04", "note": "plain"},
]
ALL = "id,name,score,ok,when,note"


def test_cell_typing_reads_the_shapes_the_index_types_columns_by() -> None:
    # rows are typed by the index's column types; a cell converts when it has that type's shape
    from scratch.answers.rows import csv_rows as csvrows
    from scratch.index import textinfo
    assert csvrows._INT.pattern == textinfo._INT.pattern
    assert csvrows._NUM.pattern == textinfo._NUM.pattern
    assert set(csvrows._BOOL) == textinfo._BOOL


@pytest.fixture
def tricky(scratch_home: Path) -> str:
    ingest("t.csv", TRICKY, "--format", "csv")
    return "t.csv"


def test_csv_rows_are_typed_items_with_index_and_line(tricky: str) -> None:
    r = cli("iterate-over", tricky, ".", "--fields", ALL, "--json")
    assert r.code == 0, r.out
    data = r.json["data"]
    assert data["rows"] == TRICKY_ROWS
    assert (data["length"], data["fields"], data["window"]) == (
        3, ALL.split(","), {"offset": 0, "limit": None, "total": 3})
    assert "warnings" not in r.json["meta"]
    assert abs(r.json["meta"]["tokens"]["count"] - count_text(r.text, O200K)) <= 2
    # human mode: one line per row; a value holding a line break is shown as a JSON string
    r = cli("iterate-over", tricky, "$", "--fields", ALL)
    assert r.code == 0
    assert r.text == (
        "_index\t_line\tid\tname\tscore\tok\twhen\tnote\n"
        '0\t2\t1\tSmith, Jane\t3.5\ttrue\t2024-01-02\t"said \\"hi\\"\\r\\nthen left"\n'
        "1\t4\t2\tBob\tnull\tfalse\t2024-02-03\tnull\n"
        "2\t6\t007\tnull\t10\ttrue\t2024-03-04\tplain\n")
    assert reported(r.err) == count_text(r.text, O200K)


def test_csv_windows_and_where(tricky: str) -> None:
    r = cli("iterate-over", tricky, ".", "--fields", "name,score", "--offset", "1", "--limit",
            "1", "--json")
    assert r.json["data"]["rows"] == [{"_index": 1, "_line": 4, "name": "Bob", "score": None}]
    assert r.json["data"]["window"] == {"offset": 1, "limit": 1, "total": 3}
    r = cli("iterate-over", tricky, ".", "--fields", "name", "--offset", "5", "--json")
    assert r.code == 0 and r.json["data"]["rows"] == []

    def where(expr: str, *extra: str) -> list[int]:
        r = cli("iterate-over", tricky, ".", "--fields", "id", "--where", expr, *extra, "--json")
        assert r.code == 0, r.out
        assert "warnings" not in r.json["meta"], r.json["meta"]
        return [row["_index"] for row in r.json["data"]["rows"]]

    assert where("@.score > 3") == [0, 2]  # numbers compare as numbers: 10 > 3
    assert where("@.score == null") == [1]  # an empty cell is null
    assert where("@.ok == true") == [0, 2]
    assert where("@.name == 'Bob' || @.id == '007'") == [1, 2]
    assert where("search(@.note, 'then')") == [0]
    assert where("@.score > 3", "--offset", "1") == [2]
    r = cli("iterate-over", tricky, ".", "--fields", "name", "--where", "@.score > 3")
    assert r.text == "_index\t_line\tname\n0\t2\tSmith, Jane\n2\t6\tnull\n"
    assert "2 of 3 rows match the filter; 2 rows shown: _index 0..2" in r.err


def test_csv_misspelled_columns_warn(tricky: str) -> None:
    r = cli("iterate-over", tricky, ".", "--fields", "nmae,score", "--where", "@.scor > 1",
            "--limit", "2")
    assert r.code == 0
    assert r.text == "_index\t_line\tnmae\tscore\n"
    assert warnings_of(r.err) == [
        "field nmae is in none of rows 0..2; did you mean name? (columns: id, name, score, ok, "
        "when, note)",
        "where key @.scor is in none of rows 0..2; did you mean @.score? (columns: id, name, "
        "score, ok, when, note)"]
    r = cli("iterate-over", tricky, ".", "--fields", "name.first", "--offset", "2", "--json")
    assert r.json["meta"]["warnings"] == ["field name.first is not in row 2 (name is null)"]


def test_csv_item_schema_counts_types_and_presence(tricky: str) -> None:
    r = cli("item-schema", tricky, ".")
    assert r.code == 0
    assert r.text == ("item types: object 3\n"
                      "id: string 3/3\n"
                      "name: string|null 3/3, 1 null\n"
                      "score: number|null|integer 3/3, 1 null\n"
                      "ok: boolean 3/3\n"
                      "when: string 3/3\n"
                      "note: string|null 3/3, 1 null\n")
    assert reported(r.err) == count_text(r.text, O200K)
    r = cli("item-schema", tricky, ".", "--offset", "1", "--limit", "1", "--json")
    data = r.json["data"]
    assert (data["length"], data["items"], data["window"]) == (
        3, 1, {"offset": 1, "limit": 1, "total": 3})
    assert data["fields"][2] == {"path": "score", "types": {"null": 1}, "present": 1,
                                 "presence": "1/1"}
    assert abs(r.json["meta"]["tokens"]["count"] - count_text(r.text, O200K)) <= 2
    win = cli("item-schema", tricky, ".", "--limit", "2")
    assert win.text.startswith("window: items 0..1 of 3\nitem types: object 2\n")


def test_csv_paths_other_than_the_rows_are_refused_with_suggestions(tricky: str) -> None:
    for cmd in (("item-schema", tricky, "rows"), ("iterate-over", tricky, "0", "--fields", "id")):
        r = cli(*cmd, "--json")
        assert r.code == 2
        err = r.json["error"]
        assert err["code"] == "invalid_path"
        assert shells(err["suggestions"]) == [
            f"scratch iterate-over {tricky} . --fields id,name,score --limit 20",
            f"scratch item-schema {tricky} ."]


def test_tsv_header_names_ragged_rows_and_a_byte_order_mark(scratch_home: Path) -> None:
    # a BOM before the first name, a repeated name, an empty name, a name with a dot; one row
    # short of the header, one longer
    ingest("t.tsv", b"\xef\xbb\xbfkey\tval\t\tval\tdot.name\n"
                    b"A\t1\tx\t2\tp\n"
                    b"B\t3\n"
                    b"y\t4\t5\tq\textra1\textra2\n", "--format", "tsv")
    r = cli("iterate-over", "t.tsv", ".", "--fields", "key,val,_col3,val_2,dot.name,_rest",
            "--json")
    assert r.code == 0, r.out
    assert r.json["data"]["rows"] == [
        {"_index": 0, "_line": 2, "key": "A", "val": 1, "_col3": "x", "val_2": "2",
         "dot.name": "p", "_rest": None},
        {"_index": 1, "_line": 3, "key": "B", "val": 3, "_col3": None, "val_2": None,
         "dot.name": None, "_rest": None},
        {"_index": 2, "_line": 4, "key": "y", "val": 4, "_col3": "5", "val_2": "q",
         "dot.name": "extra1", "_rest": ["extra2"]}]
    r = cli("item-schema", "t.tsv", "$")
    assert r.text == ("item types: object 3\n"
                      "key: string 3/3\n"
                      "val: integer 3/3\n"
                      "_col3: string 2/3\n"
                      "val_2: string 2/3\n"
                      '"dot.name": string 2/3\n'
                      "_rest: array of string 1/3\n")
    # the quoted form item-schema prints pastes back as a field too
    r = cli("iterate-over", "t.tsv", ".", "--fields", '"dot.name"', "--limit", "1", "--json")
    assert r.json["data"]["rows"] == [{"_index": 0, "_line": 2, '"dot.name"': "p"}]


def test_csv_with_a_header_only(scratch_home: Path) -> None:
    ingest("h.csv", b"a,b\r\n", "--format", "csv")
    r = cli("iterate-over", "h.csv", ".", "--fields", "a,b")
    assert (r.code, r.text) == (0, "_index\t_line\ta\tb\n")
    assert warnings_of(r.err) == []
    r = cli("iterate-over", "h.csv", ".", "--fields", "a", "--json")
    assert r.json["data"]["rows"] == [] and r.json["data"]["length"] == 0
    r = cli("item-schema", "h.csv", ".")
    assert (r.code, r.text) == (0, "item types: none\n")
    r = cli("get-in", "h.csv", "0", "--json")
    assert r.code == 4 and r.json["error"]["code"] == "key_path_not_found"
    assert r.json["error"]["array_length"] == 0


def test_rows_after_a_csv_parse_error_are_left_out_with_a_warning(scratch_home: Path) -> None:
    # a field over the csv module's size limit stops the index; the rows before it still read
    ingest("e.csv", b"a,b\n1,x\n2,y\n3," + b"z" * 140_000 + b"\n4,w\n", "--format", "csv")
    note = ("CSV parse error at line 4: field larger than field limit (131072); the rows from "
            "there on are left out")
    r = cli("iterate-over", "e.csv", ".", "--fields", "a,b", "--offset", "1", "--json")
    assert r.json["data"]["rows"] == [{"_index": 1, "_line": 3, "a": 2, "b": "y"}]
    assert r.json["data"]["length"] == 2
    assert r.json["meta"]["warnings"] == [note]
    r = cli("item-schema", "e.csv", ".")
    assert r.text == "item types: object 2\na: integer 2/2\nb: string 2/2\n"
    assert warnings_of(r.err) == [note]


# ------------------------------------------------------------------------------- CSV get-in

def test_csv_get_in_rows_and_cells(tricky: str) -> None:
    r = cli("get-in", tricky, "0", "--json")
    assert r.code == 0, r.out
    data = r.json["data"]
    want = {k: v for k, v in TRICKY_ROWS[0].items() if not k.startswith("_")}
    assert (data["value"], data["type"], data["row"], data["line"]) == (want, "object", 0, 2)
    r = cli("get-in", tricky, "0")
    assert r.text == json.dumps(want, indent=2) + "\n"
    assert reported(r.err) == count_text(r.text, O200K)
    r = cli("get-in", tricky, "2.score", "--json")
    assert (r.json["data"]["value"], r.json["data"]["line"]) == (10, 6)
    r = cli("get-in", tricky, "$[1].name")
    assert r.text == "Bob\n"
    r = cli("get-in", tricky, "/0/note")
    assert r.text == 'said "hi"\r\nthen left\n'
    r = cli("get-in", tricky, "--json", "--", "-1.ok")  # negative rows count from the end
    assert r.json["data"]["value"] is True


def test_csv_get_in_errors_point_to_what_works(tricky: str) -> None:
    def err(path: str) -> tuple[int, dict]:
        r = cli("get-in", tricky, path, "--json")
        return r.code, r.json["error"]

    code, e = err("3")
    assert (code, e["code"], e["array_length"]) == (4, "key_path_not_found", 3)
    assert shells(e["suggestions"]) == [f"scratch get-in {tricky} 2", f"scratch schema {tricky}"]
    code, e = err("score")
    assert (code, e["code"]) == (4, "key_path_not_found")
    assert shells(e["suggestions"]) == [f"scratch get-in {tricky} 0.score",
                                f"scratch iterate-over {tricky} . --fields score --limit 20"]
    code, e = err("1.scor")
    assert e["message"] == "no column 'scor' in row 1 (6 columns)"
    assert e["available_keys"] == ["id", "name", "score", "ok", "when", "note"]
    assert shells(e["suggestions"]) == [f"scratch get-in {tricky} 1.score", f"scratch schema {tricky}"]
    code, e = err("1.name.first")
    assert e["message"] == "the value at 1.name is a string, it has no 'first'"
    for path in (".", "$", "$[*].name"):
        code, e = err(path)
        assert (code, e["code"]) == (2, "invalid_path")
        assert shells(e["suggestions"]) == [
            f"scratch iterate-over {tricky} . --fields id,name,score --limit 20",
            f"scratch item-schema {tricky} .", f"scratch get-in {tricky} 0"]


# ----------------------------------------------------------------------------- corpus tables

def _same(value: object, text: str) -> bool:
    """A typed row value against the cell's text, as the csv module reads it."""
    if text == "":
        return value is None
    if isinstance(value, bool):
        return text in ("true", "yes", "TRUE", "True") if value else text in (
            "false", "no", "FALSE", "False")
    if isinstance(value, (int, float)):
        return float(text) == value
    return value == text


@pytest.mark.corpus
def test_corpus_csv_windows_match_the_csv_module(corpus_dir: Path) -> None:
    import csv
    files = sorted((corpus_dir / "csv").glob("*.csv"))
    if not files:
        pytest.skip("no CSV files in the corpus")
    for path in files:
        raw = path.read_bytes()
        name = path.stem.replace(".", "_")
        ingest(name, raw)
        with open(path, newline="", encoding="utf-8", errors="replace") as fh:
            reader = csv.reader(fh)
            records = []
            end = 0
            for rec in reader:
                start, end = end + 1, reader.line_num
                if rec:
                    records.append((start, rec))
        (_, header), rows = records[0], records[1:]
        keys = [h.lstrip("\ufeff") for h in header]
        assert len(set(keys)) == len(keys) and all(keys), path.name  # plain names here
        schema = cli("item-schema", name, ".", "--json").json["data"]
        assert schema["length"] == len(rows) and schema["items"] == len(rows), path.name
        for offset in (0, len(rows) // 2, len(rows) - 7):
            r = cli("iterate-over", name, ".", "--fields", ".", "--offset", str(offset),
                    "--limit", "7", "--json")
            assert r.code == 0, (path.name, r.out[:300])
            got = r.json["data"]["rows"]
            assert [row["_index"] for row in got] == list(range(offset, offset + 7))
            for row in got:
                line, rec = rows[row["_index"]]
                assert row["_line"] == line, path.name
                item = row["."]
                if isinstance(item, str):  # previewed: a long row, fetched whole
                    item = cli("get-in", name, str(row["_index"]), "--json").json["data"]["value"]
                assert list(item) == keys[:len(rec)], path.name
                assert all(_same(item[k], v) for k, v in zip(keys, rec)), (path.name, row)


# ------------------------------------------------------------------- big tables: read windows

BIG_ROWS = 200_000


@pytest.fixture
def big(scratch_home: Path) -> str:
    lines = ["id,name,score,note\n"] + [f'{i},name {i},{i % 97}.5,"note, {i}"\n'
                                         for i in range(BIG_ROWS)]
    ingest("big.csv", "".join(lines).encode())  # ~7 MB, sniffed as CSV
    return "big.csv"


def _peak(*args: str) -> tuple[int, object]:
    import tracemalloc
    tracemalloc.start()
    try:
        r = cli(*args)
        return tracemalloc.get_traced_memory()[1], r
    finally:
        tracemalloc.stop()


def test_a_window_reads_its_rows_not_the_table(big: str) -> None:
    cli("iterate-over", big, ".", "--fields", "id", "--limit", "2", "--json")  # warm imports
    # the table's text alone is ~7 MB; a window of 20 rows deep inside it stays far below
    peak, r = _peak("iterate-over", big, ".", "--fields", "id,note", "--offset", "150000",
                    "--limit", "20", "--json")
    assert r.code == 0 and peak < 2_000_000, peak
    assert r.json["data"]["rows"][0] == {"_index": 150000, "_line": 150002, "id": 150000,
                                         "note": "note, 150000"}
    peak, r = _peak("get-in", big, "199999.note", "--json")
    assert r.code == 0 and r.json["data"]["text"] == "note, 199999\n" and peak < 2_000_000
    peak, r = _peak("item-schema", big, ".", "--offset", "100000", "--limit", "20", "--json")
    assert r.code == 0 and peak < 2_000_000, peak
    assert r.json["data"]["fields"][2] == {"path": "score", "types": {"number": 20},
                                           "present": 20, "presence": "20/20"}
    # a window too big for the cap is refused before it is read, with a --limit that fits
    peak, r = _peak("iterate-over", big, ".", "--fields", "id,name", "--offset", "5", "--json")
    assert r.code == 3 and peak < 2_000_000, peak
    err = r.json["error"]
    assert err["code"] == "iterate_over_too_large"
    assert err["estimated_tokens"] > 1_000_000
    first = shell_of(err["suggestions"][0])
    assert first.startswith(f"scratch iterate-over {big} . --fields id,name --offset 5 --limit ")
    import shlex
    r = cli(*shlex.split(first)[1:], "--json")
    assert r.code == 0 and len(r.json["data"]["rows"]) == int(first.rsplit(" ", 1)[1])
    # --fit reads no more rows than could fit
    peak, r = _peak("iterate-over", big, ".", "--fields", "id", "--offset", "7", "--fit",
                    "--json")
    assert r.code == 0 and peak < 2_000_000, peak
    rows = r.json["data"]["rows"]
    assert rows[0]["_index"] == 7 and shell_of(r.json["data"]["next"]) == (
        f"scratch iterate-over {big} . --fields id --offset {7 + len(rows)} --fit")


def test_fit_pages_visit_every_row_once(scratch_home: Path) -> None:
    import shlex
    ingest("m.csv", "".join(["k,v\n"] + [f"{i},{'x' * (i % 13)}\n" for i in range(400)]).encode())
    (scratch_home / "scratch.toml").write_text("[budget]\nmax_extraction_tokens = 300\n")
    seen: list[int] = []
    r = cli("iterate-over", "m.csv", ".", "--fields", "k,v", "--fit", "--json")
    while True:
        assert r.code == 0, r.out
        assert r.json["meta"]["tokens"]["count"] <= 300
        rows = r.json["data"]["rows"]
        seen += [row["_index"] for row in rows]
        assert all(row["k"] == row["_index"] and row["_line"] == row["_index"] + 2
                   for row in rows)
        if "next" not in r.json["data"]:
            break
        r = cli(*shlex.split(shell_of(r.json["data"]["next"]))[1:], "--json")
    assert seen == list(range(400))


def test_a_long_csv_cell_is_cut_with_the_get_in_that_shows_it(scratch_home: Path) -> None:
    long = "long words " * 30
    ingest("l.csv", f"k,text\n1,short\n2,{long}\n".encode(), "--format", "csv")
    r = cli("iterate-over", "l.csv", ".", "--fields", "k,text")
    assert r.text == ("_index\t_line\tk\ttext\n0\t2\t1\tshort\n"
                      f"1\t3\t2\t{long[:200]}… [330 chars: scratch get-in l.csv 1.text]\n")
    r = cli("iterate-over", "l.csv", ".", "--fields", "text", "--offset", "1", "--json")
    assert r.json["data"]["rows"] == [{"_index": 1, "_line": 3, "text": long[:200] + "…",
                                       "_truncated": {"text": {"path": "1.text", "length": 330}}}]
    assert cli("get-in", "l.csv", "1.text").text == long + "\n"
    r = cli("get-in", "l.csv", "1", "--offset", "1", "--limit", "1", "--json")
    assert r.json["data"]["text"] == '  "k": 2,\n'
    assert (r.json["data"]["total_lines"], r.json["data"]["row"]) == (4, 1)
