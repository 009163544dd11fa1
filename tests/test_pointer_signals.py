"""Pointers show what stands out (issue 22 points 5 and 8): the signals of Kubernetes objects
(phases, restarts, non-zero exit codes, waiting/terminated reasons, Warning events) from the
nested container statuses, exact status codes of an access log when they are few, samples
labelled with their item, ``sql`` where a GROUP BY is the natural next step, an error grep only
when it was checked to match values (with its count), and null counts beside presence in the
pointer, ``item-schema`` and ``schema``. Through the CLI and MCP, on real files: the samples in
tests/data (see its MANIFEST) and the shared corpus (skipped when absent)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from scratch.mcp.dispatch import run_tool
from scratch.mcp.serve.session import ServerState
from tests.helpers import cli

DATA = Path(__file__).resolve().parent / "data"
PODS = DATA / "k8s_pods_kube-system.json"
EVENTS = DATA / "k8s_events_default.json"
ACCESS = DATA / "apache_access_500.log"
CAP = {"SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS": "3000"}
PATTERN = r"\b(errors?|fail(ed|ure)?|fatal|panic)\b|exception\b"

PODS_SIGNALS = """\
kubernetes (PodList): 7 pods (Running 5, Succeeded 2)
  restarts: 6 of 7 pods, 756 in all; most 192: items.6 svclb-traefik-8ea5448e-d2m74
  exit codes (not 0): 255 ×4, 1 ×1, 2 ×1
  reasons: Unknown 4, Error 2
  conditions not True: Ready False 2
"""
PODS_DATA = {"path": "items", "kind": "PodList", "objects": 7, "kinds": [["Pod", 7]], "pods": 7,
             "phases": [["Running", 5], ["Succeeded", 2]],
             "restarts": {"pods": 6, "max": 192, "item": "items.6",
                          "name": "svclb-traefik-8ea5448e-d2m74", "total": 756},
             "exit_codes": [[255, 4], [1, 1], [2, 1]], "reasons": [["Unknown", 4], ["Error", 2]],
             "not_true": [["Ready False", 2]]}


def ingest(path: Path, name: str, *extra: str) -> dict[str, Any]:
    r = cli("ingest", name, "--store-always", "--json", *extra, input=path.read_bytes(), env=CAP)
    assert r.code == 0, r.out
    data: dict[str, Any] = r.json["data"]
    return data


def pointer_text(path: Path, name: str) -> str:
    r = cli("ingest", name, "--store-always", input=path.read_bytes(), env=CAP)
    assert r.code == 0, r.out
    return r.text


def run_all(calls: list[str]) -> None:
    for c in calls:
        cli("budget", "reset")
        r = cli(*shlex.split(c)[1:], "--json", env=CAP)
        assert r.code == 0, (c, r.out[:800])


@pytest.fixture
def session(scratch_home: Path) -> Any:
    return ServerState().session_for("conn", "default", None, "test")


# -- Kubernetes ---------------------------------------------------------------------------------

def test_a_podlist_pointer_shows_its_restarts_exit_codes_and_reasons(scratch_home: Path) -> None:
    text = pointer_text(PODS, "pods")
    assert PODS_SIGNALS in text
    # the pods' own keys outlined (issue 30 item 10) leave room for one sample of the three
    assert ", status 7/7 {phase, conditions, hostIP, podIP, podIPs, startTime, " \
           "containerStatuses, qosClass}\n" in text
    assert "\n  item 0: {\"kind\":\"Pod\"" in text and "\n  item 3: " not in text
    # the error grep finds "reason": "Error" in two values, and says so
    assert "\nerror words in 2 lines\nnext:\n" in text
    assert text.endswith("\nnext:\n"
        "  scratch schema pods\n"
        "  scratch item-schema pods items --depth 2\n"
        "  scratch iterate-over pods items --fields metadata.name,"
        "status.containerStatuses.0.restartCount "
        "--where '@.status.containerStatuses[?@.restartCount > 0]' --limit 20\n"
        "  scratch iterate-over pods items --count-by status.phase\n"
        "  scratch get-in pods items.0\n"
        "  scratch iterate-over pods items --fields metadata.name,status.phase "
        "--where '@.status.phase != \"Running\"' --limit 20\n"
        "  scratch iterate-over pods items --fields metadata.name,status.phase,"
        "metadata.namespace --limit 20\n"
        f"  scratch grep pods '{PATTERN}' -i -m 20 --fit\n")
    data = ingest(PODS, "pods2")
    # the data as printed fits the cap at detail 1: the same counts, fewer of each
    assert data["kubernetes"] == {k: v for k, v in PODS_DATA.items() if k not in ("kinds",
                                                                                  "path")}
    assert data["error_lines"] == {"lines": 2, "in_values": 2}
    assert data["pointer_tokens"] <= 800
    run_all(data["next"])


def test_the_restarted_pods_call_lists_them(scratch_home: Path) -> None:
    ingest(PODS, "pods")
    r = cli("iterate-over", "pods", "items", "--fields",
            "metadata.name,status.containerStatuses.0.restartCount",
            "--where", "@.status.containerStatuses[?@.restartCount > 0]", "--limit", "20")
    assert r.code == 0
    assert r.text == (
        "_index\tmetadata.name\tstatus.containerStatuses.0.restartCount\n"
        "1\thelm-install-traefik-2fxbg\t1\n"
        "2\ttraefik-7cd4fcff68-9blj6\t96\n"
        "3\tcoredns-b96499967-tncf4\t96\n"
        "4\tlocal-path-provisioner-7b7dc8d6f5-45btl\t189\n"
        "5\tmetrics-server-668d979685-wttxd\t182\n"
        "6\tsvclb-traefik-8ea5448e-d2m74\t96\n")


def test_the_podlist_pointer_over_mcp(session: Any) -> None:
    out = run_tool("ingest", {"content": PODS.read_text(), "name": "pods", "store_always": True},
                   session)
    assert out.ok, out.text
    # over MCP the pointer's calls are tool calls, and fewer fit
    assert PODS_SIGNALS + "error words in 2 lines\nnext:\n" in out.text
    assert '\n  {"name":"iterate_over","arguments":{"file":"pods","path":"items","fields":' \
           '"metadata.name,status.containerStatuses.0.restartCount","limit":20,' \
           '"where":"@.status.containerStatuses[?@.restartCount > 0]"}}\n' in out.text


def test_summarize_shows_the_signals(scratch_home: Path, session: Any) -> None:
    ingest(PODS, "pods")
    r = cli("summarize", "pods")
    assert r.code == 0
    assert "      items.*: object 7\n" in r.text
    assert "\n" + PODS_SIGNALS + "values in items (7 items):\n" in r.text
    out = run_tool("summarize", {"file": "pods"}, session)
    assert out.ok and PODS_SIGNALS in out.text


def test_events_show_their_warning_reasons_and_null_counts(scratch_home: Path) -> None:
    text = pointer_text(EVENTS, "events")
    assert "kubernetes (EventList): 5 objects\n  events: Normal 4, Warning 1; Warning reasons: " \
           "BackOff 1\n" in text
    # an object's own keys are outlined (issue 30 item 10)
    assert ("items of items (5): keys kind 5/5, apiVersion 5/5, metadata 5/5 {name, "
            "namespace, uid, resourceVersion, creationTimestamp, managedFields}, involvedObject "
            "5/5 {kind, namespace, name, uid, apiVersion, resourceVersion, fieldPath}, reason "
            "5/5, message 5/5, source 5/5 {component, host}, firstTimestamp 5/5 (1 null), "
            "lastTimestamp 5/5 (1 null), type 5/5, eventTime 5/5 (4 null), action 1/5, "
            "reportingComponent 5/5, reportingInstance 5/5, count 4/5\n") in text
    data = ingest(EVENTS, "events2")
    assert ("scratch iterate-over events2 items --fields reason,involvedObject.name,message "
            "--where '@.type == \"Warning\"' --limit 20") in data["next"]
    assert data["array"]["keys"]["eventTime"] == "5/5 (4 null)"
    run_all(data["next"])


@pytest.mark.corpus
def test_a_single_pod_and_a_yaml_list(scratch_home: Path, corpus_dir: Path) -> None:
    pod = corpus_dir / "k8s/kubectl-neat/pod1-raw.json"
    listed = corpus_dir / "k8s/kubectl-neat/list1-raw.yaml"
    if not pod.is_file() or not listed.is_file():
        pytest.skip("kubectl-neat samples are not in this corpus")
    text = pointer_text(pod, "pod")
    assert "kubernetes (Pod): 1 pod (Running 1)\n  restarts: 1 of 1 pod, 3 in all; " \
           "most 3: . myapp\n" in text
    text = pointer_text(listed, "listed")
    assert "kubernetes (List): 2 pods (Running 2)\n  restarts: none\n" in text


@pytest.mark.corpus
def test_corpus_podlists(scratch_home: Path, corpus_dir: Path) -> None:
    pods = corpus_dir / "k8s/troubleshoot/pods_kube-system.json"
    honeycomb = corpus_dir / "k8s/honeycomb/pods.json"
    events = corpus_dir / "k8s/sonobuoy/kube-system_Events.json"
    if not all(p.is_file() for p in (pods, honeycomb, events)):
        pytest.skip("the kubectl lists are not in this corpus")
    assert PODS_SIGNALS in pointer_text(pods, "pods")  # managedFields change nothing here
    data = ingest(honeycomb, "honeycomb")
    assert data["kubernetes"]["restarts"] == {"pods": 10, "max": 56, "item": "items.7",
                                              "name": "calico-node-h2bjp", "total": 352}
    assert data["kubernetes"]["exit_codes"] == [[255, 5], [1, 1], [137, 1]]
    run_all(data["next"])
    # a bare array of events (a Sonobuoy dump): the signals still come
    text = pointer_text(events, "events")
    assert "kubernetes: 135 objects\n  events: Normal 120, Warning 15; Warning reasons: " \
           "Unhealthy 9, FailedScheduling 4, FailedCreate 2\n" in text


# -- access logs --------------------------------------------------------------------------------

def test_few_status_codes_are_shown_exactly(scratch_home: Path, session: Any) -> None:
    text = pointer_text(ACCESS, "access")
    assert "records (combined): 500 of 500 lines parsed\n" \
           "  status: 200 433, 301 52, 304 7, 404 7, 206 1\n  method: GET 500\n" in text
    out = run_tool("ingest", {"content": ACCESS.read_text(), "name": "access2",
                              "store_always": True}, session)
    assert out.ok and "  status: 200 433, 301 52, 304 7, 404 7, 206 1\n" in out.text


@pytest.mark.corpus
def test_many_status_codes_show_classes_and_the_error_codes(scratch_home: Path,
                                                            corpus_dir: Path) -> None:
    log = corpus_dir / "logs/app/apache_access_10k.log"
    if not log.is_file():
        pytest.skip("the access log is not in this corpus")
    text = pointer_text(log, "access")
    assert "  status: 2xx 9,170, 3xx 609, 4xx 217, 5xx 3\n" \
           "  status >= 400: 404 213, 500 3, 403 2, 416 2\n" in text


# -- the error grep ------------------------------------------------------------------------------

def test_error_words_in_key_names_only_suggest_no_grep(scratch_home: Path) -> None:
    # what kubectl prints for probes and jobs: the words are keys and enum values, not errors
    pods = json.loads(PODS.read_text())
    for item in pods["items"]:
        item["status"].pop("containerStatuses", None)
        item["status"].pop("conditions", None)
        item["spec"]["restartPolicy"] = "OnFailure"
        item["spec"]["failureThreshold"] = 3
        item["spec"]["env"] = [{"name": "FAILURE_POLICY", "value": "x"}, {"name": "ERROR_LOG"}]
    r = cli("ingest", "quiet", "--store-always", "--json", input=json.dumps(pods, indent=2),
            env=CAP)
    assert r.code == 0
    data = r.json["data"]
    assert "error_lines" not in data
    assert not any(" grep " in c for c in data["next"]), data["next"]


def test_a_key_named_error_is_not_a_value(scratch_home: Path) -> None:
    rows = [{"id": i, "error": None} for i in range(300)]
    data = cli("ingest", "keys", "--store-always", "--json", input=json.dumps(rows, indent=1),
               env=CAP).json["data"]
    assert "error_lines" not in data and not any(" grep " in c for c in data["next"])
    rows[7]["error"] = "disk failed"
    data = cli("ingest", "vals", "--store-always", "--json", input=json.dumps(rows, indent=1),
               env=CAP).json["data"]
    # 300 lines hold the key; one holds the words in a value: the grep is offered, counted
    assert data["error_lines"] == {"pattern": PATTERN, "lines": 300, "in_values": 1}
    text = cli("ingest", "vals2", "--store-always", input=json.dumps(rows, indent=1),
               env=CAP).text
    assert "\nerror words in 300 lines, 1 of them in values\n" in text


def test_yaml_values_are_told_from_keys(scratch_home: Path) -> None:
    lines = [f"- name: job-{i}\n  restartPolicy: OnFailure\n  failureThreshold: 3\n"
             for i in range(200)]
    lines[5] += "  reason: Error\n"
    data = cli("ingest", "jobs", "--store-always", "--json", input="".join(lines),
               env=CAP).json["data"]
    assert data["format"] == "yaml"
    assert data["error_lines"] == {"pattern": PATTERN, "lines": 1, "in_values": 1}


# -- null counts ---------------------------------------------------------------------------------

def test_item_schema_and_schema_count_nulls(scratch_home: Path, session: Any) -> None:
    ingest(EVENTS, "events")
    r = cli("item-schema", "events", "items", "--depth", "1")
    assert r.code == 0
    assert "\nfirstTimestamp: null|string 5/5, 1 null\nlastTimestamp: null|string 5/5, 1 null\n" \
           "type: string 5/5\neventTime: string|null 5/5, 4 null\n" in r.text
    assert "\ncount: integer 4/5\n" in r.text  # absent is not null
    out = run_tool("item_schema", {"file": "events", "path": "items", "max_depth": 1}, session)
    assert out.ok and "\neventTime: string|null 5/5, 4 null\n" in out.text
    r = cli("schema", "events", "--depth", "3")
    assert "\n      items.*.eventTime: null|string 5/5 max 27, 4 null\n" in r.text
    out = run_tool("schema", {"file": "events", "max_depth": 3}, session)
    assert out.ok and "\n      items.*.eventTime: null|string 5/5 max 27, 4 null\n" in out.text


# -- sql ----------------------------------------------------------------------------------------

def test_an_array_of_records_is_offered_a_group_by(scratch_home: Path) -> None:
    text = pointer_text(EVENTS, "events")
    query = ("scratch sql events 'SELECT kind, count(*) AS n, round(avg(count), 2) AS avg_count "
             "FROM entry GROUP BY ALL ORDER BY n DESC LIMIT 10'")
    assert f"\n  {query}\n" in text
    r = cli(*shlex.split(query)[1:])
    assert r.code == 0 and r.text.startswith("kind\tn\tavg_count\nEvent\t5\t1.75\n")


# -- the size rule -------------------------------------------------------------------------------

def test_a_big_podlist_pointer_keeps_its_signals_within_the_cap(scratch_home: Path) -> None:
    from scratch.answers.pointer.build import pointer_cap
    pods = json.loads(PODS.read_text())
    items = pods["items"]
    pods["items"] = [json.loads(json.dumps(items[i % len(items)]).replace(
        items[i % len(items)]["metadata"]["name"], f"pod-{i:04d}")) for i in range(700)]
    data = cli("ingest", "big", "--store-always", "--json", input=json.dumps(pods, indent=2),
               env=CAP).json["data"]
    assert data["tokens"] >= 50_000
    assert data["pointer_tokens"] <= pointer_cap(data["tokens"])
    assert data["kubernetes"]["restarts"] == {"pods": 600, "max": 192, "item": "items.6",
                                              "name": "pod-0006", "total": 75_600}
    text = cli("ingest", "big2", "--store-always", input=json.dumps(pods, indent=2),
               env=CAP).text
    assert "kubernetes (PodList): 700 pods (Running 500, Succeeded 200)\n" in text


@pytest.mark.corpus
def test_deployments_and_lists_without_signals(scratch_home: Path, corpus_dir: Path) -> None:
    deployments = corpus_dir / "k8s/troubleshoot/deployments_kube-system.json"
    roles = corpus_dir / "k8s/troubleshoot/clusterroles.json"
    if not deployments.is_file() or not roles.is_file():
        pytest.skip("the kubectl lists are not in this corpus")
    assert "\nkubernetes (DeploymentList): 4 objects\n  short of replicas: 0 of 4\n" \
        in pointer_text(deployments, "deployments")
    # ClusterRoles have no status, no events: nothing stands out, nothing is said
    data = ingest(roles, "roles")
    assert "kubernetes" not in data
    assert "kubernetes" not in pointer_text(roles, "roles2")


def test_waiting_reasons_and_phases_of_the_shipped_sample(scratch_home: Path) -> None:
    pods = Path(__file__).resolve().parents[1] / "scratch" / "samples" / "pods.json"
    text = pointer_text(pods, "pods")
    assert "\nkubernetes (List): 60 pods (Running 53, Pending 5, Failed 2)\n" \
           "  restarts: 25 of 60 pods, 185 in all; most 37: items.3 " \
           "node-exporter-66c1a54922-bb9a24\n" \
           "  reasons: ContainerCreating 5, CrashLoopBackOff 4\n" \
           "  conditions not True: Ready False 11\n" in text
    r = cli("iterate-over", "pods", "items", "--fields", "metadata.name,status.phase",
            "--where", '@.status.phase != "Running"', "--count")
    assert (r.code, r.text) == (0, "7\n")


# -- the error grep -----------------------------------------------------------------------------

def test_the_error_grep_reads_the_same_lines_whatever_its_block(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    """Ingest runs the grep a megabyte at a time, the page 8 MiB at a time: both read the
    whole lines of the same window (long lines, a last line without a newline, content
    shorter and longer than the window) and give the same answer."""
    from scratch.answers.pointer import grep

    monkeypatch.setattr(grep, "SCAN_BYTES", 5000)
    texts = {
        "short": b'{\n  "status": "failed",\n  "why": "no error"\n}',
        "lines past the window": b"".join(b'  "m%d": "step %d failed with an error",\n' % (i, i)
                                          for i in range(400)),
        "a long line": b"ok\n" + b"x" * 3000 + b" fatal error\n" + b"error %d\n" * 500,
        "one line longer than the window": b"error " + b"y" * 9000 + b"\nerror\n",
        "no newline at the end": b"fine\n" * 100 + b"panic: fatal",
    }
    for name, text in texts.items():
        path = tmp_path / "content"
        path.write_bytes(text)
        answers = {block: grep._check_file(path, len(text), "json", block)
                   for block in (1, 7, 64, 1000, 4999, 5000, 1 << 20, grep.BLOCK_BYTES)}
        assert len({json.dumps(a, sort_keys=True) for a in answers.values()}) == 1, \
            (name, answers)
        assert answers[1] is not None, name
        read = answers[1].get("scanned_bytes", len(text))
        assert read <= 5000 or name == "one line longer than the window", name


def test_ingest_takes_a_big_json_s_error_grep_from_its_early_run(scratch_home: Path,
                                                                monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    """A big JSON's error grep runs as soon as its stored form is whole, beside the
    analysis; the pointer shows that answer, which is the one checking the stored entry
    gives."""
    from scratch.answers.kernel.context import Context
    from scratch.answers.kernel.target import open_target
    from scratch.answers.pointer import grep

    pods = json.loads(PODS.read_text())
    items = pods["items"]
    pods["items"] = [items[i % len(items)] for i in range(400)]
    text = json.dumps(pods, indent=4)
    assert len(text) > 1 << 20  # stored beside the parse, where the early grep runs

    def refuse(target: object) -> None:
        raise AssertionError("checked again after the ingest")

    with monkeypatch.context() as m:
        m.setattr(grep, "check_error_grep", refuse)
        data = cli("ingest", "big", "--store-always", "--json", input=text,
                   env=CAP).json["data"]
    target = open_target(Context.build(), "big")
    try:
        checked = grep.check_error_grep(target)
    finally:
        target.index.close()
    assert checked is not None and checked.pop("pattern") == PATTERN
    assert data["error_lines"] == checked and checked["lines"] > 0
