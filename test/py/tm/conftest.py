"""Fixtures for the thread-manager and monitor-service process tests: the
probe client programs built by CMake (monitor-probe, tm-probe). The daemons
(sos_server, thread_manager) are test/py/conftest.py's."""

import pytest

from localprocs import binary as tm_binary


@pytest.fixture
def monitor_probe():
    return tm_binary("monitor-probe")


@pytest.fixture
def tm_probe():
    return tm_binary("tm-probe")
