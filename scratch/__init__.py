"""scratch: a git-backed scratchpad for LLM agents.

The core (store, logs, config, tokens, formats, exploration) never imports typer or rich;
only ``scratch.cli`` does, and only ``scratch.cli.render`` imports rich.
"""

__version__ = "0.1.0"
