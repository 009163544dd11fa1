"""Arguments of the commands that store a tool's output (ingest, run), declared once."""

from __future__ import annotations

from scratch.declare import Arg

# the canonical names only: one list both interfaces check and show
FORMATS = ("json", "ndjson", "yaml", "csv", "tsv", "markdown", "log", "text")

OUTPUT_NAME = Arg("Entry name (default: TOOL/<UTC time>-<hash>).", metavar="[NAME]",
                  max_length=1024, show_default=False)
TOOL = Arg("Tool name: picks the [thresholds] entry and the automatic name's folder.",
           flags=("--tool",), metavar="TOOL", max_length=255, show_default=False)
FORMAT = Arg("Declare the format (json, ndjson, yaml, csv, tsv, markdown, log, text) instead "
             "of detecting it.", flags=("--format",), metavar="F", choices=FORMATS,
             show_default=False)
RAW = Arg("Keep JSON bytes as received instead of pretty-printing.", flags=("--raw",))
STORE_ALWAYS = Arg("Store even below the threshold.", flags=("--store-always",))
