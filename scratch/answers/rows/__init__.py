"""Row sources: the records of an entry read as an array of rows, whatever its format.

JSON/YAML/NDJSON items (:mod:`.items`, :mod:`.arrays`), CSV/TSV rows (:mod:`.csv_rows`) and a
parsed log's records (:mod:`.log_records`) are read through the index, a window at a time or
as one scan, so item-schema, iterate-over, get-in and the counting answers see one shape.

The answers made of rows live here too: :mod:`.counting` (``--count``, ``--count-by``) and
:mod:`.lists` (a list of rows under a header line: value counts, SQL rows, keys).

Importing the package registers its kinds of table (:func:`.base.table_of` asks them in this
order), whichever of its modules is imported first.
"""

from scratch.answers.rows import csv_rows as csv_rows  # noqa: I001  (registers first)
from scratch.answers.rows import log_records as log_records
