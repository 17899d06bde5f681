"""Fixtures for the thread-manager and monitor-service process tests: real
daemons (sos-server hosting the monitor service, thread-manager) on loopback
ports, and the probe client programs built by CMake (monitor-probe,
tm-probe). Every process is killed at teardown; every wait is bounded."""

import os
import secrets
import signal
import socket
import subprocess
import time

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BIN = os.path.join(ROOT, "build", "bin")


# The networked daemons and probes are built once the adapter onto the wire
# library (thread-manager/src/wire_adapter.cc) exists. Until then these tests
# cannot run and say so; once it exists, a missing binary is a build failure,
# never a skip.
WIRE_ADAPTER = os.path.join(ROOT, "thread-manager", "src", "wire_adapter.cc")


def tm_binary(name):
    path = os.path.join(BIN, name)
    if not os.access(path, os.X_OK):
        if not os.path.exists(WIRE_ADAPTER):
            pytest.skip(f"{name} is built once thread-manager/src/wire_adapter.cc exists (next step of issues 3/4)")
        pytest.fail(f"{path} is not built although {WIRE_ADAPTER} exists: `make native` must build it")
    return path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, timeout=10.0):
    """Waits until something listens on 127.0.0.1:port (or the process died)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"daemon exited early with {proc.returncode}: "
                               f"{proc.stderr.read() if proc.stderr else ''}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port} after {timeout}s")


class Procs:
    """Processes started by one test; all killed at teardown."""

    def __init__(self, tmp_path):
        self.tmp = tmp_path
        self.procs = []

    def start(self, args, **kw):
        log = open(self.tmp / f"proc{len(self.procs)}.err", "w+")
        p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=log, text=True, **kw)
        p.errlog = log
        self.procs.append(p)
        return p

    @staticmethod
    def stderr_of(p):
        p.errlog.flush()
        p.errlog.seek(0)
        return p.errlog.read()

    def kill_all(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass


@pytest.fixture
def procs(tmp_path):
    ps = Procs(tmp_path)
    yield ps
    ps.kill_all()


@pytest.fixture
def secret_file(tmp_path):
    path = tmp_path / "cluster.secret"
    path.write_text(secrets.token_hex(32) + "\n")
    os.chmod(path, 0o600)
    return str(path)


@pytest.fixture
def sos_server(procs, secret_file):
    """A sos-server (hosting the monitor service); returns "127.0.0.1:port"."""
    binary = tm_binary("sos-server")
    port = free_port()
    p = procs.start([binary, "--listen", f"127.0.0.1:{port}", "--secret-file", secret_file])
    wait_port(port, p)
    return f"127.0.0.1:{port}"


@pytest.fixture
def thread_manager(procs, secret_file, sos_server):
    """A thread-manager told about the sos-server; returns "127.0.0.1:port"."""
    binary = tm_binary("thread-manager")
    port = free_port()
    p = procs.start([binary, "--listen", f"127.0.0.1:{port}", "--sos", sos_server,
                     "--secret-file", secret_file, "--liveness-ms", "1500"])
    wait_port(port, p)
    return f"127.0.0.1:{port}"


@pytest.fixture
def monitor_probe():
    return tm_binary("monitor-probe")


@pytest.fixture
def tm_probe():
    return tm_binary("tm-probe")


def read_line(proc, timeout=10.0):
    """One stdout line of proc within timeout (uses a helper thread)."""
    import threading
    box = []
    t = threading.Thread(target=lambda: box.append(proc.stdout.readline()), daemon=True)
    t.start()
    t.join(timeout)
    if not box:
        raise AssertionError(f"no output from {proc.args[:2]} within {timeout}s")
    return box[0].strip()
