"""djava-cluster start --hosts FILE (issue 23, item 1): the hub here, a
thread server on each host the file names, started over ssh. Network
namespaces stand for the hosts (each with its own address on a bridge, the
hub on the bridge's), and `ip netns exec NS` for ssh (--ssh): the secret
goes on its standard input, never on a command line. A host that is down,
one that ends up with another secret, and one with another djava build
each fail the start with an error naming the host, and leave nothing
running."""

import itertools
import os
import re
import signal
import subprocess

import pytest

from clusterprocs import TIMEOUT
from localprocs import BIN, ROOT, binary

SUBNET = "10.213.0"
HUB = f"{SUBNET}.1"
FIXTURES = itertools.count()

NETNS_SSH = """#!/bin/sh
# ssh HOST COMMAND, for a host that is a network namespace here. A host
# named in $WRONG_SECRET_HOST stores another secret than the one it is given.
host=$1
shift
# Each host has a home of its own, as on separate machines.
export HOME="$HOSTS_HOME/$host"
mkdir -p "$HOME"
case "$*" in
  *"cat > "*)
    if [ "$host" = "${WRONG_SECRET_HOST:-}" ]; then
      head -c 32 /dev/urandom | base64 | ip netns exec "$host" sh -c "$*"
      exit $?
    fi ;;
esac
exec ip netns exec "$host" sh -c "$*"
"""


@pytest.fixture
def hosts(tmp_path):
    """Two namespaces, HOSTS[0] and HOSTS[1], at SUBNET.2 and .3, bridged to
    this namespace at HUB; removed at teardown."""
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root")
    # Names of their own for each use: a namespace outlives its deletion
    # while a process in it is still ending, and its veth with it.
    tag = f"djt{os.getpid() % 1000}{next(FIXTURES)}"
    names = [f"{tag}a", f"{tag}b"]
    bridge = f"{tag}br"

    def ip(*args):
        subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)

    try:
        ip("link", "add", bridge, "type", "bridge")
        ip("addr", "add", f"{HUB}/24", "dev", bridge)
        ip("link", "set", bridge, "up")
        for i, ns in enumerate(names):
            ip("netns", "add", ns)
            ip("link", "add", f"{ns}v", "type", "veth", "peer", "name", "eth0", "netns", ns)
            ip("link", "set", f"{ns}v", "master", bridge, "up")
            ip("-n", ns, "addr", "add", f"{SUBNET}.{i + 2}/24", "dev", "eth0")
            ip("-n", ns, "link", "set", "eth0", "up")
            ip("-n", ns, "link", "set", "lo", "up")
        yield names
    finally:
        for ns in names:
            left = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
            for pid in left.stdout.split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
            subprocess.run(["ip", "link", "del", f"{ns}v"], capture_output=True, timeout=30)
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)
        subprocess.run(["ip", "link", "del", bridge], capture_output=True, timeout=30)


@pytest.fixture
def ssh(tmp_path):
    path = tmp_path / "netns-ssh"
    path.write_text(NETNS_SSH)
    os.chmod(path, 0o755)
    return str(path)


def start(env, tmp_path, hosts_text, ssh, extra_env=None, extra_args=()):
    (tmp_path / "hosts").write_text(hosts_text)
    return subprocess.run([binary("djava-cluster"), "start", "--listen", HUB, "--hosts",
                           str(tmp_path / "hosts"), "--ssh", ssh, "--dir", str(tmp_path / "c"),
                           *extra_args],
                          capture_output=True, text=True, timeout=2 * TIMEOUT,
                          env={**env, **(extra_env or {})})


def stop(env, tmp_path):
    return subprocess.run([binary("djava-cluster"), "stop", "--dir", str(tmp_path / "c")],
                          capture_output=True, text=True, timeout=TIMEOUT, env=env)


def thread_servers_in(ns):
    p = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True, timeout=30)
    return [pid for pid in p.stdout.split()
            if os.path.exists(f"/proc/{pid}/cmdline")
            and b"djava.runtime.ThreadServer" in open(f"/proc/{pid}/cmdline", "rb").read()]


@pytest.fixture
def host_env(env, tmp_path):
    # Each host's home (where its secret and its server's log go) is under
    # this test's (netns-ssh gives each its own).
    home = tmp_path / "home"
    home.mkdir()
    return {**env, "HOME": str(home), "HOSTS_HOME": str(tmp_path / "hosts-home")}


def test_a_thread_server_on_each_host_runs_the_programs_threads(hosts, ssh, host_env,
                                                                 tmp_path, classes):
    p = start(host_env, tmp_path, f"{hosts[0]} threads=2\n# a comment\n{hosts[1]}\n", ssh)
    try:
        assert p.returncode == 0, p.stdout + p.stderr
        cluster_env = dict(line.split("=", 1) for line in p.stdout.splitlines())
        assert cluster_env["DJAVA_CLUSTER"].startswith(f"{HUB}:"), p.stdout
        assert "0 thread server(s) here and 2 on other hosts" in p.stderr, p.stderr
        for ns in hosts:
            assert len(thread_servers_in(ns)) == 1, ns
        # The secret reached each host on ssh's input, mode 0600; no command line had it.
        secret = open(cluster_env["DJAVA_SECRET_FILE"], "rb").read()
        for ns in hosts:
            remote_dir = os.path.join(host_env["HOSTS_HOME"], ns, ".djava", "hosts")
            stored = [os.path.join(remote_dir, f) for f in os.listdir(remote_dir)
                      if f.endswith(".secret")]
            assert len(stored) == 1 and open(stored[0], "rb").read() == secret, ns
            assert os.stat(stored[0]).st_mode & 0o777 == 0o600, ns
        status = subprocess.run([binary("djava-cluster"), "status", "--dir", str(tmp_path / "c")],
                                capture_output=True, text=True, timeout=TIMEOUT, env=host_env)
        assert status.returncode == 0, status.stdout
        for ns in hosts:
            assert re.search(rf"thread-server@{ns} +pid \d+ .*running", status.stdout), \
                status.stdout
        r = subprocess.run([os.path.join(BIN, "djava"), "-cp", classes, "Family", "0"],
                           capture_output=True, text=True, timeout=TIMEOUT,
                           env={**host_env, **cluster_env}, cwd=tmp_path)
        assert r.returncode == 0, r.stdout + r.stderr
    finally:
        s = stop(host_env, tmp_path)
    assert s.returncode == 0, s.stdout + s.stderr
    assert all(f"stopped thread-server@{ns}" in s.stdout for ns in hosts), s.stdout
    for ns in hosts:
        assert thread_servers_in(ns) == [], ns


def test_hosts_share_a_directory_split_over_sos_servers_on_the_hub(hosts, ssh, host_env,
                                                                    tmp_path):
    """--sos-servers 2 with --hosts: both shards listen on the hub's address,
    and a program's threads on the hosts' thread servers share objects
    through both."""
    classes = tmp_path / "dist"
    dist = os.path.join(ROOT, "test", "py", "threads", "programs")
    subprocess.run([os.path.join(ROOT, "build", "jvm", "base-image", "bin", "javac"), "-d",
                    str(classes), os.path.join(dist, "Dist.java"),
                    os.path.join(dist, "Turnover.java")],
                   check=True, capture_output=True, timeout=TIMEOUT)
    p = start(host_env, tmp_path, f"{hosts[0]} threads=2\n{hosts[1]} threads=2\n", ssh,
              extra_args=("--sos-servers", "2"))
    try:
        assert p.returncode == 0, p.stdout + p.stderr
        cluster_env = dict(line.split("=", 1) for line in p.stdout.splitlines())
        status = subprocess.run([binary("djava-cluster"), "status", "--dir", str(tmp_path / "c")],
                                capture_output=True, text=True, timeout=TIMEOUT, env=host_env)
        for name in ("sos-server", "sos-server-1"):
            assert re.search(rf"^{name} +pid \d+ +{re.escape(HUB)}:\d+ +running", status.stdout,
                             re.M), status.stdout
        r = subprocess.run([os.path.join(BIN, "djava"), "-cp", str(classes), "Dist", "placement"],
                           capture_output=True, text=True, timeout=TIMEOUT,
                           env={**host_env, **cluster_env}, cwd=tmp_path)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "squares 0,1,4,9" in r.stdout, r.stdout
        logs = [open(tmp_path / "c" / f"{n}.log").read() for n in ("sos-server", "sos-server-1")]
        for i, log in enumerate(logs):
            # The two hosts' thread servers and the launcher joined each shard.
            joined = re.findall(r"node \d+ \(.*\) joined over", log)
            assert len(joined) == 3, f"shard {i}:\n{log}"
    finally:
        s = stop(host_env, tmp_path)
    assert s.returncode == 0, s.stdout + s.stderr


def test_a_host_that_is_down_fails_the_start_naming_it(hosts, ssh, host_env, tmp_path):
    p = start(host_env, tmp_path, f"{hosts[0]}\nno-such-host\n", ssh)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "cannot start the cluster: host no-such-host: cannot run djava" in p.stderr, p.stderr
    assert thread_servers_in(hosts[0]) == [], "the first host's server was left running"
    assert not os.path.exists(tmp_path / "c" / "cluster.json")


def test_a_host_with_another_secret_fails_the_start_naming_it(hosts, ssh, host_env, tmp_path):
    p = start(host_env, tmp_path, f"{hosts[0]}\n{hosts[1]}\n", ssh,
              extra_env={"WRONG_SECRET_HOST": hosts[1]})
    assert p.returncode == 1, p.stdout + p.stderr
    assert re.search(rf"the thread server on {hosts[1]} \(pid \d+\) ended: .*cannot join the "
                     rf"cluster at {HUB}", p.stderr), p.stderr
    for ns in hosts:
        assert thread_servers_in(ns) == [], ns


def test_a_host_with_another_build_fails_the_start_naming_it(hosts, ssh, host_env, tmp_path):
    other = tmp_path / "other-djava"
    (other / "jdk" / "bin").mkdir(parents=True)
    (other / "jdk" / "bin" / "java").write_text(
        "#!/bin/sh\necho 'djava 64-Bit Server VM (build 17.0.19+10-djava-0.0.9-0000000, "
        "mixed mode)' >&2\n")
    os.chmod(other / "jdk" / "bin" / "java", 0o755)
    p = start(host_env, tmp_path, f"{hosts[0]} prefix={other}\n", ssh)
    assert p.returncode == 1, p.stdout + p.stderr
    assert (f"host {hosts[0]} runs another djava build (djava 64-Bit Server VM (build "
            "17.0.19+10-djava-0.0.9-0000000") in p.stderr, p.stderr
    assert "install the same build on every host" in p.stderr


@pytest.mark.parametrize("hosts_text, args, why", [
    ("h1\n", ["--listen", "127.0.0.1"], "--hosts needs --listen ADDR"),
    ("h1 threads=0\n", ["--listen", HUB], "is not threads=N or prefix=/DIR"),
    ("h1\nh1\n", ["--listen", HUB], "bad or repeated host 'h1'"),
    ("# nothing\n", ["--listen", HUB], "names no host"),
])
def test_bad_hosts_files_and_options_exit_2(hosts_text, args, why, env, tmp_path):
    (tmp_path / "hosts").write_text(hosts_text)
    p = subprocess.run([binary("djava-cluster"), "start", "--hosts", str(tmp_path / "hosts"),
                        *args, "--dir", str(tmp_path / "c")], capture_output=True, text=True,
                       timeout=TIMEOUT, env=env)
    assert p.returncode == 2 and why in p.stderr, p.stderr
