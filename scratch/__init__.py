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
