"""scratch.redact, the core: what is found, what it becomes, what is left alone, bad input,
and the figures on the labelled set and the corpus (real files of ../shared/corpus and the
detectors' own fixtures in tests/data/secrets)."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from scratch.redact import Redaction, redact_bytes, redact_text, redact_value, store_key
from scratch.redact.markers import MARKER_RE, marker
from scratch.redact.rules import rule_set, secret_key_name

KEY = b"k" * 32
DATA = Path(__file__).parent / "data" / "secrets"
GH = "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"  # detect-secrets' own test token
AWS = "AKIAZ7VRSQ5TJN2V3QWE"


def test_the_rule_set_is_gitleaks_as_secretscreen_ships_it() -> None:
    rs = rule_set()
    assert rs.source.startswith("secretscreen ")
    ids = {r.id for r in rs.rules}
    assert {"aws-access-token", "github-pat", "gitlab-pat", "slack-bot-token", "stripe-access-token",
            "jwt", "private-key", "generic-api-key"} <= ids
    assert len([r for r in rs.rules if not r.place]) > 200
    # the rules by place (a Kubernetes Secret's values are found by scratch.redact.kube)
    assert {"env-secret", "secret-field", "secret-assignment", "url-password",
            "authorization-header"} <= ids


FINDS = [
    (f"token: {GH}\n", "github-pat"),
    (f"aws_access_key_id={AWS}\n", "aws-access-token"),
    ("curl https://x -H 'Authorization: Bearer abcdefghijklmnop1234567890'\n",
     "curl-auth-header"),
    ("GET /cb HTTP/1.1\nAuthorization: Basic dXNlcjpwYXNzd29yZDEyMw==\n", "authorization-header"),
    ("postgres://admin:s3cr3tP4ss@db.example.com:5432/app\n", "url-password"),
    ("export DB_PASSWORD=hunter2hunter2\n", "secret-assignment"),
    ("STRIPE_API_KEY=sk_live_51Habcdefghijklmnopqrstu\n", "stripe-access-token"),
    ('{"client_secret": "abc123def456"}\n', "secret-field"),
    ("password: changeme123\n", "secret-field"),
    ("GET /login?user=bob&token=abcd1234efgh5678 HTTP/1.1\n", "secret-assignment"),
    ("Server=db;Database=app;User Id=sa;Password=Pa55w0rd!;\n", "secret-assignment"),
    ("-----BEGIN RSA PRIVATE KEY-----\n" + "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi7eCzfXkYZbQ9/s\n" * 3
     + "-----END RSA PRIVATE KEY-----\n", "private-key"),
]


@pytest.mark.parametrize("text, rule", FINDS)
def test_each_kind_the_issue_names_is_found(text: str, rule: str) -> None:
    done = redact_bytes(text.encode(), KEY)
    assert [f["rule"] for f in done.redaction.findings] == [rule]
    assert MARKER_RE.search(done.data.decode())


def test_env_values_are_found_by_their_name_in_json_and_yaml() -> None:
    pretty = json.dumps({"env": [{"name": "GITHUB_TOKEN", "value": "tok-abc-123-xyz"},
                                 {"name": "LOG_LEVEL", "value": "debug"},
                                 {"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {
                                     "name": "db", "key": "password"}}}]}, indent=2).encode()
    done = redact_bytes(pretty, KEY)
    env = orjson.loads(done.data)["env"]
    assert env[0]["value"] == marker("env-secret", b"tok-abc-123-xyz", KEY)
    assert env[1]["value"] == "debug"
    assert env[2]["valueFrom"] == {"secretKeyRef": {"name": "db", "key": "password"}}
    yaml_text = b"env:\n- name: API_TOKEN\n  value: abcdef123456\n- name: MODE\n  value: fast\n"
    assert redact_bytes(yaml_text, KEY).data == (
        b"env:\n- name: API_TOKEN\n  value: " + marker("env-secret", b"abcdef123456",
                                                      KEY).encode()
        + b"\n- name: MODE\n  value: fast\n")


def _pod_with_env(env: list[dict[str, object]]) -> bytes:
    """A PodList as ``kubectl get pods -o json`` prints it (4 spaces per level): an env entry's
    keys sit 32 spaces deep, each on its own line."""
    pod = {"kind": "Pod", "spec": {"volumes": [
        {"name": "default-token-wfgmq", "secret": {"secretName": "default-token-wfgmq",
                                                   "defaultMode": 420}}],
        "containers": [{"name": "app", "env": env}]}}
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": [pod]}, indent=4).encode()


def test_env_values_are_found_at_kubectls_depth_in_either_key_order() -> None:
    # the JSON rules once allowed 8 blanks between an entry's keys: kubectl's indentation
    # (a line break and 32 spaces) hid every env secret of a real PodList
    env: list[dict[str, object]] = [
        {"name": "DB_PASSWORD", "value": "Pa55-w0rd-9f4e"},
        {"value": "tok-abc-123-xyz", "name": "GITHUB_TOKEN"},
        {"name": "LOG_LEVEL", "value": "debug"},
        {"name": "API_KEY", "valueFrom": {"secretKeyRef": {"name": "api", "key": "key"}}}]
    raw = _pod_with_env(env)
    assert b'",\n' + b" " * 32 + b'"value": "Pa55' in raw
    done = redact_bytes(raw, KEY)
    got = orjson.loads(done.data)["items"][0]["spec"]
    assert got["containers"][0]["env"] == [
        {"name": "DB_PASSWORD", "value": marker("env-secret", b"Pa55-w0rd-9f4e", KEY)},
        {"value": marker("env-secret", b"tok-abc-123-xyz", KEY), "name": "GITHUB_TOKEN"},
        env[2], env[3]]
    assert got["volumes"] == orjson.loads(raw)["items"][0]["spec"]["volumes"]
    assert [f["rule"] for f in done.redaction.findings] == ["env-secret", "env-secret"]
    deep_yaml = (b"items:\n- spec:\n    containers:\n    - env:\n      - name: DB_PASSWORD\n"
                 b"        value: Pa55-w0rd-9f4e\n")
    assert redact_bytes(deep_yaml, KEY).data == deep_yaml.replace(
        b"Pa55-w0rd-9f4e", marker("env-secret", b"Pa55-w0rd-9f4e", KEY).encode())


def test_a_volume_named_like_a_token_costs_no_window() -> None:
    # a service account's token volume ("name": "default-token-x", then "secret": {...}) is
    # no env entry: the prefilter does not stop there (a PodList holds one per pod)
    from scratch.redact.rules import rule_set as rules
    raw = _pod_with_env([])
    starts = [raw[m.start():m.end()] for m in rules().prefilter().finditer(raw)]
    assert not any(b"default-token" in hit and hit.startswith(b"name") for hit in starts)


ENV_FORMS = [
    _pod_with_env([{"name": "DB_PASSWORD", "value": "Pa55-w0rd-9f4e"}]).decode(),
    _pod_with_env([{"value": "Pa55-w0rd-9f4e", "name": "DB_PASSWORD"}]).decode(),
    json.dumps({"a": json.dumps({"env": [{"name": "X_TOKEN", "value": "tok-abc-123-xyz"}]})}),
    "- name:    API_SECRET\n          value: 'abc-123-def'\n",
    '{"name":"SESSION_TOKEN",\t"value":"c00kie-v4lue-99"}\n',
]


@pytest.mark.parametrize("text", [t for t, _ in FINDS] + ENV_FORMS, ids=[
    *(f"{rule}-{i}" for i, (_, rule) in enumerate(FINDS)), "pod-name-value", "pod-value-name",
    "json-in-a-string", "yaml-deep", "tab-between-keys"])
def test_the_prefilter_stops_wherever_a_rule_finds(text: str) -> None:
    """The scan checks windows around the prefilter's hits only: on a short text, what it
    finds equals what the rules find when run over the whole text."""
    from scratch.redact.scan import check_window, resolve, scan
    data = text.encode()
    whole = [(h.start, h.end, h.rule) for h in resolve(check_window(rule_set(), data))]
    assert whole
    assert [(h.start, h.end, h.rule) for h in scan(data).hits] == whole


def test_the_prefilter_stops_wherever_a_rule_finds_in_the_labelled_set() -> None:
    """The same on every text of the labelled set (414 samples of gitleaks', detect-secrets'
    and scratch's own, secrets and look-alikes): no find is lost to the prefilter."""
    from scratch.redact.scan import check_window, resolve, scan
    rows = [json.loads(line) for line in (DATA / "labelled.jsonl").read_text().splitlines()]
    found = 0
    for row in rows:
        data = row["text"].encode()
        whole = [(h.start, h.end, h.rule) for h in resolve(check_window(rule_set(), data))]
        assert [(h.start, h.end, h.rule) for h in scan(data).hits] == whole, row["text"]
        found += bool(whole)
    assert len(rows) >= 400 and found >= 100


def test_a_kubernetes_secret_list_keeps_its_shape_and_only_its_values_change() -> None:
    applied = json.dumps({"apiVersion": "v1", "data": {"password": "cGFzc3dvcmQxMjM="},
                          "kind": "Secret", "metadata": {"name": "db"}},
                         separators=(",", ":"))
    doc = {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "data": {"password": "cGFzc3dvcmQxMjM=", "user": "YWRtaW4="},
         "kind": "Secret", "metadata": {
             "name": "db", "uid": "62a187fd-756e-11ea-b27b-0242ac11002d",
             "resourceVersion": "3376",
             "annotations": {"kubectl.kubernetes.io/last-applied-configuration": applied}},
         "stringData": {"token": "plain text token 42"}, "type": "Opaque"},
        {"apiVersion": "v1", "data": {"config.yaml": "a: b", "user": "bob"},
         "kind": "ConfigMap", "metadata": {"name": "cfg"}}]}
    raw = json.dumps(doc, indent=2).encode()
    done = redact_bytes(raw, KEY)
    out = orjson.loads(done.data)
    secret, config = out["items"]
    m = marker("k8s-secret-data", b"cGFzc3dvcmQxMjM=", KEY)
    assert secret["data"] == {"password": m, "user": marker("k8s-secret-data", b"YWRtaW4=", KEY)}
    assert secret["stringData"] == {"token": marker("k8s-secret-stringdata",
                                                    b"plain text token 42", KEY)}
    assert json.loads(secret["metadata"]["annotations"][
        "kubectl.kubernetes.io/last-applied-configuration"])["data"] == {"password": m}
    assert secret["metadata"]["uid"] == "62a187fd-756e-11ea-b27b-0242ac11002d"
    assert secret["metadata"]["resourceVersion"] == "3376"
    assert config == doc["items"][1]  # ConfigMap data untouched
    paths = sorted(f.get("path", "") for f in done.redaction.findings)
    assert "items.0.data.password" in paths and "items.0.stringData.token" in paths
    assert len(done.redaction.findings) == 4


def test_a_kubernetes_secret_in_yaml(corpus_dir: Path) -> None:
    raw = (corpus_dir / "k8s/kubectl-neat/secret1-raw.yaml").read_bytes()
    done = redact_bytes(raw, KEY)
    assert [(f["rule"], f["line"], f["path"]) for f in done.redaction.findings] == [
        ("k8s-secret-data", 3, "data..dockerconfigjson")]
    before, after = raw.split(b"\n"), done.data.split(b"\n")
    assert len(before) == len(after)
    assert [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b] == [2]


@pytest.mark.parametrize("text", [
    '"image": "nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"',
    '"uid": "62a187fd-756e-11ea-b27b-0242ac11002d", "resourceVersion": "3376"',
    '"sha": "6dcb09b5b57875f334f61aebed695e2e4193db5e", "commit_id": "abc123"',
    '"x-request-id": "req-3d1a0e8a-4b2c-4f0e-9d1a-0e8a4b2c4f0e"',
    '"secretName": "db-creds", "secretKeyRef": {"name": "db", "key": "password"}',
    '"checksum/secret": "' + "a" * 8 + "0123456789abcdef" * 3 + '01234567"',
    '"NextToken": "U2FsdGVkX1+abcdefghijklmnopqrstuvwxyz0123456789abcdef=="',
    '"automountServiceAccountToken": false, "tokenExpirationSeconds": 3607',
    '"password": "${DB_PASSWORD}", "token": "<your token>", "secret": "********"',
    "PWD=/home/ubuntu ; USER=root ; COMMAND=/bin/ls",
    '"data": "eyJub3QiOiAiYSBzZWNyZXQifQ==", "kind": "ConfigMap"',
])
def test_what_is_left_alone(text: str) -> None:
    assert redact_bytes(text.encode(), KEY).redaction.findings == ()


def test_secret_key_names() -> None:
    yes = ["password", "DB_PASSWORD", "client_secret", "apiKey", "x-api-key", "GITHUB_TOKEN",
           "aws_secret_access_key", "ENCRYPTION_KEY", "Authorization", "pwd"]
    no = ["secretName", "secretKeyRef", "tokenExpirationSeconds", "token_url", "KmsKeyId",
          "topologyKey", "passwordKey", "MONKEY", "HttpTokens", "NextToken", "public_key",
          "password_file", "author"]
    assert [n for n in yes if not secret_key_name(n)] == []
    assert [n for n in no if secret_key_name(n)] == []


def test_equal_values_get_equal_markers_and_the_suffix_depends_on_the_key() -> None:
    text = f"a={GH}\nb={GH}\nc=ghp_zzPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUx\n".encode()
    marks = [f["marker"] for f in redact_bytes(text, KEY).redaction.findings]
    assert marks[0] == marks[1] != marks[2]
    other = [f["marker"] for f in redact_bytes(text, b"o" * 32).redaction.findings]
    assert other[0] != marks[0] and other[0].rsplit(":", 1)[0] == marks[0].rsplit(":", 1)[0]
    again = redact_bytes(redact_bytes(text, KEY).data, KEY)
    assert again.redaction.findings == ()  # a marker is never redacted again


def test_csv_keeps_its_columns_and_a_log_its_lines() -> None:
    csv = f"name,token,note\nbot,{GH},first\nhuman,none,second\n".encode()
    done = redact_bytes(csv, KEY)
    assert [len(row.split(b",")) for row in done.data.splitlines()] == [3, 3, 3]
    log = b"".join(b"line %d ok\n" % i for i in range(1, 100)) + f"auth {GH}\n".encode() \
        + b"after\n"
    out = redact_bytes(log, KEY)
    assert out.data.count(b"\n") == log.count(b"\n")
    assert [f["line"] for f in out.redaction.findings] == [100]


def test_bad_input_loses_nothing() -> None:
    # invalid UTF-8 around a secret, a NUL byte: found, the rest byte for byte
    raw = b"\xff\xfe garbage " + GH.encode() + b" \x80\x81 tail\n"
    done = redact_bytes(raw, KEY)
    assert done.data.startswith(b"\xff\xfe garbage ") and done.data.endswith(
        b" \x80\x81 tail\n")
    assert [f["rule"] for f in done.redaction.findings] == ["github-pat"]
    # binary content: the value becomes as many * as it had bytes, the size stays
    binary = b"\x89PNG\x00\x00" + GH.encode() + b"\x00\x01"
    out = redact_bytes(binary, KEY)
    assert len(out.data) == len(binary) and b"*" * len(GH) in out.data
    assert out.redaction.findings[0]["rule"] == "github-pat"
    # a secret split across lines is not found (and said so: no finding); a key block is
    split = (b"token=ghp_wWPw5k4aXcaT4fNP0U\ncnZwJUVFk6LO0pINUx\n")
    assert [f["rule"] for f in redact_bytes(split, KEY).redaction.findings] != ["github-pat"]


def test_a_50_mb_line() -> None:
    big = b'{"blob": "' + b"a1b2c3d4" * (50 * 1024 * 1024 // 8) + b'", "token": "' \
        + GH.encode() + b'", "tail": 1}\n'
    done = redact_bytes(big, KEY)
    assert [f["rule"] for f in done.redaction.findings] == ["github-pat"]
    assert done.data.endswith(marker("github-pat", GH.encode(), KEY).encode() + b'", "tail": 1}\n')
    assert len(done.data) == len(big) - len(GH) + len(marker("github-pat", GH.encode(), KEY).encode())


def test_redact_text_and_values_for_short_strings() -> None:
    text, findings = redact_text(f"run -- curl -H 'Authorization: Bearer {GH}'", KEY)
    assert GH not in text and len(findings) == 1
    assert redact_text("items.0.metadata.name", KEY) == ("items.0.metadata.name", [])
    value = redact_value({"args": {"content": f"token={GH}", "n": 3}, "list": [GH, True]}, KEY)
    assert GH not in json.dumps(value)
    assert value["args"]["n"] == 3 and value["list"][1] is True


def test_the_store_key_is_private_and_stable(tmp_path: Path) -> None:
    (tmp_path / "state").mkdir(mode=0o700)
    key = store_key(tmp_path)
    path = tmp_path / "state" / "redact.key"
    assert len(key) == 32 and path.read_bytes() == key
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    from scratch.redact import markers
    markers._KEYS.clear()
    assert store_key(tmp_path) == key


def test_records_say_what_was_done() -> None:
    assert Redaction.skipped("--no-redact").info() == {"redacted": False,
                                                        "unredacted": "--no-redact"}
    done = redact_bytes(f"a={GH}\n".encode(), KEY).redaction
    info = done.info()
    assert info["count"] == 1 and info["rules"] == {"github-pat": 1}
    assert "ghp_" not in json.dumps(info)


def test_recall_on_the_detectors_own_fixtures() -> None:
    """The figures of tests/bench/compare_secret_rules.py, held: gitleaks' rules find all but
    one of gitleaks' own positive samples and over a quarter of detect-secrets'."""
    rows = [json.loads(line) for line in (DATA / "labelled.jsonl").read_text().splitlines()]
    for source, least in (("gitleaks", 0.95), ("detect-secrets", 0.25)):
        pos = [r for r in rows if r["source"] == source and r["secret"]]
        hit = sum(1 for r in pos if redact_bytes(r["text"].encode(), KEY).redaction.findings)
        assert hit / len(pos) >= least, (source, hit, len(pos))


# the corpus files whose values are credentials (by rule); every other file of k8s/, aws/,
# gcp/, azure/, github/ and yaml/ must come back byte-identical
CREDENTIALS = {
    "k8s/kubectl-neat/secret1-raw.yaml": {"k8s-secret-data": 1},
    "github/webhooks/ghes-3.5-index.json": {"aws-access-token": 1},
    **{f"github/octokit-fixtures/{name}.raw-fixture.json": {"secret-field": n} for name, n in (
        ("branch-protection", 7), ("errors", 3), ("get-repository", 1), ("git-refs", 9),
        ("labels", 7), ("paginate-issues", 20), ("release-assets", 10),
        ("rename-repository", 7), ("search-issues", 5))},
}


def test_the_corpus_comes_back_byte_identical_but_for_credentials(corpus_dir: Path) -> None:
    seen: dict[str, dict[str, int]] = {}
    for folder in ("k8s", "aws", "gcp", "azure", "github", "yaml"):
        for path in sorted((corpus_dir / folder).rglob("*")):
            if not path.is_file():
                continue
            raw = path.read_bytes()
            done = redact_bytes(raw, KEY)
            rel = path.relative_to(corpus_dir).as_posix()
            if done.data != raw:
                seen[rel] = done.redaction.by_rule()
    assert seen == CREDENTIALS


def test_a_token_quoted_inside_a_json_string_keeps_the_json_valid() -> None:
    # journald's MESSAGE holds Go's %#v of a struct: K8sAuthToken:\"<jwt>\" (seen in the
    # corpus's journald sample, line 1192). gitleaks' jwt pattern takes a trailing backslash,
    # and the marker once swallowed the escape of the closing quote.
    import base64
    part = base64.urlsafe_b64encode
    jwt = (part(b'{"alg":"RS256","typ":"JWT"}').rstrip(b"=") + b"."
           + part(b'{"iss":"kubernetes/serviceaccount","sub":"system:serviceaccount:kube'
                  b'-system:calico-node"}').rstrip(b"=") + b"."
           + b"Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5d2FsZG9mcmVk")
    doc = {"MESSAGE": f'Policy{{K8sAuthToken:"{jwt.decode()}", K8sClientKey:""}}',
           "PRIORITY": "6"}
    for data in (orjson.dumps(doc), json.dumps(doc, indent=1).encode(),
                 b'{"m": "\\\\' + jwt + b'\\\\"}'):
        done = redact_bytes(data, b"k" * 32)
        assert [f["rule"] for f in done.redaction.findings] == ["jwt"], data
        back = json.loads(done.data)
        assert jwt.decode() not in json.dumps(back)
    assert json.loads(redact_bytes(orjson.dumps(doc), b"k" * 32).data)["MESSAGE"].startswith(
        'Policy{K8sAuthToken:"«redacted:jwt:')
