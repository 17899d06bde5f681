"""Fixtures for the cluster commands' tests (build/bin/djava's private
cluster, thread-server, djava-cluster): compiled test programs, and the
directory of programs a test runs them from.

`cluster_bin` runs each test that takes it twice: with build/bin as built
(thread servers are djava JVMs), and with a copy whose thread-server is a
stand-in (tm-probe registering as host:pid), which tests the scripts' process
management apart from the JVM's thread-server role. A stand-in runs no Java
thread: programs run with it must start none (a shutdown hook is one)."""

import os
import subprocess

import pytest

from clusterprocs import JDK, TIMEOUT
from localprocs import BIN, ROOT, binary

JAVAC = os.path.join(ROOT, "build", "jvm", "base-image", "bin", "javac")
PROGRAMS = os.path.join(os.path.dirname(__file__), "programs")

STAND_IN = """#!/bin/sh
# A stand-in thread server: registers with the thread manager as host:pid.
while [ $# -gt 0 ]; do
  case $1 in --cluster) c=$2 ;; --secret-file) s=$2 ;; --threads) t=$2 ;; esac
  shift 2
done
exec {probe} server "$c" "$s" "$(hostname):$$" "${{t:-4}}" 600000
"""


@pytest.fixture(scope="session")
def classes(tmp_path_factory):
    out = tmp_path_factory.mktemp("cluster-classes")
    sources = sorted(os.path.join(PROGRAMS, f) for f in os.listdir(PROGRAMS) if f.endswith(".java"))
    subprocess.run([JAVAC, "-d", str(out), *sources], check=True, timeout=TIMEOUT)
    return str(out)


def make_bin(directory, thread_server):
    """A bin directory: copies of the scripts (they find their daemons beside
    themselves), the daemons built by CMake, and thread_server's text as
    thread-server."""
    directory.mkdir(exist_ok=True)
    for name in ("djava", "djava-cluster"):
        (directory / name).write_bytes(open(binary(name), "rb").read())
        os.chmod(directory / name, 0o755)
    for name in ("sos-server", "thread-manager"):
        os.symlink(binary(name), directory / name)
    (directory / "thread-server").write_text(thread_server)
    os.chmod(directory / "thread-server", 0o755)
    return str(directory)


@pytest.fixture
def stub_bin(tmp_path):
    """make_bin for this test: stub_bin(thread_server_text) -> directory."""
    return lambda text: make_bin(tmp_path / "bin", text)


@pytest.fixture(params=["jvm-thread-servers", "stand-in-thread-servers"])
def cluster_bin(request, stub_bin):
    if request.param == "jvm-thread-servers":
        return BIN
    return stub_bin(STAND_IN.format(probe=binary("tm-probe")))


@pytest.fixture
def env(tmp_path):
    """The environment of a command under test: no cluster named, build/jdk
    as the image (copied scripts look for it beside themselves), and a
    TMPDIR of its own, so a private cluster's directory can be looked for."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("DJAVA_")}
    e["DJAVA_JDK"] = JDK
    e["TMPDIR"] = str(tmp_path / "tmp")
    os.makedirs(e["TMPDIR"], exist_ok=True)
    return e
