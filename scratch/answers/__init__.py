"""The answers layer: every command any interface serves, described as data and priced once.

An interface (the CLI, the MCP server) turns its input into a :class:`~scratch.calls.
Call` and runs it with :func:`scratch.answers.kernel.registry.execute`, giving its
:class:`~scratch.answers.kernel.rendering.Rendering`. A command describes its candidate answer
(:mod:`scratch.answers.kernel.candidate`) without side effects;
:mod:`scratch.answers.kernel.fitting` alone decides what fits the per-call cap and the budget,
prices it as the rendering prints it, charges it, cuts it for ``--fit`` and sizes the
suggestions of a refusal. Suggestions and ``next`` are calls, spelled only by the interface
that prints them.

This package imports nothing of the interfaces (typer, rich, the MCP SDK).
"""
