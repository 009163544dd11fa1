"""Answers made of the values at a path (``get-in``, and the rows that show values).

How a value read from an entry is shown (:mod:`.rendered`), what an object or an array holds
without its values (``get-in --keys``: :mod:`.keys`), line windows of a rendered value
(``get-in --offset/--limit/--fit``: :mod:`.lines`).
"""
