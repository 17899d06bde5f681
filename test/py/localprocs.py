"""Helpers for the process tests (sos, tm, ...): the programs built into
build/bin, free loopback ports, cluster secret files, and the processes one
test starts (all killed at its end). Every wait here is bounded.

Importable from any test module or conftest: test/py/conftest.py puts this
directory on sys.path."""

import os
import secrets
import socket
import subprocess
import threading
import time

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.path.join(ROOT, "build", "bin")
# The djava JDK image (its java runs cluster nodes) and the pinned stock
# JDK's javac, which compiles the test programs.
JDK = os.path.join(ROOT, "build", "jdk")
JAVA = os.path.join(JDK, "bin", "java")
JAVAC = os.path.join(ROOT, "build", "jvm", "base-image", "bin", "javac")


def binary(name, directory=BIN):
    """build/bin/NAME; a missing program is a build failure, never a skip."""
    path = os.path.join(directory, name)
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path} is not built: `make native` builds it")
    return path


def node_options(cluster, secret):
    """The VM options that make build/jdk's java a node of cluster."""
    return ["-XX:+DistributedJava", f"-XX:DjavaCluster={cluster}", f"-XX:DjavaSecretFile={secret}"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, timeout=10.0, host="127.0.0.1"):
    """Waits until something listens on host:port (or the process died)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args[0]} exited early with {proc.returncode}")
        try:
            with socket.create_connection((host, port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {host}:{port} after {timeout}s")


def write_secret(path, text=None, mode=0o600):
    path.write_text((text if text is not None else secrets.token_hex(32)) + "\n")
    os.chmod(path, mode)
    return str(path)


def read_line(proc, timeout=10.0):
    """One stdout line of proc within timeout (uses a helper thread); "" at EOF."""
    box = []
    t = threading.Thread(target=lambda: box.append(proc.stdout.readline()), daemon=True)
    t.start()
    t.join(timeout)
    if not box:
        raise AssertionError(f"no output from {proc.args[:2]} within {timeout}s")
    return box[0].strip()


class Procs:
    """Processes started by one test; all killed at teardown. stderr of each
    goes to a file in tmp_path (read with stderr_of)."""

    def __init__(self, tmp_path):
        self.tmp = tmp_path
        self.procs = []

    def start(self, args, stdin=None, **kw):
        log = open(self.tmp / f"proc{len(self.procs)}.err", "w+")
        p = subprocess.Popen(args, stdin=stdin, stdout=subprocess.PIPE, stderr=log, text=True, **kw)
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
