"""sql's columnar copies (scratch.query.sqlcopy): made once per table of a version, reused,
made again when deleted, damaged or cleared with the cache, counted in the cache's size, a new
version gets its own; the rows and types are those read from the stored file; made in the
background for big tables; the sandbox holds with a copy attached. Through the CLI and MCP."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from pathlib import Path

import pytest

from scratch.mcp.dispatch import run_tool
from scratch.mcp.serve.session import ServerState
from scratch.query import sqlcopy
from tests.helpers import cli

LEVELS = ("INFO", "WARN", "ERROR", "DEBUG")


def ndjson_rows(n: int, salt: str = "") -> bytes:
    """About 120 bytes a row: ``n`` rows of mixed types (ints, doubles, text, nulls, lists,
    objects, timestamps), so a copy has every kind of column to keep."""
    out = []
    for i in range(n):
        row: dict[str, object] = {"id": i, "level": LEVELS[i % 4], "ms": i * 0.25,
                                  "zip": f"{i % 1000:05d}", "tags": [f"t{i % 3}", salt],
                                  "at": f"2024-04-06T{i % 24:02d}:{i % 60:02d}:00Z",
                                  "req": {"path": f"/api/{i % 7}", "ok": i % 5 != 0}}
        if i % 11 == 0:
            row["err"] = None
        out.append(json.dumps(row, separators=(",", ":")))
    return ("\n".join(out) + "\n").encode()


BIG = ndjson_rows(12_000)  # about 1.5 MB: over sqlcopy.MIN_BYTES
QUERY = "SELECT level, count(*) AS n, sum(ms) AS ms FROM entry GROUP BY level ORDER BY level"


def expected(n: int) -> list[list[object]]:
    """QUERY's rows over ``ndjson_rows(n)``, computed here."""
    return sorted([level, len(range(k, n, 4)), sum(i * 0.25 for i in range(k, n, 4))]
                  for k, level in enumerate(LEVELS))


def ingest(name: str, data: bytes, *extra: str) -> None:
    r = cli("ingest", name, "--store-always", "--json", *extra, input=data)
    assert r.code == 0, r.out


def sql(*args: str, copy: str = "foreground") -> dict:
    r = cli("sql", *args, "--json", env={"SCRATCH_SQL_COPY": copy})
    assert r.code == 0, r.out
    return r.json["data"]


def copies(home: Path) -> list[Path]:
    return sorted((home / "cache" / "index").glob("*/sql/*.duckdb"))


def stamp(p: Path) -> tuple[int, int]:
    st = p.stat()
    return st.st_ino, st.st_mtime_ns


@pytest.fixture
def big(scratch_home: Path) -> str:
    assert len(BIG) > sqlcopy.MIN_BYTES
    ingest("big", BIG)
    return "big"


def plain(d: dict) -> dict:
    return {k: d[k] for k in ("columns", "types", "rows", "row_count", "truncated", "offset")}


def test_the_copy_is_made_once_and_reused(big: str, scratch_home: Path) -> None:
    assert copies(scratch_home) == []
    first = sql(big, QUERY)
    assert first["from_copy"] == ["entry"]
    [copy] = copies(scratch_home)
    assert copy.parent.parent.name.endswith(".ndjson")  # beside the version's index
    made = stamp(copy)
    again = sql(big, QUERY)
    assert again["from_copy"] == ["entry"] and stamp(copy) == made
    off = sql(big, QUERY, copy="off")
    assert off["from_copy"] == [] and plain(off) == plain(first) == plain(again)
    assert first["rows"] == expected(12_000)
    human = cli("sql", big, QUERY, env={"SCRATCH_SQL_COPY": "foreground"})
    assert human.code == 0 and human.text.startswith("level\tn\tms\nDEBUG\t3000\t")
    assert "4 rows (" in human.err and ", columnar copy)" in human.err


@pytest.mark.parametrize("query", [
    "SELECT * FROM entry ORDER BY id LIMIT 40 OFFSET 5000",
    ("SELECT * FROM entry", "--offset", "9960"),  # in the file's order, 10,000 rows kept
    "SELECT zip, count(*) FROM entry WHERE req.ok AND err IS NULL GROUP BY zip ORDER BY 2 "
    "DESC, 1 LIMIT 5",
    "SELECT typeof(\"at\"), typeof(tags), typeof(req), typeof(zip), typeof(err) FROM entry "
    "LIMIT 1",
])
def test_results_are_those_of_the_stored_file(big: str, query: str | tuple[str, ...]) -> None:
    args = (query,) if isinstance(query, str) else query
    off = sql(big, *args, copy="off")
    on = sql(big, *args)
    assert on["from_copy"] == ["entry"] and off["from_copy"] == []
    assert plain(on) == plain(off)


def test_describe_reads_the_copy_with_the_same_types(big: str, scratch_home: Path) -> None:
    off = sql(big, "--describe", copy="off")
    on = sql(big, "--describe")
    assert on["columns"] == off["columns"]
    assert [c["type"] for c in on["columns"]["entry"]][:4] == ["BIGINT", "VARCHAR", "DOUBLE",
                                                              "VARCHAR"]
    assert len(copies(scratch_home)) == 1


def test_a_deleted_copy_is_made_again(big: str, scratch_home: Path) -> None:
    want = sql(big, QUERY)
    [copy] = copies(scratch_home)
    copy.unlink()
    assert plain(sql(big, QUERY)) == plain(want)
    assert copies(scratch_home) == [copy]


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "middle"])
def test_a_damaged_copy_is_made_again(big: str, scratch_home: Path, damage: str) -> None:
    want = sql(big, QUERY)
    [copy] = copies(scratch_home)
    data = copy.read_bytes()
    if damage == "garbage":
        copy.write_bytes(b"not a database " * 1000)
    elif damage == "truncated":
        copy.write_bytes(data[: len(data) // 3])
    elif damage == "empty":
        copy.write_bytes(b"")
    else:  # every block past the headers overwritten: their checksums no longer match
        copy.write_bytes(data[:3 * 4096] + bytes(len(data) - 3 * 4096))
    got = sql(big, QUERY)
    assert plain(got) == plain(want)
    [again] = copies(scratch_home)
    assert again == copy and again.read_bytes() != b"" and sql(big, QUERY)["from_copy"] == \
        ["entry"]


def test_the_copy_counts_in_the_cache_and_goes_with_it(big: str, scratch_home: Path) -> None:
    before = cli("stats", "--json").json["data"]["cache"]
    assert before["sql_copies"] == 0
    want = sql(big, QUERY)
    [copy] = copies(scratch_home)
    after = cli("stats", "--json").json["data"]["cache"]
    size = copy.stat().st_size + copy.with_suffix(".lock").stat().st_size
    assert after["sql_copies"] == size > 0
    assert after["total"] == before["total"] + size
    assert after["index"] == before["index"] + size
    shutil.rmtree(scratch_home / "cache")  # the cache is rebuildable: all of it may go
    assert plain(sql(big, QUERY)) == plain(want)
    assert len(copies(scratch_home)) == 1


def test_a_new_version_gets_its_own_copy(big: str, scratch_home: Path) -> None:
    v1 = sql(big, QUERY)
    ingest(big, ndjson_rows(9_000, salt="v2"))
    v2 = sql(big, QUERY)
    assert v2["version"] == 2 and v2["rows"] == expected(9_000) != v1["rows"]
    assert len(copies(scratch_home)) == 2
    old = sql(f"{big}@1", QUERY)
    assert old["from_copy"] == ["entry"] and plain(old) == plain(v1)
    assert len(copies(scratch_home)) == 2


def test_small_tables_get_no_copy(scratch_home: Path) -> None:
    ingest("small", ndjson_rows(100))
    d = sql("small", QUERY)
    assert d["from_copy"] == [] and copies(scratch_home) == []


def test_off_makes_and_reads_no_copy(big: str, scratch_home: Path) -> None:
    assert sql(big, QUERY, copy="off")["from_copy"] == []
    assert copies(scratch_home) == []
    r = cli("sql", big, QUERY, "--json", env={"SCRATCH_SQL_COPY": "sometimes"})
    assert r.code == 2 and r.json["error"]["code"] == "config_error"
    assert r.json["error"]["message"] == ("sql.copy must be one of auto, foreground, "
                                          "background, off, not 'sometimes'")


def wait_for_builder(copy_dir: Path) -> None:
    """Block until the background builder lets go of its lock (it holds it from before the
    command returned until the copy is in place)."""
    for lock in copy_dir.glob("*.lock"):
        fd = os.open(lock, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        finally:
            os.close(fd)


def test_background_copy_after_the_first_answer(big: str, scratch_home: Path) -> None:
    first = sql(big, QUERY, copy="background")
    assert first["from_copy"] == []  # answered from the stored file
    [copy_dir] = (scratch_home / "cache" / "index").glob("*/sql")
    wait_for_builder(copy_dir)
    [copy] = copies(scratch_home)
    assert list(copy_dir.glob(".tmp-*")) == [] and list(copy_dir.glob(".spool-*")) == []
    later = sql(big, QUERY, copy="background")
    assert later["from_copy"] == ["entry"] and plain(later) == plain(first)


def test_background_copy_of_spooled_rows(scratch_home: Path) -> None:
    """Text lines are rows made here and spooled for DuckDB: the spool goes with the build."""
    text = "".join(f"line {i} of the notes, level {LEVELS[i % 4]}\n" for i in range(40_000))
    ingest("notes", text.encode(), "--format", "text")
    q = "SELECT count(*), min(line), max(line), max(text) FROM entry WHERE text LIKE '%WARN'"
    first = sql("notes", q, copy="background")
    assert first["from_copy"] == [] and first["rows"] == [[10_000, 2, 39_998,
                                                           "line 9997 of the notes, level WARN"]]
    [copy_dir] = (scratch_home / "cache" / "index").glob("*/sql")
    wait_for_builder(copy_dir)
    assert list(copy_dir.glob(".spool-*")) == []
    later = sql("notes", q, copy="background")
    assert later["from_copy"] == ["entry"] and plain(later) == plain(first)


CSV_HEAD = "host,status,bytes,ratio,zip\n"


@pytest.mark.parametrize("fmt", ["json", "csv", "log"])
def test_other_formats_read_the_same_from_a_copy(scratch_home: Path, fmt: str) -> None:
    if fmt == "json":
        items = [json.loads(line) for line in BIG.splitlines()]
        ingest("t", json.dumps({"kind": "List", "items": items}).encode())
        q = "SELECT level, count(*), max(req.path) FROM entry GROUP BY 1 ORDER BY 1"
    elif fmt == "csv":
        rows = "".join(f"h{i % 13},{200 + i % 3},{i * 7},{i / 8},{i % 999:05d}\n"
                       for i in range(40_000))
        ingest("t.csv", (CSV_HEAD + rows).encode())
        q = "SELECT status, count(*), sum(bytes), max(ratio), min(zip) FROM entry GROUP BY 1 " \
            "ORDER BY 1"
    else:
        lines = "".join(f'10.0.{i % 7}.{i % 200} - - [06/Apr/2024:10:{i % 60:02d}:00 +0000] '
                        f'"GET /p/{i % 17} HTTP/1.1" {[200, 404, 500][i % 3]} {i}\n'
                        for i in range(14_000))
        ingest("access.log", lines.encode())
        q = "SELECT * FROM entry ORDER BY _line LIMIT 3 OFFSET 7000"
    ref = "t.csv" if fmt == "csv" else "access.log" if fmt == "log" else "t"
    off = sql(ref, q, copy="off")
    on = sql(ref, q)
    assert on["from_copy"] == ["entry"] and plain(on) == plain(off)
    assert sql(ref, "--describe")["columns"] == sql(ref, "--describe", copy="off")["columns"]


def test_a_second_table_has_its_copy_too(big: str, scratch_home: Path) -> None:
    ingest("other", ndjson_rows(10_000, salt="o"))
    q = "SELECT count(*) FROM entry e JOIN o ON e.id = o.id WHERE o.tags[2] = 'o'"
    d = sql(big, q, "--table", "o=other")
    assert d["rows"] == [[10_000]] and d["from_copy"] == ["entry", "o"]
    assert len(copies(scratch_home)) == 2
    same = sql(big, "SELECT count(*) FROM entry e JOIN o USING (id)", "--table", "o=big")
    assert same["rows"] == [[12_000]] and same["from_copy"] == ["entry", "o"]


@pytest.mark.parametrize(("query", "code"), [
    ("SELECT * FROM read_csv('/etc/passwd')", "sql_access_denied"),
    ("SELECT * FROM read_text('/etc/hostname')", "sql_access_denied"),
    ("ATTACH '/tmp/x.duckdb' AS x", "sql_not_read_only"),
    ("DETACH copy_entry", "sql_not_read_only"),
    ("COPY (SELECT 1) TO '/tmp/x.csv'", "sql_not_read_only"),
    ("INSERT INTO copy_entry.main.entry (id) VALUES (1)", "sql_not_read_only"),
    ("SET enable_external_access = true", "sql_not_read_only"),
])
def test_the_sandbox_holds_with_a_copy_attached(big: str, query: str, code: str) -> None:
    assert sql(big, "SELECT count(*) FROM entry")["from_copy"] == ["entry"]
    r = cli("sql", big, query, "--json", env={"SCRATCH_SQL_COPY": "foreground"})
    assert r.code == 2, r.out
    assert r.json["error"]["code"] == code


def test_over_mcp(big: str, scratch_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCRATCH_SQL_COPY", "foreground")
    session = ServerState().session_for("conn", "default", None, "test")
    out = run_tool("sql", {"file": big, "query": QUERY}, session)
    assert out.ok, out.text
    assert out.text.startswith("level\tn\tms\nDEBUG\t3000\t" + str(expected(12_000)[0][2]))
    assert ", columnar copy)" in "\n".join(out.texts[1:])
    assert len(copies(scratch_home)) == 1
    again = run_tool("sql", {"file": big, "query": QUERY}, session)
    assert again.text == out.text


def test_what_a_killed_builder_left_is_swept(big: str, scratch_home: Path) -> None:
    sql(big, QUERY)
    [copy] = copies(scratch_home)
    dead = copy.parent / ".tmp-999999999-1-left.duckdb"  # no such process
    dead.write_bytes(b"half a database")
    copy.unlink()
    sql(big, QUERY)
    assert not dead.exists() and copies(scratch_home) == [copy]


def test_a_symlinked_copies_directory_gets_no_copy(big: str, scratch_home: Path,
                                                   tmp_path: Path) -> None:
    want = sql(big, QUERY, copy="off")
    [index_dir] = (scratch_home / "cache" / "index").glob("*.ndjson")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (index_dir / "sql").symlink_to(elsewhere)
    got = sql(big, QUERY)
    assert got["from_copy"] == [] and plain(got) == plain(want)
    assert list(elsewhere.iterdir()) == []


def test_concurrent_first_queries_make_one_copy(big: str, scratch_home: Path) -> None:
    """Processes racing on the first query of a version: each answers the same rows, one of
    them builds (the others wait on the build lock, then read the copy), nothing half-written
    is left or read."""
    import subprocess
    import sys
    env = {**os.environ, "SCRATCH_SQL_COPY": "foreground",
           "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    procs = [subprocess.Popen([sys.executable, "-m", "scratch", "sql", big, QUERY, "--json"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
             for _ in range(3)]
    outs = [json.loads(p.communicate(timeout=300)[0]) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0]
    assert all(o["data"]["rows"] == expected(12_000) for o in outs)
    assert all(o["data"]["from_copy"] == ["entry"] for o in outs)
    [copy] = copies(scratch_home)
    assert sorted(p.name for p in copy.parent.iterdir()) == [copy.name, copy.stem + ".lock"]


@pytest.fixture
def kept_sessions() -> object:
    """As ``scratch mcp serve`` runs: sql sessions of copies kept between calls."""
    from scratch.query import sql as sqlmod
    sqlmod.keep_sessions(2)
    yield sqlmod
    sqlmod.keep_sessions(0)


def test_a_server_keeps_sessions_of_copies(big: str, scratch_home: Path, kept_sessions: object,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from scratch.query import sql as sqlmod
    monkeypatch.setenv("SCRATCH_SQL_COPY", "foreground")
    session = ServerState().session_for("conn", "default", None, "test")

    def ask(q: str) -> str:
        out = run_tool("sql", {"file": big, "query": q}, session)
        assert out.ok, out.text
        return out.text

    first = ask(QUERY)
    assert sqlmod._pool is not None
    [[kept]] = sqlmod._pool.idle.values()
    assert ask(QUERY) == first
    assert [list(v) for v in sqlmod._pool.idle.values()] == [[kept]]  # the same one, reused
    assert ask("SELECT count(*) FROM entry WHERE level = 'WARN'") == "count_star()\n3000\n"
    bad = run_tool("sql", {"file": big, "query": "SELEC 1"}, session)
    assert not bad.ok and bad.code == "sql_error"
    assert [list(v) for v in sqlmod._pool.idle.values()] == [[kept]]  # a query's own error
    denied = run_tool("sql", {"file": big, "query": "SELECT * FROM read_text('/etc/hostname')"},
                      session)
    assert not denied.ok and denied.code == "sql_access_denied"
    shutil.rmtree(scratch_home / "cache")  # the cache cleared: the kept session goes too
    assert ask(QUERY) == first
    assert len(copies(scratch_home)) == 1
    [[other]] = sqlmod._pool.idle.values()
    assert other is not kept
    # tables read from the stored file are never kept
    ingest("small", ndjson_rows(100))
    out = run_tool("sql", {"file": "small", "query": "SELECT count(*) FROM entry"}, session)
    assert out.text == "count_star()\n100\n"
    assert [list(v) for v in sqlmod._pool.idle.values()] == [[other]]


def test_no_spool_goes_through_a_symlinked_copies_directory(scratch_home: Path,
                                                           tmp_path: Path) -> None:
    text = "".join(f"line {i}\n" for i in range(150_000))
    ingest("notes", text.encode(), "--format", "text")
    [index_dir] = (scratch_home / "cache" / "index").glob("*.text")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (index_dir / "sql").symlink_to(elsewhere)
    d = sql("notes", "SELECT count(*) FROM entry", copy="background")
    assert d["rows"] == [[150_000]] and d["from_copy"] == []
    assert list(elsewhere.iterdir()) == []


@pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="no idle scheduling class here")
def test_the_background_builder_runs_at_the_lowest_priority() -> None:
    # what the detached builder calls first (sqlcopy._main): the idle class and nice 19, so
    # the agent's next query is not kept waiting by a copy being built; in a child, since the
    # priority of a process can only go down
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read)
        sqlcopy.lower_priority()
        os.write(write, json.dumps([os.sched_getscheduler(0), os.nice(0)]).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as fh:
        got = json.loads(fh.read())
    os.waitpid(pid, 0)
    assert got == [os.SCHED_IDLE, 19]
