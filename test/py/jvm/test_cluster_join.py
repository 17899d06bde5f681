"""build/jdk as a cluster node: -XX:+DistributedJava loads lib/libdjava_node.so,
joins the cluster at -XX:DjavaCluster (a real thread-manager and sos-server on
loopback), registers the program, and leaves at exit; failures to join end the
VM at start-up with a message saying what could not be reached and why."""

import os
import re
import signal
import subprocess
import time

import pytest

from localprocs import JAVA, JAVAC, JDK, ROOT, free_port, read_line, write_secret


PROGRAM = """
public class Node {
    public static void main(String[] args) throws Exception {
        System.out.println("running " + String.join(" ", args));
        System.out.flush();
        if (args.length > 0 && args[0].equals("sleep")) Thread.sleep(60_000);
        if (args.length > 0 && args[0].equals("exit")) System.exit(Integer.parseInt(args[1]));
    }
}
"""


@pytest.fixture(scope="module")
def classes(tmp_path_factory):
    out = tmp_path_factory.mktemp("node-classes")
    (out / "Node.java").write_text(PROGRAM)
    subprocess.run([JAVAC, "-d", str(out), str(out / "Node.java")], check=True)
    return str(out)


def java(classes, *options, args=(), timeout=120):
    return subprocess.run([JAVA, *options, "-cp", classes, "Node", *args],
                          capture_output=True, text=True, timeout=timeout)


def member(cluster, secret):
    return ["-XX:+DistributedJava", f"-XX:DjavaCluster={cluster}", f"-XX:DjavaSecretFile={secret}",
            "-Xlog:dso=info"]


def wait_for_log(procs, pattern, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        log = procs.stderr_of(procs.thread_manager)
        if re.search(pattern, log, re.M):
            return log
        time.sleep(0.05)
    raise AssertionError(f"thread-manager never logged {pattern!r}:\n{log}")


def test_joins_registers_runs_and_leaves(procs, thread_manager, secret_file, classes):
    p = java(classes, *member(thread_manager, secret_file), args=("a", "b"))
    assert p.returncode == 0, p.stdout + p.stderr
    assert "running a b" in p.stdout
    joined = re.search(rf"joined the cluster at {thread_manager} as node \S+:\d+ "
                       r"\(sos node \d+\), program (\d+) with (\d+) processors, "
                       r"sos-servers 127\.0\.0\.1:\d+", p.stdout)
    assert joined, p.stdout
    assert f"left the cluster at {thread_manager}" in p.stdout
    program = joined.group(1)
    # The manager saw the program come and end as the JVM said, not by a
    # dropped connection.
    log = wait_for_log(procs, rf"program {program} ended: the launching JVM exited")
    # With no thread server registered, the program sees the launcher's
    # processors, as the manager fixed them.
    processors = joined.group(2)
    assert re.search(rf"program {program} from \S+ registered, {processors} processors", log)


def test_system_exit_status_is_kept_and_the_program_ends(procs, thread_manager, secret_file,
                                                         classes):
    p = java(classes, *member(thread_manager, secret_file), args=("exit", "7"))
    assert p.returncode == 7, p.stdout + p.stderr
    program = re.search(r"program (\d+)", p.stdout).group(1)
    wait_for_log(procs, rf"program {program} ended: the launching JVM exited")


def test_killed_launcher_ends_its_program(procs, thread_manager, secret_file, classes):
    p = procs.start([JAVA, *member(thread_manager, secret_file), "-cp", classes, "Node", "sleep"])
    lines = []
    while not any(l.startswith("running") for l in lines):
        line = read_line(p, timeout=60)
        assert line, "the node exited early: " + procs.stderr_of(p)
        lines.append(line)
    program = re.search(r"program (\d+)", "\n".join(lines)).group(1)
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=10)
    wait_for_log(procs, rf"program {program} ended: its launcher disconnected")


def test_wrong_secret_is_refused_at_start_up(thread_manager, tmp_path, classes):
    wrong = write_secret(tmp_path / "wrong.secret")
    p = java(classes, *member(thread_manager, wrong))
    assert p.returncode == 1
    assert "running" not in p.stdout
    assert f"djava: cannot join the cluster at {thread_manager}" in p.stdout + p.stderr
    assert re.search(r"auth|secret", p.stdout + p.stderr, re.I), p.stdout + p.stderr


def test_nothing_listening_is_a_clear_error(secret_file, classes):
    cluster = f"127.0.0.1:{free_port()}"
    p = java(classes, *member(cluster, secret_file))
    assert p.returncode == 1 and "running" not in p.stdout
    assert f"djava: cannot join the cluster at {cluster}" in p.stdout + p.stderr
    assert re.search(r"refused|connect", p.stdout + p.stderr, re.I), p.stdout + p.stderr


def test_unreadable_secret_file_is_named(thread_manager, tmp_path, classes):
    missing = str(tmp_path / "no-such-secret")
    p = java(classes, *member(thread_manager, missing))
    assert p.returncode == 1 and "running" not in p.stdout
    assert missing in p.stdout + p.stderr


def test_distribution_needs_a_cluster_address(classes):
    p = java(classes, "-XX:+DistributedJava")
    assert p.returncode == 1 and "running" not in p.stdout
    assert "-XX:+DistributedJava needs the cluster's address" in p.stdout + p.stderr


def test_a_missing_node_library_is_named(thread_manager, secret_file, classes, tmp_path):
    library = str(tmp_path / "libdjava_node.so")
    p = java(classes, "-XX:+UnlockDiagnosticVMOptions", f"-XX:DjavaNodeLibrary={library}",
             *member(thread_manager, secret_file))
    assert p.returncode == 1 and "running" not in p.stdout
    assert "djava: cannot load the node library" in p.stdout + p.stderr
    assert library in p.stdout + p.stderr


def test_without_distribution_no_cluster_is_contacted(classes):
    # The address names a closed port: an attempt to join would fail the VM.
    p = java(classes, f"-XX:DjavaCluster=127.0.0.1:{free_port()}", "-Xlog:dso=info", args=("x",))
    assert p.returncode == 0, p.stdout + p.stderr
    assert "running x" in p.stdout
    assert "joined" not in p.stdout
