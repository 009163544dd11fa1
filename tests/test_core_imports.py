"""The core stays importable without the CLI stack (and so starts fast)."""

from __future__ import annotations

import subprocess
import sys

CORE = ["scratch.store", "scratch.logs", "scratch.config", "scratch.errors", "scratch.names",
        "scratch.diffing", "scratch.ops.files", "scratch.ops.logs", "scratch.context"]


def test_core_does_not_import_typer_or_rich() -> None:
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in CORE)
        + "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'rich', 'click', 'git'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
