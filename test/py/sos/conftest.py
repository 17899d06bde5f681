"""Fixtures for the shared-object system's process tests: a real sos-server on
a free loopback port with a fresh secret file, and client nodes built by CMake
(test/native/sos): sos-probe, driven line by line, and sos-stress. Every
process is killed at teardown; every wait is bounded."""

import os
import subprocess
import threading

import pytest

from localprocs import BIN, binary, free_port, read_line, wait_port


def sos_binary(name):
    # SOS_CLIENT_BIN: another directory holding sos-probe and sos-stress (e.g. a
    # sanitizer build of the client library); the server always comes from BIN.
    alt = os.environ.get("SOS_CLIENT_BIN")
    return binary(name, alt if alt and name != "sos-server" else BIN)


def read_secret(path):
    """The secret as proto/wire/secret.cc reads it: trailing whitespace dropped."""
    with open(path, "rb") as f:
        return f.read().rstrip(b"\n\r \t")


class Server:
    def __init__(self, proc, port, procs):
        self.proc = proc
        self.port = port
        self.address = f"127.0.0.1:{port}"
        self._procs = procs

    def log(self):
        return self._procs.stderr_of(self.proc)

    def alive(self):
        return self.proc.poll() is None


def start_sos_server(procs, secret_file, *options):
    """A sos-server on a free loopback port, with extra command-line options."""
    port = free_port()
    p = procs.start([sos_binary("sos-server"), "--listen", f"127.0.0.1:{port}",
                     "--secret-file", secret_file, *options])
    wait_port(port, p)
    return Server(p, port, procs)


@pytest.fixture
def sos_server(procs, secret_file):
    """A sos-server on a free loopback port that keeps every chunk until
    its program ends (--no-collection). These tests hand chunk ids to their
    probes and stress processes themselves, often after every node that
    held a chunk left; the distributed collector frees such a chunk (no
    node holds it), so its own tests ask for a collecting server
    (sos_server_with())."""
    return start_sos_server(procs, secret_file, "--no-collection")


class Shards:
    """sos-servers that split one directory (--shard I/N), as one Server:
    nodes reach them by the list of their addresses, in shard order."""

    def __init__(self, servers):
        self.servers = servers
        self.address = ",".join(s.address for s in servers)

    def log(self):
        return "".join(f"--- shard {i}:\n{s.log()}" for i, s in enumerate(self.servers))

    def alive(self):
        return all(s.alive() for s in self.servers)


@pytest.fixture
def sos_shards(procs, secret_file):
    """sos_shards(n, *options): n sos-servers splitting the directory, each
    keeping every chunk until its program ends, as sharded servers do."""
    return lambda n, *options: Shards([start_sos_server(procs, secret_file, "--shard",
                                                        f"{i}/{n}", *options)
                                       for i in range(n)])


@pytest.fixture
def sos_server_with(procs, secret_file):
    """sos_server_with(*options): a sos-server started with extra options."""
    return lambda *options: start_sos_server(procs, secret_file, *options)


class Probe:
    """A sos-probe node: cmd() sends one line and returns the answer line.
    send()/answer() split the two for commands that block."""

    def __init__(self, proc, name, procs):
        self.proc = proc
        self.name = name
        self._procs = procs
        self.node = None
        self._pending = None

    def send(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        # Read in the background, so a blocked command can be checked later.
        box = []
        t = threading.Thread(target=lambda: box.append(self.proc.stdout.readline()), daemon=True)
        t.start()
        self._pending = (t, box, line)

    def answer(self, timeout=10.0):
        t, box, line = self._pending
        t.join(timeout)
        if not box:
            raise AssertionError(f"probe {self.name}: no answer to {line!r} within {timeout}s; "
                                 f"stderr: {self.stderr()}")
        self._pending = None
        return box[0].strip()

    def answered(self, wait=0.0):
        """Whether the pending command has answered (within wait seconds)."""
        t, _, _ = self._pending
        t.join(wait)
        return not t.is_alive()

    def cmd(self, line, timeout=10.0):
        self.send(line)
        return self.answer(timeout)

    def ok(self, line, timeout=10.0):
        """cmd() that must succeed; returns what follows "ok"."""
        a = self.cmd(line, timeout)
        assert a == "ok" or a.startswith("ok "), f"probe {self.name}: {line!r} -> {a!r}"
        return a[3:]

    def alloc(self, size=16, *extra):
        return int(self.ok(" ".join(["alloc", str(size)] + [str(x) for x in extra])), 0)

    def read(self, cid, offset=0):
        return int(self.ok(f"read {cid:#x} {offset}"))

    def write(self, cid, offset, value):
        self.ok(f"write {cid:#x} {offset} {value}")

    def stderr(self):
        return self._procs.stderr_of(self.proc)

    def wait_exit(self, timeout=15.0):
        return self.proc.wait(timeout=timeout)


@pytest.fixture
def probe(procs, secret_file):
    """probe(server, name) starts a sos-probe node and waits for it to be ready."""
    binary = sos_binary("sos-probe")
    counter = [0]

    def start(server, name=None, secret=None):
        counter[0] += 1
        name = name or f"probe{counter[0]}"
        p = procs.start([binary, "--server", server if isinstance(server, str) else server.address,
                         "--secret-file", secret or secret_file, "--node-name", name],
                        stdin=subprocess.PIPE)
        pr = Probe(p, name, procs)
        ready = read_line(p, timeout=15)
        assert ready.startswith("ready "), f"probe {name} did not start: {ready!r}: {procs.stderr_of(p)}"
        pr.node = int(ready.split()[1])
        return pr

    return start


@pytest.fixture
def stress_binary():
    return sos_binary("sos-stress")
