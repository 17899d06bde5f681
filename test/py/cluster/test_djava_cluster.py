"""build/bin/djava-cluster: start, status and stop a whole cluster on this
workstation as background daemons recorded in a directory."""

import json
import os
import re
import signal
import stat
import subprocess

import pytest

from clusterprocs import TIMEOUT, alive, kill_all, mentioning, wait_gone
from localprocs import binary


class Commands:
    """djava-cluster from one bin directory, in one environment; whatever it
    started is stopped (and then killed) at teardown."""

    def __init__(self, bindir, env):
        self.bindir = bindir
        self.env = env
        self.dirs = set()

    def run(self, *args, extra_env=None):
        d = args[args.index("--dir") + 1] if "--dir" in args else None
        if d:
            self.dirs.add(d)
        return subprocess.run([os.path.join(self.bindir, "djava-cluster"), *args],
                              capture_output=True, text=True, timeout=TIMEOUT,
                              env={**self.env, **(extra_env or {})})

    def cleanup(self):
        for d in self.dirs:
            pids = recorded_pids(d)
            self.run("stop", "--dir", d)
            kill_all([p for p in pids if alive(p)])


def recorded(directory):
    try:
        with open(os.path.join(directory, "cluster.json")) as f:
            return json.load(f)
    except FileNotFoundError:
        return None


def recorded_pids(directory):
    state = recorded(directory)
    return [d["pid"] for d in state["daemons"]] if state else []


@pytest.fixture
def cluster_cmd(cluster_bin, env):
    c = Commands(cluster_bin, env)
    yield c
    c.cleanup()


def test_start_status_stop_round_trip(cluster_cmd, tmp_path):
    d = str(tmp_path / "cluster")
    p = cluster_cmd.run("start", "--thread-servers", "2", "--dir", d)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert len(lines) == 2 and re.fullmatch(r"DJAVA_CLUSTER=127\.0\.0\.1:\d+", lines[0]), p.stdout
    assert lines[1] == f"DJAVA_SECRET_FILE={d}/secret"
    cluster = lines[0].split("=", 1)[1]
    assert stat.S_IMODE(os.stat(f"{d}/secret").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(d).st_mode) == 0o700

    names = ["sos-server", "thread-manager", "thread-server-1", "thread-server-2"]
    pids = {}
    for name in names:
        with open(f"{d}/{name}.pid") as f:
            pids[name] = int(f.read())
        assert alive(pids[name]), name
        assert os.path.getsize(f"{d}/{name}.log") > 0 or name.startswith("thread-server")
    # Every thread server registered (as host:pid) before start returned.
    tm_log = open(f"{d}/thread-manager.log").read()
    for name in names[2:]:
        assert re.search(rf"server '\S+:{pids[name]}' \(id \d+, capacity \d+\) registered",
                         tm_log), tm_log
    # Daemons: each in a session of its own, surviving the command.
    for pid in pids.values():
        assert os.getsid(pid) == pid

    p = cluster_cmd.run("status", "--dir", d)
    assert p.returncode == 0, p.stdout + p.stderr
    for name in names:
        assert re.search(rf"^{name}\s+pid {pids[name]}\s.*\srunning$", p.stdout, re.M), p.stdout
    assert re.search(rf"^thread-manager\s+pid \d+\s+{re.escape(cluster)}\s", p.stdout, re.M)

    p = cluster_cmd.run("stop", "--dir", d)
    assert p.returncode == 0, p.stdout + p.stderr
    assert wait_gone(list(pids.values()), timeout=1) == []
    for name in names:
        assert f"stopped {name} (pid {pids[name]})" in p.stdout
        assert not os.path.exists(f"{d}/{name}.pid")
        assert os.path.exists(f"{d}/{name}.log")  # the logs stay
    assert os.path.exists(f"{d}/secret")

    p = cluster_cmd.run("status", "--dir", d)
    assert p.returncode == 3, p.stdout
    p = cluster_cmd.run("stop", "--dir", d)
    assert p.returncode == 0, p.stdout + p.stderr


def test_start_refuses_while_the_recorded_cluster_runs(cluster_cmd, tmp_path):
    d = str(tmp_path / "c")
    first = cluster_cmd.run("start", "--thread-servers", "1", "--dir", d)
    assert first.returncode == 0, first.stderr
    pids = recorded_pids(d)
    again = cluster_cmd.run("start", "--thread-servers", "1", "--dir", d)
    assert again.returncode == 1
    assert again.stdout == ""
    assert "is running" in again.stderr and "djava-cluster stop" in again.stderr, again.stderr
    assert recorded_pids(d) == pids and all(alive(p) for p in pids)


def test_status_is_1_when_some_run_and_stop_names_the_gone(cluster_cmd, tmp_path):
    d = str(tmp_path / "c")
    assert cluster_cmd.run("start", "--thread-servers", "2", "--dir", d).returncode == 0
    victim = int(open(f"{d}/thread-server-1.pid").read())
    os.kill(victim, signal.SIGKILL)
    assert wait_gone([victim]) == []
    p = cluster_cmd.run("status", "--dir", d)
    assert p.returncode == 1, p.stdout
    assert re.search(rf"^thread-server-1\s+pid {victim}\s.*not running$", p.stdout, re.M)
    assert re.search(r"^thread-server-2\s.*\srunning$", p.stdout, re.M)
    p = cluster_cmd.run("stop", "--dir", d)
    assert p.returncode == 0
    assert f"thread-server-1 (pid {victim}) was not running" in p.stdout


def test_status_is_3_when_none_run_and_start_replaces_a_dead_cluster(cluster_cmd, tmp_path):
    d = str(tmp_path / "c")
    assert cluster_cmd.run("start", "--thread-servers", "1", "--dir", d).returncode == 0
    old = recorded_pids(d)
    kill_all(old)
    assert wait_gone(old) == []
    assert cluster_cmd.run("status", "--dir", d).returncode == 3
    p = cluster_cmd.run("start", "--thread-servers", "1", "--dir", d)
    assert p.returncode == 0, p.stderr
    assert set(recorded_pids(d)).isdisjoint(old)


def test_nothing_recorded(cluster_cmd, tmp_path):
    d = str(tmp_path / "never")
    p = cluster_cmd.run("status", "--dir", d)
    assert p.returncode == 3 and "no cluster recorded" in p.stdout
    p = cluster_cmd.run("stop", "--dir", d)
    assert p.returncode == 0 and "no cluster recorded" in p.stderr


def test_existing_secret_is_kept(cluster_cmd, tmp_path):
    d = tmp_path / "c"
    d.mkdir(mode=0o700)
    (d / "secret").write_text("an existing secret of at least thirty-two bytes\n")
    os.chmod(d / "secret", 0o600)
    assert cluster_cmd.run("start", "--thread-servers", "1", "--dir", str(d)).returncode == 0
    assert (d / "secret").read_text() == "an existing secret of at least thirty-two bytes\n"


def test_default_dir_is_home_djava_cluster(cluster_cmd, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    d = str(home / ".djava" / "cluster")
    cluster_cmd.dirs.add(d)
    p = cluster_cmd.run("start", "--thread-servers", "1", extra_env={"HOME": str(home)})
    assert p.returncode == 0, p.stderr
    # The VM finds ~/.djava/cluster/secret by itself: no DJAVA_SECRET_FILE line.
    assert re.fullmatch(r"DJAVA_CLUSTER=127\.0\.0\.1:\d+\n", p.stdout), p.stdout
    assert stat.S_IMODE(os.stat(f"{d}/secret").st_mode) == 0o600
    assert cluster_cmd.run("status", extra_env={"HOME": str(home)}).returncode == 0
    assert cluster_cmd.run("stop", extra_env={"HOME": str(home)}).returncode == 0
    assert not os.path.exists(f"{d}/sos-server.pid")


def test_a_program_runs_in_the_cluster(cluster_cmd, tmp_path, classes):
    d = str(tmp_path / "c")
    p = cluster_cmd.run("start", "--thread-servers", "1", "--dir", d)
    assert p.returncode == 0, p.stderr
    cluster_env = dict(line.split("=", 1) for line in p.stdout.splitlines())
    r = subprocess.run([os.path.join(cluster_cmd.bindir, "djava"), "-Xlog:dso=info", "-cp",
                        classes, "Family", "0"], capture_output=True, text=True,
                       timeout=TIMEOUT, env={**cluster_cmd.env, **cluster_env}, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"joined the cluster at {cluster_env['DJAVA_CLUSTER']}" in r.stdout


def test_listen_puts_the_hub_on_another_address_that_a_thread_server_joins(cluster_cmd,
                                                                           tmp_path, classes):
    # 127.0.0.2 stands for this host's address on a network: the hub listens
    # there only, and a thread server started apart (as on another host, with
    # a copy of the secret) joins it and runs the program's thread.
    d = str(tmp_path / "c")
    p = cluster_cmd.run("start", "--listen", "127.0.0.2", "--thread-servers", "0", "--dir", d)
    assert p.returncode == 0, p.stderr
    cluster_env = dict(line.split("=", 1) for line in p.stdout.splitlines())
    assert cluster_env["DJAVA_CLUSTER"].startswith("127.0.0.2:"), p.stdout
    assert all(daemon["address"].startswith("127.0.0.2:")
               for daemon in recorded(d)["daemons"]), recorded(d)
    secret_copy = tmp_path / "copied-secret"
    secret_copy.write_bytes(open(cluster_env["DJAVA_SECRET_FILE"], "rb").read())
    os.chmod(secret_copy, 0o600)
    server = subprocess.Popen([os.path.join(cluster_cmd.bindir, "thread-server"), "--cluster",
                               cluster_env["DJAVA_CLUSTER"], "--secret-file", str(secret_copy),
                               "--threads", "2"], cwd=tmp_path, env=cluster_cmd.env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        r = subprocess.run([os.path.join(cluster_cmd.bindir, "djava"), "-cp", classes, "Family",
                            "0"], capture_output=True, text=True, timeout=TIMEOUT,
                           env={**cluster_cmd.env, **cluster_env}, cwd=tmp_path)
        assert r.returncode == 0, r.stdout + r.stderr
        log = open(os.path.join(d, "thread-manager.log")).read()
        assert re.search(rf"server '\S+:{server.pid}' \(id \d+, capacity 2\) registered", log), log
    finally:
        server.terminate()
        server.wait(timeout=TIMEOUT)


@pytest.mark.parametrize("address, why", [("0.0.0.0", "is every address, not one"),
                                          ("::", "is every address, not one"),
                                          ("hub.example.org", "is not an IP address")])
def test_listen_takes_one_ip_address(address, why, env):
    p = subprocess.run([binary("djava-cluster"), "start", "--listen", address],
                       capture_output=True, text=True, timeout=TIMEOUT, env=env)
    assert p.returncode == 2 and why in p.stderr, p.stderr


def test_a_daemon_that_cannot_start_fails_the_start_and_nothing_stays(stub_bin, env, tmp_path):
    bindir = stub_bin("#!/bin/sh\necho 'thread-server: no way' >&2\nexit 1\n")
    cmd = Commands(bindir, env)
    d = str(tmp_path / "c")
    try:
        p = cmd.run("start", "--thread-servers", "1", "--dir", d)
        assert p.returncode == 1 and p.stdout == ""
        assert re.fullmatch(r"djava-cluster: cannot start the cluster: thread-server-1 \(pid \d+\) "
                            rf"exited with status 1: thread-server: no way; log {d}/"
                            r"thread-server-1\.log\n", p.stderr), p.stderr
        assert recorded(d) is None and not os.path.exists(f"{d}/sos-server.pid")
        assert wait_gone_mentioning(d) == []
    finally:
        cmd.cleanup()


def wait_gone_mentioning(text):
    return wait_gone(mentioning(text), timeout=5)


@pytest.mark.parametrize("args", [["start", "--thread-servers", "x"], ["start", "--bogus"],
                                  ["restart"], [], ["start", "--threads", "0"]])
def test_bad_arguments_exit_2(args, env):
    p = subprocess.run([binary("djava-cluster"), *args], capture_output=True, text=True,
                       timeout=TIMEOUT, env=env)
    assert p.returncode == 2 and "usage: djava-cluster" in p.stderr, p.stderr
