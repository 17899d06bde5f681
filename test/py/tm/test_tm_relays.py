"""The thread manager's relays to a program's launcher, with real processes
on loopback: class files and resources (a server fetches what the launcher
serves), console output, and System.exit. tm-probe plays every role."""

import os
import signal
import time

from localprocs import read_line


def start_launcher(procs, probe, tm, secret, program, classes, nthreads=0):
    p = procs.start([probe, "serve", tm, secret, str(program), str(classes), str(nthreads)])
    assert read_line(p) == "registered", procs.stderr_of(p)
    return p


def start_server(procs, probe, tm, secret, name, cap, run_ms):
    p = procs.start([probe, "server", tm, secret, name, str(cap), str(run_ms)])
    line = read_line(p)
    assert line.startswith("registered "), line
    return p


def results(out):
    """fetch output -> {name: (what, rest)}"""
    r = {}
    for line in out.splitlines():
        what, rest = line.split(" ", 1)
        name = rest.split(" ", 1)[0].rstrip(":")
        r[name] = (what, rest)
    return r


def test_server_fetches_class_files_the_launcher_serves(procs, thread_manager, secret_file,
                                                        tm_probe, tmp_path):
    classes = tmp_path / "classes"
    (classes / "pkg").mkdir(parents=True)
    foo = b"\xca\xfe\xba\xbe\x00\x00\x00\x34" + os.urandom(20000)
    big = os.urandom(3 << 20)  # several MiB: many frames' worth of socket writes
    (classes / "pkg" / "Foo.class").write_bytes(foo)
    (classes / "pkg" / "Big.bin").write_bytes(big)
    # More than one answer may carry (16 MiB frames): an error naming it,
    # and the launcher's connection survives it.
    (classes / "pkg" / "Huge.bin").write_bytes(b"\x00" * (17 << 20))
    launcher = start_launcher(procs, tm_probe, thread_manager, secret_file, 71, classes)
    out_dir = tmp_path / "fetched"
    out_dir.mkdir()
    fetcher = procs.start([tm_probe, "fetch", thread_manager, secret_file, "71", "20000",
                           str(out_dir), "pkg/Foo.class", "pkg/Big.bin", "pkg/Missing.class",
                           "pkg/Huge.bin"])
    out, _ = fetcher.communicate(timeout=60)
    assert fetcher.returncode == 0, procs.stderr_of(fetcher)
    r = results(out)
    assert r["pkg/Foo.class"][0] == "found", out
    assert (out_dir / "pkg_Foo.class").read_bytes() == foo
    assert r["pkg/Big.bin"][0] == "found", out
    assert (out_dir / "pkg_Big.bin").read_bytes() == big
    assert r["pkg/Missing.class"][0] == "not-found", out
    assert r["pkg/Huge.bin"][0] == "error", out
    assert "pkg/Huge.bin" in r["pkg/Huge.bin"][1] and str(17 << 20) in r["pkg/Huge.bin"][1], out
    # The launcher is still connected and serving.
    again = procs.start([tm_probe, "fetch", thread_manager, secret_file, "71", "20000",
                         str(out_dir), "pkg/Foo.class"])
    out, _ = again.communicate(timeout=30)
    assert out.startswith("found pkg/Foo.class "), (out, procs.stderr_of(launcher))
    assert launcher.poll() is None


def test_fetch_for_unknown_program_is_an_error(procs, thread_manager, secret_file, tm_probe,
                                               tmp_path):
    fetcher = procs.start([tm_probe, "fetch", thread_manager, secret_file, "7777", "20000",
                           str(tmp_path), "pkg/Foo.class"])
    t0 = time.monotonic()
    out, _ = fetcher.communicate(timeout=30)
    assert time.monotonic() - t0 < 10
    assert out.startswith("error pkg/Foo.class:") and "no such program" in out, out


def test_launcher_killed_while_fetch_outstanding_gives_error(procs, thread_manager, secret_file,
                                                            tm_probe, tmp_path):
    launcher = start_launcher(procs, tm_probe, thread_manager, secret_file, 72, tmp_path)
    fetcher = procs.start([tm_probe, "fetch", thread_manager, secret_file, "72", "60000",
                           str(tmp_path), "hold/pkg/Foo.class"])
    # The request reached the launcher, which holds it unanswered.
    assert read_line(launcher, timeout=15) == "holding hold/pkg/Foo.class"
    launcher.send_signal(signal.SIGKILL)
    t0 = time.monotonic()
    out, _ = fetcher.communicate(timeout=30)
    # Bounded: far sooner than the fetch's own 60 s timeout.
    assert time.monotonic() - t0 < 10, out
    assert out.startswith("error hold/pkg/Foo.class:"), out
    assert "launcher disconnected" in out, out


def test_console_lines_from_a_server_arrive_in_order(procs, thread_manager, secret_file,
                                                     tm_probe, tmp_path):
    launcher = start_launcher(procs, tm_probe, thread_manager, secret_file, 73, tmp_path)
    n = 2000
    node = procs.start([tm_probe, "console", thread_manager, secret_file, "73", "5", str(n)])
    assert read_line(node, timeout=30) == "sent", procs.stderr_of(node)
    want_out = [f"out {i}" for i in range(n) if i % 10 != 9]
    want_err = [f"err {i}" for i in range(n) if i % 10 == 9]
    got = [read_line(launcher, timeout=15) for _ in want_out]
    assert got == want_out
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        err_lines = [l for l in procs.stderr_of(launcher).splitlines() if l.startswith("err ")]
        if len(err_lines) >= len(want_err):
            break
        time.sleep(0.05)
    assert err_lines == want_err


def test_console_for_unknown_program_does_not_hurt_the_sender(procs, thread_manager,
                                                              secret_file, tm_probe):
    node = procs.start([tm_probe, "console", thread_manager, secret_file, "7778", "5", "10"])
    # "sent" comes after a round trip on the same connection: still connected.
    assert read_line(node, timeout=15) == "sent", procs.stderr_of(node)
    assert node.wait(timeout=15) == 0


def test_exit_status_travels_to_launcher_and_ends_program(procs, thread_manager, secret_file,
                                                          tm_probe, tmp_path):
    server = start_server(procs, tm_probe, thread_manager, secret_file, "s", 2, 600000)
    launcher = start_launcher(procs, tm_probe, thread_manager, secret_file, 74, tmp_path,
                              nthreads=1)
    assert read_line(server, timeout=15) == "assigned 74 1"
    # Two exits: the first wins, as in Java.
    node = procs.start([tm_probe, "exit", thread_manager, secret_file, "74",
                        "thread 1 on server s", "7", "9"])
    assert read_line(node, timeout=15) == "sent", procs.stderr_of(node)
    out, _ = launcher.communicate(timeout=30)
    assert launcher.returncode == 7, (out, procs.stderr_of(launcher))
    exits = [l for l in out.splitlines() if l.startswith("exit ")]
    assert exits == ["exit 7 thread 1 on server s"], out
    # The launcher ended the program: the server drops it.
    assert read_line(server, timeout=15) == "drop 74"
