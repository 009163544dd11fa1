"""``scratch ui``: a local, read-only web page over the store.

Imported only by the ``scratch ui`` command (:mod:`scratch.cli.ui_cmds`). Layout:

- :mod:`scratch.ui.html`: the escaping template helpers every page is written with;
- :mod:`scratch.ui.views`: what the pages show, read through the answers layer without
  charging any budget (``describe``: a candidate's pages are built, never delivered);
- :mod:`scratch.ui.pages`: the pages, server-rendered;
- :mod:`scratch.ui.app`: the Starlette app and its door (token, Host, Origin, CSP);
- ``static/``: the page's script and style, and uPlot (charts), served as they are.
"""
