#!/usr/bin/env python3
"""Fault-injecting HTTP proxy for the S3 and REST catalog tests: loopback only, Python standard
library only.

It sits between a client (icemaint, boto3, PyIceberg) and one server -- an S3 server, or an
Iceberg REST catalog with --api rest -- and relays every request
byte for byte: the request line is forwarded exactly as received (so `a/../b`, `//`, `%2F` reach
the server unnormalised) and the Host header is untouched (the client signed it, so SigV4 still
verifies upstream). Faults are applied by rules set through a small JSON control endpoint:

  GET    /            {"endpoint", "upstream", "control"}
  GET    /rules       current rules and latency
  POST   /rules       replace them: {"latency_ms": 20, "rules": [RULE, ...]}
  DELETE /rules       remove every rule and the latency
  GET    /counters    requests by method, by S3 operation ("kind") and faults applied
  DELETE /counters    zero the counters and the request log
  POST   /release     let every request a "hold" rule holds (and any it holds later) go on
  GET    /log         every request since the last reset: seq, method, target, kind, status, fault,
                      t (when it arrived, Unix seconds: two proxies' logs merge in order)

A RULE is a JSON object. Matching: "method", "path" and "query" are regular expressions searched
in the request method, the raw path and the raw query string, "request_body" one searched in the
request body (decoded as UTF-8, errors replaced); "kind" is an S3 operation name (see classify())
or, with --api rest, a REST operation name (see classify_rest(): e.g. CommitTable, LoadTable,
CommitTransaction, Token, Config). A matching request increments the rule's match count m (1-based); the rule
fires when m > "after" (default 0), (m - after) is a multiple of "every" (default 1), it has
fired fewer than "times" times (default unlimited), and no earlier rule fired for this request
(later rules still count the match). So "503 on every 3rd request" is
{"action": "slowdown", "every": 3} and "fault at exactly the 5th request" is
{"action": "reset_before", "after": 4, "times": 1}. The first rule that fires wins.
Actions:
  slowdown        503 SlowDown with an S3 XML error body, not forwarded
  internal_error  500 InternalError, not forwarded
  error           "status" and "code" of your choice (e.g. 400 RequestTimeout), not forwarded
  (any of the three with "forward": true is sent upstream first, so the request IS applied and
   the client still sees the error: the "outcome unknown" case)
  reset_before    the client connection is reset (TCP RST) before anything is forwarded
  reset_after     forwarded, the full response read, then the client connection is reset
  truncate        forwarded; the client gets the headers and half the body, then a reset
  broken_xml      forwarded; the client gets 200 with an XML body cut in the middle (its
                  Content-Length matches what is sent, so only the XML parser can notice)
  delay           forwarded after "delay_ms" milliseconds
  hold            forwarded once the test says so (POST /release), or after "delay_ms"
                  (default 60000) if it never does: "the catalog answers only after the
                  writer's commit", without guessing how long the writer takes. Setting the
                  rules again re-arms the gate.
  iceberg_error   "status" (e.g. 409, 401, 500, 502, 503, 504), an Iceberg REST error body
                  {"error": {"message", "type", "code"}} ("type" defaults by status, e.g. 409
                  CommitFailedException), not forwarded; with "forward": true it is applied
                  first ("applied-then-500"). "times": 1 makes "401 once, then pass".
  (the error actions take "headers": {"Retry-After": "1"} for extra response headers, and
   "body": "raw text" to send instead of the usual body, e.g. a gateway's HTML page)
  close_after     forwarded, the response discarded, then the client connection is closed
                  cleanly (FIN, no reply: "empty reply"); reset_after is the same with an RST
  delay_response  forwarded at once, the response held back "delay_ms" milliseconds (a client
                  with a shorter timeout gives up after the request was applied)
"latency_ms" (top level) is added to every request before it is forwarded: the benchmarks' model
of a distant object store.

Short-lived vended credentials (the tests of their renewal), two more top-level settings:
  "vend" (--api rest): {"ttl_ms": N, "s3_endpoint": URL (optional)}. Every LoadTable answer's
      `config` (and each `storage-credentials` entry's) gets a session token of its own,
      "vended-<expires ms>-<n>", `s3.session-token-expires-at-ms` = now + ttl_ms, and
      `s3.endpoint` when given; GET /v1/config advertises the credentials endpoint
      (GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials), which the proxy
      answers itself (not forwarded; a rule that fires on kind LoadCredentials still wins) with
      one storage credential for the last loaded table's location: the same keys, a new token
      and expiry. "advertise": false leaves /v1/config alone (clients then reload the table).
  "expire_session_tokens" (--api s3): true makes a request whose X-Amz-Security-Token is
      "vended-<ms>-<n>" with <ms> in the past answer 400 ExpiredToken, not forwarded (as S3
      answers an expired session token; the stores under test check none). Counted in the
      faults as "expired_token".

Run as a program: faultproxy.py --upstream http://127.0.0.1:PORT [--api s3|rest] [--port N]
[--control-port N] [--ready-file F]; it prints one JSON line {"endpoint", "control"} when listening (and writes it to
F). Tests can also start one in-process: FaultProxy(upstream, api=...).start().
"""

import argparse
import json
import re
import socket
import socketserver
import struct
import sys
import threading
import time
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_HEADER_BYTES = 64 * 1024
LOG_LIMIT = 200_000

ERROR_ACTIONS = {
    "slowdown": (503, "SlowDown", "Please reduce your request rate."),
    "internal_error": (500, "InternalError", "We encountered an internal error. Please try again."),
}
ACTIONS = set(ERROR_ACTIONS) | {
    "error", "iceberg_error", "reset_before", "reset_after", "close_after", "truncate",
    "broken_xml", "delay", "delay_response", "hold"}

# The Iceberg exception type a REST catalog names for each status (the OpenAPI's error examples
# and the reference server's mapping), used when an iceberg_error rule names none.
ICEBERG_ERROR_TYPES = {
    400: "BadRequestException", 401: "NotAuthorizedException", 403: "ForbiddenException",
    404: "NoSuchTableException", 409: "CommitFailedException", 419: "AuthenticationTimeout",
    429: "TooManyRequestsException", 500: "CommitStateUnknownException",
    502: "BadGatewayException", 503: "ServiceUnavailableException",
    504: "GatewayTimeoutException"}


class ProtocolError(Exception):
    """The client or the upstream sent something this proxy cannot frame."""


def classify(method, path, query):
    """The S3 operation of a path-style request, for the counters.

    Path-style only: on loopback the bucket is the first path segment. Unknown shapes are "Other"
    so that a counter never silently absorbs a request it does not understand."""
    segments = path.split("/", 2)
    has_key = len(segments) == 3 and segments[2] != ""
    params = {p.split("=", 1)[0] for p in query.split("&") if p}
    if method == "GET":
        if has_key:
            return "GetObject"
        if "list-type" in params:
            return "ListObjectsV2"
        if "location" in params:
            return "GetBucketLocation"
        return "ListObjects" if len(segments) >= 2 and segments[1] else "ListBuckets"
    if method == "HEAD":
        return "HeadObject" if has_key else "HeadBucket"
    if method == "PUT":
        if has_key:
            return "UploadPart" if "partNumber" in params else "PutObject"
        return "CreateBucket"
    if method == "POST":
        if "delete" in params:
            return "DeleteObjects"
        if "uploads" in params:
            return "CreateMultipartUpload"
        if "uploadId" in params:
            return "CompleteMultipartUpload"
        return "Other"
    if method == "DELETE":
        if has_key:
            return "AbortMultipartUpload" if "uploadId" in params else "DeleteObject"
        return "DeleteBucket"
    return "Other"


def classify_rest(method, path):
    """The Iceberg REST operation of a request (the OpenAPI's operationId, shortened), for the
    counters and for "kind" rules. Routes are found by their fixed segments, so any `prefix`
    before `namespaces` is accepted."""
    segs = [s for s in path.split("/") if s]
    if not segs or segs[0] != "v1":
        return "Other"
    if segs[1:] == ["config"]:
        return "Config" if method == "GET" else "Other"
    if segs[1:] == ["oauth", "tokens"]:
        return "Token" if method == "POST" else "Other"
    if segs[-2:] == ["transactions", "commit"]:
        return "CommitTransaction" if method == "POST" else "Other"
    if segs[-2:] == ["tables", "rename"]:
        return "RenameTable" if method == "POST" else "Other"
    if "namespaces" not in segs:
        return "Other"
    rest = segs[segs.index("namespaces") + 1:]
    by_method = {
        0: {"GET": "ListNamespaces", "POST": "CreateNamespace"},
        1: {"GET": "LoadNamespace", "HEAD": "NamespaceExists", "DELETE": "DropNamespace"},
    }
    if len(rest) in by_method:
        return by_method[len(rest)].get(method, "Other")
    sub = rest[1:]
    if sub == ["properties"] and method == "POST":
        return "UpdateNamespaceProperties"
    if sub == ["register"] and method == "POST":
        return "RegisterTable"
    if sub == ["tables"]:
        return {"GET": "ListTables", "POST": "CreateTable"}.get(method, "Other")
    if len(sub) == 2 and sub[0] == "tables":
        return {"GET": "LoadTable", "POST": "CommitTable", "DELETE": "DropTable",
                "HEAD": "TableExists"}.get(method, "Other")
    if len(sub) == 3 and sub[0] == "tables":
        return {("credentials", "GET"): "LoadCredentials",
                ("metrics", "POST"): "ReportMetrics"}.get((sub[2], method), "Other")
    return "Other"


def iceberg_error_body(status, error_type, message):
    return json.dumps({"error": {"message": message, "type": error_type,
                                 "code": status}}).encode()


def s3_error_body(code, message):
    request_id = uuid.uuid4().hex[:16].upper()
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<Error><Code>{code}</Code><Message>{message}</Message>"
        f"<RequestId>{request_id}</RequestId></Error>"
    ).encode(), request_id


class Rule:
    def __init__(self, spec):
        if not isinstance(spec, dict):
            raise ValueError("a rule is a JSON object")
        unknown = set(spec) - {"action", "method", "path", "query", "request_body", "kind",
                               "every", "after", "times", "status", "code", "type", "message",
                               "forward", "delay_ms", "headers", "body"}
        if unknown:
            raise ValueError(f"unknown rule fields: {sorted(unknown)}")
        self.action = spec.get("action")
        if self.action not in ACTIONS:
            raise ValueError(f"unknown action {self.action!r}; one of {sorted(ACTIONS)}")
        self.spec = dict(spec)
        self.method = re.compile(spec["method"]) if "method" in spec else None
        self.path = re.compile(spec["path"]) if "path" in spec else None
        self.query = re.compile(spec["query"]) if "query" in spec else None
        self.request_body = (re.compile(spec["request_body"]) if "request_body" in spec
                             else None)
        self.kind = spec.get("kind")
        self.every = int(spec.get("every", 1))
        self.after = int(spec.get("after", 0))
        self.times = spec.get("times")
        if self.every < 1 or self.after < 0 or (self.times is not None and int(self.times) < 0):
            raise ValueError("every >= 1, after >= 0, times >= 0")
        if self.action == "error" and not ("status" in spec and "code" in spec):
            raise ValueError('action "error" needs "status" and "code"')
        if self.action == "iceberg_error" and "status" not in spec:
            raise ValueError('action "iceberg_error" needs "status"')
        headers = spec.get("headers", {})
        if not isinstance(headers, dict) or not all(
                isinstance(k, str) and isinstance(v, str) and "\r" not in k + v
                and "\n" not in k + v for k, v in headers.items()):
            raise ValueError('"headers" is an object of single-line strings')
        if "body" in spec and not isinstance(spec["body"], str):
            raise ValueError('"body" is a string')
        self.matched = 0
        self.fired = 0

    def matches(self, method, path, query, kind, body):
        return ((self.method is None or self.method.search(method))
                and (self.path is None or self.path.search(path))
                and (self.query is None or self.query.search(query))
                and (self.request_body is None
                     or self.request_body.search(body.decode("utf-8", "replace")))
                and (self.kind is None or self.kind == kind))

    def consider(self, method, path, query, kind, body=b"", may_fire=True):
        """Count a match; True when the rule fires for this request (never when may_fire is
        False: an earlier rule fired already). Caller holds the lock."""
        if not self.matches(method, path, query, kind, body):
            return False
        self.matched += 1
        if not may_fire:
            return False
        m = self.matched - self.after
        if m <= 0 or m % self.every != 0:
            return False
        if self.times is not None and self.fired >= int(self.times):
            return False
        self.fired += 1
        return True

    def describe(self):
        return dict(self.spec, matched=self.matched, fired=self.fired)


class State:
    """Rules, latency and counters, shared by every connection thread."""

    def __init__(self, api="s3"):
        if api not in ("s3", "rest"):
            raise ValueError(f"api is s3 or rest, not {api!r}")
        self.api = api
        self.lock = threading.Lock()
        self.rules = []
        self.latency_ms = 0
        self.vend = None
        self.expire_tokens = False
        self.vend_seq = 0
        self.vended = None  # (location, key id, secret) of the last LoadTable rewritten
        self.released = threading.Event()  # the gate of the "hold" action
        self.reset_counters()

    def reset_counters(self):
        self.seq = 0
        self.by_method = {}
        self.by_kind = {}
        self.faults = {}
        self.log = []

    def set_rules(self, body):
        if not isinstance(body, dict):
            raise ValueError("expected a JSON object")
        rules = [Rule(r) for r in body.get("rules", [])]
        latency = float(body.get("latency_ms", 0))
        if latency < 0:
            raise ValueError("latency_ms >= 0")
        vend = body.get("vend")
        if vend is not None and (not isinstance(vend, dict) or int(vend.get("ttl_ms", 0)) <= 0):
            raise ValueError("vend: {\"ttl_ms\": N > 0, ...}")
        with self.lock:
            self.rules = rules
            self.latency_ms = latency
            self.vend = vend
            self.expire_tokens = bool(body.get("expire_session_tokens", False))
            self.released.clear()

    def admit(self, method, target, body=b""):
        """Record one request; returns (seq, kind, rule or None, latency_ms)."""
        path, _, query = target.partition("?")
        kind = classify_rest(method, path) if self.api == "rest" else classify(method, path, query)
        with self.lock:
            self.seq += 1
            seq = self.seq
            self.by_method[method] = self.by_method.get(method, 0) + 1
            self.by_kind[kind] = self.by_kind.get(kind, 0) + 1
            fired = None
            for rule in self.rules:
                if rule.consider(method, path, query, kind, body, may_fire=fired is None):
                    fired = rule
            if fired is not None:
                self.faults[fired.action] = self.faults.get(fired.action, 0) + 1
            if len(self.log) < LOG_LIMIT:
                self.log.append({"seq": seq, "method": method, "target": target, "kind": kind,
                                 "fault": fired.action if fired else None, "status": None,
                                 "t": time.time()})
            return seq, kind, fired, self.latency_ms

    def finish(self, seq, status):
        with self.lock:
            # The log is appended in seq order; entries are found from the end.
            for entry in reversed(self.log):
                if entry["seq"] == seq:
                    entry["status"] = status
                    break

    def counters(self):
        with self.lock:
            return {"total": self.seq, "by_method": dict(self.by_method),
                    "by_kind": dict(self.by_kind), "faults": dict(self.faults)}


# ---- HTTP/1.1 framing over raw sockets: bytes in, the same bytes out --------------------------

class Reader:
    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    def _fill(self):
        data = self.sock.recv(65536)
        if not data:
            return False
        self.buf += data
        return True

    def head(self):
        """The raw header block up to and including the blank line; None at a clean EOF."""
        while b"\r\n\r\n" not in self.buf:
            if len(self.buf) > MAX_HEADER_BYTES:
                raise ProtocolError("header block too large")
            if not self._fill():
                if self.buf:
                    raise ProtocolError("connection closed inside a header block")
                return None
        end = self.buf.index(b"\r\n\r\n") + 4
        block, self.buf = self.buf[:end], self.buf[end:]
        return block

    def exact(self, n):
        while len(self.buf) < n:
            if not self._fill():
                raise ProtocolError("connection closed inside a body")
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def line(self):
        while b"\r\n" not in self.buf:
            if not self._fill():
                raise ProtocolError("connection closed inside a chunked body")
        end = self.buf.index(b"\r\n") + 2
        data, self.buf = self.buf[:end], self.buf[end:]
        return data

    def chunked(self):
        """A chunked body, raw (sizes, extensions and trailers kept)."""
        out = []
        while True:
            size_line = self.line()
            out.append(size_line)
            size = int(size_line.split(b";", 1)[0].strip(), 16)
            if size == 0:
                while True:
                    trailer = self.line()
                    out.append(trailer)
                    if trailer == b"\r\n":
                        return b"".join(out)
            out.append(self.exact(size + 2))

    def rest(self):
        chunks = [self.buf]
        self.buf = b""
        while True:
            data = self.sock.recv(65536)
            if not data:
                return b"".join(chunks)
            chunks.append(data)


def parse_head(block):
    """(first line, [(name_lower, value)]) of a raw header block."""
    lines = block[:-4].split(b"\r\n")
    headers = []
    for raw in lines[1:]:
        name, sep, value = raw.partition(b":")
        if not sep:
            raise ProtocolError(f"malformed header line {raw[:80]!r}")
        headers.append((name.strip().lower().decode("latin-1"), value.strip().decode("latin-1")))
    return lines[0].decode("latin-1"), headers


def header(headers, name):
    for n, v in headers:
        if n == name:
            return v
    return None


def read_body(reader, headers, *, response_status=None, request_method=None):
    """The raw body that follows a header block (request when response_status is None)."""
    if response_status is not None:
        if (request_method == "HEAD" or 100 <= response_status < 200
                or response_status in (204, 304)):
            return b"", True
    te = header(headers, "transfer-encoding")
    if te is not None and "chunked" in te.lower():
        return reader.chunked(), True
    length = header(headers, "content-length")
    if length is not None:
        return reader.exact(int(length)), True
    if response_status is None:
        return b"", True
    # A response without a length ends at EOF, and the connection cannot be reused.
    return reader.rest(), False


def reset(sock):
    """Close with a TCP RST (SO_LINGER 0): the peer sees ECONNRESET, not a clean EOF."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    sock.close()


def status_response(status, code, message, reason, *, extra_headers=None, raw_body=None):
    body, request_id = s3_error_body(code, message)
    content_type = "application/xml"
    if raw_body is not None:
        body, content_type = raw_body.encode(), "text/html"
    head = (f"HTTP/1.1 {status} {reason}\r\n"
            f"Content-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\n"
            f"x-amz-request-id: {request_id}\r\n"
            + "".join(f"{k}: {v}\r\n" for k, v in (extra_headers or {}).items())
            + "Connection: close\r\n\r\n").encode()
    return head + body


def iceberg_response(status, error_type, message, reason, *, extra_headers=None, raw_body=None):
    body, content_type = iceberg_error_body(status, error_type, message), "application/json"
    if raw_body is not None:
        body, content_type = raw_body.encode(), "text/html"
    head = (f"HTTP/1.1 {status} {reason}\r\n"
            f"Content-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\n"
            + "".join(f"{k}: {v}\r\n" for k, v in (extra_headers or {}).items())
            + "Connection: close\r\n\r\n").encode()
    return head + body


REASONS = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
           409: "Conflict", 412: "Precondition Failed", 419: "Authentication Timeout",
           429: "Too Many Requests", 500: "Internal Server Error", 502: "Bad Gateway",
           503: "Service Unavailable", 504: "Gateway Timeout"}


# ---- short-lived vended credentials ("vend", "expire_session_tokens") ---------------------------

CREDENTIALS_ENDPOINT = "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials"
# The spec's default set, for a server that lists no endpoints (the proxy then lists them, with
# the credentials endpoint, which that set lacks).
DEFAULT_ENDPOINTS = [
    "GET /v1/{prefix}/namespaces", "POST /v1/{prefix}/namespaces",
    "GET /v1/{prefix}/namespaces/{namespace}", "DELETE /v1/{prefix}/namespaces/{namespace}",
    "POST /v1/{prefix}/namespaces/{namespace}/properties",
    "GET /v1/{prefix}/namespaces/{namespace}/tables",
    "POST /v1/{prefix}/namespaces/{namespace}/tables",
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/register",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
    "POST /v1/{prefix}/tables/rename", "POST /v1/{prefix}/transactions/commit",
]
VENDED_TOKEN = re.compile(r"^vended-(\d+)-\d+$")


def now_ms():
    return int(time.time() * 1000)


def token_expired(token):
    m = VENDED_TOKEN.match(token or "")
    return m is not None and int(m.group(1)) <= now_ms()


def new_vended(state, config):
    """Give `config` (a dict of a LoadTable answer or one credential) a token of its own."""
    with state.lock:
        state.vend_seq += 1
        n, vend = state.vend_seq, state.vend or {}
    expires = now_ms() + int(vend.get("ttl_ms", 0))
    config["s3.session-token"] = f"vended-{expires}-{n}"
    config["s3.session-token-expires-at-ms"] = str(expires)
    if vend.get("s3_endpoint"):
        config["s3.endpoint"] = vend["s3_endpoint"]


def vend_credentials(state):
    """A LoadCredentialsResponse for the last table loaded through the proxy."""
    with state.lock:
        vended = state.vended
        state.faults["vend_credentials"] = state.faults.get("vend_credentials", 0) + 1
    if vended is None:
        return {"storage-credentials": []}
    location, key, secret = vended
    config = {"s3.access-key-id": key, "s3.secret-access-key": secret}
    new_vended(state, config)
    return {"storage-credentials": [{"prefix": location, "config": config}]}


def json_response(doc, status=200, reason="OK"):
    body = json.dumps(doc).encode()
    return (f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body


def dechunk(raw):
    out, pos = [], 0
    while True:
        eol = raw.index(b"\r\n", pos)
        size = int(raw[pos:eol].split(b";", 1)[0].strip(), 16)
        if size == 0:
            return b"".join(out)
        out.append(raw[eol + 2:eol + 2 + size])
        pos = eol + 2 + size + 2


def vend_rewrite(state, kind, head, headers, body):
    """The Config or LoadTable answer with the vend rewrites; (head, body) to send."""
    te = header(headers, "transfer-encoding")
    if te is not None and "chunked" in te.lower():
        body = dechunk(body)
    doc = json.loads(body)
    vend = state.vend or {}
    if kind == "Config" and vend.get("advertise", True):
        endpoints = doc.get("endpoints")
        endpoints = list(DEFAULT_ENDPOINTS) if endpoints is None else list(endpoints)
        if CREDENTIALS_ENDPOINT not in endpoints:
            endpoints.append(CREDENTIALS_ENDPOINT)
        doc["endpoints"] = endpoints
    elif kind == "LoadTable":
        config = doc.setdefault("config", {})
        new_vended(state, config)
        for cred in doc.get("storage-credentials") or []:
            new_vended(state, cred.setdefault("config", {}))
        location = (doc.get("metadata") or {}).get("location")
        with state.lock:
            state.faults["vend_rewrite"] = state.faults.get("vend_rewrite", 0) + 1
            if location and "s3.access-key-id" in config:
                state.vended = (location, config["s3.access-key-id"],
                                config.get("s3.secret-access-key", ""))
    new_body = json.dumps(doc).encode()
    lines = head.decode("latin-1").split("\r\n")
    kept = [ln for ln in lines[1:] if ln and ln.split(":", 1)[0].strip().lower()
            not in ("content-length", "transfer-encoding")]
    new_head = "\r\n".join([lines[0], *kept, f"Content-Length: {len(new_body)}", "", ""])
    return new_head.encode("latin-1"), new_body


class Upstream:
    """One keep-alive connection to the upstream server, per client connection."""

    def __init__(self, host, port):
        self.addr = (host, port)
        self.sock = None
        self.reader = None

    def exchange(self, request_bytes, method):
        """Send one request; returns (raw head, status, headers, raw body, framed): framed is
        False when the body ended at the upstream's EOF (no length), so the client connection
        must be closed after it too."""
        for attempt in (0, 1):
            fresh = self.sock is None
            if fresh:
                self.sock = socket.create_connection(self.addr, timeout=120)
                self.reader = Reader(self.sock)
            try:
                self.sock.sendall(request_bytes)
                while True:
                    block = self.reader.head()
                    if block is None:
                        raise ProtocolError("upstream closed the connection")
                    status_line, headers = parse_head(block)
                    status = int(status_line.split(" ", 2)[1])
                    if 100 <= status < 200:
                        continue  # 100 Continue: the body was sent already
                    break
                body, reusable = read_body(self.reader, headers, response_status=status,
                                           request_method=method)
            except (OSError, ProtocolError):
                self.close()
                # A stale keep-alive connection fails before any response byte: retry once on a
                # fresh one. A fresh connection failing is the upstream's answer.
                if fresh or attempt == 1:
                    raise
                continue
            conn = header(headers, "connection")
            if not reusable or (conn is not None and conn.lower() == "close"):
                self.close()
            return block, status, headers, body, reusable
        raise AssertionError("unreachable")

    def close(self):
        if self.sock is not None:
            self.sock.close()
        self.sock = None
        self.reader = None


class ProxyHandler(socketserver.BaseRequestHandler):
    def handle(self):
        state = self.server.state
        client = self.request
        client.settimeout(300)
        reader = Reader(client)
        upstream = Upstream(*self.server.upstream_addr)
        try:
            while True:
                block = reader.head()
                if block is None:
                    return
                request_line, headers = parse_head(block)
                parts = request_line.split(" ")
                if len(parts) != 3:
                    raise ProtocolError(f"bad request line {request_line[:80]!r}")
                method, target, _version = parts
                expect = header(headers, "expect")
                if expect is not None and expect.lower() == "100-continue":
                    # The client may wait for this before sending the body (libcurl and botocore
                    # wait up to a second); the upstream's own 100 is skipped in exchange().
                    client.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
                body, _ = read_body(reader, headers)
                if not self.serve_one(state, upstream, client, method, target, block + body):
                    return
                conn = header(headers, "connection")
                if conn is not None and conn.lower() == "close":
                    return
        except (OSError, ProtocolError, ValueError):
            return
        finally:
            upstream.close()

    def serve_one(self, state, upstream, client, method, target, raw_request):
        """Relay one request under the rules; False when the client connection is finished."""
        head_end = raw_request.index(b"\r\n\r\n") + 4
        seq, kind, rule, latency_ms = state.admit(method, target, raw_request[head_end:])
        if latency_ms:
            time.sleep(latency_ms / 1000.0)
        action = rule.action if rule else None
        if state.api == "s3" and state.expire_tokens and rule is None:
            _line, req_headers = parse_head(raw_request[:head_end])
            if token_expired(header(req_headers, "x-amz-security-token")):
                with state.lock:
                    state.faults["expired_token"] = state.faults.get("expired_token", 0) + 1
                state.finish(seq, 400)
                client.sendall(status_response(400, "ExpiredToken",
                                               "The provided token has expired.", "Bad Request"))
                return False
        vend = state.vend if state.api == "rest" else None
        if vend is not None and rule is None and kind == "LoadCredentials":
            state.finish(seq, 200)
            client.sendall(json_response(vend_credentials(state)))
            return False
        if action == "reset_before":
            state.finish(seq, "reset")
            reset(client)
            return False
        if action == "delay":
            time.sleep(float(rule.spec.get("delay_ms", 0)) / 1000.0)
        if action == "hold":
            state.released.wait(float(rule.spec.get("delay_ms", 60000)) / 1000.0)
        if action in ERROR_ACTIONS or action in ("error", "iceberg_error"):
            message = str(rule.spec.get("message", "Injected by the test fault proxy."))
            if action == "iceberg_error":
                status = int(rule.spec["status"])
                code = str(rule.spec.get("type", ICEBERG_ERROR_TYPES.get(status, "RESTException")))
            elif action == "error":
                status, code = int(rule.spec["status"]), str(rule.spec["code"])
            else:
                status, code, message = ERROR_ACTIONS[action]
            if rule.spec.get("forward"):
                try:
                    upstream.exchange(raw_request, method)
                except (OSError, ProtocolError):
                    pass
            state.finish(seq, status)
            build = iceberg_response if action == "iceberg_error" else status_response
            client.sendall(build(status, code, message, REASONS.get(status, "Error"),
                                 extra_headers=rule.spec.get("headers"),
                                 raw_body=rule.spec.get("body")))
            return False
        try:
            head, status, _headers, body, framed = upstream.exchange(raw_request, method)
        except (OSError, ProtocolError):
            state.finish(seq, "upstream-failed")
            status_bytes = status_response(502, "BadGateway", "The fault proxy could not reach "
                                           "the upstream server.", "Bad Gateway")
            client.sendall(status_bytes)
            return False
        state.finish(seq, status)
        if action == "reset_after":
            reset(client)
            return False
        if action == "close_after":
            try:
                client.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            client.close()
            return False
        if action == "delay_response":
            time.sleep(float(rule.spec.get("delay_ms", 0)) / 1000.0)
        if action == "truncate":
            client.sendall(head + body[: len(body) // 2])
            reset(client)
            return False
        if vend is not None and action is None and status == 200 and kind in ("Config",
                                                                               "LoadTable"):
            head, body = vend_rewrite(state, kind, head, _headers, body)
        if action == "broken_xml":
            broken = body[: len(body) // 2] if body.lstrip().startswith(b"<") else b""
            if not broken:
                broken = b'<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult><Contents><Ke'
            out = (b"HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\n"
                   b"Content-Length: " + str(len(broken)).encode() + b"\r\n"
                   b"Connection: close\r\n\r\n" + broken)
            client.sendall(out)
            return False
        client.sendall(head + body)
        return framed


class ProxyServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    # socketserver's default backlog of 5 drops SYNs when a client opens its whole pool of
    # connections at once (libcurl multi: 32-64), and each drop costs a 1 s SYN retry.
    request_queue_size = 256

    def __init__(self, addr, upstream_addr, state, reuse_port=False):
        self.upstream_addr = upstream_addr
        self.state = state
        self.reuse_port = reuse_port
        super().__init__(addr, ProxyHandler)

    def server_bind(self):
        # Several proxy processes on one port (SO_REUSEPORT: the kernel spreads the
        # connections among them), when one Python process's CPU is the ceiling of a benchmark.
        if self.reuse_port:
            self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        super().server_bind()


class ControlHandler(BaseHTTPRequestHandler):
    def log_message(self, *_args):
        pass

    def _json(self, status, obj):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        proxy = self.server.proxy
        state = proxy.state
        if self.path == "/":
            self._json(200, proxy.describe())
        elif self.path == "/rules":
            with state.lock:
                self._json(200, {"latency_ms": state.latency_ms,
                                 "rules": [r.describe() for r in state.rules]})
        elif self.path == "/counters":
            self._json(200, state.counters())
        elif self.path == "/log":
            with state.lock:
                log = [dict(e) for e in state.log]
            self._json(200, log)
        else:
            self._json(404, {"error": f"no such control resource {self.path}"})

    def do_POST(self):
        if self.path == "/release":
            self.server.proxy.state.released.set()
            self._json(200, {"ok": True})
            return
        if self.path != "/rules":
            self._json(404, {"error": f"no such control resource {self.path}"})
            return
        length = int(self.headers.get("Content-Length", "0"))
        try:
            self.server.proxy.state.set_rules(json.loads(self.rfile.read(length) or b"{}"))
        except (ValueError, TypeError, re.error) as e:
            self._json(400, {"error": str(e)})
            return
        self._json(200, {"ok": True})

    def do_DELETE(self):
        state = self.server.proxy.state
        if self.path == "/rules":
            state.set_rules({})
        elif self.path == "/counters":
            with state.lock:
                state.reset_counters()
        else:
            self._json(404, {"error": f"no such control resource {self.path}"})
            return
        self._json(200, {"ok": True})


class FaultProxy:
    """A proxy and its control endpoint, both on 127.0.0.1, served by daemon threads."""

    def __init__(self, upstream, port=0, control_port=0, api="s3", reuse_port=False):
        parsed = urllib.parse.urlsplit(upstream)
        if parsed.scheme != "http" or not parsed.hostname or not parsed.port:
            raise ValueError(f"upstream must be http://HOST:PORT, not {upstream!r}")
        self.upstream = upstream
        self.state = State(api)
        self.proxy = ProxyServer(("127.0.0.1", port), (parsed.hostname, parsed.port), self.state,
                                 reuse_port=reuse_port)
        self.control = ThreadingHTTPServer(("127.0.0.1", control_port), ControlHandler)
        self.control.daemon_threads = True
        self.control.proxy = self
        self.threads = []

    @property
    def endpoint(self):
        return f"http://127.0.0.1:{self.proxy.server_address[1]}"

    @property
    def control_url(self):
        return f"http://127.0.0.1:{self.control.server_address[1]}"

    def describe(self):
        return {"endpoint": self.endpoint, "control": self.control_url, "upstream": self.upstream,
                "api": self.state.api}

    def start(self):
        for server in (self.proxy, self.control):
            t = threading.Thread(target=server.serve_forever, daemon=True)
            t.start()
            self.threads.append(t)
        return self

    def stop(self):
        for server in (self.proxy, self.control):
            server.shutdown()
            server.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *_exc):
        self.stop()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--upstream", required=True, help="http://127.0.0.1:PORT of the server")
    ap.add_argument("--api", choices=("s3", "rest"), default="s3",
                    help="what the upstream speaks, for the counters' operation names")
    ap.add_argument("--port", type=int, default=0, help="proxy port (default: a free one)")
    ap.add_argument("--control-port", type=int, default=0, help="control port (default: free)")
    ap.add_argument("--ready-file", help="write the endpoints as JSON here once listening")
    ap.add_argument("--reuse-port", action="store_true",
                    help="bind with SO_REUSEPORT, so that more proxies can share the port (each "
                         "has its own control port, rules and counters)")
    args = ap.parse_args(argv)
    proxy = FaultProxy(args.upstream, args.port, args.control_port, api=args.api,
                       reuse_port=args.reuse_port)
    info = json.dumps(proxy.describe())
    proxy.start()
    if args.ready_file:
        with open(args.ready_file + ".tmp", "w") as f:
            f.write(info + "\n")
        import os
        os.replace(args.ready_file + ".tmp", args.ready_file)
    print(info, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
