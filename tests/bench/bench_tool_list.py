"""The tokens of the MCP tool list, per toolset and for the proxy's addition, side by side (a
script, not collected by pytest).

    python tests/bench/bench_tool_list.py [--encoding o200k_base]

Counts the ``tools/list`` result as the server sends it (compact JSON, the SDK's model of each
tool dumped as on the wire) with scratch's own offline counter, for every ``--tools`` choice of
``scratch mcp serve`` and of ``scratch mcp proxy`` (what scratch adds to its upstreams' list).
Targets (issue 22): ``mcp serve`` by default (explore) at most 2,500 tokens; the proxy's
addition by default (proxy) at most 1,500 (issue 30: as the proxy lists its tools, whose entry
argument names an upstream server and tool; ``proxy+fs`` with server-filesystem's names,
``proxy+longest`` with the longest names it gives for example).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

SERVE_DEFAULT, PROXY_DEFAULT = "explore", "proxy"
BOUNDS = {SERVE_DEFAULT: 2500, PROXY_DEFAULT: 1500}


def tool_list_tokens(choice: str, encoding: str = "o200k_base") -> tuple[int, int]:
    """(tools, tokens) of tools/list when ``choice`` is served."""
    import orjson

    from scratch.mcp import specs
    from scratch.mcp.serve.server import tool_of
    from scratch.tokens.models import EncodingSpec
    from scratch.tokens.tokenizer import count_text
    listed = [tool_of(spec).model_dump(by_alias=True, mode="json", exclude_none=True)
              for spec in specs.toolset(choice)]
    text = orjson.dumps({"tools": listed}).decode()
    return len(listed), count_text(text, EncodingSpec(encoding, None, encoding))


def proxy_listed_tokens(server: str, tool: str, encoding: str = "o200k_base"
                        ) -> tuple[int, int]:
    """(tools, tokens) of scratch's own tools as ``scratch mcp proxy`` lists them beside an
    upstream ``server`` offering ``tool`` (read-only)."""
    import orjson

    from scratch.mcp import specs
    from scratch.mcp.proxy.server import own_tools
    from scratch.tokens.models import EncodingSpec
    from scratch.tokens.tokenizer import count_text
    specs.serve(specs.offer("proxy", {tool}))
    specs.serve_upstream([specs.UpstreamTool(server, tool, True)])
    try:
        listed = own_tools()
    finally:
        specs.serve(None)
        specs.serve_upstream([])
    text = orjson.dumps({"tools": listed}).decode()
    return len(listed), count_text(text, EncodingSpec(encoding, None, encoding))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--encoding", default="o200k_base")
    a = ap.parse_args()
    from scratch.mcp import specs
    print(f"tools/list tokens ({a.encoding}, compact JSON as sent)")
    print(f"{'--tools':<10} {'tools':>5} {'tokens':>7}  {'role':<28} bound")
    for choice in specs.CHOICES:
        n, tokens = tool_list_tokens(choice, a.encoding)
        role = ("mcp serve default" if choice == SERVE_DEFAULT else
                "mcp proxy default (added)" if choice == PROXY_DEFAULT else "")
        bound = BOUNDS.get(choice)
        mark = "" if bound is None else f"{bound:,} {'ok' if tokens <= bound else 'OVER'}"
        print(f"{choice:<10} {n:>5} {tokens:>7,}  {role:<28} {mark}")
    for label, server, tool in (("proxy+fs", "fs", "read_file"),
                                ("proxy+longest", "kube-ro", "describe_pod")):
        n, tokens = proxy_listed_tokens(server, tool, a.encoding)
        bound = BOUNDS[PROXY_DEFAULT]
        print(f"{label:<14} {n:>1} {tokens:>7,}  {'mcp proxy, as listed':<28} "
              f"{bound:,} {'ok' if tokens <= bound else 'OVER'}")


if __name__ == "__main__":
    main()
