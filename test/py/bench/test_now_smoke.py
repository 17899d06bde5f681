"""Smoke runs of bench/now (a network of workstations on one machine): the
applications at smoke sizes on 2 thread servers in network namespaces, with
no added delay and with 250 µs of round trip, and a run stopped by SIGTERM.
Asserted: every application has a time in every configuration, the added
delay shows in the measured round trip, and nothing the run made survives
it. Nothing here asserts anything about the applications' times. Needs
root (namespaces, links); CI runs as root."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
RUN = os.path.join(TOP, "bench", "now", "run.py")
APPS = ("MatrixMultiply", "SOR", "TSP", "RayTracer")

pytestmark = pytest.mark.skipif(os.geteuid() != 0,
                                reason="bench/now needs root (network namespaces)")


def namespaces(prefix):
    p = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=30)
    return [line.split()[0] for line in p.stdout.splitlines()
            if line.strip() and line.startswith(prefix)]


def pids_in(namespace):
    p = subprocess.run(["ip", "netns", "pids", namespace], capture_output=True, text=True,
                       timeout=30)
    return [int(pid) for pid in p.stdout.split()]


def thread_servers_in(namespace):
    """The thread-server processes in the namespace: `ip netns exec`'s
    process, then the script, then the JVM it execs (one pid throughout)."""
    found = []
    for pid in pids_in(namespace):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
            if b"thread-server" in cmdline or b"DjavaThreadServer" in cmdline:
                found.append(pid)
        except OSError:  # ended since
            pass
    return found


def finish(p, timeout):
    """The run's output; a run over time is stopped with SIGTERM (it cleans
    up), then killed."""
    try:
        return p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGTERM)
        try:
            out, err = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        pytest.fail(f"bench/now ran over {timeout} s:\n{out}{err}")


def test_every_application_runs_over_delayed_links_and_nothing_is_left(tmp_path):
    out = tmp_path / "now.json"
    p = subprocess.Popen([sys.executable, RUN, "--small", "--rounds", "1", "--servers", "2",
                          "--delays", "0,250us", "--json", str(out)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stdout, stderr = finish(p, 600)
    assert p.returncode == 0, stdout + stderr
    data = json.loads(out.read_text())
    assert data["delays_us"] == [0, 250]
    assert data["servers"] == [2]
    assert data["rounds"] == 1 and data["small"] is True
    for app in APPS:
        for delay in ("0", "250"):
            assert data["ms"][app][delay]["2"] > 0, data
    rtt = data["measured_rtt_us"]
    assert rtt["250"] >= 200, rtt
    assert rtt["250"] > rtt["0"], rtt
    assert "| MatrixMultiply |" in stdout  # the markdown tables
    # The run's id is its pid: none of its namespaces (nor their links,
    # which go with them) remain.
    assert namespaces(f"djnow-{p.pid}-") == []


def test_sigterm_mid_run_removes_namespaces_and_daemons(tmp_path):
    p = subprocess.Popen([sys.executable, RUN, "--small", "--rounds", "3", "--servers", "1",
                          "--delays", "0"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    prefix = f"djnow-{p.pid}-"
    daemons = []
    try:
        # Wait (bounded) until its thread server runs in its namespace. Any
        # process in it will not do: while the run sets the namespaces up,
        # its `ip -n ...` commands pass through them.
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and p.poll() is None:
            if f"{prefix}ts1" in namespaces(prefix) and thread_servers_in(f"{prefix}ts1"):
                # The hub's daemons started before it, and are running.
                daemons = [pid for ns in namespaces(prefix) for pid in pids_in(ns)]
                break
            time.sleep(0.2)
        assert p.poll() is None, p.stderr.read()
        assert daemons, "the run's thread server never started"
        p.send_signal(signal.SIGTERM)
        _, stderr = finish(p, 120)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait(30)
    assert p.returncode == 128 + signal.SIGTERM, stderr
    assert namespaces(prefix) == []
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(os.path.exists(f"/proc/{pid}") for pid in daemons):
        time.sleep(0.1)
    assert not [pid for pid in daemons if os.path.exists(f"/proc/{pid}")], daemons
