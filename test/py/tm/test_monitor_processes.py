"""Monitor service with real processes on loopback: a sos-server hosting the
monitor service and monitor-probe client processes (one node each)."""

import os
import signal
import subprocess
import time

from localprocs import read_line

PROGRAM = 4242
OBJ = 0x5151


def finish(p, timeout=60):
    out, _ = p.communicate(timeout=timeout)
    return p.returncode, out


def test_counter_under_one_lock_is_exact(procs, sos_server, secret_file, monitor_probe, tmp_path):
    counter = tmp_path / "counter"
    counter.write_text("0\n")
    nodes = [procs.start([monitor_probe, "counter", sos_server, secret_file, str(OBJ),
                          str(PROGRAM), str(counter), "3", "60"]) for _ in range(4)]
    for p in nodes:
        rc, out = finish(p)
        assert rc == 0, procs.stderr_of(p)
    # 4 processes x 3 threads x 60 read-modify-writes of a plain file, ordered
    # only by the distributed monitor: any overlap would lose an increment.
    assert int(counter.read_text().split()[0]) == 4 * 3 * 60


def test_bounded_buffer_across_three_processes(procs, sos_server, secret_file, monitor_probe,
                                               tmp_path):
    buf = tmp_path / "buffer"
    buf.write_text("")
    n = 120
    producer = procs.start([monitor_probe, "produce", sos_server, secret_file, str(OBJ),
                            str(PROGRAM), str(buf), "1", str(n), "4"])
    consumers = [procs.start([monitor_probe, "consume", sos_server, secret_file, str(OBJ),
                              str(PROGRAM), str(buf), str(n // 2), "4"]) for _ in range(2)]
    taken = []
    for c in consumers:
        rc, out = finish(c)
        assert rc == 0, procs.stderr_of(c)
        taken += [int(line.split()[1]) for line in out.splitlines() if line.startswith("took")]
    rc, _ = finish(producer)
    assert rc == 0, procs.stderr_of(producer)
    # Nothing lost, nothing duplicated.
    assert sorted(taken) == list(range(1, n + 1))
    assert buf.read_text().split() == []


def test_timed_wait_returns_within_deadline(procs, sos_server, secret_file, monitor_probe):
    p = procs.start([monitor_probe, "timedwait", sos_server, secret_file, str(OBJ),
                     str(PROGRAM), "300"])
    rc, out = finish(p)
    assert rc == 0, procs.stderr_of(p)
    _, elapsed, how, count = out.split()
    assert how == "timed-out"
    assert count == "count=1"
    # A bound with slack, not a benchmark.
    assert 300 <= float(elapsed) < 300 + 3000


def test_node_killed_holding_lock_fails_program_and_service_survives(
        procs, sos_server, secret_file, monitor_probe, tmp_path):
    holder = procs.start([monitor_probe, "hold", sos_server, secret_file, str(OBJ),
                          str(PROGRAM)])
    assert read_line(holder) == "holding"
    waiter = procs.start([monitor_probe, "enter", sos_server, secret_file, str(OBJ),
                          str(PROGRAM)])
    assert read_line(waiter) == "entering"
    time.sleep(0.3)
    assert waiter.poll() is None  # blocked behind the holder
    holder.send_signal(signal.SIGKILL)
    rc, out = finish(waiter, timeout=20)
    # The waiter is not left blocked, and ends with a clear error.
    assert rc == 2, out + procs.stderr_of(waiter)
    err = procs.stderr_of(waiter)
    assert "disconnected" in err and "program" in err.lower() or "disconnected" in out, err
    # The service is healthy: another program uses the same monitor.
    counter = tmp_path / "counter"
    counter.write_text("0\n")
    p = procs.start([monitor_probe, "counter", sos_server, secret_file, str(OBJ),
                     str(PROGRAM + 1), str(counter), "2", "20"])
    rc, _ = finish(p)
    assert rc == 0, procs.stderr_of(p)
    assert int(counter.read_text().split()[0]) == 40


def test_node_killed_while_queued_fails_program(procs, sos_server, secret_file, monitor_probe):
    holder = procs.start([monitor_probe, "hold", sos_server, secret_file, str(OBJ),
                          str(PROGRAM)])
    assert read_line(holder) == "holding"
    queued = procs.start([monitor_probe, "enter", sos_server, secret_file, str(OBJ),
                          str(PROGRAM)])
    assert read_line(queued) == "entering"
    other = procs.start([monitor_probe, "enter", sos_server, secret_file, str(OBJ),
                         str(PROGRAM)])
    assert read_line(other) == "entering"
    time.sleep(0.3)
    queued.send_signal(signal.SIGKILL)
    # The program is failed: its other queued node is released with an error.
    rc, out = finish(other, timeout=20)
    assert rc == 2, out + procs.stderr_of(other)
    assert "disconnected" in procs.stderr_of(other)
