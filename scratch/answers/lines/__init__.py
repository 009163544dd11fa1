"""Answers made of an entry's lines.

Line ranges (``head``, ``tail``, ``slice``, ``read --fit``: :mod:`.ranges`), one line too
long for an answer read in pieces (:mod:`.pieces`), what changed between two versions
(``read --since-version``, ``diff``: :mod:`.changes`), grep's counts (:mod:`.grep_counts`).
"""
