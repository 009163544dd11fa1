"""scratch: a git-backed scratchpad for LLM agents.

The core (store, logs, config, tokens, formats, exploration) never imports typer or rich;
only ``scratch.cli`` does, and only ``scratch.cli.render`` imports rich.
"""

# The one place the version lives: setuptools reads it (pyproject's dynamic version), and
# `scratch --version` prints it without importlib.metadata (which would cost every start-up).
__version__ = "0.1.0"
# The distribution's name on the package index, as pyproject.toml's [project] name; the
# command and this package are `scratch`. Install hints in error messages name it.
__distribution__ = "scratch-mcp"

# The Python API for agent runtimes (scratch.api), loaded on first use (PEP 562) so that
# `import scratch` (and so every CLI start-up) does not pay for the answers layer. The names
# are scratch.api.__all__ (tests/test_api.py pins both lists).
__all__ = ["Answer", "Artifact", "BudgetExceeded", "BudgetStatus", "Intercepted",
           "LimitExceeded", "NotFound", "ScratchError", "Scratchpad", "ToolCall", "Usage",
           "UsageError", "__distribution__", "__version__", "error_text"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from scratch.api import Answer as Answer
    from scratch.api import Artifact as Artifact
    from scratch.api import BudgetExceeded as BudgetExceeded
    from scratch.api import BudgetStatus as BudgetStatus
    from scratch.api import Intercepted as Intercepted
    from scratch.api import LimitExceeded as LimitExceeded
    from scratch.api import NotFound as NotFound
    from scratch.api import ScratchError as ScratchError
    from scratch.api import Scratchpad as Scratchpad
    from scratch.api import ToolCall as ToolCall
    from scratch.api import Usage as Usage
    from scratch.api import UsageError as UsageError
    from scratch.api import error_text as error_text


def __getattr__(name: str) -> object:
    if name in __all__ and not name.startswith("__"):
        from scratch import api
        return getattr(api, name)
    raise AttributeError(f"module 'scratch' has no attribute {name!r}")
