"""Packages whose public names load from their modules on first use (PEP 562).

A command that needs one function of a package should not pay for importing, and compiling
the regular expressions of, every module the package re-exports.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable


def lazy_exports(package: str, home: dict[str, str], namespace: dict[str, object]
                 ) -> Callable[[str], object]:
    """A module ``__getattr__`` serving ``name`` from ``package.<home[name]>``, then caching it.

    The module names in ``home`` must differ from the names they export: importing a submodule
    binds its own name on the package, which would shadow a function of the same name.
    """
    def __getattr__(name: str) -> object:
        module = home.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    return __getattr__
