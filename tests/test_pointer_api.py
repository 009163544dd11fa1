"""Pointers of API descriptions aim at the question-bearing part (issue 30 item 10): an OpenAPI
or Swagger document's operations under ``paths`` (per method, deprecated, by tag) before its
schemas, and no error grep on an API model, whose "error words" name shapes. On the
Kubernetes OpenAPI descriptions and the MCP schema of the shared corpus (skipped when absent),
through the CLI, every next call run as printed."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import cli

CAP = {"SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS": "3000"}


def ingest(data: bytes, name: str) -> tuple[str, dict[str, Any]]:
    """The pointer's text, and its data as --json prints it."""
    text = cli("ingest", name, "--store-always", input=data, env=CAP)
    assert text.code == 0, text.err
    r = cli("ingest", name, "--store-always", "--json", input=data, env=CAP)
    assert r.code == 0, r.out
    return text.text, r.json["data"]


def run_all(calls: list[str]) -> None:
    for c in calls:
        cli("budget", "reset")
        r = cli(*shlex.split(c)[1:], "--json", env=CAP)
        assert r.code == 0, (c, r.out[:500])


def next_lines(text: str) -> list[str]:
    return [ln.strip() for ln in text.split("\nnext:\n")[1].splitlines()]


@pytest.mark.corpus
def test_an_openapi_pointer_shows_its_operations_and_lists_paths_first(
        corpus_dir: Path, scratch_home: Path) -> None:
    source = corpus_dir / "json/openapi/kubernetes-openapi-v3-api-v1.json"
    doc = json.loads(source.read_bytes())
    # two operations deprecated and tagged apart, as real descriptions have them
    doc["paths"]["/api/v1/componentstatuses"]["get"].update(deprecated=True, tags=["legacy"])
    doc["paths"]["/api/v1/componentstatuses/{name}"]["get"].update(deprecated=True,
                                                                    tags=["legacy"])
    text, data = ingest(json.dumps(doc).encode(), "k8s-api")
    assert ('openapi 3.0.0 "Kubernetes" v1.24.0: 112 paths, 245 operations (get 107, delete '
            "35, put 32, patch 31, post 28, head 6, options 6)\n"
            "  deprecated: 2 (GET /api/v1/componentstatuses, GET "
            "/api/v1/componentstatuses/{name}, …)\n"
            "  operations by tag: core_v1 243, legacy 2\n"
            "  schemas: 218 at components.schemas\n") in text
    assert "items of " not in text  # no parameters array of one operation, as before
    assert "error words" not in text and "error_lines" not in data
    assert next_lines(text)[:6] == [
        "scratch iterate-over k8s-api paths --fields _key,get.operationId --limit 20",
        "scratch iterate-over k8s-api paths --fields _key --where "
        "'@[?@.deprecated == true]' --limit 20",
        "scratch iterate-over k8s-api paths --fields _key --where "
        "'@[?@.tags[?@ == \"core_v1\"]]' --limit 20",
        "scratch item-schema k8s-api paths --depth 2",
        "scratch schema k8s-api",
        "scratch iterate-over k8s-api components.schemas --fields _key,type --limit 20"]
    deprecated = cli("iterate-over", "k8s-api", "paths", "--fields", "_key", "--where",
                     "@[?@.deprecated == true]", "--json").json["data"]["rows"]
    assert [r["_key"] for r in deprecated] == ["/api/v1/componentstatuses",
                                              "/api/v1/componentstatuses/{name}"]
    assert data["openapi"]["methods"][0] == ["get", 107]
    run_all([c for c in data["next"] if " sql " not in c])


@pytest.mark.corpus
def test_a_swagger_document_names_its_definitions(corpus_dir: Path, scratch_home: Path) -> None:
    source = corpus_dir / "json/openapi/kubernetes-swagger-v1.27.json"
    text, data = ingest(source.read_bytes(), "swagger")
    assert ('swagger 2.0 "Kubernetes" v1.27.0: 374 paths, 738 operations (get 364, delete '
            "109, put 92, patch 91, post 70, head 6, options 6)\n") in text
    assert "  operations by tag: core_v1 245, apps_v1 77, storage_v1 51, " in text
    assert "  schemas: 492 at definitions\n" in text
    assert "error words" not in text  # 952 lines of them before: descriptions, not failures
    assert next_lines(text)[0] == ("scratch iterate-over swagger paths --fields "
                                   "_key,get.operationId --limit 20")
    assert data["pointer_tokens"] <= 800


@pytest.mark.corpus
@pytest.mark.parametrize("rel", ["mcp/spec/schema-2025-11-25.json",
                                 "yaml/crd-prometheuses.yaml",
                                 "k8s/openshift-insights/crd_volumesnapshotcontents.json"])
def test_no_error_grep_on_an_api_model(corpus_dir: Path, scratch_home: Path, rel: str) -> None:
    """A JSON Schema and CustomResourceDefinitions: their error words (JSONRPCError, the
    descriptions of failure fields) name shapes; the grep found 21, 75 and 12 lines."""
    text, data = ingest((corpus_dir / rel).read_bytes(), "model")
    assert "error words" not in text and "error_lines" not in data
    assert not any(" grep " in c for c in data["next"])


@pytest.mark.corpus
def test_an_output_still_gets_its_checked_error_grep(corpus_dir: Path,
                                                     scratch_home: Path) -> None:
    text, data = ingest((corpus_dir / "k8s/sonobuoy/kube-system_Events.json").read_bytes(),
                        "events")
    assert "\nerror words in 11 lines\n" in text and data["error_lines"]["lines"] == 11
