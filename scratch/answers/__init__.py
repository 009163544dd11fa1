"""The answers layer: every command any interface serves, described as data and priced once.

An interface (the CLI, the MCP server) turns its input into a :class:`~scratch.calls.
Call` and runs it with :func:`scratch.answers.kernel.execution.execute`, giving its
:class:`~scratch.answers.kernel.rendering.Rendering`. A command describes its candidate answer
(:mod:`scratch.answers.kernel.candidate`) without side effects;
:mod:`scratch.answers.kernel.fitting` alone decides what fits the per-call cap and the budget,
prices it as the rendering prints it, charges it, cuts it for ``--fit`` and sizes the
suggestions of a refusal. Suggestions and ``next`` are calls, spelled only by the interface
that prints them.

Folders by role: ``kernel/`` (what every answer is built on, and the one way a call runs),
``commands/`` (one module per command, named after it), ``capture/`` (storing what comes in),
``pointer/`` (what a stored output is shown as), ``lines/``, ``rows/`` and ``values/`` (answers
made of an entry's lines, of its records as rows, of the values at a path). The few loose
modules each serve one group of commands: ``budget_view`` (budget), ``log_pages`` (log read,
log tail), ``model_summary`` and ``llm_model`` (summarize --by-model), ``store_admin`` (init,
git).

This package imports nothing of the interfaces (typer, rich, the MCP SDK).
"""

from scratch.calls import Step, does  # noqa: E402  (after the docstring: what this layer does)

# the command of this layer that does each step a layer below it may suggest (scratch.calls)
does({Step.LIST_ENTRIES: "ls", Step.REMOVE_ENTRY: "rm", Step.READ_LOG: "log read",
      Step.SYNC: "sync", Step.LIST_REMOTES: "remote list", Step.ADD_REMOTE: "remote add",
      Step.REMOVE_REMOTE: "remote remove", Step.SHOW_BUDGET: "budget",
      Step.SET_BUDGET_USED: "budget used", Step.RESET_BUDGET: "budget reset",
      Step.SET_BUDGET_WINDOW: "budget set-window", Step.LIST_ARTIFACTS: "artifact ls",
      Step.NEXT_ITERATION: "runs iterate"})
