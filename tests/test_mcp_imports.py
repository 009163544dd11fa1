"""The MCP SDK and its web stack load only for `scratch mcp serve`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HEAVY = ("mcp", "mcp_types", "starlette", "uvicorn", "pydantic", "anyio", "httpx2", "httpx")


def _heavy_after(code: str, home: Path) -> list[str]:
    probe = (code + "\nimport sys\nbad = sorted({m.split('.')[0] for m in sys.modules} & "
             f"set({HEAVY!r}))\nprint('HEAVY=' + ','.join(bad))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         env={"SCRATCH_HOME": str(home), "PATH": "/usr/bin:/bin"}, check=False)
    line = [x for x in out.stdout.splitlines() if x.startswith("HEAVY=")]
    assert line, out.stderr
    return [m for m in line[-1][len("HEAVY="):].split(",") if m]


def _run_cli(*args: str) -> str:
    return ("import sys\nsys.argv = ['scratch', *%r]\nimport scratch.cli\n"
            "try:\n    scratch.cli.main()\nexcept SystemExit:\n    pass\n" % (args,))


def test_a_non_mcp_command_imports_no_sdk(scratch_home: Path) -> None:
    assert _heavy_after(_run_cli("--json", "ls"), scratch_home) == []
    assert _heavy_after(_run_cli("head", "missing"), scratch_home) == []


def test_token_commands_import_no_sdk(scratch_home: Path) -> None:
    assert _heavy_after(_run_cli("mcp", "token", "list"), scratch_home) == []


def test_the_mcp_core_modules_import_no_sdk(scratch_home: Path) -> None:
    code = ("import scratch.mcp.specs, scratch.mcp.dispatch, scratch.mcp.serve.session, "
            "scratch.mcp.serve.resources, scratch.mcp.auth, scratch.mcp.serve.ratelimit, "
            "scratch.mcp.serve.reqlog, scratch.mcp.rendering, scratch.mcp.framing, "
            "scratch.mcp.proxy.config, scratch.mcp.proxy.extract, scratch.mcp.proxy.intercept")
    assert _heavy_after(code, scratch_home) == []


def test_help_lists_mcp_without_importing_the_sdk(scratch_home: Path) -> None:
    assert _heavy_after(_run_cli("mcp", "serve", "--help"), scratch_home) == []
