#!/usr/bin/env python3
"""bench/now: a network of workstations on one machine. The application
benchmarks of bench/apps run on a djava cluster whose daemons live in
separate network namespaces, with a chosen round-trip delay added between
any two of them, so the effect of network latency on each application is
measured rather than guessed.

Topology (addresses 10.213.0.0/24, one namespace each, all named
djnow-<pid>-<role>):

    hub (.1)          sos-server and thread-manager
    launch (.2)       the program's launcher, build/bin/djava with
                      DJAVA_CLUSTER=10.213.0.1:PORT and DJAVA_SECRET_FILE
    ts1, ts2, ... (.3, .4, ...)   one thread server each

Every node has one link to a switch in the namespace djnow-<pid>-sw, and
every frame is delayed once on its way, by half the round trip; so the round
trip between any two nodes is the chosen delay (plus the link's own cost,
which is measured). Two kinds of link, the same topology:

    netem   a veth pair per node into a Linux bridge; the node's end has
            `tc qdisc ... netem delay RTT/2` (on its egress: a request is
            delayed leaving the client, its answer leaving the server).
    tap     for kernels without netem (this project's machines: no
            CONFIG_NET_SCH_NETEM, no modules): a tap device per node, all
            held by bench/now/delay-switch.c (compiled into the run's
            directory), a user-space switch that forwards each frame RTT/2
            after it arrived. It adds its own cost to every round trip, so
            the measured round trip at 0 is higher than a veth's.

--link auto (default) takes netem when the kernel has it (or when every
delay is 0: plain veths and the bridge), else tap.

For each delay and each thread-server count the cluster is started,
every application runs --rounds times (medians), and the cluster is
stopped. Before each delay's runs the round trip from the launcher's
namespace to the hub's is measured with ICMP echo (median of 50).

--rtt-only builds the network and prints the measured round trips only.

Needs root, iproute2 (ip, tc), and for tap links /dev/net/tun and a C
compiler. Every namespace, device and process it makes is removed when it
ends, also on failure, SIGINT, SIGTERM and SIGHUP; the logs stay in
$TMPDIR/djnow-<pid>-* only when a run fails (or with --keep-logs). Killed
outright (SIGKILL), its daemons, launcher and switch die with it (the kernel
kills them), its namespaces stay: --cleanup removes those of runs that no
longer exist, with their logs.

This machine has 2 cores: every daemon of the "network" shares them, so no
speedup can exceed 2 and speedups with 2 or more servers are bounded by
cores; what grows with the delay is the protocol's (its round trips on the
program's critical path). The output says which is which.

usage: bench/now/run.py [--delays 0,50us,250us,1ms] [--servers 1,2,4]
                        [--rounds R] [--small] [--apps A,B] [--link auto|netem|tap]
                        [--out FILE.md] [--json FILE] [--keep-logs]
       bench/now/run.py --rtt-only [--delays ...]
       bench/now/run.py --cleanup
"""

import argparse
import ctypes
import importlib.machinery
import importlib.util
import json
import os
import re
import select
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in bench/apps or build/bin

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD = os.path.join(TOP, "build")
BIN = os.path.join(BUILD, "bin")
JAVAC = os.path.join(BUILD, "jvm", "base-image", "bin", "javac")

NS_PREFIX = "djnow-"
NS_PATTERN = re.compile(r"^djnow-(\d+)-")
SUBNET = "10.213.0"
RTT_PROBES = 50
START_TIMEOUT = 120.0  # seconds for a cluster to come up (2 busy cores)
STOP_WAIT = 10.0       # seconds from SIGTERM to SIGKILL for the daemons
COMMAND_TIMEOUT = 30   # seconds for any ip/tc command


class NowError(Exception):
    """A failure to report to the user in one message."""


class Interrupted(BaseException):
    """SIGINT, SIGTERM or SIGHUP: stop and clean up (BaseException so that
    no `except Exception` on the way swallows it)."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def say(message):
    sys.stderr.write(f"now: {message}\n")
    sys.stderr.flush()


def sh(*cmd, timeout=COMMAND_TIMEOUT, check=True):
    """Runs a short command (ip, tc, cc); a failure is a NowError quoting it."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise NowError(f"'{' '.join(cmd)}' did not finish in {timeout} s")
    if check and p.returncode != 0:
        raise NowError(f"'{' '.join(cmd)}' failed: {(p.stderr or p.stdout).strip()}")
    return p


def load_module(name, path):
    """Imports a Python file by path (build/bin/djava has no .py suffix)."""
    loader = importlib.machinery.SourceFileLoader(name, path)
    spec = importlib.util.spec_from_loader(name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def parse_delay(text):
    """'0', '50us', '50µs', '250us', '1ms', '0.5ms' -> microseconds (int); a
    bare number is microseconds."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(us|µs|ms|s)?\s*", text)
    if not m:
        raise argparse.ArgumentTypeError(f"not a delay: '{text}' (say 0, 50us, 1ms)")
    scale = {None: 1, "us": 1, "µs": 1, "ms": 1000, "s": 1000000}[m.group(2)]
    return int(round(float(m.group(1)) * scale))


def parse_list(parse):
    def parse_all(text):
        values = [parse(x) for x in text.split(",") if x.strip()]
        if not values:
            raise argparse.ArgumentTypeError("takes a comma-separated list")
        return values
    return parse_all


def server_count(text):
    if not text.strip().isdigit() or not 1 <= int(text) <= 16:
        raise argparse.ArgumentTypeError(f"a thread-server count is 1 to 16, not '{text}'")
    return int(text)


# ---- the round-trip probe (run inside the launcher's namespace) --------------------

def icmp_checksum(data):
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    total = (total >> 16) + (total & 0xFFFF)
    total += total >> 16
    return ~total & 0xFFFF


def icmp_rtts(host, count, interval=0.02, timeout=2.0):
    """Round trips of ICMP echo to host in microseconds (lost probes left
    out). Done here rather than with ping(8): iputils-ping is not on these
    machines, and a raw socket needs only the root we have anyway."""
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    ident = os.getpid() & 0xFFFF
    payload = b"djnow-rtt-probe-" * 3 + b"12345678"  # 56 bytes, as ping sends
    rtts = []
    # Probe 0 resolves the address (ARP) and is not counted.
    for seq in range(count + 1):
        header = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
        packet = struct.pack("!BBHHH", 8, 0, icmp_checksum(header + payload), ident,
                             seq) + payload
        sent = time.perf_counter()
        s.sendto(packet, (host, 0))
        deadline = sent + timeout
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                break
            s.settimeout(left)
            try:
                data = s.recv(2048)
            except socket.timeout:
                break
            received = time.perf_counter()
            ihl = (data[0] & 0x0F) * 4
            kind, _, _, their_ident, their_seq = struct.unpack("!BBHHH", data[ihl:ihl + 8])
            if kind == 0 and their_ident == ident and their_seq == seq:
                if seq:
                    rtts.append((received - sent) * 1e6)
                break
        time.sleep(interval)
    s.close()
    return rtts


def probe_main(host, count):
    rtts = icmp_rtts(host, count)
    print(json.dumps(rtts))
    return 0 if rtts else 1


# ---- checks before anything is made ----------------------------------------------

def require_root_and_iproute():
    if os.geteuid() != 0:
        raise NowError("bench/now needs root (network namespaces, links, tc); run it as root")
    missing = [t for t in ("ip", "tc") if not shutil.which(t)]
    if missing:
        raise NowError(f"{' and '.join(missing)} not found: install the Debian package "
                       "iproute2 (apt-get install iproute2)")


def require_tools(link):
    """Fails with the Debian package to install for anything missing."""
    require_root_and_iproute()
    for name in ("djava", "sos-server", "thread-manager", "thread-server"):
        if not os.access(os.path.join(BIN, name), os.X_OK):
            raise NowError(f"{os.path.join(BIN, name)} is not built (run make)")
    if not os.access(JAVAC, os.X_OK):
        raise NowError(f"{JAVAC} is not built (run make)")
    if link == "tap":
        if not os.path.exists("/dev/net/tun"):
            raise NowError("no /dev/net/tun: the kernel lacks tun/tap (CONFIG_TUN), which "
                           "tap links need; use a kernel with netem (--link netem)")
        if not (shutil.which("cc") or shutil.which("gcc")):
            raise NowError("no C compiler for bench/now/delay-switch.c: install the Debian "
                           "package gcc (apt-get install gcc)")


def netem_works(run_id):
    """Whether `tc qdisc add ... netem` works here, tried on a veth pair in
    a scratch namespace (after `modprobe sch_netem` if the first try fails
    and the kernel takes modules). Returns (works, why not)."""
    ns = f"{NS_PREFIX}{run_id}-probe"
    sh("ip", "netns", "add", ns)
    try:
        sh("ip", "-n", ns, "link", "add", "probe0", "type", "veth", "peer", "name", "probe1")
        add = ("tc", "-n", ns, "qdisc", "add", "dev", "probe0", "root", "netem", "delay", "1us")
        p = sh(*add, check=False)
        if p.returncode != 0 and os.path.exists("/proc/modules") and shutil.which("modprobe"):
            sh("modprobe", "sch_netem", check=False)
            p = sh(*add, check=False)
        if p.returncode == 0:
            return True, ""
        why = f"tc says: {p.stderr.strip()}"
        if not os.path.exists("/proc/modules"):
            why += ("; this kernel takes no modules (CONFIG_MODULES off) and has no "
                    "CONFIG_NET_SCH_NETEM built in, so no package can add it")
        else:
            why += (f"; modprobe sch_netem failed: on Debian the module comes with the kernel "
                    f"package linux-image-{os.uname().release} (and modprobe with kmod)")
        return False, why
    finally:
        sh("ip", "netns", "del", ns, check=False)


# ---- the network ------------------------------------------------------------------

class Node:
    def __init__(self, role, namespace, address):
        self.role = role
        self.namespace = namespace
        self.address = address
        self.device = f"now-{role}"  # its link, inside its namespace


def read_line(fd, timeout, what):
    """One line from a pipe, within timeout seconds."""
    data = b""
    deadline = time.monotonic() + timeout
    while not data.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise NowError(f"{what} did not answer in {timeout:g} s")
        chunk = os.read(fd, 1)  # byte by byte: nothing past the line is taken
        if not chunk:
            raise NowError(f"{what} ended")
        data += chunk
    return data.decode().strip()


class Network:
    """The namespaces of one run, their links, and the switch between them."""

    def __init__(self, run_id, thread_servers, link, workdir):
        self.link = link
        self.workdir = workdir
        self.switch_ns = f"{NS_PREFIX}{run_id}-sw"
        roles = ["hub", "launch"] + [f"ts{i}" for i in range(1, thread_servers + 1)]
        self.nodes = {role: Node(role, f"{NS_PREFIX}{run_id}-{role}", f"{SUBNET}.{k + 1}")
                      for k, role in enumerate(roles)}
        self.namespaces = []  # made so far, to delete
        self.switch = None    # the delay switch (tap links)

    def create(self):
        for ns in [self.switch_ns, *(n.namespace for n in self.nodes.values())]:
            sh("ip", "netns", "add", ns)
            self.namespaces.append(ns)
        if self.link == "tap":
            self._start_switch()
            for n in self.nodes.values():
                # The tap stays the switch's (its file descriptor) wherever it lives.
                sh("ip", "-n", self.switch_ns, "link", "set", n.device, "netns", n.namespace)
        else:
            sh("ip", "-n", self.switch_ns, "link", "add", "br0", "type", "bridge")
            sh("ip", "-n", self.switch_ns, "link", "set", "br0", "up")
            for n in self.nodes.values():
                port = f"sw-{n.role}"
                sh("ip", "link", "add", n.device, "netns", n.namespace, "type", "veth",
                   "peer", "name", port, "netns", self.switch_ns)
                sh("ip", "-n", self.switch_ns, "link", "set", port, "master", "br0", "up")
        for n in self.nodes.values():
            sh("ip", "-n", n.namespace, "link", "set", "lo", "up")
            sh("ip", "-n", n.namespace, "addr", "add", f"{n.address}/24", "dev", n.device)
            sh("ip", "-n", n.namespace, "link", "set", n.device, "up")

    def _start_switch(self):
        binary = os.path.join(self.workdir, "delay-switch")
        compiler = shutil.which("cc") or shutil.which("gcc")
        sh(compiler, "-O2", "-Wall", "-o", binary, os.path.join(HERE, "delay-switch.c"),
           timeout=120)
        log = open(os.path.join(self.workdir, "delay-switch.log"), "wb")
        # Its stdin is our pipe: when this process ends, however, the switch
        # reads end of input and exits (and PR_SET_PDEATHSIG backs that up).
        self.switch = subprocess.Popen(
            ["ip", "netns", "exec", self.switch_ns, binary,
             *(n.device for n in self.nodes.values())],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, start_new_session=True)
        log.close()
        line = read_line(self.switch.stdout.fileno(), 30, "the delay switch")
        if line != "ready":
            raise NowError(f"the delay switch said '{line}' (log {log.name})")

    def set_delay(self, rtt_us):
        """Every frame from now on is delayed rtt_us / 2 on its way."""
        if self.link == "tap":
            one_way_ns = rtt_us * 1000 // 2
            try:
                self.switch.stdin.write(f"{one_way_ns}\n".encode())
                self.switch.stdin.flush()
            except BrokenPipeError:
                raise NowError(f"the delay switch has ended (log {self.workdir}/delay-switch.log)")
            answer = read_line(self.switch.stdout.fileno(), 10, "the delay switch")
            if answer != f"delay {one_way_ns}":
                raise NowError(f"the delay switch answered '{answer}' to a delay")
            return
        for n in self.nodes.values():
            if rtt_us:
                sh("tc", "-n", n.namespace, "qdisc", "replace", "dev", n.device, "root", "netem",
                   "delay", f"{rtt_us / 2:g}us", "limit", "100000")
            else:  # 0: the plain veth, no queue in the way
                sh("tc", "-n", n.namespace, "qdisc", "del", "dev", n.device, "root",
                   check=False)

    def measure_rtt(self):
        """Median ICMP round trip, launcher's namespace to the hub's, in µs."""
        p = sh("ip", "netns", "exec", self.nodes["launch"].namespace, sys.executable,
               os.path.abspath(__file__), "--probe-rtt", self.nodes["hub"].address,
               str(RTT_PROBES), timeout=60, check=False)
        try:
            rtts = json.loads(p.stdout)
        except ValueError:
            rtts = []
        if p.returncode != 0 or not rtts:
            raise NowError(f"no answer to ICMP echo from the launcher's namespace to the hub "
                           f"({p.stderr.strip() or 'every probe lost'})")
        return statistics.median(rtts), min(rtts)

    def destroy(self):
        """Removes everything create() made; returns what could not be removed."""
        problems = []
        if self.switch:
            # End of input ends it, and with it its taps.
            try:
                self.switch.stdin.close()
            except OSError:
                pass
            try:
                self.switch.wait(5)
            except subprocess.TimeoutExpired:
                kill_group(self.switch.pid, signal.SIGKILL)
                self.switch.wait(5)
            self.switch.stdout.close()
            self.switch = None
        for ns in reversed(self.namespaces):
            problems += delete_namespace(ns)
        self.namespaces = []
        return problems


def kill_group(pgid, sig):
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def delete_namespace(ns):
    """Kills whatever still runs in ns (nothing, normally) and deletes it;
    returns what went wrong rather than raising, so that a cleanup goes on
    to the next namespace."""
    try:
        p = sh("ip", "netns", "pids", ns, check=False)
        for pid in p.stdout.split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        # A process just killed may hold the namespace a moment longer; the
        # name goes at once either way, and the namespace with its last user.
        p = sh("ip", "netns", "del", ns, check=False)
        if p.returncode != 0 and ns in list_namespaces():
            return [f"cannot delete namespace {ns}: {p.stderr.strip()}"]
    except NowError as e:
        return [f"cannot delete namespace {ns}: {e}"]
    return []


def list_namespaces():
    p = sh("ip", "netns", "list", check=False)
    return [line.split()[0] for line in p.stdout.splitlines() if line.strip()]


def run_alive(pid):
    """Whether a bench/now run with this pid still runs (its namespaces are
    not stale)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"run.py" in f.read()
    except OSError:
        return False


def stale_namespaces():
    return [ns for ns in list_namespaces()
            if NS_PATTERN.match(ns) and not run_alive(int(NS_PATTERN.match(ns).group(1)))]


def cleanup_stale():
    """Removes the namespaces (with whatever runs in them) and the log
    directories of bench/now runs that no longer run."""
    stale = stale_namespaces()
    problems = []
    for ns in stale:
        problems += delete_namespace(ns)
        say(f"removed stale namespace {ns}")
    tmp = tempfile.gettempdir()
    for name in sorted(os.listdir(tmp)):
        m = NS_PATTERN.match(name)
        path = os.path.join(tmp, name)
        if m and os.path.isdir(path) and not run_alive(int(m.group(1))):
            shutil.rmtree(path, ignore_errors=True)
            say(f"removed the logs of an earlier run, {path}")
    if not stale:
        say("no stale bench/now namespaces")
    for problem in problems:
        say(problem)
    return 1 if problems else 0


# ---- a cluster over the network ------------------------------------------------------

_libc = None


def die_with_parent():
    """In the child before exec: the kernel kills it if this script dies,
    even by SIGKILL (PR_SET_PDEATHSIG survives `ip netns exec`'s exec)."""
    _libc.prctl(1, signal.SIGKILL, 0, 0, 0)


class Cluster:
    """sos-server and thread-manager in the hub's namespace, each thread
    server in its own; started as LocalCluster starts its daemons (djava's
    own code, whose log parsing is reused), but listening on the hub's
    address instead of loopback."""

    def __init__(self, net, djava, secret_file, logdir, threads, env, sos_options=()):
        self.net = net
        self.sos_options = list(sos_options)
        self.env = env
        self.djava = djava
        self.secret_file = secret_file
        self.logdir = logdir
        self.threads = threads
        self.daemons = []
        self.address = None

    def spawn(self, name, role, args):
        global _libc
        if _libc is None:
            _libc = ctypes.CDLL(None, use_errno=True)
        log = os.path.join(self.logdir, name + ".log")
        with open(log, "wb") as out:
            # A session of its own: its process group is killed as a whole at
            # the end, and the terminal's ^C is this script's to handle.
            proc = subprocess.Popen(["ip", "netns", "exec", self.net.nodes[role].namespace,
                                     *args], stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, start_new_session=True,
                                    preexec_fn=die_with_parent, env=self.env)
        d = self.djava.Daemon(name, proc, log)
        self.daemons.append(d)
        return d

    def wait_until(self, ready, deadline, what):
        while True:
            for d in self.daemons:
                if d.proc.poll() is not None:
                    lines = [l for l in d.log_lines() if l.strip()]
                    raise NowError(f"{d.name} exited with status {d.proc.returncode}"
                                   f"{': ' + lines[-1] if lines else ''} (log {d.log})")
            result = ready()
            if result:
                return result
            if time.monotonic() > deadline:
                raise NowError(f"{what} after {START_TIMEOUT:g} s")
            time.sleep(0.02)

    def start(self, servers):
        deadline = time.monotonic() + START_TIMEOUT
        hub = self.net.nodes["hub"].address
        secret = ["--secret-file", self.secret_file]
        sos = self.spawn("sos-server", "hub", [os.path.join(BIN, "sos-server"),
                                               "--listen", f"{hub}:0", *secret,
                                               *self.sos_options])
        sos_address = self.wait_until(lambda: self.djava.listening_address(sos.log_lines()),
                                      deadline, f"sos-server was not listening (log {sos.log})")
        tm = self.spawn("thread-manager", "hub", [os.path.join(BIN, "thread-manager"),
                                                  "--listen", f"{hub}:0", "--sos", sos_address,
                                                  *secret])
        self.address = self.wait_until(lambda: self.djava.listening_address(tm.log_lines()),
                                       deadline,
                                       f"thread-manager was not listening (log {tm.log})")
        ts = [self.spawn(f"thread-server-{i}", f"ts{i}",
                         [os.path.join(BIN, "thread-server"), "--cluster", self.address,
                          *secret, "--threads", str(self.threads)])
              for i in range(1, servers + 1)]
        self.wait_until(lambda: {s.pid for s in ts} <= self.djava.registered_pids(tm.log_lines()),
                        deadline, f"not every thread server had registered (log {tm.log})")

    def stop(self):
        """The thread servers first, then the thread-manager, then the
        sos-server (as djava-cluster stops them: a leaving thread server
        still needs both), SIGTERM with a bounded wait, then SIGKILL to
        every process group."""
        def phase(d):
            return 0 if d.name.startswith("thread-server") else (
                1 if d.name == "thread-manager" else 2)
        deadline = time.monotonic() + STOP_WAIT
        for p in (0, 1, 2):
            group = [d for d in self.daemons if phase(d) == p and d.proc.poll() is None]
            for d in group:
                kill_group(d.pid, signal.SIGTERM)
            while time.monotonic() < deadline and any(d.proc.poll() is None for d in group):
                time.sleep(0.01)
        for d in self.daemons:
            kill_group(d.pid, signal.SIGKILL)  # also any child left in the group
        for d in self.daemons:
            try:
                d.proc.wait(5)
            except subprocess.TimeoutExpired:
                pass
        self.daemons = []


# ---- the report -------------------------------------------------------------------------

def servers_name(n):
    return f"{n} server{'s' if n > 1 else ''}"


def delay_name(us):
    return f"{us / 1000:g} ms" if us >= 1000 else f"{us} µs"


def report(args, link, cores, threads, rtts, med):
    apps_ = list(med)
    delays, servers = args.delays, args.servers
    base = servers[0]
    link_text = ("veth pairs into a bridge, `tc netem` on each node's egress" if link == "netem"
                 else "tap devices into bench/now/delay-switch.c (this kernel has no netem)")
    lines = [f"djava on a network of workstations in one machine (bench/now): round trips "
             f"added {', '.join(delay_name(d) for d in delays)}; thread servers "
             f"{', '.join(str(n) for n in servers)}; each node in its own network namespace, "
             f"links: {link_text}, every frame delayed half the round trip. "
             f"ms of each program's parallel part ({threads} threads, each thread server takes "
             f"{cores}), median of {args.rounds} round{'s' if args.rounds > 1 else ''}"
             f"{' (smoke sizes)' if args.small else ''}; this machine has {cores} cores"
             f"{'; sos-server ' + ' '.join(args.sos_option) if args.sos_option else ''}.",
             "", "| added round trip | measured round trip, launcher ↔ hub (ICMP median of "
             f"{RTT_PROBES}) | fastest probe |", "|---|---|---|"]
    for d in delays:
        lines.append(f"| {delay_name(d)} | {rtts[d][0]:.0f} µs | {rtts[d][1]:.0f} µs |")
    head = "| application | round trip | " + " | ".join(servers_name(n) for n in servers) + " |"
    lines += ["", "Time (ms):", "", head, "|---|---|" + "---|" * len(servers)]
    for app in apps_:
        for d in delays:
            lines.append(f"| {app} | {delay_name(d)} | " +
                         " | ".join(f"{med[app][d][n]:.1f}" for n in servers) + " |")
    lines += ["", f"Speedup over {servers_name(base)} at the same round trip:",
              "", head, "|---|---|" + "---|" * len(servers)]
    for app in apps_:
        for d in delays:
            lines.append(f"| {app} | {delay_name(d)} | " + " | ".join(
                f"{med[app][d][base] / med[app][d][n]:.2f}" for n in servers) + " |")
    if len(delays) > 1:
        lo, hi = min(delays), max(delays)
        added_rtt_ms = (rtts[hi][0] - rtts[lo][0]) / 1000
        lines += ["", f"What the protocol's latency costs: time added from {delay_name(lo)} to "
                  f"{delay_name(hi)} (measured round trip +{added_rtt_ms * 1000:.0f} µs), and "
                  "that divided by the added round trip: the number of round trips on the "
                  "program's critical path.", "",
                  "| application | " + " | ".join(servers_name(n) for n in servers) + " |",
                  "|---|" + "---|" * len(servers)]
        for app in apps_:
            cells = []
            for n in servers:
                added = med[app][hi][n] - med[app][lo][n]
                trips = added / added_rtt_ms if added_rtt_ms > 0 else float("nan")
                cells.append(f"+{added:.1f} ms ({added / med[app][lo][n]:+.0%}), "
                             f"≈{trips:.0f} round trips" if added >= 0 else
                             f"{added:.1f} ms ({added / med[app][lo][n]:+.0%})")
            lines.append(f"| {app} | " + " | ".join(cells) + " |")
    lines += ["", "Reading: " + reading(med, delays, servers, cores)]
    return "\n".join(lines) + "\n"


def reading(med, delays, servers, cores):
    """Which speedups are limited by cores and which by the protocol, in
    words, from the numbers: a time that grows with the round trip is the
    protocol's; a speedup that stops at the core count is the cores'."""
    lo, hi = min(delays), max(delays)
    base = servers[0]
    notes = [f"all nodes share {cores} cores (the launcher, sos-server and thread-manager "
             f"too), so no speedup can exceed {cores}, and more than {cores} thread servers "
             f"add protocol work but no cores: a speedup that stops near {cores} is the cores' "
             "limit; a time that grows with the round trip is the protocol's (its round trips "
             "on the program's critical path)"]
    for app in med:
        speedups = []
        if len(servers) > 1:
            at_lo = {n: med[app][lo][base] / med[app][lo][n] for n in servers}
            best = max(servers, key=at_lo.get)
            if best == base:
                speedups.append(f"no speedup over {servers_name(base)} at {delay_name(lo)}")
            else:
                speedups.append(f"best speedup {at_lo[best]:.2f} with {servers_name(best)} at "
                                f"{delay_name(lo)}")
                if hi > lo:
                    speedups.append(f"{med[app][hi][base] / med[app][hi][best]:.2f} at "
                                    f"{delay_name(hi)}")
        if hi > lo:
            growth = {n: med[app][hi][n] / med[app][lo][n] - 1 for n in servers}
            worst = max(servers, key=growth.get)
            if growth[worst] > 0.10:
                verdict = (f"protocol-bound, {growth[worst]:+.0%} with {servers_name(worst)} "
                           f"at {delay_name(hi)}")
            else:
                verdict = (f"bounded by cores and computation, not latency (at most "
                           f"{growth[worst]:+.0%} at {delay_name(hi)})")
        else:
            verdict = "one delay only: give --delays two or more to tell cores from protocol"
        notes.append(f"{app} {verdict}" + (f" ({', '.join(speedups)})" if speedups else ""))
    over = [f"{app} {med[app][d][base] / med[app][d][n]:.2f}" for app in med for d in delays
            for n in servers if med[app][d][base] / med[app][d][n] > cores * 1.05]
    if over:
        notes.append(f"speedups above {cores} ({', '.join(over)}) cannot come from {cores} "
                     "cores: they are noise (a slow base run); more --rounds, full sizes and "
                     "a quiet machine shrink it")
    return "; ".join(notes) + "."


# ---- main -------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description="djava's applications over a network with added "
                                 "latency, in network namespaces on this machine (needs root)")
    ap.add_argument("--delays", type=parse_list(parse_delay), default=[0, 50, 250, 1000],
                    help="round trips to add, e.g. 0,50us,250us,1ms (the default)")
    ap.add_argument("--servers", type=parse_list(server_count), default=[1, 2, 4],
                    help="thread-server counts (default 1,2,4); speedups are over the first")
    ap.add_argument("--rounds", type=int, default=3, help="runs of each program (median)")
    ap.add_argument("--apps", type=lambda s: s.split(","),
                    help="only these of bench/apps' programs (comma-separated)")
    ap.add_argument("--small", action="store_true", help="the applications' smoke sizes")
    ap.add_argument("--link", choices=("auto", "netem", "tap"), default="auto",
                    help="netem: veth + bridge + tc netem; tap: the user-space delay switch; "
                    "auto (default): netem if the kernel has it")
    ap.add_argument("--out", help="also write the markdown tables here")
    ap.add_argument("--json", help="write the numbers here as JSON")
    ap.add_argument("--sos-option", action="append", default=[],
                    help="a sos-server option for the clusters (repeatable), e.g. "
                         "--sos-option=--no-node-handoffs")
    ap.add_argument("--rtt-only", action="store_true",
                    help="only build the network and measure its round trips (no cluster)")
    ap.add_argument("--keep-logs", action="store_true",
                    help="keep the daemons' logs (kept anyway when the run fails)")
    ap.add_argument("--cleanup", action="store_true",
                    help="only remove the namespaces of bench/now runs that no longer run")
    ap.add_argument("--probe-rtt", nargs=2, metavar=("HOST", "COUNT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.probe_rtt:
        return probe_main(args.probe_rtt[0], int(args.probe_rtt[1]))
    if args.rounds < 1:
        ap.error("--rounds takes at least 1")
    args.delays = sorted(set(args.delays))
    try:
        if args.cleanup:
            require_root_and_iproute()
            return cleanup_stale()
        return bench(args)
    except NowError as e:
        say(f"error: {e}")
        return 1
    except Interrupted as e:  # before the network existed (the netem probe cleans up itself)
        say(f"stopped by signal {e.signum}")
        return 128 + e.signum


def bench(args):
    run_id = os.getpid()
    # Every signal that would end us raises instead, so the `finally`
    # below removes what we made; cleanup itself then ignores them.
    stop_signals = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def interrupted(signum, frame):
        raise Interrupted(signum)

    for s in stop_signals:
        signal.signal(s, interrupted)

    link = "tap" if args.link == "tap" else "netem"
    require_tools(link)
    if args.link != "tap" and any(args.delays):
        works, why = netem_works(run_id)
        if not works:
            if args.link == "netem":
                raise NowError(f"netem is not available: {why}")
            link = "tap"
            require_tools(link)
            say(f"netem is not available ({why}): using tap links and bench/now/delay-switch")
    stale = stale_namespaces()
    if stale:
        say(f"{len(stale)} namespace(s) of earlier runs remain ({stale[0]}, ...): "
            "bench/now/run.py --cleanup removes them")

    # bench/apps owns the applications, their sizes and how a run is timed.
    apps = load_module("djnow_bench_apps", os.path.join(TOP, "bench", "apps", "run.py"))
    unknown = [a for a in args.apps or () if a not in apps.APPS]
    if unknown:
        raise SystemExit(f"no such application: {', '.join(unknown)} (bench/apps has "
                         f"{', '.join(apps.APPS)})")
    programs = {a: apps.APPS[a] for a in (args.apps or apps.APPS)}
    # djava's own cluster code knows the daemons' logs (addresses, registrations).
    djava = load_module("djnow_djava", os.path.join(BIN, "djava"))
    cores = len(os.sched_getaffinity(0))

    workdir = tempfile.mkdtemp(prefix=f"djnow-{run_id}-")
    net = Network(run_id, max(args.servers), link, workdir)
    cluster = None
    ok = interrupted_ = False
    try:
        if not args.rtt_only:
            secret = os.path.join(workdir, "secret")
            djava.write_secret(secret)
            classes = os.path.join(workdir, "classes")
            sh(JAVAC, "-d", classes,
               *[os.path.join(TOP, "bench", "apps", f"{a}.java") for a in programs],
               timeout=300)
        say(f"network: namespaces {NS_PREFIX}{run_id}-*, {link} links, "
            f"{len(net.nodes)} nodes; logs in {workdir}")
        net.create()
        if args.rtt_only:
            lines = ["| added round trip | measured (median) | fastest probe |", "|---|---|---|"]
            for d in args.delays:
                net.set_delay(d)
                median, fastest = net.measure_rtt()
                lines.append(f"| {delay_name(d)} | {median:.0f} µs | {fastest:.0f} µs |")
            print("\n".join(lines))
            ok = True
            return 0
        # The launcher is bench/apps' child (timed_run); setpriv makes the
        # kernel kill it too if this script dies outright, as the daemons.
        launcher = [*(["setpriv", "--pdeathsig", "KILL"] if shutil.which("setpriv") else []),
                    "ip", "netns", "exec", net.nodes["launch"].namespace,
                    os.path.join(BIN, "djava")]
        # The cluster is ours: not one the caller's environment names. Its
        # connections stay on TCP, over the delayed links: they model the
        # network between workstations, and UCX's shared memory would reach
        # across the namespaces without them.
        env = {k: v for k, v in os.environ.items()
               if k not in ("DJAVA_CLUSTER", "DJAVA_SECRET_FILE")}
        env["DJAVA_TRANSPORT"] = "tcp"
        rtts = {}
        times = {app: {d: {n: [] for n in args.servers} for d in args.delays}
                 for app in programs}
        for d in args.delays:
            net.set_delay(d)
            rtts[d] = net.measure_rtt()
            say(f"added round trip {delay_name(d)}: measured {rtts[d][0]:.0f} µs "
                f"(fastest {rtts[d][1]:.0f} µs)")
            for n in args.servers:
                logdir = os.path.join(workdir, f"rtt{d}us-{n}servers")
                os.mkdir(logdir)
                cluster = Cluster(net, djava, secret, logdir, cores, env, args.sos_option)
                started = time.monotonic()
                cluster.start(n)
                say(f"  {n} thread server(s) up in {time.monotonic() - started:.1f} s, "
                    f"cluster {cluster.address}")
                run_env = dict(env, DJAVA_CLUSTER=cluster.address, DJAVA_SECRET_FILE=secret)
                for r in range(args.rounds):
                    for app, sizes in programs.items():
                        app_args = [x.format(t=apps.THREADS)
                                    for x in sizes[1 if args.small else 0]]
                        ms = apps.timed_run(launcher, run_env, classes, app, app_args)
                        times[app][d][n].append(ms)
                        say(f"  {delay_name(d)}, {n} server(s), round {r + 1}/{args.rounds}: "
                            f"{app} {ms:.1f} ms")
                cluster.stop()
                cluster = None
        med = {app: {d: {n: statistics.median(v) for n, v in per_n.items()}
                     for d, per_n in per_d.items()} for app, per_d in times.items()}
        text = report(args, link, cores, apps.THREADS, rtts, med)
        apps.emit(text, args.out, args.json,
                  {"delays_us": args.delays,
                   "measured_rtt_us": {str(d): round(rtts[d][0], 1) for d in args.delays},
                   "servers": args.servers, "rounds": args.rounds, "small": args.small,
                   "ms": {app: {str(d): {str(n): m for n, m in per_n.items()}
                                for d, per_n in per_d.items()}
                          for app, per_d in med.items()}})
        ok = True
        return 0
    except NowError as e:  # said here, before the cleanup says where the logs are
        say(f"error: {e}")
        return 1
    except Interrupted as e:
        say(f"stopped by signal {e.signum}")
        interrupted_ = True
        return 128 + e.signum
    finally:
        for s in stop_signals:
            signal.signal(s, signal.SIG_IGN)
        if cluster:
            cluster.stop()
        problems = net.destroy()
        for problem in problems:
            say(problem)
        # The logs of a failed run stay, to be read (--cleanup removes them).
        if (ok or interrupted_) and not args.keep_logs and not problems:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            say(f"logs kept in {workdir}")
        for s in stop_signals:
            signal.signal(s, signal.SIG_DFL)


if __name__ == "__main__":
    sys.exit(main())
