"""What stands out in Kubernetes objects, read from their values when the index is built.

A pointer (and ``summarize``) of a ``kubectl get -o json|yaml`` output shows the signals an
agent would otherwise dig out of nested container statuses: pod phases, restarts (how many
pods restarted, the most, which item), non-zero exit codes and the waiting/terminated reasons
(``CrashLoopBackOff``, ``Error``, ``OOMKilled``), Warning events by reason, conditions that are
not true (``Ready``, ``Available``) and deployments short of replicas.

Recognised shapes: a list object (``kind: PodList``, ``DeploymentList``, ``EventList``, any
``kind: List``: its ``items``), a bare JSON array of objects with ``metadata`` (some tools dump
lists so), and one object with ``kind`` and ``apiVersion`` (a single Pod). Anything else has
no signals (None). The result is JSON-serialisable and deterministic (counts sorted by count,
then value), so it can sit in the index's info.
"""

from __future__ import annotations

from typing import NotRequired, TypeAlias, TypedDict

from scratch.jsonvalues import JSON
from scratch.pathnames import format_path

CONDITIONS = ("Ready", "Available")  # condition types whose status other than True stands out

Ranked: TypeAlias = "list[list[str | int]]"  # [[value, count], ...], the commonest first


class Restarts(TypedDict):
    """Pods whose containers restarted: how many, the most restarts of one pod (the sum over
    its containers, as ``kubectl get pods`` shows), that pod's item path and name, and the sum
    over all pods."""

    pods: int
    max: int
    item: str
    name: str | None
    total: int


class KubeSignals(TypedDict):
    """The signals of one Kubernetes output (see the module). Count lists are
    ``[[value, count], ...]`` with the commonest first."""

    path: str  # the objects' array (``items``, ``.``), or ``.`` for one object
    kind: str | None  # the list's (or the single object's) kind
    objects: int
    kinds: Ranked
    pods: int
    phases: NotRequired[Ranked]
    restarts: NotRequired[Restarts]
    exit_codes: NotRequired[Ranked]
    reasons: NotRequired[Ranked]
    events: NotRequired[Ranked]  # event types: Normal, Warning
    warnings: NotRequired[Ranked]  # reasons of Warning events
    not_true: NotRequired[Ranked]  # "Ready False", "Available Unknown"
    short: NotRequired[list[int]]  # [deployments short of replicas, deployments]


def _objects(value: JSON) -> tuple[list[JSON], list[str | int], str | None] | None:
    """The objects, where they are, and the list's kind; None when this is not Kubernetes."""
    if isinstance(value, dict):
        kind = value.get("kind") if isinstance(value.get("kind"), str) else None
        items = value.get("items")
        if isinstance(items, list) and (kind is None or kind.endswith("List")) \
                and any(isinstance(i, dict) and isinstance(i.get("metadata"), dict)
                        for i in items[:20]):
            return items, ["items"], kind
        if kind is not None and isinstance(value.get("apiVersion"), str) \
                and isinstance(value.get("metadata"), dict):
            return [value], [], kind
        return None
    if isinstance(value, list) and value and all(
            isinstance(i, dict) and isinstance(i.get("metadata"), dict) for i in value[:20]):
        return value, [], None
    return None


def _ranked(counts: dict[str | int, int]) -> Ranked:
    return [[v, n] for v, n in sorted(counts.items(), key=lambda vn: (-vn[1], str(vn[0])))]


def _bump(counts: dict[str | int, int], value: JSON, by: int = 1) -> None:
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        counts[value] = counts.get(value, 0) + by


_EMPTY: dict[str, JSON] = {}  # read only: what a missing or non-object member reads as


def _dict(value: JSON, key: str) -> dict[str, JSON]:
    got = value.get(key) if isinstance(value, dict) else None
    return got if isinstance(got, dict) else {}


def _containers(status: dict[str, JSON]) -> list[dict[str, JSON]]:
    out: list[dict[str, JSON]] = []
    for key in ("initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses"):
        got = status.get(key)
        if isinstance(got, list):
            out += [c for c in got if isinstance(c, dict)]
    return out


class KubeTally:
    """The counts of :func:`kube_signals`, one object at a time (``add`` in item order), so
    the objects of a big list need not all be held at once (see
    :mod:`scratch.index.textitems`)."""

    # every member ``add`` reads: an object cut down to these gives the same counts (a test
    # holds it to that on the corpus)
    members: tuple[tuple[str, ...], ...] | None = (
        ("kind",), ("type",), ("reason",), ("involvedObject",), ("metadata", "name"),
        ("spec", "replicas"), ("status",))

    def __init__(self) -> None:
        self.kinds: dict[str | int, int] = {}
        self.phases: dict[str | int, int] = {}
        self.codes: dict[str | int, int] = {}
        self.reasons: dict[str | int, int] = {}
        self.events: dict[str | int, int] = {}
        self.warnings: dict[str | int, int] = {}
        self.not_true: dict[str | int, int] = {}
        self.pods = self.restarted = self.total = self.deployments = self.short = 0
        self.most: tuple[int, int, str | None] | None = None  # restarts, item, name

    def add(self, i: int, obj: JSON) -> None:
        # called for every item of a big list as it is parsed: the helpers are inlined
        # (``d if isinstance(d, dict) else _EMPTY`` is ``_dict``), a third of the time
        if not isinstance(obj, dict):
            return
        get = obj.get
        kind = get("kind")
        _bump(self.kinds, kind)
        status = get("status")
        if not isinstance(status, dict):
            status = _EMPTY
        meta = get("metadata")
        name = meta.get("name") if isinstance(meta, dict) else None
        name = name if isinstance(name, str) else None
        if kind == "Pod" or "containerStatuses" in status or (
                kind is None and isinstance(status.get("phase"), str)):
            self.pods += 1
            _bump(self.phases, status.get("phase"))
            n = 0
            reasons, codes = self.reasons, self.codes
            for c in _containers(status):
                count = c.get("restartCount")
                n += count if isinstance(count, int) and not isinstance(count, bool) else 0
                for key in ("state", "lastState"):
                    state = c.get(key)
                    if not isinstance(state, dict):
                        continue
                    waiting, ended = state.get("waiting"), state.get("terminated")
                    if isinstance(waiting, dict):
                        _bump(reasons, waiting.get("reason"))
                    if not isinstance(ended, dict):
                        continue
                    code = ended.get("exitCode")
                    if isinstance(code, int) and not isinstance(code, bool) and code != 0:
                        _bump(codes, code)
                        _bump(reasons, ended.get("reason"))
            if n:
                self.restarted += 1
                self.total += n
                if self.most is None or n > self.most[0]:
                    self.most = (n, i, name)
        if kind == "Event" or "involvedObject" in obj:
            _bump(self.events, get("type"))
            if get("type") == "Warning":
                _bump(self.warnings, get("reason"))
        if isinstance(status.get("replicas"), int) and (kind in (None, "Deployment",
                                                                "StatefulSet", "ReplicaSet")):
            self.deployments += 1
            wanted = _dict(obj, "spec").get("replicas", status["replicas"])
            ready = status.get("availableReplicas", status.get("readyReplicas", 0))
            if isinstance(wanted, int) and isinstance(ready, int) and ready < wanted:
                self.short += 1
        conditions = status.get("conditions")
        for cond in conditions if isinstance(conditions, list) else []:
            if isinstance(cond, dict) and cond.get("type") in CONDITIONS \
                    and cond.get("status") != "True":
                _bump(self.not_true, f"{cond.get('type')} {cond.get('status')}")


def kube_signals(value: JSON) -> KubeSignals | None:
    """The signals of ``value`` (see the module), or None."""
    found = _objects(value)
    if found is None:
        return None
    objects, where, list_kind = found
    single = isinstance(value, dict) and where == []  # one object: its "item" is the root
    t = getattr(objects, "kube", None)  # counted already as the items were parsed
    if not isinstance(t, KubeTally):
        t = KubeTally()
        for i, obj in enumerate(objects):
            t.add(i, obj)
    if not (t.pods or t.events or t.deployments or t.not_true):
        return None
    out: KubeSignals = {"path": format_path(where), "kind": list_kind, "objects": len(objects),
                        "kinds": _ranked(t.kinds), "pods": t.pods}
    if t.phases:
        out["phases"] = _ranked(t.phases)
    if t.most is not None:
        out["restarts"] = {"pods": t.restarted, "max": t.most[0],
                           "item": format_path([] if single else [*where, t.most[1]]),
                           "name": t.most[2],
                           "total": t.total}
    if t.codes:
        out["exit_codes"] = _ranked(t.codes)
    if t.reasons:
        out["reasons"] = _ranked(t.reasons)
    if t.events:
        out["events"] = _ranked(t.events)
    if t.warnings:
        out["warnings"] = _ranked(t.warnings)
    if t.not_true:
        out["not_true"] = _ranked(t.not_true)
    if t.deployments:
        out["short"] = [t.short, t.deployments]
    return out
