"""sos-server's command line (issue 3, "Command line"):
`sos-server [--listen HOST:PORT] --secret-file F`, loopback unless told
otherwise, logs on stderr, statistics on SIGUSR1 and at exit, exit 0 on
SIGTERM; wrong arguments exit 2 with the usage; a bad secret file is a clear
error."""

import os
import signal
import socket
import subprocess
import time

import pytest

from localprocs import binary, free_port, wait_port, write_secret


def server_bin():
    return binary("sos-server")


def run(args, timeout=10):
    return subprocess.run([server_bin()] + args, capture_output=True, text=True, timeout=timeout)


def stderr_until(p, path, needle, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = open(path).read()
        if needle in text:
            return text
        if p.poll() is not None:
            break
        time.sleep(0.05)
    return open(path).read()


def non_loopback_address():
    """An IPv4 address of this host that is not loopback, or None."""
    candidates = []
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))  # TEST-NET: no packet is sent for UDP connect
            candidates.append(s.getsockname()[0])
    except OSError:
        pass
    try:
        candidates += socket.gethostbyname_ex(socket.gethostname())[2]
    except OSError:
        pass
    for a in candidates:
        if not a.startswith("127.") and a != "0.0.0.0":
            return a
    return None


def reachable(host, port):
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


@pytest.mark.parametrize("args", [
    [],
    ["--listen", "127.0.0.1:0"],
    ["--secret-file"],
    ["--bogus", "x"],
    ["--listen"],
    ["positional"],
], ids=["nothing", "no-secret", "secret-without-value", "unknown-option", "listen-without-value",
        "positional"])
def test_wrong_arguments_exit_2_with_usage(args, secret_file):
    p = run(args)
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert "usage: sos-server" in p.stderr, p.stderr
    assert p.stdout == ""


@pytest.mark.parametrize("value", ["2/2", "0/0", "1", "x/2", "0/2x", "0/1025", "-1/2"])
def test_a_shard_outside_its_count_exits_2_naming_the_option(value, secret_file):
    p = run(["--shard", value, "--secret-file", secret_file])
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert f"--shard takes I/N with 0 <= I < N <= 1024, not '{value}'" in p.stderr, p.stderr


def test_help_prints_usage():
    p = run(["--help"])
    assert "usage: sos-server" in p.stderr + p.stdout
    assert "--secret-file" in p.stderr + p.stdout


def test_group_readable_secret_file_is_refused(tmp_path):
    path = write_secret(tmp_path / "open.secret", mode=0o644)
    p = run(["--listen", f"127.0.0.1:{free_port()}", "--secret-file", path])
    assert p.returncode != 0 and p.returncode != 2, (p.returncode, p.stderr)
    assert "0644" in p.stderr and path in p.stderr, p.stderr
    assert "chmod 600" in p.stderr, p.stderr


def test_missing_short_and_directory_secret_files_are_clear_errors(tmp_path):
    missing = str(tmp_path / "nope")
    p = run(["--listen", f"127.0.0.1:{free_port()}", "--secret-file", missing])
    assert p.returncode not in (0, 2) and missing in p.stderr, p.stderr
    short = write_secret(tmp_path / "short.secret", text="tooshort")
    p = run(["--listen", f"127.0.0.1:{free_port()}", "--secret-file", short])
    assert p.returncode not in (0, 2) and "at least" in p.stderr, p.stderr
    os.mkdir(tmp_path / "dir.secret")
    os.chmod(tmp_path / "dir.secret", 0o700)
    p = run(["--listen", f"127.0.0.1:{free_port()}", "--secret-file", str(tmp_path / "dir.secret")])
    assert p.returncode not in (0, 2), p.stderr
    assert "regular file" in p.stderr, p.stderr


def test_unusable_listen_address_is_a_clear_error(secret_file):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        p = run(["--listen", f"127.0.0.1:{port}", "--secret-file", secret_file])
    assert p.returncode not in (0, 2), (p.returncode, p.stderr)
    assert "cannot listen" in p.stderr, p.stderr
    # An address of no interface here (TEST-NET-1): bind fails at once.
    p = run(["--listen", "192.0.2.123:1234", "--secret-file", secret_file])
    assert p.returncode not in (0, 2) and "cannot listen" in p.stderr, (p.returncode, p.stderr)
    p = run(["--listen", "127.0.0.1:notaport", "--secret-file", secret_file])
    assert p.returncode != 0, p.stderr


def start(procs, args):
    p = procs.start([server_bin()] + args)
    return p, p.errlog.name


def test_sigusr1_prints_statistics_and_sigterm_exits_0(procs, secret_file, probe):
    port = free_port()
    p, log = start(procs, ["--listen", f"127.0.0.1:{port}", "--secret-file", secret_file])
    wait_port(port, p)
    # Some traffic, so the statistics have something to count.
    a = probe(f"127.0.0.1:{port}", "cli-a")
    b = probe(f"127.0.0.1:{port}", "cli-b")
    cid = a.alloc(16)
    a.write(cid, 0, 1)
    assert b.read(cid, 0) == 1
    p.send_signal(signal.SIGUSR1)
    text = stderr_until(p, log, "statistics")
    assert "statistics" in text, text
    assert p.poll() is None, "SIGUSR1 stopped the server"
    stats_line = [l for l in text.splitlines() if "statistics" in l][0]
    assert any(ch.isdigit() for ch in stats_line), stats_line
    # Still serving after SIGUSR1.
    b.write(cid, 0, 2)
    assert a.read(cid, 0) == 2
    a.ok("abandon")
    b.ok("abandon")
    before = open(log).read().count("statistics")
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=10) == 0
    text = open(log).read()
    assert text.count("statistics") > before, f"no statistics at exit: {text}"
    assert "SIGTERM" in text


def test_sigterm_with_connected_nodes_exits_0_and_nodes_see_disconnected(procs, secret_file, probe):
    port = free_port()
    p, log = start(procs, ["--listen", f"127.0.0.1:{port}", "--secret-file", secret_file])
    wait_port(port, p)
    a = probe(f"127.0.0.1:{port}", "stays")
    cid = a.alloc(16)
    a.write(cid, 0, 1)
    b = probe(f"127.0.0.1:{port}", "reader")
    assert b.read(cid, 0) == 1
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=10) == 0, open(log).read()
    answer = b.cmd(f"read {cid:#x} 0")
    assert answer.startswith("error DISCONNECTED"), answer


def test_sigint_exits_0(procs, secret_file):
    port = free_port()
    p, log = start(procs, ["--listen", f"127.0.0.1:{port}", "--secret-file", secret_file])
    wait_port(port, p)
    p.send_signal(signal.SIGINT)
    assert p.wait(timeout=10) == 0


@pytest.mark.parametrize("form", ["colon-port", "bare-port"])
def test_port_without_host_listens_on_loopback_only(procs, secret_file, form):
    port = free_port()
    listen = f":{port}" if form == "colon-port" else str(port)
    p, log = start(procs, ["--listen", listen, "--secret-file", secret_file])
    wait_port(port, p)
    assert "127.0.0.1" in stderr_until(p, log, "listening"), open(log).read()
    other = non_loopback_address()
    if other is not None:
        assert not reachable(other, port), f"sos-server --listen {listen} is reachable on {other}"


def test_default_listen_address_is_loopback_7701(procs, secret_file):
    if reachable("127.0.0.1", 7701):
        pytest.skip("something already listens on 127.0.0.1:7701")
    p, log = start(procs, ["--secret-file", secret_file])
    wait_port(7701, p)
    assert "127.0.0.1:7701" in stderr_until(p, log, "listening"), open(log).read()
    other = non_loopback_address()
    if other is not None:
        assert not reachable(other, 7701), f"the default address is reachable on {other}"
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=10) == 0


def test_binds_elsewhere_when_told(procs, secret_file):
    other = non_loopback_address()
    if other is None:
        pytest.skip("this host has no non-loopback IPv4 address")
    port = free_port()
    p, log = start(procs, ["--listen", f"{other}:{port}", "--secret-file", secret_file])
    wait_port(port, p, host=other)
    assert not reachable("127.0.0.1", port)
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=10) == 0


def test_logs_go_to_stderr_not_stdout(procs, secret_file, probe):
    port = free_port()
    p, log = start(procs, ["--listen", f"127.0.0.1:{port}", "--secret-file", secret_file])
    wait_port(port, p)
    a = probe(f"127.0.0.1:{port}", "logged-node")
    a.ok("abandon")
    p.send_signal(signal.SIGTERM)
    out, _ = p.communicate(timeout=10)
    assert out == ""
    text = open(log).read()
    assert "logged-node" in text and "listening" in text, text
