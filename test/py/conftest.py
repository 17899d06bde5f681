"""Fixtures shared by every process test: the processes a test starts
(killed at its end), a fresh cluster secret file, and the cluster daemons
(sos-server hosting the monitor service, thread-manager) on loopback ports.
The helpers behind them are in localprocs.py."""

import pytest

import os
import re
import time

from localprocs import JAVA, Procs, binary, free_port, node_options, wait_port, write_secret


@pytest.fixture
def procs(tmp_path):
    ps = Procs(tmp_path)
    yield ps
    ps.kill_all()


@pytest.fixture
def secret_file(tmp_path):
    return write_secret(tmp_path / "cluster.secret")


@pytest.fixture
def sos_server(procs, secret_file):
    """A sos-server (hosting the monitor service); returns "127.0.0.1:port".
    DJAVA_TEST_SOS_OPTIONS (words) adds options: the suites run with a
    protocol option turned on or off (--data-with-release, say)."""
    port = free_port()
    p = procs.start([binary("sos-server"), "--listen", f"127.0.0.1:{port}",
                     "--secret-file", secret_file,
                     *os.environ.get("DJAVA_TEST_SOS_OPTIONS", "").split()])
    wait_port(port, p)
    p.address = f"127.0.0.1:{port}"
    procs.sos_server = p  # its log: procs.stderr_of(procs.sos_server)
    return p.address


@pytest.fixture
def thread_manager(procs, secret_file, sos_server):
    """A thread-manager told about the sos-server; returns "127.0.0.1:port"."""
    port = free_port()
    p = procs.start([binary("thread-manager"), "--listen", f"127.0.0.1:{port}",
                     "--sos", sos_server, "--secret-file", secret_file, "--liveness-ms", "1500"])
    wait_port(port, p)
    procs.thread_manager = p  # its log: procs.stderr_of(procs.thread_manager)
    return f"127.0.0.1:{port}"


@pytest.fixture
def cluster(procs, thread_manager, secret_file):
    """Two thread-server JVMs of two threads each, registered with the
    thread manager; returns (its address, the server processes)."""
    servers = [procs.start([JAVA, *node_options(thread_manager, secret_file),
                            "-XX:DjavaThreadServer=2", "djava.runtime.ThreadServer"])
               for _ in range(2)]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        log = procs.stderr_of(procs.thread_manager)
        if len(re.findall(r"server '\S+' \(id \d+, capacity 2\) registered", log)) == 2:
            return thread_manager, servers
        time.sleep(0.05)
    raise AssertionError("thread servers did not register:\n" + procs.stderr_of(procs.thread_manager))
