"""Requests signed for Amazon OpenSearch Service (issue 27).

`neardup serve --upstream-auth aws-sigv4` signs every request it sends to
the cluster. Here the cluster is osmem behind a small upstream that checks
each request's signature the way the service does, with an independent
implementation (botocore's SigV4 signer, recomputing the signature from the
request as it arrived: method, path, query, the signed headers, the body's
hash) before passing it on. A real client (opensearch-py) bulk-loads, edits
and searches through the sidecar with no credentials of its own; every
request must verify, bulk bodies included after they were stamped.
"""

from __future__ import annotations

import hashlib
import http.server
import re
import threading
import urllib.request

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from opensearchpy import OpenSearch, helpers

from conftest import ROOT, START_TIMEOUT, Proc, _binary

INDEX = "news-signed"
REGION = "eu-central-1"
ACCESS_KEY = "AKIDNEARDUPTEST"
SECRET_KEY = "neardup/Test+Secret/Key0000000000000000"
SESSION_TOKEN = "session-token/with+chars=="

AUTHORIZATION = re.compile(
    r"AWS4-HMAC-SHA256 Credential=(?P<key>[^/]+)/(?P<date>\d{8})/(?P<region>[^/]+)/(?P<service>[^/]+)/aws4_request, "
    r"SignedHeaders=(?P<signed>[a-z0-9;-]+), Signature=(?P<signature>[0-9a-f]{64})"
)


def verify(method: str, raw_path: str, headers, body: bytes, host: str) -> str | None:
    """None when the request carries a valid signature; else why not."""
    authorization = headers.get("authorization", "")
    match = AUTHORIZATION.fullmatch(authorization)
    if not match:
        return f"no SigV4 authorization: {authorization!r}"
    if match["key"] != ACCESS_KEY or match["region"] != REGION or match["service"] != "es":
        return f"wrong scope: {authorization}"
    if headers.get("x-amz-content-sha256") != hashlib.sha256(body).hexdigest():
        return "x-amz-content-sha256 is not the hash of the body received"
    signed = match["signed"].split(";")
    if "host" not in signed or "x-amz-date" not in signed:
        return f"host and x-amz-date must be signed: {signed}"
    request = AWSRequest(method=method, url=f"http://{host}{raw_path}", data=body)
    for name in signed:
        value = host if name == "host" else headers.get(name)
        if value is None:
            return f"signed header {name} missing"
        request.headers[name] = value
    request.context["timestamp"] = headers["x-amz-date"]
    signer = SigV4Auth(Credentials(ACCESS_KEY, SECRET_KEY, SESSION_TOKEN), "es", REGION)
    canonical = signer.canonical_request(request)
    # botocore lists the headers it signs itself: the ones the request has.
    if signer.signed_headers(signer.headers_to_sign(request)) != match["signed"]:
        return "signed headers differ"
    expected = signer.signature(signer.string_to_sign(request, canonical), request)
    if expected != match["signature"]:
        return f"signature mismatch for {method} {raw_path}:\n{canonical}"
    return None


class CheckingUpstream:
    """An HTTP server that verifies each request's signature, then passes
    it on to the real cluster."""

    def __init__(self, cluster_url: str):
        self.cluster_url = cluster_url.rstrip("/")
        self.verified: list[str] = []
        self.failures: list[str] = []
        self.bulk_bodies: list[bytes] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def handle_any(self):
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                host = f"{self.server.server_address[0]}:{self.server.server_address[1]}"
                headers = {name.lower(): value for name, value in self.headers.items()}
                problem = verify(self.command, self.path, headers, body, host)
                if problem:
                    outer.failures.append(problem)
                    answer = b'{"message":"The request signature we calculated does not match the signature you provided."}'
                    self.send_response(403)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(answer)))
                    self.end_headers()
                    self.wfile.write(answer)
                    return
                outer.verified.append(f"{self.command} {self.path}")
                if "_bulk" in self.path:
                    outer.bulk_bodies.append(body)
                forwarded = urllib.request.Request(
                    outer.cluster_url + self.path, data=body or None, method=self.command
                )
                if "content-type" in headers:
                    forwarded.add_header("content-type", headers["content-type"])
                try:
                    with urllib.request.urlopen(forwarded, timeout=10) as answer:
                        status, payload = answer.status, answer.read()
                        content_type = answer.headers.get("content-type", "application/json")
                except urllib.error.HTTPError as error:
                    status, payload = error.code, error.read()
                    content_type = error.headers.get("content-type", "application/json")
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = handle_any

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def signed_stack():
    osmem = _binary("OSMEM_BIN", ROOT / ".venv" / "bin" / "osmem-server", "run scripts/venv.sh")
    neardup = _binary("NEARDUP_BIN", ROOT / "target" / "release" / "neardup", "set NEARDUP_BIN")
    cluster = Proc("osmem-sigv4", [osmem, "-addr", "127.0.0.1:0", "-no-ja"], stdin_pipe=True)
    started = [cluster]
    upstream = None
    try:
        cluster.wait_first_line(START_TIMEOUT)
        upstream = CheckingUpstream(cluster.first["url"])
        sidecar = Proc(
            "neardup-sigv4",
            [
                neardup, "serve",
                "--upstream", upstream.url,
                "--listen", "127.0.0.1:0",
                "--state-dir", "none",
                "--upstream-auth", "aws-sigv4",
                "--aws-region", REGION,
            ],
            stdin_pipe=False,
            env={
                "NO_COLOR": "1",
                "AWS_ACCESS_KEY_ID": ACCESS_KEY,
                "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
                "AWS_SESSION_TOKEN": SESSION_TOKEN,
            },
        )
        started.append(sidecar)
        sidecar.wait_first_line(START_TIMEOUT)
        yield sidecar.first["listen"], upstream
    finally:
        for process in reversed(started):
            process.stop()
        if upstream is not None:
            upstream.close()


def test_every_request_is_signed_after_stamping(signed_stack):
    url, upstream = signed_stack
    # The client has no AWS credentials: the sidecar signs for it.
    client = OpenSearch(hosts=[url], timeout=10, max_retries=0)
    actions = [
        {
            "_index": INDEX,
            "_id": f"story {i}/{'a+b' if i % 2 else 'c*d'}",
            "_source": {
                "title": f"第{i}条签名测试新闻",
                "content": f"经过签名的请求第{i}条，正文内容各不相同，用来检查盖章之后的签名仍然成立。",
            },
        }
        for i in range(30)
    ]
    ok, errors = helpers.bulk(client, actions, refresh="wait_for", raise_on_error=False)
    assert errors == [] and ok == 30, (errors, upstream.failures)
    client.update(index=INDEX, id="story 1/a+b", body={"doc": {"content": "改写后的正文，内容与原来完全不同，由编辑部修改。"}}, refresh=True)
    found = client.search(
        index=INDEX,
        body={"query": {"match_all": {}}, "size": 50},
        params={"filter_path": "hits.hits._id,hits.hits._source.cluster_root"},
    )
    hits = found["hits"]["hits"]
    assert len(hits) == 30
    assert all("cluster_root" in hit["_source"] for hit in hits)
    assert upstream.failures == [], upstream.failures[:3]
    assert any(b'"cluster_root"' in body for body in upstream.bulk_bodies), "stamped bodies were signed"
    assert any("_mget" in request for request in upstream.verified), "the edit's read was signed"
    assert len(upstream.verified) >= 4, upstream.verified


def test_a_request_that_does_not_verify_is_refused_by_the_checking_upstream(signed_stack):
    """The checker itself: a tampered body does not verify."""
    _, upstream = signed_stack
    headers = {"authorization": "AWS4-HMAC-SHA256 Credential=AKIDNEARDUPTEST/20261125/eu-central-1/es/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=" + "0" * 64,
               "x-amz-date": "20261125T000000Z",
               "x-amz-content-sha256": hashlib.sha256(b"{}").hexdigest()}
    assert verify("POST", "/_bulk", headers, b"{}", "127.0.0.1:1") is not None
    assert verify("POST", "/_bulk", headers, b"{ }", "127.0.0.1:1") is not None


# Paths and queries as a client writes them, with what the cluster must read
# (issue 48): the sidecar sends what the client meant and signs that, and
# botocore (in the checking upstream) agrees with the signature.
MEANT = [
    # an id with an escaped slash, a plus (literal in a path), a space,
    # dots, non-ASCII, a byte that is not UTF-8
    "/news-signed/_doc/a%2Fb",
    "/news-signed/_doc/a+b",
    "/news-signed/_doc/a%20b",
    "/news-signed/_doc/v1.2..3",
    "/news-signed/_doc/%E6%96%B0%E9%97%BB",
    "/news-signed/_doc/%FFraw",
    # a query plus is a space to the cluster; an escaped one is a plus
    "/news-signed/_search?q=title:a+b",
    "/news-signed/_search?q=a%2Bb&size=1",
    "/news-signed/_search?q=%E6%96%B0+x&filter_path=hits.*",
    "/news-signed/_search?size=1&q=a%20b&pretty",
    "/news-signed/_search?q=a/b.c",
]


def _split(path_and_query: str):
    from urllib.parse import parse_qsl

    path, _, query = path_and_query.partition("?")
    return path, parse_qsl(query, keep_blank_values=True)


@pytest.mark.parametrize("raw", MEANT)
def test_the_cluster_reads_what_the_client_meant_and_botocore_verifies_it(signed_stack, raw):
    import http.client
    from urllib.parse import urlsplit

    url, upstream = signed_stack
    before = len(upstream.verified)
    failures_before = len(upstream.failures)
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        connection.request("GET", raw)
        connection.getresponse().read()
    finally:
        connection.close()
    assert upstream.failures[failures_before:] == [], upstream.failures[failures_before:]
    received = [line.split(" ", 1)[1] for line in upstream.verified[before:]]
    assert len(received) == 1, received
    # The path as the client wrote it, and the query's decoded pairs (`+` a
    # space, as the cluster decodes a query), in the client's order.
    assert _split(received[0]) == _split(raw), (raw, received[0])
