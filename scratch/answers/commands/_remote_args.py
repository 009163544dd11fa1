"""Arguments of the sync and remote commands, declared once."""

from __future__ import annotations

from scratch.declare import Arg

REMOTE = Arg("The remote's name, e.g. origin.", metavar="REMOTE", max_length=255,
             complete="remotes")
