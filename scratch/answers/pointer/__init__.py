"""The pointer: what an agent sees instead of a big output, and the next calls it offers.

:mod:`.build` builds, shapes, fits and renders it; what it says about particular content:
:mod:`.api` (API descriptions), :mod:`.binary`, :mod:`.counts` (a parsed log's records and
the counting calls), :mod:`.snapshot` (NDJSON lines that are snapshots of one state),
:mod:`.grep` (the error grep it suggests, checked first); :mod:`.sizing` prices the next calls
so that each one fits the per-call cap.
"""
