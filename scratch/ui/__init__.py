"""``scratch ui``: a local, read-only web page over the store.

Imported only by the ``scratch ui`` command (:mod:`scratch.cli.ui_cmds`). Layout:

- :mod:`scratch.ui.html`: the escaping template helpers every page is written with;
- :mod:`scratch.ui.views`: what the pages show, read through the answers layer without
  charging any budget (``describe``: a candidate's pages are built, never delivered);
- :mod:`scratch.ui.figures`: what the call ledger's records add up to (totals, savings,
  rankings, chart series);
- :mod:`scratch.ui.finding`: grep for the pages, its counts bounded by time;
- :mod:`scratch.ui.pages`: the layout and what pages share, the overview;
  :mod:`scratch.ui.agent_pages` (an agent, a session, a call), :mod:`scratch.ui.entry_pages`
  (the entries, an entry), :mod:`scratch.ui.search_page` (the search),
  :mod:`scratch.ui.run_pages` (the runs, a run, an artifact of it);
- :mod:`scratch.ui.app`: the Starlette app and its door (token, Host, Origin, CSP);
- ``static/``: the page's script and style, and uPlot (charts), served as they are.
"""
