"""The store's remotes: kept where git keeps them (``remote.<name>.url`` in ``.git/config``),
so ``scratch git fetch NAME`` works too; scratch reads only the URL back, and checks it
(:func:`scratch.sync.transport.check_url`) every time it is used.
"""

from __future__ import annotations

from pathlib import Path

from scratch.calls import Step, suggest
from scratch.errors import NotFound, UsageError
from scratch.sync.gitops import Plumbing
from scratch.sync.transport import check_remote_name, check_url, is_local


def remotes(root: Path) -> dict[str, str]:
    out = {}
    for key, value in Plumbing(root).config_get_all(r"^remote\..*\.url$"):
        name = key[len("remote."):-len(".url")]
        out[name] = value
    return dict(sorted(out.items()))


def remote_url(root: Path, name: str) -> str:
    check_remote_name(name)
    url = remotes(root).get(name)
    if url is None:
        raise NotFound(f"no remote named {name!r}", code="remote_not_found", remote=name,
                       suggestions=[suggest(Step.LIST_REMOTES),
                                    suggest(Step.ADD_REMOTE, name=name, url="URL")])
    return check_url(url)


def add(root: Path, name: str, url: str) -> dict[str, str]:
    check_remote_name(name)
    check_url(url)
    if is_local(url) and not url.lower().startswith("file://"):
        # a relative path would mean another place from another directory: keep it absolute
        url = str(Path(url).expanduser().absolute())
    if name in remotes(root):
        raise UsageError(f"a remote named {name!r} exists already", code="remote_exists",
                         remote=name, suggestions=[suggest(Step.LIST_REMOTES),
                                                   suggest(Step.REMOVE_REMOTE, name=name)])
    git = Plumbing(root)
    git.config_set(f"remote.{name}.url", url)
    git.config_set(f"remote.{name}.fetch", f"+refs/heads/main:refs/remotes/{name}/main")
    return {"name": name, "url": url}


def remove(root: Path, name: str) -> dict[str, str | bool]:
    url = remote_url(root, name)
    git = Plumbing(root)
    git.config_remove_section(f"remote.{name}")
    git.delete_refs(f"refs/remotes/{name}/")
    git.delete_refs(f"refs/scratch/sync/{name}/")
    from scratch.sync import leases
    leases.drop(root, name)  # a purge's pending rewrite of it: not this remote's any more
    return {"name": name, "url": url, "removed": True}
