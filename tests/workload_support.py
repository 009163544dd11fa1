"""The real Insights workload file the row tests read (tests/data/workload_info.json, see
tests/data/README.md): maps of records (``namespaces``, ``images``), each namespace holding an
array of ``shapes``; its values as the stdlib json module reads them, for expectations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "workload_info.json"
DOC = json.loads(DATA.read_text())
NAMESPACES: dict[str, Any] = DOC["namespaces"]
