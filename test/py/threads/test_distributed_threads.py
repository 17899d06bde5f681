"""A program's threads run on thread servers: real daemons on loopback (a
sos-server, a thread-manager, two thread-server JVMs) and a launching JVM
with -XX:+DistributedJava. The program (programs/Dist.java) is compiled into
a directory only the launcher has on its class path: the servers get its
classes through the cluster. Each scenario checks results, where threads
ran, console output, exit status and failures."""

import os
import re
import signal
import subprocess
import time

import pytest

from localprocs import JAVA, JAVAC, JDK, ROOT, node_options, read_line

PROGRAMS = os.path.join(os.path.dirname(__file__), "programs")


@pytest.fixture(scope="module")
def classes(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist-classes")
    subprocess.run([JAVAC, "-d", str(out), os.path.join(PROGRAMS, "Dist.java"),
                    os.path.join(PROGRAMS, "Turnover.java")], check=True)
    return str(out)


def wait_for(procs, proc, pattern, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        log = procs.stderr_of(proc)
        if len(re.findall(pattern, log, re.M)) > 0:
            return log
        time.sleep(0.05)
    raise AssertionError(f"never saw {pattern!r} in:\n{procs.stderr_of(proc)}")


def run(cluster, secret_file, classes, scenario, timeout=180):
    address, _ = cluster
    return subprocess.run([JAVA, *node_options(address, secret_file), "-cp", classes, "Dist",
                           scenario], capture_output=True, text=True, timeout=timeout)


def test_four_threads_run_on_both_servers_in_other_processes(cluster, secret_file, classes):
    p = run(cluster, secret_file, classes, "placement")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "squares 0,1,4,9" in p.stdout
    m = re.search(r"launcher (\d+) workers \[([\d, ]+)\]", p.stdout)
    launcher, workers = m.group(1), set(m.group(2).split(", "))
    server_pids = {str(s.pid) for s in cluster[1]}
    assert launcher not in workers
    assert workers == server_pids, "4 threads on 2 servers must use both"


def test_statics_are_shared_and_initialized_once(cluster, secret_file, classes):
    p = run(cluster, secret_file, classes, "statics")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "counter 2000 slots [10, 11, 12, 13]" in p.stdout
    stamp = re.search(r"main saw (stamp-\d+)", p.stdout).group(1)
    seen = re.findall(r"bumper \d saw (stamp-\d+)", p.stdout)
    assert seen == [stamp] * 4, "<clinit> ran again on a thread server"


def test_synchronized_counter_is_exact(cluster, secret_file, classes):
    p = run(cluster, secret_file, classes, "counter")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "total 1200" in p.stdout


def test_thread_started_while_its_group_is_locked(cluster, secret_file, classes):
    """The launcher's shared-object cache attaches its thread to the VM on
    its first callback (here: the server fetching the new thread), which
    constructs a java.lang.Thread and so locks a thread group; it used the
    main group, which the starter held: both waited until sos-server cut
    the launcher off after 30 s. The starter holds the group until the
    thread has run, then joins it (its Thread.exit takes the group's
    monitor, as on java)."""
    p = run(cluster, secret_file, classes, "group-locked", timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "group-locked start ended, box 42" in p.stdout, p.stdout + p.stderr


def test_threads_started_without_a_reference_all_run(cluster, secret_file, classes):
    """A server starting threads it keeps no reference to, with GCs between:
    one placed back on that server found no replica of its Thread object
    (GC had taken it, the cache's copy remained) and never ran."""
    p = run(cluster, secret_file, classes, "unreferenced-starts", timeout=150)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "unreferenced starts: all ran" in p.stdout, p.stdout + p.stderr


def test_bounded_buffer_with_wait_and_notify_all(cluster, secret_file, classes):
    p = run(cluster, secret_file, classes, "buffer")
    assert p.returncode == 0, p.stdout + p.stderr
    m = re.search(r"consumed (\d+) expected (\d+)", p.stdout)
    assert m and m.group(1) == m.group(2), p.stdout


def test_uncaught_exception_is_reported_at_the_launcher(cluster, secret_file, classes):
    p = run(cluster, secret_file, classes, "uncaught")
    assert p.returncode == 0, p.stdout + p.stderr
    assert 'Exception in thread "boomer" java.lang.IllegalStateException: boom on a thread server' \
        in p.stderr
    assert re.search(r"^\tat Dist\$Boom\.run\(Dist\.java:\d+\)$", p.stderr, re.M), p.stderr
    assert "after boom alive=false" in p.stdout


def test_system_exit_on_a_thread_server_ends_the_program_with_its_status(cluster, secret_file,
                                                                        classes):
    p = run(cluster, secret_file, classes, "exit", timeout=60)
    assert p.returncode == 7, p.stdout + p.stderr
    assert "exiting with 7" in p.stdout
    assert "main after join" not in p.stdout, "main's join returned before the exit"
    assert "still here" not in p.stdout
    assert p.stderr == "", "an exit is silent, as java's"


def test_threads_blocked_in_the_cluster_stop_silently_when_the_program_exits(cluster,
                                                                             secret_file, classes):
    # main waits on a shared monitor when the exit arrives: the node leaves
    # the cluster while main is blocked in it, and main must simply stop, as
    # threads of an exiting java do (not fail with a lost connection).
    p = run(cluster, secret_file, classes, "exit-while-waiting", timeout=60)
    assert p.returncode == 9, p.stdout + p.stderr
    assert "exiting with 9" in p.stdout
    assert "still here" not in p.stdout
    assert p.stderr == "", p.stderr


def test_remote_console_lines_are_whole_and_in_order_per_thread(cluster, secret_file, classes):
    p = run(cluster, secret_file, classes, "console")
    assert p.returncode == 0, p.stdout + p.stderr
    for k in range(3):
        lines = [l for l in p.stdout.splitlines() if l.startswith(f"talker {k} ")]
        assert lines == [f"talker {k} line {i}" for i in range(20)]
        assert f"talker {k} done" in p.stderr.splitlines()
    assert p.stdout.splitlines()[-1] == "console done"


def test_latches_and_atomics_work_across_nodes(cluster, secret_file, classes):
    p = run(cluster, secret_file, classes, "latch")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "latched sum 1000" in p.stdout


def test_interrupting_a_thread_waiting_on_another_node(cluster, secret_file, classes):
    p = run(cluster, secret_file, classes, "interrupt")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "waiter interrupted alive=false" in p.stdout


def test_a_volatile_flag_set_here_is_seen_by_a_thread_spinning_elsewhere(cluster, secret_file,
                                                                       classes):
    p = run(cluster, secret_file, classes, "spin")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "spinner saw the flag true alive=false" in p.stdout


def test_is_alive_and_daemon_threads(cluster, secret_file, classes):
    p = run(cluster, secret_file, classes, "alive", timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "before start alive=false" in p.stdout
    assert "started alive=true" in p.stdout


def test_a_killed_thread_server_fails_the_program_with_a_clear_error(cluster, secret_file, classes,
                                                                    procs):
    address, servers = cluster
    p = procs.start([JAVA, *node_options(address, secret_file), "-cp", classes, "Dist", "linger"])
    assert read_line(p, timeout=60) == "lingering"
    time.sleep(1.0)  # the sleeper is running on a server by now
    for s in servers:
        s.send_signal(signal.SIGKILL)
    out, _ = p.communicate(timeout=90)
    err = procs.stderr_of(p)
    assert p.returncode == 1, out + err
    assert "the sleeper ended" not in out
    # The reason names the server (its name is host:pid).
    server_pids = "|".join(str(s.pid) for s in servers)
    assert re.search(rf"djava: the program failed: .*\S+:({server_pids})\b", err), err


def program_frames(server):
    """The lines of a thread dump of the server JVM (jcmd) that show the test
    program's frames."""
    dump = subprocess.run([os.path.join(JDK, "bin", "jcmd"), str(server.pid), "Thread.print"],
                          capture_output=True, text=True, timeout=60)
    assert "Full thread dump" in dump.stdout, dump.stdout + dump.stderr
    return [line for line in dump.stdout.splitlines() if "at Dist" in line]


def test_a_killed_launchers_threads_end_on_the_servers(cluster, secret_file, classes, procs):
    # One thread sleeps for a minute, one waits on a shared monitor forever:
    # when their launcher dies, the servers drop the program and neither
    # thread may live on there.
    address, servers = cluster
    p = procs.start([JAVA, *node_options(address, secret_file), "-cp", classes, "Dist",
                     "stranded"])
    assert read_line(p, timeout=60) == "stranded"
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=10)
    deadline = time.monotonic() + 20
    left = None
    while time.monotonic() < deadline:
        left = [f for s in servers for f in program_frames(s)]
        if not left:
            break
        time.sleep(0.5)
    assert not left, "threads of the dead program still run:\n" + "\n".join(left)
    # The servers serve the next program.
    q = run(cluster, secret_file, classes, "counter")
    assert q.returncode == 0 and "total 1200" in q.stdout, q.stdout + q.stderr


@pytest.mark.parametrize("starter", ["never-ran", "never-ran-nested"])
def test_a_thread_no_server_can_start_is_dead_and_says_why(cluster, secret_file, classes,
                                                           tmp_path, starter):
    # Its class was defined at run time, so no server can load it: the
    # start fails there, and its starter must not wait for it forever,
    # whether the starter is main or a thread on a thread server (whose
    # thread the launcher never saw).
    hidden = tmp_path / "hidden"
    subprocess.run([JAVAC, "-d", str(hidden), os.path.join(PROGRAMS, "hidden", "Hidden.java")],
                   check=True)
    address, _ = cluster
    p = subprocess.run([JAVA, *node_options(address, secret_file), "-cp", classes, "Dist",
                        starter, str(hidden / "Hidden.class")],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "joined alive=false state=TERMINATED quick=true" in p.stdout, p.stdout + p.stderr
    assert "hidden ran" not in p.stdout
    assert re.search(r'djava: thread ("Thread-\d+"|[0-9a-f]+) never ran: .*NoClassDefFoundError: Hidden',
                     p.stderr), p.stderr


def dist_with_statistics(classes, what):
    """Runs `Dist what` on 2 thread servers with every node's statistics;
    the finished run (asserted to exit 0)."""
    p = subprocess.run([os.path.join(ROOT, "build", "bin", "djava"),
                        "-XX:+PrintDistributedStatistics", "-cp", classes, "Dist", what],
                       capture_output=True, text=True, timeout=180,
                       env={**os.environ, "DJAVA_THREAD_SERVERS": "2"})
    assert p.returncode == 0, p.stdout + p.stderr
    return p


def stats_rows(text, header):
    """The class rows of the statistics block whose header line contains
    `header`: {class: [objects, published, misses, invalid, flushes,
    bytes in, bytes out, enters, enter ms, blocks]}."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines)
                 if line.startswith("djava statistics of ") and header in line)
    # The first line, perhaps notes on flushes put off, the column header.
    columns = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("  class "))
    rows = {}
    for line in lines[columns + 1:]:
        if not line.startswith("  ") or line.startswith("  ..."):
            break
        *name, objects, published, misses, invalid, flushes, b_in, b_out, enters, ms, blocks = \
            line.split()
        rows[" ".join(name)] = [int(objects), int(published), int(misses), int(invalid),
                                int(flushes), int(b_in), int(b_out), int(enters), float(ms),
                                int(blocks)]
    return rows


def test_a_thread_server_lets_go_of_an_ended_programs_objects(cluster, procs, secret_file,
                                                              classes):
    # Program after program on the same servers: each server releases the
    # objects of a program when it ends (nothing of it is left in its
    # replica table, no handle of it in its cache), the sos-server drops the
    # program's chunks, and both serve the next one as before.
    servers = cluster[1]
    released = re.compile(r"program \d+ ended: released (\d+) of its shared objects, "
                          r"(\d+) remain for other programs")
    dropped = re.compile(r"program \d+ ended: dropped its (\d+) chunk\(s\)")
    forgotten = re.compile(r"program \d+ ended: .*; the cache forgot (\d+) handles, "
                           r"(\d+) remain")
    for run_number in range(1, 3):
        p = run(cluster, secret_file, classes, "counter")
        assert p.returncode == 0, p.stdout + p.stderr
        assert "total 1200" in p.stdout
        deadline = time.monotonic() + 30
        while len(dropped.findall(procs.stderr_of(procs.sos_server))) < run_number:
            assert time.monotonic() < deadline, procs.stderr_of(procs.sos_server)
            time.sleep(0.05)
        # the chunks that reached home (the counter, its lock, threads)
        assert int(dropped.findall(procs.stderr_of(procs.sos_server))[-1]) > 0
        for server in servers:
            deadline = time.monotonic() + 30
            while len(released.findall(procs.stderr_of(server))) < run_number:
                assert time.monotonic() < deadline, procs.stderr_of(server)
                time.sleep(0.05)
            count, remain = released.findall(procs.stderr_of(server))[-1]
            assert int(count) > 0, "the server held objects of the program"
            assert int(remain) == 0, procs.stderr_of(server)
            # and its cache let go of its handles of the program's chunks
            forgot, handles = forgotten.findall(procs.stderr_of(server))[-1]
            assert int(forgot) >= int(count), procs.stderr_of(server)
            assert int(handles) == 0, procs.stderr_of(server)
    # A program a thread of which calls System.exit: that thread waits for
    # the program to be dropped before it ends, and the drop for the
    # program's threads to end; its objects go all the same.
    p = run(cluster, secret_file, classes, "exit")
    assert p.returncode == 7, p.stdout + p.stderr
    ended = re.compile(r"program \d+ ended: .*")
    deadline = time.monotonic() + 30
    while sum(len(ended.findall(procs.stderr_of(s))) for s in servers) < 5:
        assert time.monotonic() < deadline, [procs.stderr_of(s) for s in servers]
        time.sleep(0.05)
    last = [ended.findall(procs.stderr_of(s)) for s in servers]
    exit_line = next(lines[-1] for lines in last if len(lines) == 3)
    assert released.search(exit_line), exit_line


def test_programs_that_run_together_end_without_leaving_handles(cluster, procs, secret_file,
                                                                classes):
    # Programs end while others run on the same servers: each server's cache
    # forgets an ended program's handles under the others' traffic, and once
    # all have ended none is left (nor any replica). Three rounds of four.
    address, servers = cluster
    scenarios = ["counter", "latch", "pool", "buffer"]
    for _ in range(3):
        running = [subprocess.Popen([JAVA, *node_options(address, secret_file), "-cp", classes,
                                     "Dist", s], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True) for s in scenarios]
        for s, p in zip(scenarios, running):
            out, err = p.communicate(timeout=180)
            assert p.returncode == 0, s + ":\n" + out + err
    ended = re.compile(r"program \d+ ended: released \d+ of its shared objects, (\d+) remain "
                       r"for other programs; the cache forgot \d+ handles, (\d+) remain")
    # Each server logs a drop for each program it ran; the last one's counts
    # are what is left of all twelve.
    def last_drops():
        return [(ended.findall(procs.stderr_of(s)) or [None])[-1] for s in servers]
    deadline = time.monotonic() + 30
    while last_drops() != [("0", "0")] * len(servers):
        assert time.monotonic() < deadline, [procs.stderr_of(s) for s in servers]
        time.sleep(0.1)
    assert sum(len(ended.findall(procs.stderr_of(s))) for s in servers) >= 12


@pytest.mark.parametrize("where", ["private", "shared"])
def test_statistics_name_the_classes_that_went_remote(where, cluster, secret_file, classes):
    # The launcher's table, then each thread server's table for this
    # program, gathered through the thread manager: on djava's private
    # cluster and on a shared one whose servers were not started with the
    # flag (and whose logs the launcher cannot read).
    options = ["-XX:+PrintDistributedStatistics", "-cp", classes, "Dist", "counter"]
    if where == "private":
        p = subprocess.run([os.path.join(ROOT, "build", "bin", "djava"), *options],
                           capture_output=True, text=True, timeout=180,
                           env={**os.environ, "DJAVA_THREAD_SERVERS": "2"})
    else:
        p = subprocess.run([JAVA, *node_options(cluster[0], secret_file), *options],
                           capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "total 1200" in p.stdout
    launcher = stats_rows(p.stdout, "(launcher)")
    # main made the counter and the four adders shared, and locked the counter once
    counter = launcher["Dist$Counter"]
    assert counter[0] == 1 and counter[1] == 1, counter
    assert counter[7] >= 1, "main's synchronized (c) went through the monitor service"
    assert launcher["Dist$Adder"][1] == 4
    servers = [line for line in p.stdout.splitlines()
               if line.startswith("djava statistics of ") and "(thread server), program " in line]
    assert len(servers) == 2, p.stdout
    assert len({line.split(" (thread server)")[0] for line in servers}) == 2, servers
    assert "djava statistics of thread server" not in p.stdout, "a server did not answer"
    enters = 0
    for header in servers:
        rows = stats_rows(p.stdout, header)
        # and the program's thread group (shared), which each thread leaves
        # where it ends
        assert set(rows) <= {"Dist$Counter", "Dist$Adder", "Dist$Counter (static fields)",
                             "Dist$Adder (static fields)", "Dist (static fields)",
                             "java.lang.ThreadGroup", "java.lang.Thread[]"}, \
            "only this program's objects: " + str(rows)
        enters += rows["Dist$Counter"][7]
        # by a miss, or along with the thread's Adder that names it
        assert rows["Dist$Counter"][5] > 0, "the server received the counter"
        assert rows["Dist$Counter"][1] == 0, "the servers published no counter"
    # 4 threads x 300 increments, each under the counter's monitor: leases
    # let a node re-enter locally, but every enter is counted.
    assert enters == 1200, enters


def test_jdk_values_keep_their_identity_on_every_node(cluster, secret_file, classes):
    # Enum constants, static-final singletons and cached boxes of the JDK are
    # each node's own instances: they travel by name, so == holds remotely
    # and back. A box of its own (100000) is an ordinary shared object.
    p = run(cluster, secret_file, classes, "named")
    assert p.returncode == 0, p.stdout + p.stderr
    assert ("remote true unit true yes true small true empty true big true 100000 state true"
            in p.stdout), p.stdout + p.stderr
    assert "back true true" in p.stdout, p.stdout + p.stderr


def test_interrupting_a_thread_sleeping_on_another_node(cluster, secret_file, classes):
    # main interrupts a sleeper on a server, then a thread on a server
    # interrupts sleeping main: each sleep ends at once with
    # InterruptedException and a cleared status, not after its 60 s.
    p = run(cluster, secret_file, classes, "interrupt-sleep", timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "sleeper interrupted remote=true quick=true cleared=true alive=false" in p.stdout, \
        p.stdout + p.stderr
    assert "main interrupted quick=true" in p.stdout, p.stdout + p.stderr


def test_get_state_of_a_thread_on_another_node(cluster, secret_file, classes):
    # The state is the running node's: a timed wait there (java's answer).
    p = run(cluster, secret_file, classes, "state")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "state NEW, TIMED_WAITING alive=true, TERMINATED alive=false" in p.stdout, \
        p.stdout + p.stderr


def test_remote_threads_see_the_programs_system_properties(cluster, secret_file, classes):
    address, _ = cluster
    p = subprocess.run([JAVA, *node_options(address, secret_file), "-Ddist.cmdline=given",
                        "-cp", classes, "Dist", "properties"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert ("properties remote=true cmdline=given main=yes own=here only javaHome=true "
            "back=null") in p.stdout, p.stdout + p.stderr


def test_settings_a_program_made_on_a_server_end_with_it(cluster, procs, secret_file, classes):
    """A thread server's JDK serves every program: a security manager (one
    that refuses its own removal), a policy and a default uncaught-exception
    handler that one program's threads installed there are taken back when
    it ends, so the next program runs without them (it failed its
    permission checks before)."""
    address, servers = cluster
    first = subprocess.run([JAVA, *node_options(address, secret_file), "-cp", classes, "Dist",
                            "settings", "install"], capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stdout + first.stderr
    installed = re.findall(r"^settings (\d+) (.*)$", first.stdout, re.M)
    assert {pid for pid, _ in installed} == {str(s.pid) for s in servers}, first.stdout
    assert all(seen == "sm=true programPolicy=true handler=true" for _, seen in installed), first.stdout
    for s in servers:
        wait_for(procs, s, r"took back the default uncaught exception handler")
    second = subprocess.run([JAVA, *node_options(address, secret_file), "-cp", classes, "Dist",
                             "settings", "report"], capture_output=True, text=True, timeout=120)
    assert second.returncode == 0, second.stdout + second.stderr
    reported = re.findall(r"^settings (\d+) (.*)$", second.stdout, re.M)
    assert len(reported) == 4, second.stdout + second.stderr
    assert all(seen == "sm=false programPolicy=false handler=false" for _, seen in reported), \
        second.stdout


def test_a_thread_pool_runs_its_workers_on_the_servers(cluster, secret_file, classes):
    # Thread.start() is synchronized: the second worker's closure leads back
    # to the first worker's Thread, which its starter had published while
    # holding it locked (the monitor now passes to the cluster's at start).
    p = run(cluster, secret_file, classes, "pool")
    assert p.returncode == 0, p.stdout + p.stderr
    m = re.search(r"pool sum (\d+) terminated (\w+) launcher (\d+) workers \[([\d, ]+)\]",
                  p.stdout)
    assert m, p.stdout + p.stderr
    assert m.group(1) == str(sum(k * k for k in range(40)))
    assert m.group(2) == "true"
    workers = set(m.group(4).split(", "))
    assert m.group(3) not in workers
    assert workers <= {str(s.pid) for s in cluster[1]}
    assert "djava" not in p.stderr, p.stderr


def test_every_join_returns_when_its_thread_ends(cluster, secret_file, classes):
    # Threads ending at every moment of the joiner's wait on their monitor:
    # a notifyAll must never fall between two waits of the joiner.
    p = run(cluster, secret_file, classes, "joins")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "joined 48 of 48" in p.stdout, p.stdout + p.stderr


def test_replicas_of_a_running_program_are_released(classes):
    # Batches of items stream through a queue to a consumer on the one thread
    # server, each batch twice, unchanged, a few batches apart; the consumer
    # keeps nothing and collects its garbage after each. Replicas were held
    # for good: the server ended with every item. Now a replica whose bytes
    # this node does not own (not in M) goes when nothing here references it,
    # and a batch received again is fetched again into new replicas.
    batches, items = 30, 40
    p = subprocess.run([os.path.join(ROOT, "build", "bin", "djava"),
                        "-XX:+PrintDistributedStatistics", "-cp", classes, "Turnover",
                        str(batches), str(items), "64"],
                       capture_output=True, text=True, timeout=300,
                       env={**os.environ, "DJAVA_THREAD_SERVERS": "1"})
    assert p.returncode == 0, p.stdout + p.stderr
    assert f"received {2 * batches * items} of {2 * batches * items}" in p.stdout, p.stdout
    assert "payloads intact" in p.stdout, p.stdout
    here = re.compile(r"^djava statistics of \S+ \((launcher|thread server)\)[^:]*: threads "
                      r"shipped \d+, shared objects here (\d+) \(published here (\d+), "
                      r"collected (\d+)\); cache misses (\d+)", re.M)
    nodes = {m[1]: [int(m[i]) for i in range(2, 6)] for m in here.finditer(p.stdout)}
    assert set(nodes) == {"launcher", "thread server"}, p.stdout
    made = batches * (2 * items + 1)  # items, their payloads, the batch arrays
    met, launcher_published, collected, _ = nodes["launcher"]
    launcher_left = met - collected
    assert launcher_published >= made, p.stdout
    met, _, collected, _ = nodes["thread server"]
    server_left = met - collected
    # Each batch's items and payloads fetched twice, the second time into
    # new replicas (by a miss, or along with the chunk that names them)
    assert met >= 2 * batches * 2 * items, p.stdout
    # What is left: the queue, its lock and conditions, the threads, statics
    assert server_left < made // 10, p.stdout
    assert launcher_left < made // 10, p.stdout


def test_a_queue_between_nodes_moves_with_its_lock(classes):
    # A producer and a consumer on two thread servers, 400 messages through
    # an ArrayBlockingQueue(8): every message arrives, in order. put and
    # take read the queue's final `lock` field before they take the lock,
    # while the other node holds the queue's object modified; read from the
    # replica, that costs no miss, and the object moves with the lock's
    # grant. Measured: 30 to 90 misses of the queue's object in all, and
    # 440 to 510 when each put or take missed on it (before 2026-12-06);
    # a stale read of the final field would break the run, not just slow it.
    n = 400
    p = dist_with_statistics(classes, "queue")
    assert f"queue: in order, sum {n * (n - 1) // 2}, left 0" in p.stdout, p.stdout
    servers = [line for line in p.stdout.splitlines()
               if line.startswith("djava statistics of ") and "(thread server), program " in line]
    assert len(servers) == 2, p.stdout
    misses = {}
    for header in servers:
        rows = stats_rows(p.stdout, header)
        assert "java.util.concurrent.ArrayBlockingQueue" in rows, "both ran a thread: " + str(rows)
        misses[header] = rows["java.util.concurrent.ArrayBlockingQueue"][2]
    assert sum(misses.values()) < n // 2, misses


def request_frames(stdout):
    """Each thread server's request frames to the sos-server (its statistics'
    cache messages by kind), in the order of their blocks."""
    kinds = re.compile(r"^djava statistics of \S+ \(thread server\)[^\n]*\n"
                       r"(?:  (?!class )[^\n]*\n)*?"
                       r"  cache messages of this node, by kind: requests ([^;]*);", re.M)
    return [sum(int(k) for k in re.findall(r"\w+ (\d+)", m.group(1)))
            for m in kinds.finditer(stdout)]


def test_rows_of_a_matrix_are_fetched_several_at_a_time(classes):
    # A reader on one thread server sums the 256 rows of a double[][] main
    # made, then a writer on the other writes every row: the sum and every
    # element are right. Each row reaches a thread server as a replica that
    # never had bytes there, named by an element of the matrix; the walk
    # asks for the rows ahead of it, four more every fourth row
    # (docs/HEAP.md, "Rows fetched ahead"), so the thread servers send
    # about one request frame for four rows: measured 135 frames for 512 row
    # misses, and 519 (one a miss) before.
    p = dist_with_statistics(classes, "rows")
    assert "rows: right" in p.stdout, p.stdout
    frames, misses = sum(request_frames(p.stdout)), 0
    for header in [line for line in p.stdout.splitlines()
                   if line.startswith("djava statistics of ") and "(thread server), program " in line]:
        misses += stats_rows(p.stdout, header).get("double[]", [0, 0, 0])[2]
    assert misses >= 2 * 256, p.stdout
    assert frames < misses // 2, (frames, misses, p.stdout)


def test_a_grid_swept_in_place_is_fetched_ahead_for_writing(classes):
    # Two threads, one on each thread server, sweep the bands of a 256-row
    # grid main made, in place, red and black points in turn (SOR's shape),
    # and the grid comes out as main computes it alone. A band reads each
    # row as the next row's neighbour before it writes it, so each row took
    # a read and an upgrade (about 270 request frames a thread server);
    # the walk now takes its rows ahead for writing, sixteen in a frame,
    # but only those no node wrote since main made them (docs/HEAP.md,
    # "Rows fetched ahead"): measured 45-60 frames a thread server.
    p = dist_with_statistics(classes, "grid")
    assert "grid: right" in p.stdout, p.stdout
    frames = request_frames(p.stdout)
    assert len(frames) == 2, p.stdout
    assert sum(frames) < 256, (frames, p.stdout)


def test_a_scan_of_a_large_array_asks_for_its_blocks_a_batch_at_a_time(classes):
    # A thread on a thread server sums a double[] of 1,024 blocks main made,
    # then doubles each element: the sum and every element are right. The
    # scan keeps a window of blocks asked for ahead of it (docs/HEAP.md,
    # "Arrays in blocks"); once it overtakes the frames, it asks again only
    # when a batch of the window is left to ask for: measured 259 request
    # frames for the read and the write pass, against 2,037 (one a block)
    # when each access past a frame asked for the one block it lacked.
    p = subprocess.run([os.path.join(ROOT, "build", "bin", "djava"),
                        "-XX:+PrintDistributedStatistics", "-cp", classes, "Dist", "scan"],
                       capture_output=True, text=True, timeout=180,
                       env={**os.environ, "DJAVA_THREAD_SERVERS": "1"})
    assert p.returncode == 0, p.stdout + p.stderr
    assert "scan: right" in p.stdout, p.stdout
    frames = request_frames(p.stdout)
    assert len(frames) == 1, p.stdout
    assert frames[0] < 2 * 1024 // 4, (frames, p.stdout)


def test_main_takes_its_ended_threads_out_of_its_group(classes):
    # 20 threads main starts end on the thread servers, and main's group lets
    # each go before join() returns. The group stays on the launcher: the
    # thread servers never touch it (no miss, no monitor enter), where each
    # thread's Thread.exit() used to take the group's monitor and its bytes
    # to its node (docs/HEAP.md, "Threads").
    p = dist_with_statistics(classes, "starts")
    assert "starts: right" in p.stdout, p.stdout
    headers = [line for line in p.stdout.splitlines()
               if line.startswith("djava statistics of ") and "(thread server), program " in line]
    assert len(headers) == 2, p.stdout
    for header in headers:
        group = stats_rows(p.stdout, header).get("java.lang.ThreadGroup", [0] * 10)
        assert group[2] == 0 and group[7] == 0, (header, group, p.stdout)


def test_an_ended_thread_is_written_home_for_its_joiners(classes):
    # A thread that ends on a thread server writes its Thread home before
    # its end wakes main's join, whose reads of it home then answers: the
    # thread server is not asked to flush the Thread back for them. Before,
    # each server flushed Threads 24-28 times for its 20 threads (docs/
    # HEAP.md, "Threads").
    p = dist_with_statistics(classes, "starts")
    assert "starts: right" in p.stdout, p.stdout
    lines = p.stdout.splitlines()
    servers = [i for i, line in enumerate(lines)
               if line.startswith("djava statistics of ") and "(thread server), program " in line]
    assert len(servers) == 2, p.stdout
    for i in servers:
        ran = int(re.search(r"threads of this program run here: (\d+)", lines[i + 1]).group(1))
        flushes = stats_rows(p.stdout, lines[i])["java.lang.Thread"][4]
        assert ran > 0 and flushes < ran, (lines[i], ran, flushes, p.stdout)


def test_an_ended_thread_wakes_its_joiners_without_its_monitor(classes):
    # A thread ending on its thread server signals its Thread's waiters at
    # the monitor service instead of taking the Thread's monitor to notify
    # them (ensure_join): the monitor stays where main's start() and join()
    # use it, and every join still returns once its thread ended (Dist
    # checks each joined thread has left its group, and the sums).
    p = dist_with_statistics(classes, "starts")
    assert "starts: right" in p.stdout, p.stdout
    lines = p.stdout.splitlines()
    servers = [line for line in lines
               if line.startswith("djava statistics of ") and "(thread server), program " in line]
    assert len(servers) == 2, p.stdout
    for header in servers:
        assert stats_rows(p.stdout, header)["java.lang.Thread"][7] == 0, (header, p.stdout)


def test_a_linked_queue_between_nodes_delivers_every_message(classes):
    # The same through a LinkedBlockingQueue: each message is a new node and
    # a new Integer that the producer's node made, which travel along with
    # the chunk that names them when the consumer's node asks for it
    # (docs/SOS.md, "New objects travel with the one that names them"; their
    # node keeps no copy). Every message arrives, once, in order.
    n = 400
    p = subprocess.run([os.path.join(ROOT, "build", "bin", "djava"), "-cp", classes,
                        "Dist", "queue", "lbq"],
                       capture_output=True, text=True, timeout=180,
                       env={**os.environ, "DJAVA_THREAD_SERVERS": "2"})
    assert p.returncode == 0, p.stdout + p.stderr
    assert f"queue: in order, sum {n * (n - 1) // 2}, left 0" in p.stdout, p.stdout


def test_unpark_reaches_a_thread_on_another_node(classes):
    # main (launcher) and a thread on a thread server unpark each other 20
    # times, then main interrupts a sleeper on a thread server: each wake-up
    # goes through the thread manager to the node that runs the thread
    # (parks and sleeps are also bounded, so a lost one would only be slow:
    # the counters show that they arrived). A private cluster: the counters
    # are the node's, whatever program it ran.
    p = dist_with_statistics(classes, "unpark")
    assert "unparked 20 rounds" in p.stdout, p.stdout
    assert "sleeper interrupted" in p.stdout, p.stdout
    counts = re.compile(r"^djava statistics of \S+ \((launcher|thread server)\)[^\n]*\n"
                        r"(?:  (?!class )[^\n]*\n)*?"
                        r"  unparks across nodes \(this node, every program\): "
                        r"sent (\d+), received (\d+)", re.M)
    seen = [(m[1], int(m[2]), int(m[3])) for m in counts.finditer(p.stdout)]
    launcher = [s for s in seen if s[0] == "launcher"]
    # 20 unparks and the interrupt sent, 20 unparks of main received
    assert launcher and launcher[0][1] >= 21 and launcher[0][2] >= 20, p.stdout
    servers = [s for s in seen if s[0] == "thread server"]
    # the server that ran the parked thread sent main's 20 unparks
    assert any(s[1] >= 20 for s in servers), p.stdout
    assert sum(s[2] for s in servers) >= 21, "the unparks and the interrupt arrived: " + p.stdout


def test_a_thread_dump_while_main_waits_for_a_lock_held_on_another_node(cluster, secret_file,
                                                                          classes, procs,
                                                                          tmp_path):
    # main parks on a ReentrantLock whose owner runs on a thread server. A
    # thread dump of the launcher with its lock details (jcmd Thread.print -l,
    # as kill -3 or jstack -l) walks from main's blocker to the owner's
    # native thread for deadlock detection and the ownable-synchronizer map:
    # an owner on another node has none here, and the VM must not take the
    # shared "alive" mark for one. The dump completes, and the program then
    # goes on as if nothing had happened.
    address, servers = cluster
    release = tmp_path / "release"
    p = procs.start([JAVA, *node_options(address, secret_file), "-cp", classes, "Dist",
                     "locked-elsewhere", str(release)])
    assert read_line(p, timeout=60) == "waiting for the lock, holder alive true"
    jcmd = os.path.join(JDK, "bin", "jcmd")
    dump = None
    for _ in range(40):
        dump = subprocess.run([jcmd, str(p.pid), "Thread.print", "-l"], capture_output=True,
                              text=True, timeout=60)
        assert p.poll() is None, "the launcher died in a thread dump:\n" + procs.stderr_of(p)
        assert "Full thread dump" in dump.stdout, dump.stdout + dump.stderr
        main = dump.stdout.split('"main"', 1)[1].split("\n\n", 1)[0]
        if re.search(r"parking to wait for .*ReentrantLock\$NonfairSync", main):
            break
        time.sleep(0.25)
    else:
        raise AssertionError("main never parked on the lock:\n" + dump.stdout)
    assert "Found one Java-level deadlock" not in dump.stdout, dump.stdout
    # The lock is listed where its owner runs: under the holder's ownable
    # synchronizers in one server's dump.
    owned = []
    for s in servers:
        d = subprocess.run([jcmd, str(s.pid), "Thread.print", "-l"], capture_output=True,
                           text=True, timeout=60).stdout
        if '"holder"' in d:
            holder = d.split('"holder"', 1)[1].split("Locked ownable synchronizers:", 1)[1]
            owned.append(holder.split("\n\n", 1)[0])
    assert len(owned) == 1 and "ReentrantLock$NonfairSync" in owned[0], owned
    release.touch()
    out, _ = p.communicate(timeout=60)
    assert p.returncode == 0, out + procs.stderr_of(p)
    assert "main has the lock" in out and "holder ended" in out, out


def test_a_collection_while_a_shipped_thread_is_fetched_loses_no_thread(procs, thread_manager,
                                                                        secret_file, tmp_path):
    # jtreg's ProxyObjects once failed under -Xmn2m with "thread 2 recorded
    # nothing": the thread server fetched the thread's Thread object by id,
    # and a GC as the fetch returned took the replica it had just made (only
    # a weak handle named it), so the start failed, the launcher settled the
    # thread as never run and its join returned. The thread servers here run
    # a full GC right after every such fetch (-XX:+DjavaStressAttachGC):
    # without the replica held until the fetch has a handle, every thread
    # "never ran".
    servers = [procs.start([JAVA, *node_options(thread_manager, secret_file),
                            "-XX:+UnlockDiagnosticVMOptions", "-XX:+DjavaStressAttachGC",
                            "-Xlog:gc:stderr", "-XX:DjavaThreadServer=2",
                            "djava.runtime.ThreadServer"])
               for _ in range(2)]
    wait_for(procs, procs.thread_manager, r"(server '\S+' \(id \d+, capacity 2\) registered[\s\S]*){2}")
    jtreg = os.path.join(ROOT, "test", "jtreg")
    subprocess.run([JAVAC, "-d", str(tmp_path), os.path.join(jtreg, "distributed", "ProxyObjects.java"),
                    os.path.join(jtreg, "lib", "Checks.java"), os.path.join(jtreg, "lib", "Threads.java")],
                   check=True)
    p = subprocess.run([JAVA, *node_options(thread_manager, secret_file), "-cp", str(tmp_path),
                        "ProxyObjects"], capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "never ran" not in p.stderr, p.stderr
    assert "ProxyObjects: all checks passed" in p.stdout, p.stdout
    # The collections happened where the threads were fetched: one for
    # each of ProxyObjects' 4 threads at least.
    collections = sum(procs.stderr_of(s).count("Pause Full (System.gc())") for s in servers)
    assert collections >= 4, [procs.stderr_of(s) for s in servers]
