"""AWS access logs: Application Load Balancer, Classic Load Balancer and S3 server access.

Field names are the ones AWS's access-log documentation gives each field, in snake case, with
two readings added: ``host:port`` fields are split into ``<name>_ip`` and ``<name>_port`` (the
port an integer; both null for ``-``), and the quoted request line is kept as ``request`` and
split into ``request_verb``, ``request_url`` and ``request_proto`` (null unless it is three
words), as AWS's Athena tables for these logs name them.

Typed fields hold numbers (processing times in seconds as numbers, ``-1`` kept: AWS writes it
when the load balancer could not dispatch; status codes and byte counts as integers); ``-``
there is null, except S3's ``bytes_sent``, where AWS documents ``-`` as zero. Every other
field is a string as written (``-`` included), with the quotes around quoted fields removed.
Fields AWS has appended over the years are optional at the end of a line (null when absent),
so older logs parse too. AWS documents that it may append more ("handle trailing fields that
it might not understand"): values after the last field known here are kept, space-separated,
in ``more_fields`` (null when there are none) for the ALB and S3 logs; the Classic Load
Balancer's format is complete, and a line with more values stays a raw line.

Pure ``re`` on ``str``.
"""

from __future__ import annotations

import re

from scratch.formats.logbase import Field, LogFormat, Row, as_int, as_number, fixed

_VALUE = r'"[^"]*+"(?= |\Z)|\[[^\]]*+\](?= |\Z)|[^\s"]\S*+'
_LINE = re.compile(r"(?:(?:" + _VALUE + r") *+)*+")  # a whole line of such values
_TOKEN = re.compile(r'"([^"]*+)"(?= |\Z)|\[([^\]]*+)\](?= |\Z)|([^\s"]\S*+)')
_ISO_Z = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z\Z")


def _tokens(line: str) -> list[str] | None:
    """Space-separated values; ``"..."`` and ``[...]`` are one value each (without the
    quotes or brackets). None when the line is not such a sequence. (Two passes in C: one
    checks the whole line, one takes the values.)"""
    if _LINE.fullmatch(line) is None:
        return None
    return [q or b or bare for q, b, bare in _TOKEN.findall(line)]


def _hostport(text: str) -> tuple[str | None, int | None]:
    if text == "-":
        return None, None
    host, colon, port = text.rpartition(":")
    if not colon or not host:
        raise ValueError(text)
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]  # [2001:db8::1]:443
    return host, as_int(port)


# what these formats read as null (their field help says it field by field)
NULLS = "'-' is NULL in a number field, text elsewhere"


def _opt_int(text: str | None) -> int | None:
    return None if text is None or text == "-" else as_int(text)


def _opt_num(text: str | None) -> int | float | None:
    return None if text is None or text == "-" else as_number(text)


def _request(text: str | None) -> tuple[str | None, str | None, str | None]:
    parts = (text or "").split(" ")
    if len(parts) == 3 and all(p and p != "-" for p in parts):
        return parts[0], parts[1], parts[2]
    return None, None, None


def _more(t: list[str], width: int) -> tuple[list[str | None], str | None]:
    """The first ``width`` values (padded with None) and the ones after them, joined."""
    if len(t) > width:
        return list(t[:width]), " ".join(t[width:])
    return [*t, *([None] * (width - len(t)))], None


def _s(name: str, doc: str, facet: bool = False) -> Field:
    return Field(name, "string", doc, facet)


def _i(name: str, doc: str, facet: bool = False, status: bool = False) -> Field:
    return Field(name, "integer", doc, facet, status)


def _n(name: str, doc: str) -> Field:
    return Field(name, "number", doc)


_MORE_FIELDS = Field("more_fields", "string", "values after the last field known here, "
                     "space-separated (null when none)")
_REQUEST_FIELDS = (
    _s("request", "the request line as written (- - - when there was none)"),
    _s("request_verb", "HTTP method (null unless the request line is three words)", True),
    _s("request_url", "the URL requested"),
    _s("request_proto", "HTTP/1.1, HTTP/2.0 ..."),
)

# ---------------------------------------------------------------------------------- ALB

ALB_DOC = ("https://docs.aws.amazon.com/elasticloadbalancing/latest/application/"
           "load-balancer-access-logs.html#access-log-entry-syntax")
_ALB_TYPES = frozenset({"http", "https", "h2", "grpcs", "ws", "wss"})
_ALB_FIELDS = (
    _s("type", "http, https, h2, grpcs, ws or wss", True),
    _s("time", "when the response was sent (ISO 8601, UTC)"),
    _s("elb", "load balancer id (app/name/id)"),
    _s("client_ip", "client address"), _i("client_port", "client port"),
    _s("target_ip", "target address (null for -)"), _i("target_port", "target port"),
    _n("request_processing_time", "seconds (-1: could not dispatch)"),
    _n("target_processing_time", "seconds (-1: could not dispatch or no response)"),
    _n("response_processing_time", "seconds (-1)"),
    _i("elb_status_code", "status the load balancer returned", True, status=True),
    _i("target_status_code", "status the target returned (null for -)", True),
    _i("received_bytes", "request bytes"), _i("sent_bytes", "response bytes"),
    *_REQUEST_FIELDS,
    _s("user_agent", "User-Agent"), _s("ssl_cipher", "TLS cipher, - if none"),
    _s("ssl_protocol", "TLS protocol, - if none", True),
    _s("target_group_arn", "target group ARN"), _s("trace_id", "X-Amzn-Trace-Id"),
    _s("domain_name", "SNI domain, - if none"), _s("chosen_cert_arn", "certificate ARN"),
    _i("matched_rule_priority", "priority of the rule that matched (null for -)"),
    _s("request_creation_time", "when the request arrived (ISO 8601)"),
    _s("actions_executed", "actions taken, comma-separated", True),
    _s("redirect_url", "redirect target, - if none"),
    _s("error_reason", "error reason code, - if none", True),
    _s("target_port_list", "target:port list, space-separated"),
    _s("target_status_code_list", "target status codes, space-separated"),
    _s("classification", "desync mitigation classification", True),
    _s("classification_reason", "classification reason code"),
    _s("conn_trace_id", "connection traceability id"),
    _MORE_FIELDS,
)
_ALB_MIN = 25  # through error_reason (2018 and later)


def _alb(line: str) -> Row | None:
    if not line.startswith(("http", "h2 ", "grpcs ", "ws")):
        return None
    tokens = _tokens(line)
    width = len(_ALB_FIELDS) - 6  # host:port pairs are one token, the request too; more_fields
    if tokens is None or len(tokens) < _ALB_MIN or tokens[0] not in _ALB_TYPES \
            or _ISO_Z.match(tokens[1]) is None:
        return None
    t, more = _more(tokens, width)
    try:
        return (t[0], t[1], t[2], *_hostport(str(t[3])), *_hostport(str(t[4])),
                as_number(str(t[5])), as_number(str(t[6])), as_number(str(t[7])),
                _opt_int(t[8]), _opt_int(t[9]), _opt_int(t[10]), _opt_int(t[11]), t[12],
                *_request(t[12]), *t[13:20], _opt_int(t[20]), *t[21:], more)
    except ValueError:
        return None


ALB = fixed(
    "alb", "AWS Application Load Balancer access log", ALB_DOC, _ALB_FIELDS, _alb,
    'https 2018-07-02T22:23:00.186641Z app/my-loadbalancer/50dc6c495c0c9188 '
    '192.168.131.39:2817 10.0.0.1:80 0.086 0.048 0.037 200 200 0 57 '
    '"GET https://www.example.com:443/ HTTP/1.1" "curl/7.46.0" ECDHE-RSA-AES128-GCM-SHA256 '
    'TLSv1.2 arn:aws:elasticloadbalancing:us-east-2:123456789012:targetgroup/my-targets/'
    '73e2d6bc24d8a067 "Root=1-58337281-1d84f3d73c47ec4e58577259" "www.example.com" '
    '"arn:aws:acm:us-east-2:123456789012:certificate/12345678-1234-1234-1234-123456789012" 1 '
    '2018-07-02T22:22:48.364000Z "authenticate,forward" "-" "-" "10.0.0.1:80" "200" "-" "-"',
    nulls=NULLS)

# ------------------------------------------------------------------------ Classic ELB

ELB_DOC = ("https://docs.aws.amazon.com/elasticloadbalancing/latest/classic/"
           "access-log-collection.html#access-log-entry-syntax")
_ELB_FIELDS = (
    _s("timestamp", "when the response was sent (ISO 8601, UTC)"),
    _s("elb", "load balancer name", True),
    _s("client_ip", "client address"), _i("client_port", "client port"),
    _s("backend_ip", "back-end instance address (null for -)"),
    _i("backend_port", "back-end port"),
    _n("request_processing_time", "seconds (-1: could not dispatch)"),
    _n("backend_processing_time", "seconds (-1)"),
    _n("response_processing_time", "seconds (-1)"),
    _i("elb_status_code", "status the load balancer returned (null for -)", True,
       status=True),
    _i("backend_status_code", "status the instance returned (null for -)", True),
    _i("received_bytes", "request bytes"), _i("sent_bytes", "response bytes"),
    *_REQUEST_FIELDS,
    _s("user_agent", "User-Agent (- for TCP listeners)"),
    _s("ssl_cipher", "TLS cipher, - if none"), _s("ssl_protocol", "TLS protocol, - if none",
                                                  True),
)


# one regex for the whole line: Classic lines are short, so per-value calls would dominate
_ELB_LINE = re.compile(
    r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z) (\S+) (\S+):(\d+) (?:(\S+):(\d+)|-) "
    r"(-?[\d.]+) (-?[\d.]+) (-?[\d.]+) (\d+|-) (\d+|-) (-?\d+|-) (-?\d+|-) \"([^\"]*)\""
    r"(?: \"([^\"]*)\" (\S+) (\S+))? *\Z")


def _elb(line: str) -> Row | None:
    m = _ELB_LINE.match(line)
    if m is None:
        return None
    g = m.groups()
    try:
        return (g[0], g[1], g[2], int(g[3]), g[4], None if g[5] is None else int(g[5]),
                as_number(g[6]), as_number(g[7]), as_number(g[8]), _opt_int(g[9]),
                _opt_int(g[10]), _opt_int(g[11]), _opt_int(g[12]), g[13], *_request(g[13]),
                g[14], g[15], g[16])
    except ValueError:
        return None


ELB = fixed(
    "elb", "AWS Classic Load Balancer access log", ELB_DOC, _ELB_FIELDS, _elb,
    '2015-05-13T23:39:43.945958Z my-loadbalancer 192.168.131.39:2817 10.0.0.1:80 0.000073 '
    '0.001048 0.000057 200 200 0 29 "GET http://www.example.com:80/ HTTP/1.1" "curl/7.38.0" '
    '- -',
    nulls=NULLS)

# ----------------------------------------------------------------------------------- S3

S3_DOC = "https://docs.aws.amazon.com/AmazonS3/latest/userguide/LogFormat.html"
_S3_FIELDS = (
    _s("bucket_owner", "canonical user id of the bucket's owner"),
    _s("bucket", "bucket name", True),
    _s("time", "when the request was received, as 06/Feb/2019:00:00:38 +0000"),
    _s("remote_ip", "requester's address"),
    _s("requester", "canonical user id or IAM ARN, - if unauthenticated"),
    _s("request_id", "request id"),
    _s("operation", "SOAP.operation, REST.HTTP_method.resource_type ...", True),
    _s("key", "object key (URL-encoded), - if none"),
    _s("request_uri", "the HTTP request line, - if none"),
    _i("http_status", "response status (null for -)", True, status=True),
    _s("error_code", "S3 error code, - if none", True),
    _i("bytes_sent", "response bytes without protocol overhead (- counts as 0)"),
    _i("object_size", "object size (null for -)"),
    _i("total_time", "milliseconds in flight (null for -)"),
    _i("turn_around_time", "milliseconds S3 spent (null for -)"),
    _s("referer", "Referer header, - if none"), _s("user_agent", "User-Agent header"),
    _s("version_id", "version id, - if none"), _s("host_id", "x-amz-id-2"),
    _s("signature_version", "SigV2, SigV4 or -", True), _s("cipher_suite", "TLS cipher or -"),
    _s("authentication_type", "AuthHeader, QueryString or -", True),
    _s("host_header", "endpoint used"), _s("tls_version", "TLS version or -", True),
    _s("access_point_arn", "access point ARN, - if none"),
    _s("acl_required", "Yes when an ACL was required, - otherwise"),
    _MORE_FIELDS,
)
_S3_MIN = 18  # through version_id (the oldest layout)


def _s3(line: str) -> Row | None:
    if " [" not in line[:200]:
        return None
    tokens = _tokens(line)
    width = len(_S3_FIELDS) - 1
    if tokens is None or len(tokens) < _S3_MIN or "." not in tokens[6]:
        return None
    # the time is the one bracketed value, third on the line
    first = line.find(" [")
    if line.count(" ", 0, first) != 1:
        return None
    t, more = _more(tokens, width)
    try:
        sent = t[11]
        return (*t[:9], _opt_int(t[9]), t[10], 0 if sent == "-" else as_int(str(sent)),
                _opt_int(t[12]), _opt_int(t[13]), _opt_int(t[14]), *t[15:], more)
    except ValueError:
        return None


S3 = fixed(
    "s3", "AWS S3 server access log", S3_DOC, _S3_FIELDS, _s3,
    '79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be awsexamplebucket1 '
    '[06/Feb/2019:00:00:38 +0000] 192.0.2.3 '
    '79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be 3E57427F3EXAMPLE '
    'REST.GET.VERSIONING - "GET /awsexamplebucket1?versioning HTTP/1.1" 200 - 113 - 7 - "-" '
    '"S3Console/0.4" - s9lzHYrFp76ZVxRcpX9+5cjAnEH2ROuNkd2BHfIa6UkFVdtjf5mKR3/eTPFvsiP/XV/'
    'VLi31234= SigV2 ECDHE-RSA-AES128-GCM-SHA256 AuthHeader '
    'awsexamplebucket1.s3.us-west-1.amazonaws.com TLSV1.1',
    nulls="'-' is NULL in a number field (bytes_sent: 0), text elsewhere")

FORMATS: tuple[LogFormat, ...] = (ALB, ELB, S3)
