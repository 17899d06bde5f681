"""The directory of shared objects and the monitor service split over several
sos-servers (`djava-cluster start --sos-servers N`, djava's
DJAVA_SOS_SERVERS): programs run as on one server, every shard serves its
share under the node numbers the first gave, and a shard that dies fails the
programs using it with a message naming it."""

import os
import re
import signal
import subprocess
import time

import pytest

from clusterprocs import TIMEOUT
from localprocs import BIN, ROOT

JAVAC = os.path.join(ROOT, "build", "jvm", "base-image", "bin", "javac")
DIST = os.path.join(ROOT, "test", "py", "threads", "programs")


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    out = tmp_path_factory.mktemp("shards-classes")
    subprocess.run([JAVAC, "-d", str(out), os.path.join(DIST, "Dist.java"),
                    os.path.join(DIST, "Turnover.java")], check=True, timeout=TIMEOUT,
                   capture_output=True)
    return str(out)


@pytest.fixture
def env(tmp_path):
    e = {k: v for k, v in os.environ.items() if not k.startswith("DJAVA_")}
    e["TMPDIR"] = str(tmp_path / "tmp")
    os.makedirs(e["TMPDIR"], exist_ok=True)
    return e


@pytest.fixture
def clusters(env):
    started = []

    def start(directory, shards):
        started.append(directory)
        p = subprocess.run([os.path.join(BIN, "djava-cluster"), "start", "--dir", directory,
                            "--sos-servers", str(shards), "--threads", "2"],
                           capture_output=True, text=True, timeout=TIMEOUT, env=env)
        assert p.returncode == 0, p.stdout + p.stderr
        assert f"{shards} sos-servers, a thread-manager" in p.stderr, p.stderr
        return {**env, **dict(line.split("=", 1) for line in p.stdout.splitlines())}

    yield start
    for d in started:
        subprocess.run([os.path.join(BIN, "djava-cluster"), "stop", "--dir", d],
                       capture_output=True, timeout=TIMEOUT, env=env)


def shard_logs(directory, shards):
    names = ["sos-server"] + [f"sos-server-{i}" for i in range(1, shards)]
    return [open(os.path.join(directory, f"{n}.log")).read() for n in names]


def recorded_address(directory, name):
    status = subprocess.run([os.path.join(BIN, "djava-cluster"), "status", "--dir", directory],
                            capture_output=True, text=True, timeout=TIMEOUT)
    m = re.search(rf"^{re.escape(name)}\s+pid (\d+)\s+(\S+)", status.stdout, re.M)
    assert m, status.stdout
    return int(m.group(1)), m.group(2)


@pytest.mark.parametrize("shards", [2, 4])
def test_programs_run_with_the_directory_split_and_every_shard_serves(shards, clusters, dist,
                                                                      tmp_path):
    d = str(tmp_path / "c")
    cluster_env = clusters(d, shards)
    for scenario, expected in [("counter", "total 1200"),
                               ("statics", "counter 2000 slots [10, 11, 12, 13]"),
                               ("latch", None)]:
        r = subprocess.run([os.path.join(BIN, "djava"), "-cp", dist, "Dist", scenario],
                           capture_output=True, text=True, timeout=TIMEOUT, env=cluster_env)
        assert r.returncode == 0, scenario + ": " + r.stdout + r.stderr
        if expected:
            assert expected in r.stdout, r.stdout
    names = ["sos-server"] + [f"sos-server-{i}" for i in range(1, shards)]
    for name in names:
        os.kill(recorded_address(d, name)[0], signal.SIGUSR1)  # statistics to the log
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        logs = shard_logs(d, shards)
        if all("statistics: " in log for log in logs):
            break
        time.sleep(0.05)
    joined = []
    for i, log in enumerate(logs):
        assert f"shard {i} of {shards}" in log, log
        assert "no garbage collection while programs run" in log, log
        nodes = set(re.findall(r"^\S+ \S+ node (\d+) \(.*\) joined over", log, re.M))
        joined.append(nodes)
        # Each shard served requests for its share of the chunks.
        grants = re.search(r"grants (\d+)", log)
        assert grants and int(grants.group(1)) > 0, f"shard {i} granted nothing:\n{log}"
    # The first shard numbered every node, and each joined every shard
    # under that number (2 thread servers and 3 programs' launchers).
    assert len(joined[0]) == 5, joined
    assert all(nodes == joined[0] for nodes in joined), joined


def test_a_killed_shard_fails_the_program_naming_it(clusters, dist, tmp_path):
    d = str(tmp_path / "c")
    cluster_env = clusters(d, 2)
    pid, address = recorded_address(d, "sos-server-1")
    p = subprocess.Popen([os.path.join(BIN, "djava"), "-cp", dist, "Dist", "linger"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=cluster_env)
    try:
        assert p.stdout.readline().strip() == "lingering"
        time.sleep(1.0)  # the sleeper runs on a thread server, holding shared objects
        os.kill(pid, signal.SIGKILL)
        out, err = p.communicate(timeout=TIMEOUT)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 1, out + err
    assert "the sleeper ended" not in out
    assert re.search(rf"djava: lost the cluster: .*sos-server {re.escape(address)}\b", err), err
    # Every thread server, busy or idle, can serve nothing without the
    # shard: each ends, saying why, within its event loop's second.
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        status = subprocess.run([os.path.join(BIN, "djava-cluster"), "status", "--dir", d],
                                capture_output=True, text=True, timeout=TIMEOUT)
        if len(re.findall(r"^thread-server-\d .* not running$", status.stdout, re.M)) == 2:
            break
        time.sleep(0.2)
    assert len(re.findall(r"^thread-server-\d .* not running$", status.stdout, re.M)) == 2, \
        status.stdout
    for i in (1, 2):
        log = open(os.path.join(d, f"thread-server-{i}.log")).read()
        assert re.search(rf"thread-server \S+: the cluster is gone: .*sos-server "
                         rf"{re.escape(address)}\b", log), log


def test_the_private_cluster_splits_the_directory_when_asked(dist, env):
    r = subprocess.run([os.path.join(BIN, "djava"), "-Xlog:dso=info", "-cp", dist, "Dist",
                        "counter"], capture_output=True, text=True, timeout=TIMEOUT,
                       env={**env, "DJAVA_SOS_SERVERS": "3"})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "total 1200" in r.stdout
    m = re.search(r"joined the cluster at \S+ as node .*sos-servers (\S+)", r.stdout)
    assert m and len(m.group(1).split(",")) == 3, r.stdout


@pytest.mark.parametrize("value", ["0", "x", "65"])
def test_a_wrong_number_of_sos_servers_is_a_clear_error(value, dist, env):
    r = subprocess.run([os.path.join(BIN, "djava"), "-cp", dist, "Dist", "counter"],
                       capture_output=True, text=True, timeout=TIMEOUT,
                       env={**env, "DJAVA_SOS_SERVERS": value})
    assert r.returncode == 1
    assert f"DJAVA_SOS_SERVERS takes a number from 1 to 64, not '{value}'" in r.stderr, r.stderr
    p = subprocess.run([os.path.join(BIN, "djava-cluster"), "start", "--sos-servers", value],
                       capture_output=True, text=True, timeout=TIMEOUT, env=env)
    assert p.returncode == 2 and "--sos-servers" in p.stderr, p.stderr
