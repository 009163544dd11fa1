"""The answers kernel: what every command's answer is built on.

A command describes a :class:`~scratch.answers.kernel.candidate.Candidate` (what it would show,
without side effects) over a :class:`~scratch.answers.kernel.target.Target` (an entry and its
index); :mod:`~scratch.answers.kernel.fitting` prices it against the per-call cap and the budget
(:mod:`~scratch.answers.kernel.prices`), cuts or refuses it, and charges what was shown;
:mod:`~scratch.answers.kernel.execution` is the one way every interface runs a call, and a
:class:`~scratch.answers.kernel.result.Result` is what it hands back.
"""
