"""The sidecar's own HTTPS listener, used by a real client (issue 27).

opensearch-py with `verify_certs=True` and the CA's file bulk-loads through
`neardup serve --tls-cert/--tls-key`; while the load runs, the certificate
files are replaced and the sidecar told with SIGHUP: no request fails, and
new connections get the new certificate. Certificates are made by `openssl`
here.
"""

from __future__ import annotations

import os
import signal
import socket
import ssl
import subprocess
import threading
import time
from pathlib import Path

import pytest
from opensearchpy import OpenSearch, helpers

from conftest import ROOT, START_TIMEOUT, Proc, _binary

INDEX = "news-https"


def openssl(directory: Path, *args: str):
    subprocess.run(["openssl", *args], cwd=directory, check=True, capture_output=True, timeout=60)


def make_ca(directory: Path):
    openssl(
        directory, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key",
        "-out", "ca.pem", "-days", "2", "-subj", "/CN=neardup https test CA",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign",
    )


def make_server_certificate(directory: Path, name: str):
    """`{name}.pem` and `{name}.key` for 127.0.0.1, signed by the CA."""
    (directory / f"{name}.ext").write_text(
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n"
    )
    openssl(directory, "req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key",
            "-out", f"{name}.csr", "-subj", f"/CN={name}")
    openssl(directory, "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", f"{name}.pem", "-days", "2", "-extfile", f"{name}.ext")


def served_certificate(url: str, ca: Path) -> bytes:
    """The DER certificate a new connection to `url` gets (verified)."""
    host, port = url.removeprefix("https://").rsplit(":", 1)
    context = ssl.create_default_context(cafile=str(ca))
    with socket.create_connection((host, int(port)), timeout=5) as raw:
        with context.wrap_socket(raw, server_hostname=host) as tls:
            return tls.getpeercert(binary_form=True)


@pytest.fixture(scope="module")
def https_stack(tmp_path_factory):
    certs = tmp_path_factory.mktemp("https-certs")
    make_ca(certs)
    for name in ("first", "second"):
        make_server_certificate(certs, name)
    live_cert, live_key = certs / "live.pem", certs / "live.key"
    live_cert.write_bytes((certs / "first.pem").read_bytes())
    live_key.write_bytes((certs / "first.key").read_bytes())
    osmem = _binary("OSMEM_BIN", ROOT / ".venv" / "bin" / "osmem-server", "run scripts/venv.sh")
    neardup = _binary("NEARDUP_BIN", ROOT / "target" / "release" / "neardup", "set NEARDUP_BIN")
    upstream = Proc("osmem-https", [osmem, "-addr", "127.0.0.1:0", "-no-ja"], stdin_pipe=True)
    started = [upstream]
    try:
        upstream.wait_first_line(START_TIMEOUT)
        sidecar = Proc(
            "neardup-https",
            [
                neardup, "serve",
                "--upstream", upstream.first["url"],
                "--listen", "127.0.0.1:0",
                "--state-dir", "none",
                "--tls-cert", str(live_cert),
                "--tls-key", str(live_key),
            ],
            stdin_pipe=False,
            env={"NO_COLOR": "1"},
        )
        started.append(sidecar)
        sidecar.wait_first_line(START_TIMEOUT)
        yield certs, sidecar, upstream.first["url"]
    finally:
        for p in reversed(started):
            p.stop()


def replace_atomically(target: Path, source: Path):
    temporary = target.with_suffix(".new")
    temporary.write_bytes(source.read_bytes())
    os.replace(temporary, target)


def test_a_verifying_client_loads_through_https_while_the_certificate_rotates(https_stack):
    certs, sidecar, cluster_url = https_stack
    url = sidecar.first["listen"]
    assert url.startswith("https://"), url
    ca = certs / "ca.pem"
    before = served_certificate(url, ca)

    failures: list[str] = []
    loaded = [0]
    stop = threading.Event()

    def load():
        # A new client per round: new connections, so the rotation is seen.
        round_number = 0
        while not stop.is_set():
            client = OpenSearch(hosts=[url], verify_certs=True, ca_certs=str(ca), timeout=10, max_retries=0)
            try:
                actions = [
                    {
                        "_index": INDEX,
                        "_id": f"r{round_number}-{i}",
                        "_source": {"title": f"第{round_number}轮第{i}条", "content": f"加密连接上的第{round_number}轮第{i}条消息，内容各不相同。"},
                    }
                    for i in range(20)
                ]
                ok, errors = helpers.bulk(client, actions, raise_on_error=False)
                if errors:
                    failures.append(str(errors[:2]))
                loaded[0] += ok
            except Exception as error:  # every failure is reported
                failures.append(repr(error))
            finally:
                client.close()
            round_number += 1

    loader = threading.Thread(target=load, daemon=True)
    loader.start()
    time.sleep(1.0)
    replace_atomically(certs / "live.key", certs / "second.key")
    replace_atomically(certs / "live.pem", certs / "second.pem")
    sidecar.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 10
    after = before
    while after == before and time.monotonic() < deadline:
        time.sleep(0.2)
        after = served_certificate(url, ca)
    time.sleep(1.0)
    stop.set()
    loader.join(30)

    assert after != before, "new connections get the new certificate"
    assert not failures, failures[:3]
    assert loaded[0] > 0
    direct = OpenSearch(hosts=[cluster_url], timeout=10, max_retries=0)
    try:
        direct.indices.refresh(index=INDEX)
        stamped = direct.count(index=INDEX, body={"query": {"exists": {"field": "cluster_root"}}})["count"]
    finally:
        direct.close()
    assert stamped == loaded[0]
