"""Fixtures for the thread-manager and monitor-service process tests: real
daemons (sos-server hosting the monitor service, thread-manager) on loopback
ports, and the probe client programs built by CMake (monitor-probe,
tm-probe). Every process is killed at teardown; every wait is bounded."""

import pytest

from localprocs import binary as tm_binary, free_port, wait_port


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
