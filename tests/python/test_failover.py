"""A replica group as clients see it: failovers and rolling restarts that
no client notices (issue 43).

- opensearch-py given every member as its hosts, with its defaults (3
  retries on 502/503/504, a 30 s timeout): `helpers.streaming_bulk` of
  4 000 articles in chunks of 100 while the leader is killed (`kill -9`),
  restarted on its state, and the next leader paused (SIGSTOP) for 8 s.
  No item fails; every document is in the index once, stamped; the counts
  the group settled equal the index; no write was held longer than the
  lease plus 2 s.
- HAProxy (Debian's package) in front of three members, round-robin with
  the README's configuration, while every member is restarted in turn
  (SIGTERM, started again on its state) under load: no item fails and no
  write was held longer than 1 s.

Each member is a real `neardup serve`, the cluster a real osmem-server;
every wait is bounded.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from opensearchpy import OpenSearch, helpers

from conftest import DEMO, ROOT, START_TIMEOUT, Proc, _binary

SECRET = "python-tests-group-secret-0123456789"
INDEX = "news-failover"


def articles(count: int, tag: str) -> list[dict]:
    """`count` articles with ids, made from the demo corpus (reprints of its
    stories with a number added)."""
    with DEMO.open(encoding="utf-8") as f:
        demo = [json.loads(line) for line in f if line.strip()]
    out = []
    for n in range(count):
        base = demo[n % len(demo)]
        out.append(
            {
                "_index": INDEX,
                "_id": f"{tag}-{n}",
                "_source": {
                    "title": f"{base['title']} ({n // len(demo)})",
                    "content": f"{base['content']}\n第{n}号",
                    "source": base.get("source", ""),
                },
            }
        )
    return out


class Group:
    """osmem and the members of one replica group, each restartable on its
    own state directory."""

    def __init__(self, tmp: Path, members: int, lease: str):
        self.osmem_bin = _binary("OSMEM_BIN", ROOT / ".venv" / "bin" / "osmem-server", "run scripts/venv.sh")
        self.neardup = _binary("NEARDUP_BIN", ROOT / "target" / "release" / "neardup", "cargo build --release")
        self.tmp = tmp
        self.lease = lease
        self.secret = tmp / "group.secret"
        self.secret.write_text(SECRET + "\n")
        self.osmem = Proc("osmem", [self.osmem_bin, "-addr", "127.0.0.1:0", "-no-ja"], stdin_pipe=True)
        self.osmem.wait_first_line(START_TIMEOUT)
        self.cluster = self.osmem.first["url"]
        self.ports = [free_port() for _ in range(members)]
        self.procs: list[Proc | None] = [None] * members
        self.logs: list[str] = []
        for i in range(members):
            self.start(i)
            if i == 0:
                self.wait_role(0, "leader", 20)

    def url(self, i: int) -> str:
        return f"http://127.0.0.1:{self.ports[i]}"

    def start(self, i: int):
        state = self.tmp / f"state-{i}"
        state.mkdir(exist_ok=True)
        proc = Proc(
            f"member-{i}",
            [
                self.neardup, "serve",
                "--upstream", self.cluster,
                "--listen", f"127.0.0.1:{self.ports[i]}",
                "--state-dir", str(state),
                "--replica-group", "failover",
                "--replica-name", f"m{i}",
                "--replica-lease", self.lease,
                "--replica-secret-file", str(self.secret),
                "--install-template", "--template-patterns", "news*",
            ],
            stdin_pipe=False,
            env={"NO_COLOR": "1", "NEARDUP_LOG": "info"},
        )
        proc.wait_first_line(START_TIMEOUT)
        self.procs[i] = proc
        self.logs.append(proc.log.name)

    def signal(self, i: int, sig: int):
        proc = self.procs[i]
        assert proc is not None
        os.kill(proc.proc.pid, sig)

    def kill(self, i: int):
        self.signal(i, signal.SIGKILL)
        self.procs[i].proc.wait(10)
        self.procs[i].log.close()
        self.procs[i] = None

    def terminate(self, i: int, within: float = 30.0):
        proc = self.procs[i]
        self.signal(i, signal.SIGTERM)
        proc.proc.wait(within)
        proc.log.close()
        self.procs[i] = None

    def replica(self, i: int) -> dict:
        return get_json(self.url(i) + "/_neardup/replica")

    def role(self, i: int) -> str | None:
        try:
            return self.replica(i)["role"]
        except Exception:
            return None

    def wait_role(self, i: int, role: str, within: float):
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            if self.role(i) == role:
                return
            time.sleep(0.1)
        raise AssertionError(f"member {i} not {role} within {within} s: {self.role(i)}\n{self.describe()}")

    def leader(self) -> int | None:
        for i, proc in enumerate(self.procs):
            if proc is not None and self.role(i) == "leader":
                return i
        return None

    def metrics(self, i: int) -> dict[str, float]:
        with urllib.request.urlopen(self.url(i) + "/_neardup/metrics", timeout=10) as r:
            text = r.read().decode()
        out = {}
        for line in text.splitlines():
            if line.startswith("neardup_") and " " in line:
                name, value = line.rsplit(" ", 1)
                try:
                    out[name] = float(value)
                except ValueError:
                    pass
        return out

    def metrics_when_up(self, i: int, within: float = 20.0) -> dict[str, float]:
        """The metrics of member `i`, waiting while it restarts itself (a
        member that stepped down re-executes to rejoin: its port is closed
        for a moment; what it held before is in its log)."""
        deadline = time.monotonic() + within
        while True:
            try:
                return self.metrics(i)
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def longest_held(self) -> float:
        """The longest hold any member saw: from the live members' metrics
        and the `held_max_ms` each stopped member logged."""
        longest = 0.0
        for i, proc in enumerate(self.procs):
            if proc is not None:
                longest = max(longest, self.metrics_when_up(i).get("neardup_replica_held_seconds_max", 0.0))
        for log in self.logs:
            for match in re.finditer(r"held_max_ms=(\d+)", Path(log).read_text(errors="replace")):
                longest = max(longest, int(match.group(1)) / 1000)
        return longest

    def describe(self) -> str:
        tails = []
        for log in self.logs[-6:]:
            text = Path(log).read_text(errors="replace").splitlines()[-25:]
            tails.append(f"--- {log}\n" + "\n".join(text))
        return "\n".join(tails)

    def stop(self):
        for i, proc in enumerate(self.procs):
            if proc is not None:
                try:
                    os.kill(proc.proc.pid, signal.SIGCONT)
                except OSError:
                    pass
                proc.stop()
        self.osmem.stop()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.load(r)


def index_state(cluster: str) -> tuple[int, int, set[str]]:
    """(documents, stamped documents, ids) of the test index, read from the
    cluster itself."""
    direct = OpenSearch(hosts=[cluster], timeout=30, max_retries=0)
    direct.indices.refresh(index=INDEX)
    ids, stamped, total = set(), 0, 0
    for hit in helpers.scan(direct, index=INDEX, query={"query": {"match_all": {}}}):
        total += 1
        ids.add(hit["_id"])
        if re.fullmatch(r"[0-9a-f]{16}", hit["_source"].get("cluster_root", "")):
            stamped += 1
    direct.close()
    return total, stamped, ids


def load(client: OpenSearch, docs: list[dict], progress: list[int], failures: list):
    for ok, item in helpers.streaming_bulk(
        client, docs, chunk_size=100, raise_on_error=False, raise_on_exception=False
    ):
        progress[0] += 1
        if not ok:
            failures.append(item)


def wait_until(condition, within: float, what: str):
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"not within {within} s: {what}")


@pytest.fixture
def tmp(request):
    path = Path(tempfile.mkdtemp(prefix="neardup-failover-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_a_client_given_every_member_sees_no_failover(tmp):
    group = Group(tmp, members=2, lease="5s")
    try:
        group.wait_role(1, "standby", 20)
        client = OpenSearch(hosts=[group.url(0), group.url(1)], timeout=30)  # the defaults
        docs = articles(4000, "a")
        progress, failures = [0], []
        loader = threading.Thread(target=load, args=(client, docs, progress, failures))
        loader.start()
        wait_until(lambda: progress[0] >= 1200, 120, "1 200 documents")
        group.kill(0)  # the leader, mid-load
        wait_until(lambda: group.role(1) == "leader", 15, "the standby leads")
        wait_until(lambda: progress[0] >= 2000, 120, "2 000 documents")
        group.start(0)  # restarted on its state: it follows
        group.wait_role(0, "standby", 30)
        wait_until(lambda: progress[0] >= 2800, 120, "2 800 documents")
        group.signal(1, signal.SIGSTOP)  # the new leader, paused past its lease
        time.sleep(8)
        group.signal(1, signal.SIGCONT)
        loader.join(180)
        assert not loader.is_alive(), "the load did not finish"
        client.close()
        assert not failures, f"{len(failures)} items failed, first: {failures[:2]}\n{group.describe()}"
        total, stamped, ids = index_state(group.cluster)
        assert total == 4000 and len(ids) == 4000, (total, len(ids))
        assert stamped == 4000, f"{4000 - stamped} documents not stamped"
        leader = group.leader()
        assert leader is not None
        # Reads of the in-doubt writes settle in the background: bounded wait.
        wait_until(
            lambda: get_json(group.url(leader) + "/_neardup/stats")["forest"]["documents"] == 4000,
            30,
            "the group's counts equal the index",
        )
        held = group.longest_held()
        assert held <= 5 + 2, f"a write was held {held} s"
    finally:
        group.stop()


HAPROXY_CONFIG = """\
global
    maxconn 2000
defaults
    mode http
    timeout connect 2s
    timeout client 90s
    timeout server 90s
    # A member that stops closes its listener: a request that cannot be
    # sent goes to another member.
    retries 3
    option redispatch 1
    retry-on conn-failure empty-response
    option http-server-close
frontend writes
    bind 127.0.0.1:{port}
    default_backend members
backend members
    balance roundrobin
    option httpchk GET /_neardup/health/ready
    http-check expect status 200
    timeout check 2s
    default-server inter 1s fall 3 rise 2
{servers}
"""


def haproxy_binary() -> str | None:
    return shutil.which("haproxy") or (
        "/usr/sbin/haproxy" if os.access("/usr/sbin/haproxy", os.X_OK) else None
    )


def test_a_rolling_restart_behind_haproxy_fails_nothing(tmp):
    haproxy = haproxy_binary()
    if haproxy is None:
        if os.environ.get("CI") == "true":
            pytest.fail("haproxy is not installed (Debian package haproxy; .ci/run installs it)")
        pytest.skip("haproxy is not installed (apt-get install haproxy): SKIPPED")
    group = Group(tmp, members=3, lease="5s")
    proxy = None
    try:
        group.wait_role(1, "standby", 20)
        group.wait_role(2, "standby", 20)
        port = free_port()
        servers = "\n".join(
            f"    server m{i} 127.0.0.1:{group.ports[i]} check" for i in range(3)
        )
        config = tmp / "haproxy.cfg"
        config.write_text(HAPROXY_CONFIG.format(port=port, servers=servers))
        proxy = subprocess.Popen(
            [haproxy, "-db", "-f", str(config)],
            stdout=subprocess.DEVNULL,
            stderr=open(tmp / "haproxy.log", "w"),
        )
        url = f"http://127.0.0.1:{port}"
        wait_until(lambda: _answers(url), 10, "haproxy listens")
        client = OpenSearch(hosts=[url], timeout=30)
        docs = articles(3000, "r")
        progress, failures = [0], []
        loader = threading.Thread(target=load, args=(client, docs, progress, failures))
        loader.start()
        # Every member in turn, the leader among them, restarted under load.
        for i in range(3):
            mark = progress[0] + 400
            wait_until(lambda: progress[0] >= mark or not loader.is_alive(), 120, "load between restarts")
            group.terminate(i)
            group.start(i)
            group.wait_role(i, "standby", 30)
        loader.join(180)
        assert not loader.is_alive(), "the load did not finish"
        client.close()
        assert not failures, f"{len(failures)} items failed, first: {failures[:2]}\n{group.describe()}"
        total, stamped, ids = index_state(group.cluster)
        assert total == 3000 and stamped == 3000, (total, stamped)
        held = group.longest_held()
        assert held <= 1.0, f"a write was held {held} s\n{group.describe()}"
    finally:
        if proxy is not None:
            proxy.terminate()
            proxy.wait(10)
        group.stop()


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/_neardup/health/live", timeout=2):
            return True
    except Exception:
        return False
