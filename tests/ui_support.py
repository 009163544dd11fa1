"""Driving `scratch ui` from tests and benchmarks: a real server process, plain HTTP requests.

The server is `python -m scratch ui --port 0` on a store of its own; its URL (with the token)
is read from its stdout. Requests go through http.client, so the Host and Origin headers sent
are exactly the ones a test sets.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlsplit

SCRATCH = [sys.executable, "-m", "scratch"]
REPO = Path(__file__).resolve().parents[1]


LINES = "".join(f"line {n} {'ERROR disk full' if n % 50 == 0 else 'ok'}\n" for n in range(1, 251))


def env_for(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRATCH_")}
    env.update(SCRATCH_HOME=str(home), PYTHONPATH=str(REPO), **extra)
    return env


def scratch(home: Path, *args: str, input: bytes | None = None, agent: str | None = None,
            session: str | None = None, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    """One real `scratch ARGS` process on the store at ``home``."""
    extra = {}
    if agent:
        extra["SCRATCH_AGENT"] = agent
    if session:
        extra["SCRATCH_SESSION"] = session
    return subprocess.run([*SCRATCH, *args], input=input, env=env_for(home, **extra),
                          capture_output=True, check=check)


class Answer(NamedTuple):
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8")


class UiServer:
    """`scratch ui ARGS` as a process; ``url`` is the URL it printed (token included)."""

    def __init__(self, home: Path, *args: str) -> None:
        self.proc = subprocess.Popen([*SCRATCH, "ui", *args], env=env_for(home),
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().decode()
        found = re.match(r"(http://[^/\s]+)(/\S*/)$", line.strip())
        if not found:
            err = self.proc.stderr.read().decode() if self.proc.stderr else ""
            self.stop()
            raise AssertionError(f"scratch ui did not start: {line!r} {err}")
        self.origin, self.base = found.group(1), found.group(2)
        self.url = self.origin + self.base
        parts = urlsplit(self.url)
        self.host, self.port = parts.hostname or "", parts.port or 80
        self.token = self.base.strip("/")

    def get(self, path: str = "", *, base: str | None = None, method: str = "GET",
            headers: dict[str, str] | None = None) -> Answer:
        """``path`` under the page's base (its token) or under ``base``."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
        try:
            target = (self.base if base is None else base) + path
            conn.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
            sent = {"Host": f"{self.host}:{self.port}", **(headers or {})}
            for key, value in sent.items():
                conn.putheader(key, value)
            conn.endheaders()
            answer = conn.getresponse()
            return Answer(answer.status, {k.lower(): v for k, v in answer.getheaders()},
                          answer.read())
        finally:
            conn.close()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


def seed(home: Path) -> dict[str, str]:
    """A store made by real calls: a 250-line entry, an entry of two versions, a line that is
    markup, a JSON output, a log of 150 entries, another agent's entry (the CLI, in-process);
    a session "long" of 250 calls (the CLI) and a session "s1" through MCP (a real SDK client
    of `scratch mcp serve`) with a refused call. The ledger records them all. Returns what the
    MCP client got for its head call ("mcp_head": the result's text blocks, one a line)."""
    from tests.helpers import cli
    from tests.mcp_support import stdio_client

    def run(*args: str, input: bytes | None = None) -> None:
        done = cli(*args, input=input, env={"SCRATCH_HOME": str(home)})
        assert done.code == 0, done.err

    run("write", "app/lines", input=LINES.encode())
    run("write", "notes", input=b"a\nb\nc\n")
    run("write", "notes", input=b"a\nB\nc\nd\n")
    run("write", "markup", input=b"<script>alert('x')</script> & \"quoted\"\n")
    pods = {"items": [{"name": f"pod-{i}", "phase": "Failed" if i % 3 == 0 else "Running"}
                      for i in range(2000)]}
    run("ingest", "pods", "--tool", "kubectl", input=json.dumps(pods).encode())
    run("log", "append", "events", "--lines",
        input="".join(f"event {n}\n" for n in range(1, 151)).encode())
    run("--agent", "ops", "write", "theirs", input=b"of another agent\n")
    for n in range(1, 251):
        run("--session", "long", "slice", "app/lines", str(n), str(n))
    client = stdio_client(home, "--session", "s1", env=env_for(home))
    try:
        refused = client.call("get_in", {"file": "pods", "path": "items"})
        assert refused.is_error
        head = client.call("head", {"file": "notes", "lines": 2})
        assert not head.is_error
        got = {"mcp_head": "\n".join(c.text for c in head.content if c.type == "text")}
        client.text("ingest", {"content": json.dumps(pods), "name": "mcp/pods",
                               "tool": "kubectl"})
    finally:
        client.close()
    return got


# agents named so that a plain sort would put t10 before t2; the page sorts them naturally
NATURAL = ["t1", "t2", "t3", "t10", "t12"]
ODD_SESSION = "run 1/ü x"  # a session name no interface gives: a "/", a space, unicode
SQL = "SELECT phase, count(*) AS n FROM entry WHERE phase = 'Failed' GROUP BY 1"


def seed_more(home: Path) -> None:
    """What :func:`seed` leaves out: agents whose names sort naturally (t1 ... t12), a call
    in a session whose name holds a "/", a space and unicode (through the ledger's own API:
    no interface makes one), two malformed lines in t2's ledger (not JSON; JSON that is no
    record), an SQL call whose text holds quotes, and a call whose argument is markup."""
    from scratch.store import ledger
    from tests.helpers import cli

    def run(*args: str, input: bytes | None = None, code: int = 0) -> None:
        done = cli(*args, input=input, env={"SCRATCH_HOME": str(home)})
        assert done.code == code, done.err

    for agent in NATURAL:
        run("--agent", agent, "write", "note", input=f"note of {agent}\n".encode())
    ledger.append(home, ledger.make(interface="cli", agent="t3", session=ODD_SESSION,
                                    command="head", args={"ref": "note", "lines": 1},
                                    tokens=5, entry="note", version=1, answer="note of t3\n"))
    with open(ledger.ledger_file(home, "t2"), "ab") as fh:
        fh.write(b"this line is no JSON\n")
        fh.write(b'{"v": 1, "seq": 99, "time": "2026-12-02T00:00:00.000Z", "agent": "t2"}\n')
    run("--session", "q", "sql", "pods", SQL)
    run("--session", "q", "grep", "markup", "<script>", "-F")


BIG = "big/ndjson"  # the 100 MB entry of the browser tests
BIG_WORDS = (b"alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi "
             b"omicron pi rho sigma tau").split()


def big_entry(home: Path, work: Path, size: int = 100_000_000) -> int:
    """Store a ``size``-byte entry :data:`BIG` through `scratch ingest` (a process of its own:
    the test's memory stays small): JSON records a line, the first one a single line of about
    19 MB, the others about 1.6 KB (longer than a page shows of a line). Returns its lines."""
    path = work / "big.ndjson"
    msg = b" ".join(BIG_WORDS[k % len(BIG_WORDS)] for k in range(300))
    lines = 0
    with open(path, "wb") as fh:
        blob = b",".join(BIG_WORDS[i % len(BIG_WORDS)] for i in range(3_000_000))
        fh.write(b'{"id": 0, "blob": "' + blob + b'"}\n')
        lines, written, chunk = 1, fh.tell(), []
        while written < size:
            line = b'{"id": %d, "level": "%s", "msg": "%s"}\n' % (
                lines, b"error" if lines % 10 == 0 else b"info", msg)
            chunk.append(line)
            written += len(line)
            lines += 1
        fh.write(b"".join(chunk))
    with open(path, "rb") as stdin:
        done = subprocess.run([*SCRATCH, "ingest", "--tool", "gen", BIG], stdin=stdin,
                              env=env_for(home), capture_output=True, check=False)
    assert done.returncode == 0, done.stderr
    path.unlink()
    return lines
