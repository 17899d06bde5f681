"""make install PREFIX=DIR (jvm/install-djava; issue 23, item 1): djava on a
host with no build tree. The installed commands run a program on a cluster
whose every process comes from DIR, the installed thread server joins a
cluster started by the installed djava-cluster (as its systemd unit runs
it), and the unit passes systemd's own check."""

import os
import re
import subprocess
import time

import pytest

from jdk_paths import BUILD, TOP

INSTALL = os.path.join(TOP, "jvm", "install-djava")
TIMEOUT = 180


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    """An installation, made once for the module."""
    dest = tmp_path_factory.mktemp("install") / "opt" / "djava"
    p = subprocess.run([INSTALL, BUILD, str(dest)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    return str(dest)


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJAVA_")}
    env.update(extra)
    return env


def run_where_am_i(djava, classes, env):
    p = subprocess.run([djava, "-cp", classes, "WhereAmI"], capture_output=True, text=True,
                       timeout=TIMEOUT, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    where = dict(line.split(" ", 1) for line in p.stdout.splitlines() if " " in line)
    return [where[k].rsplit(" ", 1) for k in ("main", "thread")]


def test_installed_commands_run_a_program_from_the_installed_image(prefix, classes):
    image = os.path.join(prefix, "lib", "djava", "jdk")
    (main_home, main_pid), (thread_home, thread_pid) = run_where_am_i(
        os.path.join(prefix, "bin", "djava"), classes, clean_env(DJAVA_THREAD_SERVERS="1"))
    assert os.path.realpath(main_home) == os.path.realpath(image)
    assert os.path.realpath(thread_home) == os.path.realpath(image)
    assert thread_pid != main_pid, "the thread did not run on a thread server"
    # No installed script or unit names the build tree: a host has none. (The
    # daemons' debug information names their sources; nothing looks there.)
    for d in ("bin", "lib/djava/bin", "lib/systemd/system"):
        for name in os.listdir(os.path.join(prefix, d)):
            path = os.path.join(prefix, d, name)
            with open(path, "rb") as f:
                text = f.read()
            if not text.startswith(b"\x7fELF"):
                assert BUILD.encode() not in text, path
    assert os.path.realpath(os.path.join(prefix, "lib", "djava", "djava-home", "bin", "java")) \
        == os.path.realpath(os.path.join(prefix, "lib", "djava", "bin", "djava"))


def test_installed_thread_server_joins_a_cluster_as_its_unit_starts_it(prefix, classes,
                                                                        tmp_path):
    bin_dir = os.path.join(prefix, "bin")
    cluster_dir = tmp_path / "hub"
    env = clean_env()
    p = subprocess.run([os.path.join(bin_dir, "djava-cluster"), "start", "--thread-servers", "0",
                        "--dir", str(cluster_dir)], capture_output=True, text=True,
                       timeout=TIMEOUT, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    address = re.search(r"^DJAVA_CLUSTER=(\S+)$", p.stdout, re.M).group(1)
    secret = str(cluster_dir / "secret")
    server = None
    try:
        # The unit's ExecStart, with its variables as systemd would expand them.
        unit = open(os.path.join(prefix, "lib", "systemd", "system",
                                 "djava-thread-server.service")).read()
        exec_start = re.search(r"^ExecStart=(.*)$", unit, re.M).group(1)
        command = (exec_start.replace("${DJAVA_CLUSTER}", address)
                   .replace("${CREDENTIALS_DIRECTORY}/secret", secret)
                   .replace("$DJAVA_THREAD_SERVER_OPTIONS", "--threads 2")).split()
        assert command[0] == os.path.join(bin_dir, "thread-server"), exec_start
        server = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
        log = cluster_dir / "thread-manager.log"
        deadline = time.monotonic() + TIMEOUT
        while f":{server.pid}' (id" not in log.read_text():
            assert time.monotonic() < deadline and server.poll() is None, log.read_text()
            time.sleep(0.1)
        (_, main_pid), (thread_home, thread_pid) = run_where_am_i(
            os.path.join(bin_dir, "djava"), classes,
            clean_env(DJAVA_CLUSTER=address, DJAVA_SECRET_FILE=secret))
        assert thread_pid == str(server.pid), "the thread did not run on the installed server"
        assert os.path.realpath(thread_home) == os.path.realpath(
            os.path.join(prefix, "lib", "djava", "jdk"))
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=60)
        subprocess.run([os.path.join(bin_dir, "djava-cluster"), "stop", "--dir", str(cluster_dir)],
                       capture_output=True, timeout=TIMEOUT, env=env)


FAKE_SRUN = """#!/bin/bash
# srun --ntasks=N --ntasks-per-node=1 COMMAND...: N copies of COMMAND on this
# host, stopped with it (as srun forwards SIGTERM to its tasks).
n=${1#--ntasks=}
shift 2
trap 'kill $(jobs -p) 2>/dev/null; wait' TERM
for _ in $(seq "$n"); do "$@" & done
wait
"""


def test_the_slurm_batch_script_runs_a_program_on_every_node(prefix, classes, tmp_path):
    # Slurm is not here: srun runs the allocation's tasks on this host, and
    # 127.0.0.2 stands for the first node's address.
    fake = tmp_path / "fake-bin"
    fake.mkdir()
    (fake / "srun").write_text(FAKE_SRUN)
    os.chmod(fake / "srun", 0o755)
    home = tmp_path / "home"
    home.mkdir()
    env = clean_env(PATH=f"{fake}:{os.path.join(prefix, 'bin')}:{os.environ['PATH']}",
                    HOME=str(home), SLURM_JOB_ID="42", SLURM_NNODES="2",
                    DJAVA_HUB_ADDRESS="127.0.0.2")
    script = os.path.join(prefix, "lib", "djava", "slurm", "djava.sbatch")
    p = subprocess.run([script, "-cp", classes, "WhereAmI"], capture_output=True, text=True,
                       timeout=TIMEOUT, env=env, cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    where = dict(line.split(" ", 1) for line in p.stdout.splitlines() if " " in line)
    main_pid, thread_pid = where["main"].rsplit(" ", 1)[1], where["thread"].rsplit(" ", 1)[1]
    assert thread_pid != main_pid, p.stdout
    log = (home / ".djava" / "slurm-42" / "thread-manager.log").read_text()
    registered = re.findall(r"server '\S+:(\d+)' \(id \d+, capacity \d+\) registered", log)
    assert len(registered) == 2 and thread_pid in registered, log
    # Everything the job started has stopped with it.
    deadline = time.monotonic() + 60
    while any(os.path.exists(f"/proc/{pid}") for pid in registered):
        assert time.monotonic() < deadline, f"thread servers {registered} outlived the job"
        time.sleep(0.2)


def test_the_unit_passes_systemds_check(prefix):
    unit = os.path.join(prefix, "lib", "systemd", "system", "djava-thread-server.service")
    p = subprocess.run(["systemd-analyze", "verify", unit], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0 and p.stderr.strip() == "", p.stdout + p.stderr


def test_install_refuses_a_relative_prefix_and_a_missing_build(tmp_path):
    p = subprocess.run([INSTALL, BUILD, "relative/dir"], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 2 and "PREFIX must be an absolute path" in p.stderr, p.stderr
    p = subprocess.run([INSTALL, str(tmp_path), str(tmp_path / "out")], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 1 and "is missing (run make first)" in p.stderr, p.stderr
    assert not (tmp_path / "out").exists()
