"""Regenerate scratch/samples/pods.json: a synthetic `kubectl get pods -A -o json` listing.

Synthetic (no third-party data) but shaped like the real thing: namespaces, owner references,
containers with resources, probes and env, status conditions and container statuses, a few
pods pending, failed or crash-looping. Deterministic: same output every run.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "scratch" / "samples" / "pods.json"
APPS = [("kube-system", "coredns", "registry.k8s.io/coredns/coredns:v1.11.1"),
        ("kube-system", "kube-proxy", "registry.k8s.io/kube-proxy:v1.29.2"),
        ("monitoring", "prometheus", "quay.io/prometheus/prometheus:v2.50.1"),
        ("monitoring", "node-exporter", "quay.io/prometheus/node-exporter:v1.7.0"),
        ("shop", "checkout", "ghcr.io/example/checkout:2.14.0"),
        ("shop", "cart", "ghcr.io/example/cart:2.14.0"),
        ("shop", "frontend", "ghcr.io/example/frontend:5.2.3"),
        ("payments", "ledger", "ghcr.io/example/ledger:1.9.4")]


def pod(rng: random.Random, i: int) -> dict:
    ns, app, image = APPS[i % len(APPS)]
    rs = f"{app}-{rng.randrange(16**10):010x}"[:len(app) + 11]
    name = f"{rs}-{rng.randrange(36**5):05x}"
    node = f"node-{rng.randrange(1, 7)}"
    phase = "Running"
    ready = True
    restarts = rng.choice([0, 0, 0, 1, 2])
    waiting = None
    if i % 13 == 5:
        phase, ready = "Pending", False
        waiting = {"reason": "ContainerCreating"}
    if i % 17 == 3:
        ready, restarts = False, 37
        waiting = {"reason": "CrashLoopBackOff",
                   "message": "back-off 5m0s restarting failed container=" + app}
    if i % 29 == 7:
        phase, ready = "Failed", False
    state = {"waiting": waiting} if waiting else {"running": {"startedAt": "2026-11-29T08:%02d:11Z" % (i % 60)}}
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": name, "namespace": ns, "uid": f"{rng.randrange(16**32):032x}",
            "resourceVersion": str(100000 + i * 37), "creationTimestamp": "2026-11-28T21:%02d:05Z" % (i % 60),
            "labels": {"app.kubernetes.io/name": app, "pod-template-hash": rs.rsplit("-", 1)[-1]},
            "annotations": {"kubectl.kubernetes.io/restartedAt": "2026-11-28T21:00:00Z"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs,
                                 "uid": f"{rng.randrange(16**32):032x}", "controller": True,
                                 "blockOwnerDeletion": True}],
        },
        "spec": {
            "nodeName": node, "restartPolicy": "Always", "serviceAccountName": app,
            "containers": [{
                "name": app, "image": image, "imagePullPolicy": "IfNotPresent",
                "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
                "env": [{"name": "LOG_LEVEL", "value": rng.choice(["info", "debug", "warn"])},
                        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                "resources": {"requests": {"cpu": rng.choice(["50m", "100m", "250m"]), "memory": rng.choice(["64Mi", "128Mi", "512Mi"])},
                              "limits": {"memory": rng.choice(["256Mi", "1Gi"])}},
                "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 10},
                "volumeMounts": [{"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": True}],
            }],
            "volumes": [{"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [{"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}]}}],
        },
        "status": {
            "phase": phase, "hostIP": f"10.0.{i % 7}.{10 + i % 200}", "podIP": f"10.244.{i % 7}.{2 + i}",
            "qosClass": "Burstable", "startTime": "2026-11-28T21:%02d:06Z" % (i % 60),
            "conditions": [{"type": t, "status": "True" if (ready or t == "PodScheduled") else "False",
                            "lastTransitionTime": "2026-11-28T21:%02d:09Z" % (i % 60)}
                           for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")],
            "containerStatuses": [{"name": app, "image": image, "ready": ready, "restartCount": restarts,
                                   "started": ready, "state": state,
                                   "imageID": f"{image.split(':')[0]}@sha256:{rng.randrange(16**64):064x}"}],
        },
    }


def main() -> None:
    rng = random.Random(20261130)
    doc = {"apiVersion": "v1", "kind": "List", "items": [pod(rng, i) for i in range(60)],
           "metadata": {"resourceVersion": ""}}
    OUT.write_text(json.dumps(doc, indent=4) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
