"""Helpers for the sync tests: bare remotes, stores, the CLI on a given store, checks."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

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
            logs.append(store, "shared", [text.encode()])
            wrote["shared"].append(text)
        elif pick < 0.6:
            body = f"w{wid} op {i}\n"
            store.write("shared.md", body.encode())
            wrote["versions"].append(body)
        elif pick < 0.8:
            store.write(f"own/w{wid}-{i % 5}.md", f"w{wid} {i}\n".encode())
        else:
            text = f"own w{wid}-{i}"
            logs.append(store, f"log-w{wid}", [text.encode()])
            wrote["own"].append(text)
        if i % 10 == 9:
            try:
                run_sync(store, "origin", None)
                wrote["syncs"] += 1
            except SyncError as exc:  # others kept pushing first: the next round merges it
                assert exc.code == "sync_push_rejected", exc.to_dict()
    Path(out).write_bytes(orjson.dumps(wrote))
