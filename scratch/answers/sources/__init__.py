"""Row sources: the records of an entry read as an array of rows, whatever its format.

JSON/YAML/NDJSON items (:mod:`.items`, :mod:`.arrays`), CSV/TSV rows (:mod:`.csv_rows`) and a
parsed log's records (:mod:`.log_records`) are read through the index, a window at a time or
as one scan, so item-schema, iterate-over, get-in and the counting answers see one shape.
"""
