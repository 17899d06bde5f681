"""build/bin/djava and clusters: with DJAVA_CLUSTER it joins that cluster (an
exec of java, with the cluster's flags); without, it runs the program in a
private cluster of its own that is gone when djava ends; a command line that
runs no program starts none. (test/py/launcher checks that djava's exit
status and streams are java's.)"""

import os
import re
import signal
import subprocess

import pytest

from clusterprocs import JAVA, TIMEOUT, alive, mentioning, wait_gone
from localprocs import binary, free_port, read_line


def djava(bindir, args, env, cwd, **kw):
    return subprocess.run([os.path.join(bindir, "djava"), *args], capture_output=True, text=True,
                          timeout=TIMEOUT, env=env, cwd=cwd, **kw)


def family(stdout):
    """Family's line: (its pid, the pids of its parent's children)."""
    m = re.search(r"^family (\d+): ([\d ]+)$", stdout, re.M)
    assert m, stdout
    return int(m.group(1)), [int(p) for p in m.group(2).split()]


def private_dirs(env):
    return sorted(os.listdir(env["TMPDIR"]))


# ---- DJAVA_CLUSTER: join the cluster named -----------------------------------------

def test_joins_the_cluster_named_by_djava_cluster(thread_manager, secret_file, env, classes,
                                                  tmp_path):
    env.update(DJAVA_CLUSTER=thread_manager, DJAVA_SECRET_FILE=secret_file)
    p = subprocess.Popen([binary("djava"), "-Xlog:dso=info", "-cp", classes, "Family", "4"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         cwd=tmp_path)
    out, err = p.communicate(timeout=TIMEOUT)
    assert p.returncode == 4, out + err
    assert f"joined the cluster at {thread_manager} as node" in out
    assert f"left the cluster at {thread_manager}" in out
    # djava became java: same process.
    assert family(out)[0] == p.pid
    assert private_dirs(env) == []


def test_without_djava_secret_file_the_vm_default_is_used(thread_manager, secret_file, env,
                                                          classes, tmp_path):
    home = tmp_path / "home"
    (home / ".djava" / "cluster").mkdir(parents=True)
    os.link(secret_file, home / ".djava" / "cluster" / "secret")
    env.update(DJAVA_CLUSTER=thread_manager, HOME=str(home))
    p = djava(os.path.dirname(binary("djava")), ["-Xlog:dso=info", "-cp", classes, "Family", "0"],
              env, tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert f"joined the cluster at {thread_manager}" in p.stdout


def test_an_unreachable_cluster_is_java_s_error(secret_file, env, classes, tmp_path):
    cluster = f"127.0.0.1:{free_port()}"
    env.update(DJAVA_CLUSTER=cluster, DJAVA_SECRET_FILE=secret_file)
    p = djava(os.path.dirname(binary("djava")), ["-cp", classes, "Family", "0"], env, tmp_path)
    assert p.returncode == 1 and "family" not in p.stdout
    assert f"djava: cannot join the cluster at {cluster}" in p.stdout + p.stderr


# ---- no program: no cluster ------------------------------------------------------------

@pytest.mark.parametrize("args", [["-version"], ["--version"], ["-help"], ["--help"], ["-X"],
                                  ["--list-modules"], ["-cp", "{cp}", "--dry-run", "Family"],
                                  ["--describe-module", "java.base"], ["-fullversion"], [],
                                  ["-cp"]],
                         ids=lambda a: " ".join(a) or "no-arguments")
@pytest.mark.parametrize("named", [False, True], ids=["no-cluster", "cluster-unreachable"])
def test_a_command_line_that_runs_no_program_starts_no_cluster(args, named, env, classes,
                                                               tmp_path):
    args = [a.format(cp=classes) for a in args]
    if named:
        # Nothing listens there: joining would fail.
        env["DJAVA_CLUSTER"] = f"127.0.0.1:{free_port()}"
    expected = subprocess.run([JAVA, *args], capture_output=True, text=True, timeout=TIMEOUT,
                              cwd=tmp_path)
    p = djava(os.path.dirname(binary("djava")), args, env, tmp_path)
    # A module's description lists sets in an order that changes from run to run.
    same = (lambda text: sorted(text.split())) if "--describe-module" in args else str
    assert p.returncode == expected.returncode
    assert same(p.stdout) == same(expected.stdout)
    assert same(p.stderr) == same(expected.stderr)
    assert private_dirs(env) == []


# ---- the private cluster ------------------------------------------------------------------

def test_private_cluster_keeps_the_exit_status_and_goes_away(cluster_bin, env, classes,
                                                             tmp_path):
    p = djava(cluster_bin, ["-cp", classes, "Family", "3"], env, tmp_path)
    assert p.returncode == 3, p.stdout + p.stderr
    assert p.stderr == ""
    me, children = family(p.stdout)
    # sos-server, thread-manager, two thread servers and java.
    assert me in children and len(children) == 5, children
    assert wait_gone(children, timeout=0.5) == []
    assert private_dirs(env) == []


def test_private_cluster_size_follows_djava_thread_servers(cluster_bin, env, classes, tmp_path):
    env["DJAVA_THREAD_SERVERS"] = "3"
    p = djava(cluster_bin, ["-cp", classes, "Family", "0"], env, tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert len(family(p.stdout)[1]) == 6


def test_heap_exhaustion_names_the_node_and_its_heap(env, classes, tmp_path):
    # -Xmx reaches the private cluster's thread servers too: the thread that
    # runs out there says so, naming that server (not the launcher) and its heap.
    p = djava(os.path.dirname(binary("djava")), ["-Xmx48m", "-cp", classes, "HeapExhaustion"],
              env, tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    m = re.search(r"^oom (\d+): Java heap space \(djava thread server [^ ]+:(\d+), "
                  r"maximum heap (\d+) MB\)$", p.stdout, re.M)
    assert m, p.stdout + p.stderr
    assert m.group(1) == m.group(2)  # the node named is the one that threw
    assert f"main {m.group(1)}" not in p.stdout  # a thread server, not the launcher
    assert 32 <= int(m.group(3)) <= 48, m.group(0)


@pytest.mark.parametrize("group", [False, True], ids=["to-djava", "to-its-process-group"])
def test_sigterm_ends_java_and_the_cluster(group, env, classes, tmp_path):
    """SIGTERM to djava is passed on to java; SIGTERM to djava's process group
    (as a terminal's ^C reaches the foreground job) reaches java and djava but
    not the daemons, which must outlive java's shutdown (stderr stays
    empty). With JVM thread servers: the VM's shutdown starts threads, which
    a stand-in thread server does not run."""
    d = subprocess.Popen([binary("djava"), "-cp", classes, "Family", "sleep"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         cwd=tmp_path, start_new_session=group)
    try:
        _, children = family(read_line(d, timeout=TIMEOUT))
        assert read_line(d, timeout=TIMEOUT) == "ready"
        assert all(alive(c) for c in children)
        if group:
            os.killpg(d.pid, signal.SIGTERM)
        else:
            d.send_signal(signal.SIGTERM)
        out, err = d.communicate(timeout=TIMEOUT)
    finally:
        d.kill()
    assert d.returncode == 143, err
    assert out == "hook ran\n" and err == ""
    assert wait_gone(children, timeout=0.5) == []
    assert private_dirs(env) == []


def test_sigquit_reaches_java_which_goes_on(env, classes, tmp_path):
    d = subprocess.Popen([binary("djava"), "-cp", classes, "Family", "sleep"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         cwd=tmp_path)
    try:
        family(read_line(d, timeout=TIMEOUT))
        assert read_line(d, timeout=TIMEOUT) == "ready"
        d.send_signal(signal.SIGQUIT)
        while not read_line(d, timeout=TIMEOUT).startswith("Full thread dump"):
            pass
        assert d.poll() is None
        d.send_signal(signal.SIGTERM)
        out, err = d.communicate(timeout=TIMEOUT)
    finally:
        d.kill()
    assert d.returncode == 143, err
    assert out.endswith("hook ran\n")


def test_killed_djava_takes_its_cluster_with_it(cluster_bin, env, classes, tmp_path):
    d = subprocess.Popen([os.path.join(cluster_bin, "djava"), "-cp", classes, "Family", "sleep"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         cwd=tmp_path)
    try:
        _, children = family(read_line(d, timeout=TIMEOUT))
        d.kill()
        d.wait(timeout=TIMEOUT)
    finally:
        d.kill()
    assert wait_gone(children) == []


def test_keep_logs_names_the_directory(cluster_bin, env, classes, tmp_path):
    env["DJAVA_KEEP_LOGS"] = "1"
    p = djava(cluster_bin, ["-cp", classes, "Family", "0"], env, tmp_path)
    assert p.returncode == 0, p.stderr
    m = re.fullmatch(r"djava: the private cluster's logs are in (\S+)\n", p.stderr)
    assert m, p.stderr
    logs = m.group(1)
    assert os.path.dirname(logs) == env["TMPDIR"]
    assert sorted(os.listdir(logs)) == ["sos-server.log", "thread-manager.log",
                                        "thread-server-1.log", "thread-server-2.log"]
    assert "stopping on SIGTERM" in open(os.path.join(logs, "thread-manager.log")).read()


def test_a_thread_server_that_fails_is_reported(stub_bin, env, classes, tmp_path):
    bindir = stub_bin("#!/bin/sh\necho \"Unrecognized VM option 'Nope'\" >&2\n"
                      "echo 'Error: Could not create the Java Virtual Machine.' >&2\nexit 1\n")
    p = djava(bindir, ["-cp", classes, "Family", "0"], env, tmp_path)
    assert p.returncode == 1 and p.stdout == ""
    m = re.fullmatch(r"djava: cannot start the private cluster: thread-server-(1|2) \(pid \d+\) "
                     r"exited with status 1: Unrecognized VM option 'Nope'; log (\S+)\n",
                     p.stderr)
    assert m, p.stderr
    assert "Unrecognized VM option" in open(m.group(2)).read()
    assert wait_gone(mentioning(env["TMPDIR"]), timeout=5) == []


def test_a_thread_server_that_never_registers_times_out(stub_bin, env, classes, tmp_path):
    # Registers under a name that is not host:pid: never counted as up.
    bindir = stub_bin(f"#!/bin/sh\nexec {binary('tm-probe')} server \"$2\" \"$4\" other 1 1000\n")
    env["DJAVA_START_TIMEOUT"] = "2"
    p = djava(bindir, ["-cp", classes, "Family", "0"], env, tmp_path)
    assert p.returncode == 1 and p.stdout == ""
    assert re.fullmatch(r"djava: cannot start the private cluster: thread-server-1 \(pid \d+\) "
                        r"had not registered with the thread manager after 2s; log \S+\n",
                        p.stderr), p.stderr
    assert wait_gone(mentioning(env["TMPDIR"]), timeout=5) == []


@pytest.mark.parametrize("value", ["x", "-1", "1000"])
def test_bad_djava_thread_servers(value, env, classes, tmp_path):
    env["DJAVA_THREAD_SERVERS"] = value
    p = djava(os.path.dirname(binary("djava")), ["-cp", classes, "Family", "0"], env, tmp_path)
    assert p.returncode == 1 and p.stdout == ""
    assert p.stderr.startswith("djava: DJAVA_THREAD_SERVERS takes a number")
