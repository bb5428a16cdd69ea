"""A retrying bulk indexer in front of a cluster that answers late (issue 32).

opensearch-py's `helpers.streaming_bulk` with the transport's
`retry_on_timeout`, its timeout shorter than the cluster's delay: the client
gives up on a chunk and sends it again. Beside it, clients close their
connection halfway through a bulk body. The sidecar's count must never pass
the number of distinct documents sent, and must equal what the index holds
once the writes are answered.

The lateness is a proxy between the sidecar and the real server (osmem), never
the sidecar: it forwards each write at once (the cluster carries it out) and
holds the answer back the first time it sees a chunk, so the client's retry
of the same chunk gets through.
"""

from __future__ import annotations

import hashlib
import http.client
import http.server
import socket
import threading
import time
import urllib.parse

import pytest
from opensearchpy import OpenSearch, helpers

from conftest import START_TIMEOUT, Proc, _binary, ROOT

INDEX = "news-late"
DOCUMENTS = 400
CHUNK = 50
CLIENT_TIMEOUT = 1.0  # seconds: the client gives up on a chunk after this
FIRST_ANSWER_DELAY = 2.5  # seconds the cluster's first answer to a body is held
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length"}


class LateProxy(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, cluster: str):
        parsed = urllib.parse.urlparse(cluster)
        self.cluster = (parsed.hostname, parsed.port)
        self.seen: set[bytes] = set()
        self.lock = threading.Lock()
        self.held = 0
        super().__init__(("127.0.0.1", 0), _Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # quiet
        pass

    def _forward(self):
        server: LateProxy = self.server  # type: ignore[assignment]
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP | {"host"}}
        upstream = http.client.HTTPConnection(*server.cluster, timeout=30)
        upstream.request(self.command, self.path, body=body, headers=headers)
        answer = upstream.getresponse()
        data = answer.read()
        is_write = "_bulk" in self.path or "/_doc" in self.path
        if is_write:
            # The first action line names the chunk (its stamps may differ
            # between attempts; its first `_id` does not).
            digest = hashlib.sha256(body.split(b"\n", 1)[0]).digest()
            with server.lock:
                first = digest not in server.seen
                server.seen.add(digest)
                if first:
                    server.held += 1
            if first:
                time.sleep(FIRST_ANSWER_DELAY)
        self.send_response(answer.status)
        for name, value in answer.getheaders():
            if name.lower() not in HOP_BY_HOP:
                self.send_header(name, value)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data)
        except OSError:
            pass
        upstream.close()

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _forward


@pytest.fixture(scope="module")
def late(tmp_path_factory):
    osmem = _binary("OSMEM_BIN", ROOT / ".venv" / "bin" / "osmem-server", "run scripts/venv.sh")
    neardup = _binary("NEARDUP_BIN", ROOT / "target" / "release" / "neardup", "set NEARDUP_BIN")
    upstream = Proc("osmem-late", [osmem, "-addr", "127.0.0.1:0", "-no-ja"], stdin_pipe=True)
    started = [upstream]
    proxy = None
    try:
        upstream.wait_first_line(START_TIMEOUT)
        proxy = LateProxy(upstream.first["url"])
        threading.Thread(target=proxy.serve_forever, daemon=True).start()
        sidecar = Proc(
            "neardup-late",
            [
                neardup, "serve",
                "--upstream", proxy.url,
                "--listen", "127.0.0.1:0",
                "--state-dir", str(tmp_path_factory.mktemp("late-state")),
                "--upstream-timeout", "30s",
            ],
            stdin_pipe=False,
            env={"NO_COLOR": "1"},
        )
        started.append(sidecar)
        sidecar.wait_first_line(START_TIMEOUT)
        yield upstream.first["url"], sidecar.first["listen"], proxy
    finally:
        if proxy is not None:
            proxy.shutdown()
        for p in reversed(started):
            p.stop()


def sidecar_counts(sidecar_url: str) -> tuple[int, int]:
    """(documents counted, placements awaiting the cluster's answer)."""
    c = OpenSearch(hosts=[sidecar_url], timeout=10, max_retries=0)
    try:
        stats = c.transport.perform_request("GET", "/_neardup/stats")
    finally:
        c.close()
    return stats["forest"]["documents"], stats["cluster_outcomes"]["awaiting_answer"]


def close_mid_body(sidecar_url: str, body: bytes):
    """Sends the head and half of a bulk body, then closes the connection."""
    parsed = urllib.parse.urlparse(sidecar_url)
    with socket.create_connection((parsed.hostname, parsed.port), timeout=5) as s:
        head = (
            "POST /_bulk HTTP/1.1\r\nhost: x\r\ncontent-type: application/x-ndjson\r\n"
            f"content-length: {len(body)}\r\n\r\n"
        ).encode()
        s.sendall(head + body[: len(body) // 2])


def test_a_retrying_bulk_helper_against_a_late_cluster_counts_each_document_once(late):
    cluster_url, sidecar_url, proxy = late
    actions = [
        {
            "_index": INDEX,
            "_id": f"late{i}",
            "_source": {
                "title": f"第{i}号快讯",
                "content": f"本市第{i}条消息：{'、'.join(str(i * 7 + k) for k in range(30))}，详情以官方发布为准。",
            },
        }
        for i in range(DOCUMENTS)
    ]
    half_body = b"".join(
        f'{{"index":{{"_index":"{INDEX}","_id":"half{i}"}}}}\n{{"content":"只发出一半的请求{i}"}}\n'.encode()
        for i in range(20)
    )
    client = OpenSearch(
        hosts=[sidecar_url], timeout=CLIENT_TIMEOUT, retry_on_timeout=True, max_retries=3
    )
    # (documents counted and settled, stamped documents the index holds),
    # read in that order: what the cluster stored stays stored.
    samples: list[tuple[int, int]] = []
    stop = threading.Event()
    watcher = OpenSearch(hosts=[cluster_url], timeout=10, max_retries=0)

    def sample():
        while not stop.is_set():
            documents, awaiting = sidecar_counts(sidecar_url)
            watcher.indices.refresh(index=INDEX, ignore_unavailable=True)
            held = watcher.count(
                index=INDEX, body={"query": {"exists": {"field": "simhash"}}}, ignore_unavailable=True
            )["count"]
            samples.append((documents - awaiting, held))
            close_mid_body(sidecar_url, half_body)
            time.sleep(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        results = list(
            helpers.streaming_bulk(
                client, actions, chunk_size=CHUNK, max_retries=3, raise_on_error=False
            )
        )
    finally:
        stop.set()
        sampler.join(10)
        client.close()
        watcher.close()
    failed = [item for ok, item in results if not ok]
    assert not failed, failed[:3]
    assert proxy.held >= DOCUMENTS // CHUNK, "every chunk was answered late once"

    # While it ran: the settled count never passed what the index held
    # (placements in flight are shown apart, as `awaiting_answer`).
    assert samples
    over = [(settled, held) for settled, held in samples if settled > held]
    assert not over, f"counted more than the index held: {over[:5]}"

    direct = OpenSearch(hosts=[cluster_url], timeout=10, max_retries=0)
    try:
        deadline = time.monotonic() + 20
        while True:
            documents, awaiting = sidecar_counts(sidecar_url)
            direct.indices.refresh(index=INDEX)
            held = direct.count(index=INDEX, body={"query": {"exists": {"field": "simhash"}}})["count"]
            if (documents == held and awaiting == 0) or time.monotonic() > deadline:
                break
            time.sleep(0.3)
        total = direct.count(index=INDEX)["count"]
    finally:
        direct.close()
    assert total == DOCUMENTS, "the half-sent bodies stored nothing"
    assert held == DOCUMENTS
    assert (documents, awaiting) == (DOCUMENTS, 0), "counts equal what the index holds"
