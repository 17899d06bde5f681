"""Fixtures shared by every process test: the processes a test starts
(killed at its end) and a fresh cluster secret file. The helpers behind them
are in localprocs.py."""

import pytest

from localprocs import Procs, write_secret


@pytest.fixture
def procs(tmp_path):
    ps = Procs(tmp_path)
    yield ps
    ps.kill_all()


@pytest.fixture
def secret_file(tmp_path):
    return write_secret(tmp_path / "cluster.secret")
