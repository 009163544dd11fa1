"""Secret redaction at capture: what is found, what it becomes, and the record of it.

What is found (a value, never its key or the text around it):
- tokens and keys by gitleaks' rule set (cloud keys, GitHub/GitLab/Slack/Stripe tokens,
  JWTs, private key blocks and some 200 more), read from the ``secretscreen`` package's copy
  of gitleaks' configuration (:mod:`scratch.redact.rules`);
- values by their place: a Kubernetes ``Secret``'s ``data``/``stringData`` values, also in
  the ``last-applied-configuration`` copy (:mod:`scratch.redact.kube`); an env entry's
  ``value`` whose ``name`` says password/token/secret/key; ``NAME=value`` assignments whose
  name says so (``*_KEY=``, ``*_TOKEN=``, query strings, connection strings); JSON fields and
  YAML keys named like ``password`` or ``client_secret``; the password of
  ``scheme://user:password@host``; ``Authorization`` header values and bearer tokens.

What is not: a secret with no known shape under no telling key (a bare random string), a
value split across lines (except private key blocks), a YAML block scalar under a secret key,
anything in an output over 256 MB that only the Kubernetes pass would find. Kubernetes UIDs,
resourceVersions, image digests, git SHAs, request ids, ConfigMap data and references to
secrets (``secretName``, ``secretKeyRef``) are left alone.

The public API (importing this package loads no regular expression engine):
:func:`redact_bytes`, :func:`redact_file`, :func:`redact_text`, :func:`redact_value`,
:func:`relocate`, :func:`store_key`, :func:`resolve_policy`, and the records
:class:`Redaction`, :class:`Finding`, :class:`Policy`, :class:`Redacted`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from scratch.lazy import lazy_exports
from scratch.redact.records import Finding, Redaction, summary

if TYPE_CHECKING:
    from scratch.redact.core import (
        Redacted,
        redact_bytes,
        redact_file,
        redact_text,
        redact_value,
        relocate,
    )
    from scratch.redact.markers import marker, store_key
    from scratch.redact.policy import Policy, resolve_policy

__getattr__: Callable[[str], object] = lazy_exports(__name__, {
    "Redacted": "core", "redact_bytes": "core", "redact_file": "core", "redact_text": "core",
    "redact_value": "core", "relocate": "core", "marker": "markers", "store_key": "markers",
    "Policy": "policy", "resolve_policy": "policy"}, globals())

__all__ = ["Finding", "Policy", "Redacted", "Redaction", "marker", "redact_bytes", "redact_file",
           "redact_text", "redact_value", "relocate", "resolve_policy", "store_key", "summary"]
