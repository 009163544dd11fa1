"""The records the store hands upwards have exactly the keys their types declare, and the
types cost nothing at start-up (:mod:`scratch.store.records` is types only)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from scratch.redact import Redaction
from scratch.store import Store


def keys(record_type: Any) -> set[str]:
    return set(record_type.__annotations__)


def test_every_record_has_the_keys_its_type_declares(scratch_home: Path) -> None:
    from scratch.store import (
        EntryMeta,
        GitCommit,
        HistoryRow,
        ListRow,
        LogCursor,
        Removed,
        Usage,
        VersionInfo,
        WrittenVersion,
        logs,
    )

    store = Store.open(scratch_home)
    first = store.write("notes", b"one\n", redaction=Redaction())
    again = store.write("notes", b"one\n", redaction=Redaction())
    # "removed" is set only on a version retention or a purge no longer keeps
    assert set(first) == set(again) == keys(WrittenVersion) - {"removed"}
    assert (first["unchanged"], again["unchanged"]) == (False, True)
    logs.append(store, "lg", [b"a", b"b"], redaction=Redaction())
    rows = store.list()
    assert [r["name"] for r in rows] == ["lg", "notes"]
    assert all(set(r) == keys(ListRow) for r in rows)
    assert rows[0]["version"] is None and rows[0]["lines"] == 2
    meta = store.require("notes")
    assert set(meta) == keys(EntryMeta) - {"log"}
    assert set(meta["versions"][0]) == keys(VersionInfo) - {"removed"}
    assert set(store.require("lg", kinds=("log",))["log"]) == keys(LogCursor)
    assert all(set(r) == keys(HistoryRow) for r in store.history("notes"))
    assert set(store.usage()) == keys(Usage)
    assert all(set(c) == keys(GitCommit)
               for c in store.git.path_history("agents/default/files/notes"))
    assert set(store.remove("notes")) == keys(Removed)


def test_the_record_types_are_not_created_at_start_up() -> None:
    code = ("import sys, scratch.store, scratch.store.gitstore\n"
            "print('scratch.store.records' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
