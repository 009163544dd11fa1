"""Build hook for the optional C accelerator; everything else is in pyproject.toml.

``scratch._reindent`` (exact JSON re-indentation at ingest) is optional: without a C
compiler the install still succeeds and scratch uses the pure-Python version of the same code.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("scratch._reindent", ["scratch/_reindent.c"],
                             optional=True)])
