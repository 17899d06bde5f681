"""Helpers for the cluster commands' tests: processes by pid (a zombie does
not run) and the constants of build/ they need."""

import os
import signal
import time

from localprocs import ROOT

JDK = os.path.join(ROOT, "build", "jdk")
JAVA = os.path.join(JDK, "bin", "java")
TIMEOUT = 120


def alive(pid):
    """Whether pid is a running process (a zombie is not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def wait_gone(pids, timeout=10.0):
    """The pids still running after up to timeout seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


def mentioning(text):
    """Pids of running processes whose command line mentions text."""
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit() and alive(int(pid)):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if text.encode() in f.read():
                        found.append(int(pid))
            except OSError:
                pass
    return found


def kill_all(pids):
    for p in pids:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass
