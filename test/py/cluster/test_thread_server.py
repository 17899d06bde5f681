"""build/bin/thread-server: a workstation's daemon, a djava JVM in the
thread-server role that registers with the thread manager as host:pid with
the capacity asked for and runs until SIGTERM."""

import os
import re
import signal
import subprocess
import time

import pytest

from clusterprocs import TIMEOUT
from localprocs import binary, write_secret

USAGE = "usage: thread-server --cluster HOST:PORT [--threads N] [--secret-file FILE]"


@pytest.mark.parametrize("args", [
    [],
    ["--cluster"],
    ["--cluster", "no-port"],
    ["--cluster", ":7700"],
    ["--cluster", "host:"],
    ["--cluster", "host:0"],
    ["--cluster", "host:65536"],
    ["--cluster", "host:12x"],
    ["--cluster", "h:1", "--threads", "0"],
    ["--cluster", "h:1", "--threads", "-3"],
    ["--cluster", "h:1", "--threads", "many"],
    ["--cluster", "h:1", "--threads"],
    ["--cluster", "h:1", "--secret-file"],
    ["--cluster", "h:1", "--no-such-option", "x"],
    ["--cluster", "h:1", "stray"],
], ids=lambda a: " ".join(a) or "no-arguments")
def test_bad_arguments_print_usage_and_exit_2(args):
    p = subprocess.run([binary("thread-server"), *args], capture_output=True, text=True,
                       timeout=30)
    assert p.returncode == 2, p.stderr
    assert p.stdout == ""
    lines = p.stderr.splitlines()
    assert lines[0].startswith("thread-server: ") and lines[1] == USAGE, p.stderr


def test_help_prints_usage():
    p = subprocess.run([binary("thread-server"), "--help"], capture_output=True, text=True,
                       timeout=30)
    assert p.returncode == 0 and p.stdout.splitlines()[0] == USAGE and p.stderr == ""


def registration(procs, pid, timeout=60.0):
    """The thread manager's line for the server whose name ends in :pid."""
    deadline = time.monotonic() + timeout
    pattern = rf"server '(\S+):{pid}' \(id \d+, capacity (\d+)\) registered"
    while time.monotonic() < deadline:
        log = procs.stderr_of(procs.thread_manager)
        m = re.search(pattern, log)
        if m:
            return m
        time.sleep(0.05)
    raise AssertionError(f"no registration of pid {pid} within {timeout}s:\n{log}")


def start_server(procs, *args, env=None):
    # In the test's directory: a JVM's crash report lands in its working directory.
    return procs.start([binary("thread-server"), *args], cwd=procs.tmp, env=env)


def test_registers_as_host_pid_with_its_capacity_and_stops_on_sigterm(procs, thread_manager,
                                                                      secret_file):
    server = start_server(procs, "--cluster", thread_manager, "--threads", "3",
                          "--secret-file", secret_file)
    m = registration(procs, server.pid)
    assert m.group(1) == os.uname().nodename and m.group(2) == "3"
    assert server.poll() is None, procs.stderr_of(server)
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=TIMEOUT)
    assert server.returncode in (0, 143), procs.stderr_of(server)


def test_capacity_defaults_to_the_cpus(procs, thread_manager, secret_file):
    server = start_server(procs, "--cluster", thread_manager, "--secret-file", secret_file)
    m = registration(procs, server.pid)
    assert int(m.group(2)) == len(os.sched_getaffinity(0))


def test_secret_file_defaults_to_the_environment(procs, thread_manager, secret_file):
    server = start_server(procs, "--cluster", thread_manager,
                          env={**os.environ, "DJAVA_SECRET_FILE": secret_file})
    registration(procs, server.pid)


def test_wrong_secret_is_an_error(procs, thread_manager, tmp_path):
    wrong = write_secret(tmp_path / "wrong.secret")
    p = subprocess.run([binary("thread-server"), "--cluster", thread_manager,
                        "--secret-file", wrong], capture_output=True, text=True, timeout=TIMEOUT,
                       cwd=tmp_path)
    assert p.returncode != 0
    assert f"cannot join the cluster at {thread_manager}" in p.stdout + p.stderr
