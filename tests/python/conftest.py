"""Fixtures for the client-level integration tests.

One osmem-server (in-memory OpenSearch-compatible cluster, from .venv/bin) and
one `neardup serve` in front of it are started per test session, each on a
free loopback port. Every wait is bounded; both processes are stopped in
teardown (and, on Linux, also die if pytest itself is killed).

Environment:
  NEARDUP_BIN     the neardup binary (default: target/release/neardup)
  OSMEM_BIN       the osmem-server binary (default: .venv/bin/osmem-server)
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "tests" / "fixtures" / "demo" / "articles.jsonl"
MAPPINGS = ROOT / "mappings"

START_TIMEOUT = 20.0  # seconds for a process to print its first line
STOP_TIMEOUT = 5.0  # seconds for a process to exit after being asked to
HTTP_TIMEOUT = 10  # seconds for any HTTP request made by the tests
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _die_with_parent():
    """Linux: have the child get SIGTERM when pytest dies (even on kill -9)."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL("libc.so.6", use_errno=True)
            PR_SET_PDEATHSIG = 1
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        except Exception:  # best effort only
            pass


class Proc:
    """A child process whose first stdout line is a JSON object."""

    def __init__(self, name: str, argv: list[str], stdin_pipe: bool, env: dict | None = None):
        self.name = name
        self.argv = argv
        self.log = tempfile.NamedTemporaryFile(
            prefix=f"neardup-pytest-{name}-", suffix=".log", delete=False
        )
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if stdin_pipe else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self.log,
            preexec_fn=_die_with_parent,
            env={**os.environ, **(env or {})},
        )
        self.first: dict | None = None
        self.rest: list[bytes] = []

    def log_tail(self, n: int = 40) -> str:
        try:
            if not self.log.closed:
                self.log.flush()
            text = Path(self.log.name).read_text(errors="replace")
            lines = ANSI.sub("", text).splitlines()
        except OSError as e:
            return f"(cannot read {self.log.name}: {e})"
        return "\n".join(lines[-n:]) or "(empty)"

    def describe(self) -> str:
        return (
            f"{self.name}: {' '.join(self.argv)}\n"
            f"  exit code: {self.proc.poll()}\n"
            f"  stderr ({self.log.name}), last lines:\n{self.log_tail()}"
        )

    def wait_first_line(self, timeout: float) -> dict:
        box: dict = {}

        def read():
            try:
                box["line"] = self.proc.stdout.readline()
            except Exception as e:  # pragma: no cover
                box["error"] = e

        t = threading.Thread(target=read, daemon=True)
        t.start()
        t.join(timeout)
        if t.is_alive():
            self.stop()
            raise RuntimeError(f"no startup line within {timeout:.0f} s\n{self.describe()}")
        line = box.get("line", b"")
        if not line:
            self.stop()
            raise RuntimeError(f"exited before printing its startup line\n{self.describe()}")
        try:
            self.first = json.loads(line)
        except ValueError:
            self.stop()
            raise RuntimeError(f"startup line is not JSON: {line!r}\n{self.describe()}")

        def drain():  # keep the pipe from filling up
            for chunk in iter(self.proc.stdout.readline, b""):
                self.rest.append(chunk)

        threading.Thread(target=drain, daemon=True).start()
        return self.first

    def stop(self):
        p = self.proc
        if p.poll() is None:
            try:
                if p.stdin:
                    p.stdin.close()  # osmem-server exits when stdin closes
            except OSError:
                pass
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(STOP_TIMEOUT)
        self.log.close()


def _binary(env: str, default: Path, hint: str) -> str:
    path = Path(os.environ.get(env) or default)
    if not path.is_absolute():
        path = ROOT / path
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.exit(f"{path} is not an executable file: {hint}", returncode=1)
    return str(path)


class Stack:
    """The running pair: upstream (osmem) and the sidecar in front of it."""

    def __init__(self, upstream: Proc, sidecar: Proc):
        self.upstream_proc = upstream
        self.sidecar_proc = sidecar
        self.upstream_url: str = upstream.first["url"]
        self.sidecar_url: str = sidecar.first["listen"]

    def get_json(self, path: str):
        """GET a sidecar endpoint; the JSON body (raises with the body on error)."""
        req = urllib.request.Request(self.sidecar_url + path)
        try:
            with urllib.request.urlopen(req, timeout=HTTP_TIMEOUT) as r:
                return json.load(r)
        except urllib.error.HTTPError as e:
            raise AssertionError(f"GET {path} -> {e.code}: {e.read()[:2000]!r}") from None

    def stats(self) -> dict:
        return self.get_json("/_neardup/stats")

    def describe(self) -> str:
        return self.upstream_proc.describe() + "\n" + self.sidecar_proc.describe()


@pytest.fixture(scope="session")
def stack(request):
    osmem = _binary(
        "OSMEM_BIN", ROOT / ".venv" / "bin" / "osmem-server", "run scripts/venv.sh"
    )
    neardup = _binary(
        "NEARDUP_BIN",
        ROOT / "target" / "release" / "neardup",
        "run `cargo build --release` or set NEARDUP_BIN",
    )
    upstream = Proc("osmem", [osmem, "-addr", "127.0.0.1:0", "-no-ja"], stdin_pipe=True)
    started: list[Proc] = [upstream]
    state_dir = tempfile.TemporaryDirectory(prefix="neardup-state-")
    request.addfinalizer(state_dir.cleanup)
    try:
        upstream.wait_first_line(START_TIMEOUT)
        sidecar = Proc(
            "neardup",
            [
                neardup,
                "serve",
                "--upstream",
                upstream.first["url"],
                "--listen",
                "127.0.0.1:0",
                "--install-template",
                "--template-patterns",
                "news*",
                "--state-dir",
                state_dir.name,
            ],
            stdin_pipe=False,
            env={"NO_COLOR": "1", "RUST_LOG": os.environ.get("RUST_LOG", "info")},
        )
        started.append(sidecar)
        sidecar.wait_first_line(START_TIMEOUT)
        s = Stack(upstream, sidecar)
        _RUNNING.append(s)
        yield s
    finally:
        _RUNNING.clear()
        for p in reversed(started):
            p.stop()
        keep = request.session.testsfailed or os.environ.get("NEARDUP_TEST_KEEP_LOGS")
        for p in started:
            if keep:
                sys.stderr.write(f"\n{p.name} log kept: {p.log.name}\n")
            else:
                try:
                    os.unlink(p.log.name)
                except OSError:
                    pass


_RUNNING: list[Stack] = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Attach the servers' recent stderr to the report of a failed test."""
    outcome = yield
    report = outcome.get_result()
    if report.failed and _RUNNING:
        s = _RUNNING[0]
        report.sections.append(("neardup serve stderr (last lines)", s.sidecar_proc.log_tail()))
        report.sections.append(("osmem-server stderr (last lines)", s.upstream_proc.log_tail()))


@pytest.fixture(scope="session")
def client(stack) -> OpenSearch:
    """The user's view: an opensearch-py client pointed at the sidecar."""
    c = OpenSearch(hosts=[stack.sidecar_url], timeout=HTTP_TIMEOUT, max_retries=0)
    yield c
    c.close()


@pytest.fixture(scope="session")
def direct(stack) -> OpenSearch:
    """The cluster itself, bypassing the sidecar (to check what was stored)."""
    c = OpenSearch(hosts=[stack.upstream_url], timeout=HTTP_TIMEOUT, max_retries=0)
    yield c
    c.close()


@pytest.fixture(scope="session")
def demo_docs() -> list[dict]:
    with DEMO.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def load_mapping(name: str) -> dict:
    with (MAPPINGS / name).open(encoding="utf-8") as f:
        return json.load(f)
