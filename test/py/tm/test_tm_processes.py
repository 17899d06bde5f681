"""Thread manager with real processes on loopback: thread-manager daemon,
tm-probe servers and launchers."""

import signal
import time

from localprocs import read_line


def finish(p, timeout=60):
    out, _ = p.communicate(timeout=timeout)
    return p.returncode, out


def start_server(procs, probe, tm, secret, name, cap, run_ms):
    p = procs.start([probe, "server", tm, secret, name, str(cap), str(run_ms)])
    line = read_line(p)
    assert line.startswith("registered "), line
    return p


def test_four_threads_on_two_servers_land_two_and_two(procs, thread_manager, secret_file,
                                                      tm_probe):
    start_server(procs, tm_probe, thread_manager, secret_file, "alpha", 4, 300)
    start_server(procs, tm_probe, thread_manager, secret_file, "beta", 4, 300)
    launcher = procs.start([tm_probe, "launch", thread_manager, secret_file, "11", "4", "20000"])
    rc, out = finish(launcher)
    assert rc == 0, procs.stderr_of(launcher)
    where = [line.split()[-1] for line in out.splitlines() if line.startswith("thread ")]
    assert sorted(where) == ["alpha", "alpha", "beta", "beta"], out


def test_a_full_server_runs_every_thread_and_several_programs_share(procs, thread_manager,
                                                                   secret_file, tm_probe):
    # capacity 1, two programs of 3 threads: all six run (none waits for a slot)
    start_server(procs, tm_probe, thread_manager, secret_file, "only", 1, 100)
    launchers = [procs.start([tm_probe, "launch", thread_manager, secret_file, str(20 + i), "3",
                              "30000"]) for i in range(2)]
    for l in launchers:
        rc, out = finish(l)
        assert rc == 0, procs.stderr_of(l)
        assert out.count(" ended on only") == 3, out


def test_uncaught_exception_is_reported(procs, thread_manager, secret_file, tm_probe):
    start_server(procs, tm_probe, thread_manager, secret_file, "s", 200, 10)
    launcher = procs.start([tm_probe, "launch", thread_manager, secret_file, "31", "100",
                            "20000"])
    rc, out = finish(launcher)
    assert rc == 0, procs.stderr_of(launcher)
    assert "thread 99 ended-by-exception on s" in out


def test_server_killed_fails_program_naming_server(procs, thread_manager, secret_file, tm_probe):
    victim = start_server(procs, tm_probe, thread_manager, secret_file, "victim-server", 4,
                          600000)
    launcher = procs.start([tm_probe, "launch", thread_manager, secret_file, "41", "2",
                            "30000"])
    assert read_line(victim).startswith("assigned 41")
    victim.send_signal(signal.SIGKILL)
    rc, out = finish(launcher, timeout=30)
    assert rc == 2, out
    err = procs.stderr_of(launcher)
    assert "program failed" in err and "victim-server" in err, err


def test_hung_server_misses_liveness_deadline(procs, thread_manager, secret_file, tm_probe):
    hung = start_server(procs, tm_probe, thread_manager, secret_file, "hung-server", 4, 600000)
    launcher = procs.start([tm_probe, "launch", thread_manager, secret_file, "51", "1",
                            "30000"])
    assert read_line(hung).startswith("assigned 51")
    hung.send_signal(signal.SIGSTOP)  # alive but silent
    try:
        rc, out = finish(launcher, timeout=30)
    finally:
        hung.send_signal(signal.SIGCONT)
    assert rc == 2, out
    err = procs.stderr_of(launcher)
    assert "hung-server" in err and "liveness" in err, err


def test_killed_launcher_makes_servers_drop_program(procs, thread_manager, secret_file,
                                                    tm_probe):
    server = start_server(procs, tm_probe, thread_manager, secret_file, "s", 1, 600000)
    launcher = procs.start([tm_probe, "launch", thread_manager, secret_file, "61", "2",
                            "30000"])
    assert read_line(server) == "assigned 61 1"
    assert read_line(server) == "assigned 61 2"  # capacity 1 places; it never holds back
    launcher.send_signal(signal.SIGKILL)
    assert read_line(server, timeout=15) == "drop 61"
    # The server serves the next program.
    launcher2 = procs.start([tm_probe, "launch", thread_manager, secret_file, "62", "1",
                             "30000"])
    assert read_line(server, timeout=15) == "assigned 62 1"
