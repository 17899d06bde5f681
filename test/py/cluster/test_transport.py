"""Transports (proto/wire/ucx_channel.h): a cluster whose daemons run with
--transport ucx moves every authenticated connection to UCX (shared memory
on this host) and runs a program as over TCP; by default (auto) a program
takes what the cluster offers; a party that cannot agree on a transport is
refused with a message saying so; bad choices are named."""

import os
import re
import subprocess

import pytest

from clusterprocs import TIMEOUT, alive, kill_all
from localprocs import BIN, binary
from test_djava import family
from test_djava_cluster import Commands, recorded_pids


@pytest.fixture
def ucx_cluster(env, tmp_path):
    """A cluster of 2 JVM thread servers started with --transport ucx, and
    the environment a program joins it with (DJAVA_TRANSPORT=ucx)."""
    c = Commands(BIN, env)
    d = str(tmp_path / "cluster")
    p = c.run("start", "--thread-servers", "2", "--transport", "ucx", "--dir", d)
    assert p.returncode == 0, p.stdout + p.stderr
    program_env = dict(env, DJAVA_SECRET_FILE=f"{d}/secret", DJAVA_TRANSPORT="ucx")
    program_env["DJAVA_CLUSTER"] = p.stdout.splitlines()[0].split("=", 1)[1]
    yield d, program_env
    pids = recorded_pids(d)
    c.cleanup()
    kill_all([p for p in pids if alive(p)])


def run_djava(args, env, cwd):
    return subprocess.run([binary("djava"), *args], capture_output=True, text=True,
                          timeout=TIMEOUT, env=env, cwd=cwd)


def test_a_program_runs_on_a_ucx_cluster_and_every_node_joins_over_ucx(ucx_cluster, classes,
                                                                        tmp_path):
    d, env = ucx_cluster
    p = run_djava(["-XX:+PrintDistributedStatistics", "-cp", classes, "Family", "4"], env,
                  tmp_path)
    assert p.returncode == 4, p.stdout + p.stderr
    family(p.stdout)  # its line is there: the program ran to its end
    # The launcher's own connections (thread manager, sos-server and its
    # bypass, monitor service), every one on UCX.
    m = re.search(r"connections of this node \(-XX:DjavaTransport\): (\d+) over ucx, "
                  r"(\d+) over tcp", p.stdout + p.stderr)
    assert m and int(m.group(1)) >= 3 and m.group(2) == "0", p.stdout + p.stderr
    sos_log = open(f"{d}/sos-server.log").read()
    joined = re.findall(r"node \d+ \(([^)]*)\) joined over (\w+)", sos_log)
    # The two thread servers and the program's launcher, each on UCX.
    assert len(joined) >= 3, sos_log
    assert {t for _, t in joined} == {"ucx"}, sos_log
    assert "(transport ucx)" in sos_log
    # The thread manager's connections too: each thread server's and the
    # program's.
    tm_log = open(f"{d}/thread-manager.log").read()
    over = re.findall(r"connection \d+ \([^)]*\) over (\w+)", tm_log)
    assert len(over) >= 3 and set(over) == {"ucx"}, tm_log


def test_a_tcp_program_is_refused_by_a_ucx_only_cluster_with_the_reason(ucx_cluster, classes,
                                                                         tmp_path):
    _, env = ucx_cluster
    p = run_djava(["-cp", classes, "Family", "0"], dict(env, DJAVA_TRANSPORT="tcp"), tmp_path)
    assert p.returncode != 0
    out = p.stdout + p.stderr
    assert "djava: cannot join the cluster" in out, out
    assert "takes ucx connections only" in out, out


@pytest.mark.parametrize("cluster_transport,joined_over", [(None, "ucx"), ("auto", "ucx"),
                                                           ("tcp", "tcp")])
def test_a_default_program_takes_what_the_cluster_offers(cluster_transport, joined_over, env,
                                                          classes, tmp_path):
    """Nothing said (auto on both ends): UCX here; a cluster on TCP: TCP."""
    c = Commands(BIN, env)
    d = str(tmp_path / "cluster")
    try:
        p = c.run("start", "--thread-servers", "1", "--dir", d,
                  *(["--transport", cluster_transport] if cluster_transport else []))
        assert p.returncode == 0, p.stdout + p.stderr
        cluster = p.stdout.splitlines()[0].split("=", 1)[1]
        p = run_djava(["-cp", classes, "Family", "2"],
                      dict(env, DJAVA_CLUSTER=cluster, DJAVA_SECRET_FILE=f"{d}/secret"), tmp_path)
        assert p.returncode == 2, p.stdout + p.stderr
        joined = re.findall(r"joined over (\w+)", open(f"{d}/sos-server.log").read())
        assert joined and set(joined) == {joined_over}
    finally:
        pids = recorded_pids(d)
        c.cleanup()
        kill_all([p for p in pids if alive(p)])


@pytest.mark.parametrize("daemon", ["sos-server", "thread-manager"])
def test_a_daemon_names_a_bad_transport(daemon, tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("x" * 32)
    os.chmod(secret, 0o600)
    args = [binary(daemon), "--secret-file", str(secret), "--transport", "carrier-pigeon"]
    if daemon == "thread-manager":
        args += ["--listen", "127.0.0.1:0", "--sos", "127.0.0.1:1"]
    p = subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode == 2
    assert "--transport takes auto, ucx or tcp" in p.stderr
    # The environment's choice is checked as the daemon starts, not at the
    # first connection.
    p = subprocess.run([a for a in args if a not in ("--transport", "carrier-pigeon")],
                       capture_output=True, text=True, timeout=TIMEOUT,
                       env=dict(os.environ, DJAVA_TRANSPORT="pigeon"))
    assert p.returncode == 2
    assert "DJAVA_TRANSPORT='pigeon' is not auto, ucx or tcp" in p.stderr


def test_the_vm_names_a_bad_transport(env, classes, tmp_path):
    p = run_djava(["-XX:DjavaTransport=pigeon", "-cp", classes, "Family", "0"],
                  dict(env, DJAVA_CLUSTER="127.0.0.1:1"), tmp_path)
    assert p.returncode != 0
    assert "-XX:DjavaTransport takes auto, ucx or tcp" in p.stdout + p.stderr
