"""Build hook for the optional C accelerators; everything else is in pyproject.toml.

``scratch._reindent`` (exact JSON re-indentation at ingest), ``scratch._union`` (the key walk
of an array's item union at ingest, from its values or straight from its text) and ``scratch._fieldcount`` (a count-by of one top-level
key over NDJSON lines) are optional: without a C compiler the install still succeeds and
scratch uses the pure-Python version of the same code (for ``_fieldcount``: the DuckDB scan it
saves starting).
"""

from setuptools import Extension, setup

# both read a JSON string's escapes with the same header
ESCAPES = ["scratch/_jsonescape.h"]

setup(ext_modules=[Extension("scratch._reindent", ["scratch/_reindent.c"], depends=ESCAPES,
                             optional=True),
                   Extension("scratch._union", ["scratch/_union.c"], depends=ESCAPES,
                             optional=True),
                   Extension("scratch._fieldcount", ["scratch/_fieldcount.c"], optional=True)])
