"""Torture runs against a real store: many processes at once, and processes killed mid-write.

Used by tests/test_torture.py (small runs in the suite, bigger ones marked slow) and runnable on
its own for a big run whose figures go in a report::

    python tests/torture.py mixed --workers 8 --ops 200
    python tests/torture.py kill --kills 100

Not collected by pytest (no ``test_`` prefix). Every check is on real files, real git and real
processes:

- ``mixed``: workers run mixed commands in-process through the CLI (ingest and write of shared
  entries, read, get-in, head, grep, log append batches, log read, rm) on shared names. Every
  version is a JSON document that carries its own checksum, so a read shows whether it got one
  complete version. Afterwards: no unexpected error codes (never ``index_invalid``), every
  acknowledged write is in git with its bytes, every acknowledged log batch is in its log
  once, ids are unique, ``git fsck`` is clean.
- ``kill``: writes (``write``, ``ingest``) and log batches run as separate processes, each
  killed with SIGKILL (with its process group, git children included) at a random moment.
  Afterwards: the next open recovers; nothing that was acknowledged (exit 0) is lost; every
  entry's content is exactly the blob its metadata and HEAD name (no torn version); no batch is
  half there; no ``.tmp-*`` file is left among the entries; ``git fsck`` is clean.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
# limits raised so nothing is refused for size or budget in a long run
ENV = {"SCRATCH_BUDGET_CONTEXT_WINDOW": "100000000000000",
       "SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS": "100000000",
       "SCRATCH_QUOTA_BYTES": "100000000000", "SCRATCH_QUOTA_FILES": "1000000",
       "SCRATCH_QUOTA_LOG_ENTRIES": "100000000"}
# errors a command may meet when another process changed the store under it
EXPECTED = {"entry_not_found", "key_path_not_found", "version_not_found"}


def git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    return env


def git(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(home), *args], capture_output=True, text=True,
                          env=git_env())


def document(writer: str, seq: int, size: int) -> bytes:
    """A JSON version that names its writer and carries a checksum of the rest."""
    body = {"writer": writer, "seq": seq, "items": [{"i": i, "v": f"{writer}-{seq}-{i}"}
                                                    for i in range(size)]}
    text = json.dumps(body, sort_keys=True)
    body["check"] = hashlib.sha256(text.encode()).hexdigest()
    return json.dumps(body).encode()


def verify(data: bytes) -> dict[str, Any]:
    """The version in ``data`` if it is one complete version, else AssertionError."""
    body = json.loads(data)
    check = body.pop("check")
    assert hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest() == check, \
        "a torn or mixed version"
    return body  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------------------------
# mixed operations


def _mixed_worker(home: str, worker: int, ops: int, seed: int, out: str) -> None:
    os.environ["SCRATCH_HOME"] = home
    os.environ.update(ENV)
    sys.path.insert(0, str(REPO))
    from tests.helpers import cli  # builds the command tree once for the many invocations

    rng = random.Random(seed)
    # seen: (entry, version, writer, seq) as reads reported them, checked against git after
    report: dict[str, Any] = {"writes": [], "batches": [], "errors": [], "reads": 0,
                              "ops": {}, "seen": []}
    for i in range(ops):
        k = rng.randrange(3)
        name = f"shared/e{k}"
        op = rng.choice(["ingest", "ingest", "write", "read", "read", "get-in", "head", "grep",
                         "log", "log", "logread", "rm"])
        report["ops"][op] = report["ops"].get(op, 0) + 1
        if op in ("ingest", "write"):
            data = document(f"w{worker}", i, rng.randrange(1, 1500))
            target = name if op == "ingest" else f"text/e{k}"
            args = (["ingest", target, "--store-always", "--format", "json", "--json"]
                    if op == "ingest" else ["write", target, "--json"])
            r = cli(*args, input=data)
            if r.code == 0:
                report["writes"].append([target, hashlib.sha1(
                    b"blob %d\x00" % len(data) + data).hexdigest() if op == "write" else None,
                    f"w{worker}", i])
        elif op == "read":
            target = name if rng.random() < 0.5 else f"text/e{k}"
            r = cli("read", target, "--json")
            if r.code == 0:
                d = json.loads(r.out)["data"]
                body = verify(d["content"].encode())  # one complete version, not a mix
                report["seen"].append([target, d["version"], body["writer"], body["seq"]])
                report["reads"] += 1
        elif op == "get-in":
            r = cli("get-in", name, "seq", "--json")
            if r.code == 0:
                d = json.loads(r.out)["data"]
                report["seen"].append([name, d["version"], None, d["value"]])
        elif op == "head":
            r = cli("head", name, "-n", "5", "--json")
        elif op == "grep":
            r = cli("grep", name, '"writer"', "--json")
        elif op == "log":
            lines = [f"w{worker}:{i}:{j}" for j in range(rng.randrange(1, 6))]
            r = cli("log", "append", f"lg{k}", "--lines", "--json", input="\n".join(lines))
            if r.code == 0:
                ack = json.loads(r.out)["data"]
                report["batches"].append([f"lg{k}", lines, ack["first_id"], ack["last_id"]])
        elif op == "logread":
            r = cli("log", "read", f"lg{k}", "--limit", "100000", "--json")
        else:
            r = cli("rm", f"text/e{k}", "--json")
        if r.code != 0:
            try:
                error = json.loads(r.out or r.err.splitlines()[-1])["error"]
                code, message = error["code"], error.get("message", "")[:300]
            except (ValueError, KeyError, IndexError):
                code, message = "unparsed", f"{r.out[:200]!r} {r.err[-300:]}"
            report["errors"].append([op, code, message])
    Path(out).write_text(json.dumps(report))


def run_mixed(home: Path, workers: int, ops: int, seed: int = 1) -> dict[str, Any]:
    """Run ``workers`` processes of ``ops`` mixed operations each; return the combined report
    (checks are done by :func:`check_mixed`)."""
    home.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "SCRATCH_HOME": str(home), **ENV}
    subprocess.run([sys.executable, "-m", "scratch", "ls"], env=env, capture_output=True,
                   check=True, cwd=REPO)  # create the store first
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from tests.torture import "
            "_mixed_worker; _mixed_worker(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), "
            "int(sys.argv[5]), sys.argv[6])")
    procs = []
    t0 = time.monotonic()
    for w in range(workers):
        out = home.parent / f"report-{w}.json"
        procs.append((out, subprocess.Popen(
            [sys.executable, "-c", code, str(REPO), str(home), str(w), str(ops),
             str(seed * 1000 + w), str(out)], env=env, cwd=REPO)))
    for _out, p in procs:
        assert p.wait() == 0, "a worker crashed"
    reports = [json.loads(out.read_text()) for out, _p in procs]
    total: dict[str, Any] = {"workers": workers, "ops": workers * ops,
                             "seconds": round(time.monotonic() - t0, 1),
                             "writes": [w for r in reports for w in r["writes"]],
                             "batches": [b for r in reports for b in r["batches"]],
                             "errors": [e for r in reports for e in r["errors"]],
                             "reads": sum(r["reads"] for r in reports), "op_counts": {},
                             "seen": [s for r in reports for s in r["seen"]]}
    for r in reports:
        for op, n in r["ops"].items():
            total["op_counts"][op] = total["op_counts"].get(op, 0) + n
    return total


def check_mixed(home: Path, report: dict[str, Any]) -> None:
    unexpected = [e for e in report["errors"] if e[1] not in EXPECTED]
    assert not unexpected, unexpected[:10]
    # every acknowledged log batch is there once, under the ids it was given
    by_log: dict[str, dict[int, str]] = {}
    for log, lines, first, last in report["batches"]:
        assert last - first + 1 == len(lines)
        entries = by_log.setdefault(log, {})
        for offset, line in enumerate(lines):
            assert first + offset not in entries, "an id given twice"
            entries[first + offset] = line
    for log, entries in by_log.items():
        path = home / "agents/default/logs" / f"{log}.jsonl"
        stored = [json.loads(line) for line in path.read_bytes().splitlines()]
        ids = [s["id"] for s in stored]
        assert len(ids) == len(set(ids)), "duplicate ids in the file"
        got = {s["id"]: s["entry"] for s in stored}
        for entry_id, line in entries.items():
            assert got.get(entry_id) == line, (log, entry_id)
    # every acknowledged write of text content is a version in git with exactly its bytes
    objects = set(git(home, "rev-list", "--objects", "--all").stdout.split())
    for target, blob, _writer, _seq in report["writes"]:
        if blob is not None:
            assert blob in objects, (target, blob)
    # what a read said version V of an entry held is what git holds as version V
    versions: dict[tuple[str, int], dict[str, Any]] = {}
    for target, version, writer, seq in report["seen"]:
        key = (target, version)
        if key not in versions:
            meta = json.loads((home / "agents/default/meta" / f"{target}.json").read_bytes())
            blob = meta["versions"][version - 1]["blob"]
            data = subprocess.run(["git", "-C", str(home), "cat-file", "blob", blob],
                                  capture_output=True, env=git_env(), check=True).stdout
            versions[key] = verify(json.dumps(json.loads(data)).encode())
        held = versions[key]
        assert held["seq"] == seq and writer in (None, held["writer"]), \
            f"{target}@{version} was shown as {writer}/{seq}, holds {held['writer']}/{held['seq']}"
    check_store(home)


# ---------------------------------------------------------------------------------------------
# kill -9


def run_kills(home: Path, kills: int, seed: int = 7, max_delay: float = 0.45
              ) -> dict[str, Any]:
    """Start ``kills`` writer processes one after another, each SIGKILLed (with its process
    group) after a random delay up to ``max_delay`` seconds unless it finished first."""
    home.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "SCRATCH_HOME": str(home), **ENV}
    subprocess.run([sys.executable, "-m", "scratch", "ls"], env=env, capture_output=True,
                   check=True, cwd=REPO)
    rng = random.Random(seed)
    acked: list[list[Any]] = []
    killed = finished = mid_write = stale_locks = 0
    seen_locks: set[Path] = set()
    t0 = time.monotonic()
    for n in range(kills):
        op = rng.choice(["write", "ingest", "log", "log"])
        k = rng.randrange(3)
        if op == "log":
            lines = [f"k{n}:{j}" for j in range(rng.randrange(1, 50))]
            argv = ["log", "append", f"lg{k}", "--lines", "--json"]
            data = "\n".join(lines).encode()
        else:
            data = document(f"k{n}", n, rng.randrange(1, 3000))
            argv = (["write", f"f{k}", "--json"] if op == "write" else
                    ["ingest", f"j{k}", "--store-always", "--format", "json", "--json"])
        proc = subprocess.Popen([sys.executable, "-m", "scratch", *argv], env=env, cwd=REPO,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        assert proc.stdin is not None
        proc.stdin.write(data)
        proc.stdin.close()
        delay = rng.uniform(0.08, max_delay)  # past start-up, mostly
        try:
            proc.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # git children die with it
            proc.wait()
        assert proc.stdout is not None
        out = proc.stdout.read()
        if proc.returncode == 0:
            finished += 1
            if op == "log":
                ack = json.loads(out)["data"]
                acked.append(["log", f"lg{k}", lines, ack["first_id"]])
            else:
                acked.append([op, f"f{k}" if op == "write" else f"j{k}",
                              json.loads(out)["data"]["version"], data.decode()])
        else:
            assert proc.returncode == -signal.SIGKILL, (op, proc.returncode, out[-500:])
            killed += 1
            # killed while changing the store (its journal or writer mark is left), or while
            # a git child held one of git's locks
            if (home / "state/writer").exists() or (home / "state/journal.json").exists():
                mid_write += 1
            locks = set((home / ".git").glob("**/*.lock"))
            if locks - seen_locks:
                stale_locks += 1
            seen_locks = locks
    return {"kills_tried": kills, "killed": killed, "killed_mid_write": mid_write,
            "stale_git_locks_left": stale_locks, "finished": finished, "acked": acked,
            "seconds": round(time.monotonic() - t0, 1)}


def check_kills(home: Path, report: dict[str, Any]) -> dict[str, Any]:
    env = {**os.environ, "SCRATCH_HOME": str(home), **ENV}
    # the next open recovers whatever the last kill interrupted
    r = subprocess.run([sys.executable, "-m", "scratch", "ls", "--json"], env=env, cwd=REPO,
                       capture_output=True)
    assert r.returncode == 0, r.stderr
    leftovers = [str(p.relative_to(home)) for p in (home / "agents").rglob(".tmp-*")]
    leftovers += [str(p.relative_to(home)) for p in (home / ".git").glob("scratch-index-*")]
    assert not leftovers, leftovers
    # nothing acknowledged is lost
    for item in report["acked"]:
        if item[0] == "log":
            _kind, log, lines, first = item
            stored = {}
            for line in (home / "agents/default/logs" / f"{log}.jsonl").read_bytes().split(b"\n"):
                if line:
                    rec = json.loads(line)
                    stored[rec["id"]] = rec["entry"]
            for offset, line in enumerate(lines):
                assert stored.get(first + offset) == line, (log, first + offset)
        else:
            _kind, name, version, text = item
            r = subprocess.run([sys.executable, "-m", "scratch", "read", f"{name}@{version}"],
                               env=env, cwd=REPO, capture_output=True)
            assert r.returncode == 0, r.stderr
            assert verify(r.stdout) == verify(text.encode()), (name, version)
    # no log batch is half there: entries of one batch share a prefix "k<n>:"
    for log in (home / "agents/default/logs").glob("*.jsonl"):
        counts: dict[str, list[int]] = {}
        for line in log.read_bytes().split(b"\n"):
            if line:
                rec = json.loads(line)
                batch, j = rec["entry"].rsplit(":", 1)
                counts.setdefault(batch, []).append(int(j))
        for batch, js in counts.items():
            assert js == list(range(len(js))), (log.name, batch, js)
    check_store(home)
    return {"leftover_tmp_files": len(leftovers)}


# ---------------------------------------------------------------------------------------------
# the store after either run


def check_store(home: Path, agents: tuple[str, ...] = ("default",)) -> None:
    """Every entry's content (of each of ``agents``) is the blob its metadata and HEAD name;
    git is clean."""
    fsck = git(home, "fsck", "--strict")
    assert fsck.returncode == 0, fsck.stderr
    tree = {}
    for line in git(home, "ls-tree", "-r", "HEAD").stdout.splitlines():
        meta, path = line.split("\t", 1)
        tree[path] = meta.split()[2]
    for agent in agents:
        _check_agent(home, agent, tree)
    status = git(home, "status", "--porcelain", "--untracked-files=no")
    assert status.stdout == "", status.stdout


def _check_agent(home: Path, agent: str, tree: dict[str, str]) -> None:
    meta_dir = home / "agents" / agent / "meta"
    for meta_file in meta_dir.rglob("*.json"):
        meta = json.loads(meta_file.read_bytes())
        if meta["kind"] == "log" or meta.get("deleted"):
            continue
        rel = f"agents/{agent}/files/{meta['name']}"
        content = (home / rel).read_bytes()
        blob = hashlib.sha1(b"blob %d\x00" % len(content) + content).hexdigest()
        assert blob == meta["versions"][-1]["blob"] == tree[rel], meta["name"]
        if meta["name"].startswith(("shared/", "j")):
            # ingested JSON is stored re-indented; a complete version all the same
            verify(json.dumps(json.loads(content)).encode())
        elif meta["name"].startswith(("text/", "f")):
            verify(content)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=["mixed", "kill"])
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--ops", type=int, default=200)
    ap.add_argument("--kills", type=int, default=100)
    ap.add_argument("--dir", type=Path, default=None)
    args = ap.parse_args()
    import tempfile

    base = args.dir or Path(tempfile.mkdtemp(prefix="scratch-torture-"))
    home = base / "store"
    if args.mode == "mixed":
        report = run_mixed(home, args.workers, args.ops)
        check_mixed(home, report)
        summary = {k: v for k, v in report.items() if k not in ("writes", "batches", "seen")}
        summary["reads_checked_against_git"] = len(report["seen"])
        summary["errors"] = {code: sum(1 for e in report["errors"] if e[1] == code)
                             for code in {e[1] for e in report["errors"]}}
        summary.update(acknowledged_writes=len(report["writes"]),
                       acknowledged_batches=len(report["batches"]))
    else:
        report = run_kills(home, args.kills)
        summary = {k: v for k, v in report.items() if k != "acked"}
        summary.update(check_kills(home, report))
        summary["acknowledged"] = len(report["acked"])
    summary["commits"] = int(git(home, "rev-list", "--count", "HEAD").stdout)
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
