"""The optional C extensions are what the tests exercise wherever it can be built: the C and
pure-Python twins are compared in tests/test_json_exact.py and tests/test_index_lines.py, and
those comparisons must not quietly skip on a machine with a compiler."""

from __future__ import annotations

import importlib.util
import shutil

import pytest

from scratch import reindent
from scratch.index import lines, schema


@pytest.mark.skipif(not shutil.which("cc"), reason="no C compiler: the pure-Python twins run")
def test_the_c_extension_is_built_where_a_compiler_is() -> None:
    assert reindent.HAVE_C
    assert lines._c_scan_lines is not None
    assert importlib.util.find_spec("scratch._fieldcount") is not None  # count-by's scanner
    assert schema._c_walk is not None  # the item union's key walk
