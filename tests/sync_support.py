"""Helpers for the sync tests: bare remotes, stores, the CLI on a given store, checks."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from scratch.redact import Redaction
from scratch.store import Store
from tests.helpers import Run, cli


def git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    return env


def git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """git on a repository (a store's ``.git`` or a bare remote) with no user config."""
    where = [f"--git-dir={repo / '.git'}", f"--work-tree={repo}"] \
        if (repo / ".git").is_dir() else [f"--git-dir={repo}"]
    proc = subprocess.run(["git", *where, *args], capture_output=True, text=True,
                          env=git_env())
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def bare(path: Path) -> Path:
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(path)], check=True,
                   env=git_env())
    return path


def on(home: Path, *args: str, input: bytes | str | None = None) -> Run:
    """The CLI on store ``home`` (``--store`` after the command's words)."""
    words = list(args)
    split = next((i for i, w in enumerate(words) if w.startswith("-")), len(words))
    return cli(*words[:split], "--store", str(home), *words[split:], input=input)


def ok(home: Path, *args: str, input: bytes | str | None = None) -> Any:
    r = on(home, "--json", *args, input=input) if args[0] != "--json" else on(home, *args)
    assert r.code == 0, (r.code, r.text, r.err)
    return r.json["data"]


def sync(home: Path, *args: str) -> dict[str, Any]:
    data = ok(home, "sync", *args)
    return data["remotes"][0]


def fsck_clean(repo: Path) -> None:
    proc = git(repo, "fsck", "--strict", "--no-dangling", check=False)
    assert proc.returncode == 0 and "error" not in proc.stderr.lower(), proc.stderr


def snapshot(home: Path, agent: str = "default") -> dict[str, Any]:
    """What a store holds for an agent: log entries, every version of every file."""
    store = Store.open(home, agent)
    out: dict[str, Any] = {}
    from scratch.store import logs
    for row in store.list():
        if row["kind"] == "log":
            out[row["name"]] = [(e["id"], e["ts"], e["entry"])
                                for e in logs.read(store, row["name"], limit=10**9)["entries"]]
        else:
            meta = store.require(row["name"])
            out[row["name"]] = [store.read_bytes(store.resolve(row["name"], v["version"]))
                                for v in meta["versions"]]
    return out


def worker(home: str, remote: str, wid: int, ops: int, seed: int, out: str) -> None:
    """One process on its own store: ``ops`` mixed writes and appends, a sync every tenth;
    what it wrote goes to ``out`` (JSON) for the checks."""
    import random

    import orjson

    from scratch.errors import SyncError
    from scratch.store import Store, logs
    from scratch.sync.engine import sync as run_sync
    from scratch.sync.remotes import add, remotes

    rng = random.Random(seed)
    store = Store.open(Path(home))
    if "origin" not in remotes(store.root):
        add(store.root, "origin", remote)
    wrote: dict[str, Any] = {"shared": [], "own": [], "versions": [], "syncs": 0}
    for i in range(ops):
        pick = rng.random()
        if pick < 0.4:
            text = f"w{wid}-{i}"
            logs.append(store, "shared", [text.encode()], redaction=Redaction())
            wrote["shared"].append(text)
        elif pick < 0.6:
            body = f"w{wid} op {i}\n"
            store.write("shared.md", body.encode(), redaction=Redaction())
            wrote["versions"].append(body)
        elif pick < 0.8:
            store.write(f"own/w{wid}-{i % 5}.md", f"w{wid} {i}\n".encode(), redaction=Redaction())
        else:
            text = f"own w{wid}-{i}"
            logs.append(store, f"log-w{wid}", [text.encode()], redaction=Redaction())
            wrote["own"].append(text)
        if i % 10 == 9:
            try:
                run_sync(store, "origin", None)
                wrote["syncs"] += 1
            except SyncError as exc:  # others kept pushing first: the next round merges it
                assert exc.code == "sync_push_rejected", exc.to_dict()
    Path(out).write_bytes(orjson.dumps(wrote))


def _started(pid: int, wait: float = 10.0) -> None:
    """Until the sync process ``pid`` has started a git process (its fetch), or ``wait`` s: a
    kill then lands in the sync, not in the interpreter's start-up. Only where kills land
    depends on this, never what is asserted."""
    import time

    children = Path(f"/proc/{pid}/task/{pid}/children")
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            if children.read_text().strip():
                return
        except OSError:
            return  # gone already, or no /proc: the random delay alone decides
        time.sleep(0.005)


def kill_worker(home: str, remote: str, wid: int, ops: int, seed: int, kills: int,
                out: str) -> None:
    """One process on its own store: ``ops`` mixed operations (writes, log appends, ingests),
    and every few of them a ``scratch sync`` process, run beside the operations that follow;
    ``kills`` of those syncs are SIGKILLed (with their git processes: the process group) at a
    random delay after the sync has started its first git process. After each kill the store
    must open and list, and its logs hold no entry twice. What it wrote goes to ``out``."""
    import random
    import signal
    import sys
    import time

    import orjson

    from scratch.store import Store, logs
    from scratch.sync.remotes import add, remotes

    rng = random.Random(seed)
    store = Store.open(Path(home))
    if "origin" not in remotes(store.root):
        add(store.root, "origin", remote)
    wrote: dict[str, Any] = {"shared": [], "own": [], "versions": [], "files": {},
                             "ingested": {}, "syncs": 0, "killed": 0, "finished": 0}
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["SCRATCH_HOME"] = home
    env["TMPDIR"] = private_tmp = str(Path(out).with_suffix(".tmp"))  # what a kill leaves there
    os.makedirs(private_tmp, exist_ok=True)
    every = max(2, ops // max(1, 2 * kills))  # about two syncs per kill
    sync_proc: subprocess.Popen[bytes] | None = None
    kill_at: float | None = None

    def settle(block: bool) -> None:
        """Reap (or kill, when its moment has come) the running sync."""
        nonlocal sync_proc, kill_at
        if sync_proc is None:
            return
        while True:
            if sync_proc.poll() is not None:
                wrote["finished"] += 1
                break
            if kill_at is not None and time.monotonic() >= kill_at:
                os.killpg(sync_proc.pid, signal.SIGKILL)
                sync_proc.wait()
                wrote["killed"] += 1
                _check_opens(home, sync_proc.pid)
                assert os.listdir(private_tmp) == [], "a killed sync left temporary files"
                break
            if not block:
                return
            time.sleep(0.005)
        sync_proc = kill_at = None

    def start_sync() -> None:
        nonlocal sync_proc, kill_at
        settle(block=True)
        wrote["syncs"] += 1
        sync_proc = subprocess.Popen([sys.executable, "-m", "scratch", "sync"], env=env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     start_new_session=True)
        if wrote["killed"] < kills and rng.random() < 0.7:
            _started(sync_proc.pid)
            kill_at = time.monotonic() + rng.uniform(0.0, 0.6)

    i = 0
    while i < ops or wrote["killed"] < kills:
        if i >= ops:  # the operations are done but not the kills: syncs (and kills) only
            start_sync()
            settle(block=True)
            if wrote["syncs"] > 20 * kills + ops:
                raise AssertionError(f"worker {wid}: only {wrote['killed']} kills landed")
            continue
        pick = rng.random()
        if pick < 0.3:
            text = f"w{wid}-{i}"
            logs.append(store, "shared", [text.encode()], redaction=Redaction())
            wrote["shared"].append(text)
        elif pick < 0.45:
            body = f"w{wid} op {i}\n"
            store.write("shared.md", body.encode(), redaction=Redaction())
            wrote["versions"].append(body)
        elif pick < 0.6:
            name = f"own/w{wid}-{i % 5}.md"
            store.write(name, f"w{wid} {i}\n".encode(), redaction=Redaction())
            wrote["files"][name] = f"w{wid} {i}\n"
        elif pick < 0.8:
            text = f"own w{wid}-{i}"
            logs.append(store, f"log-w{wid}", [text.encode()], redaction=Redaction())
            wrote["own"].append(text)
        else:  # an ingest, through the command itself
            name = f"ingested/w{wid}-{i}"
            doc = orjson.dumps({"worker": wid, "op": i, "rows": list(range(i % 7))})
            r = on(Path(home), "ingest", name, "--store-always", input=doc)
            assert r.code == 0, r.text
            wrote["ingested"][name] = store.read_bytes(store.resolve(name, None)).decode()
        i += 1
        settle(block=False)
        if i % every == 0:
            start_sync()
    settle(block=True)
    Path(out).write_bytes(orjson.dumps(wrote))


def _check_opens(home: str, killed: int) -> None:
    """A store whose sync (pid ``killed``) was just killed opens, lists, holds no log entry
    twice, and keeps nothing the sync left in its temporary folder."""
    from scratch.store import Store, logs
    from scratch.store.locking import temp_owner

    store = Store.open(Path(home))
    tmp = store.cache_dir / "tmp"
    left = [n for n in (os.listdir(tmp) if tmp.is_dir() else []) if temp_owner(n) == killed]
    assert left == [], f"a killed sync left {left}"
    for row in store.list():
        if row["kind"] == "log":
            entries = [e["entry"] for e in logs.read(store, row["name"], limit=10**9)["entries"]]
            assert len(entries) == len(set(entries)), (row["name"], "a log entry twice")
