"""The deeply nested inputs of tests/test_nesting.py and tests/bench/bench_nesting.py."""

from __future__ import annotations

MAX_DEPTH = 900  # scratch.formats.nesting.MAX_DEPTH (not imported: the benchmark also runs
# on checkouts that predate it)
SIZE = 100_000


def cases(size: int = SIZE) -> dict[str, tuple[bytes, int]]:
    """name -> (input of about ``size`` bytes, byte offset of the bracket one level too deep)."""
    half = size // 2
    obj = b'{"a":'
    mixed = b'[ {"k" :\n'
    yaml_head = b"key: value\nother: "
    ndjson_head = b'{"a": 1}\n[1, 2]\n'
    return {
        "open_arrays": (b"[" * size, MAX_DEPTH),
        "closed_arrays": (b"[" * half + b"]" * half, MAX_DEPTH),
        "open_objects": (obj * (size // 5), 5 * MAX_DEPTH),
        "closed_objects": (obj * (size // 6) + b"1" + b"}" * (size // 6), 5 * MAX_DEPTH),
        # two levels a line: level 901 is the "[" of line 451
        "mixed_whitespace": (mixed * (size // 13) + b"0" + b"\n} ]" * (size // 13),
                             len(mixed) * (MAX_DEPTH // 2)),
        "ndjson_line": (ndjson_head + b"[" * half + b"]" * half + b"\n" + b'{"b": 2}\n' * 10,
                        len(ndjson_head) + MAX_DEPTH),
        "yaml_flow": (yaml_head + b"[" * half + b"]" * half + b"\n", len(yaml_head) + MAX_DEPTH),
        "yaml_flow_open": (yaml_head + b"{" * size + b"\n", len(yaml_head) + MAX_DEPTH),
    }
