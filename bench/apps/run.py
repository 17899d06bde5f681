#!/usr/bin/env python3
"""Application benchmarks (bench/apps) in the form of the seed's Tables 7
and 8: each program's own timing of its parallel part (it checks its result
afterwards) on stock HotSpot with its JIT, on the reference Zero VM with one
thread, and on djava with 1, 2 and 4 thread servers (a private cluster per
run; the program's thread count stays the same). Runs are interleaved round
by round (these machines are noisy); medians. djava's speedups are against
its own 1-server time; its overhead against Ref.

Then the protocol's costs: one more run per application and server count
with -XX:+PrintDistributedStatistics (not one of the timed runs: nothing
there is timed twice). Every node prints its counters at exit (the launcher
to stdout, the thread servers to their logs, which djava copies to its
stderr); their totals, and the same per operation of the program (a result
row, an SOR iteration, a TSP job, a scan line), per second and per thread,
are what predict the programs on more machines than this one.

This machine has 2 cores: every process of a "cluster" shares them, so the
speedups here are bounded by cores as well as by the protocol
(bench/report.py says which, from these numbers).

With --vm server every djava node runs djava's server VM (C1's code with
the checks, issue 21; the default VM), and stock java -Xint joins the
baselines; --vm server-c2 the same with C2 compiling too
(-XX:+DjavaCompileWithC2); --vm zero (the default here, for the seed's
tables) runs every node on Zero. bench/apps/variants.py sets djava's
variants (compilers, transports) side by side.

usage: bench/apps/run.py [--rounds R] [--small] [--servers 1,2,4] [--vm zero|server|server-c2]
                         [--out FILE.md] [--json FILE.json]

Other drivers (bench/now/run.py) import APPS and timed_run from here.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "bench", "micro"))
from common import emit  # noqa: E402  (the drivers' shared output)
BUILD = os.path.join(TOP, "build")
THREADS = 4
# name: (arguments at full size, at smoke size); {t} is the thread count.
APPS = {
    "MatrixMultiply": (["200", "{t}"], ["40", "{t}"]),
    "SOR": (["200", "20", "{t}"], ["40", "4", "{t}"]),
    "TSP": (["11", "{t}", "42"], ["8", "{t}", "42"]),
    "RayTracer": (["120", "{t}"], ["24", "{t}"]),
    # The common pool's programs size themselves (availableProcessors(): the
    # cluster's under djava); {t} = 1 makes them sequential, for Ref.
    "ParallelIntegrate": (["400000", "{t}"], ["20000", "{t}"]),
    "MergeSort": (["262144", "{t}"], ["16384", "{t}"]),
    # One large array worked on in disjoint ranges (issue 19: arrays in blocks).
    "StreamCipher": (["3", "4", "{t}"], ["1", "1", "{t}"]),
    "VectorUpdate": (["4", "4", "{t}"], ["1", "1", "{t}"]),
}
# What one operation of each program is (the unit its protocol costs are
# given per), and how many its arguments make: a unit of work whose count
# grows with the problem, so per-operation costs carry over to other sizes.
OPERATIONS = {
    "MatrixMultiply": ("result row", lambda args: int(args[0])),
    "SOR": ("iteration", lambda args: int(args[1])),  # a red and a black half-sweep, 2 barriers
    "TSP": ("job", lambda args: (int(args[0]) - 1) * (int(args[0]) - 2)),  # prefixes 0,a,b
    "RayTracer": ("scan line", lambda args: int(args[0])),
    "ParallelIntegrate": ("1024 elements", lambda args: int(args[0]) // 1024),
    "MergeSort": ("leaf task", lambda args: -(-int(args[0]) // 4096)),  # LEAF-sized ranges
    "StreamCipher": ("MiB pass", lambda args: int(args[0]) * int(args[1])),
    "VectorUpdate": ("M-element round", lambda args: int(args[0]) * (int(args[1]) + 1)),
}
STATISTICS = "-XX:+PrintDistributedStatistics"


def run_app(cmd, env, classes, app, args, options=()):
    """Runs one program to its end; stops the benchmark unless it said
    "correct". Returns the finished process (its output captured)."""
    p = subprocess.run([*cmd, *options, "-cp", classes, app, *args], capture_output=True,
                       text=True, timeout=1800, env=env)
    if p.returncode != 0 or "correct" not in p.stdout:
        raise SystemExit(f"{app} {' '.join(args)} on {cmd[0]} failed:\n{p.stdout}{p.stderr}")
    return p


def program_ms(stdout):
    """The time the program printed for its parallel part (on its
    "correct" line: with statistics, the launcher's table follows it)."""
    line = next(l for l in stdout.splitlines() if "correct" in l)
    return float(re.search(r"([\d.]+) ms", line).group(1))


def timed_run(cmd, env, classes, app, args):
    """The program's own time of its parallel part, in ms."""
    return program_ms(run_app(cmd, env, classes, app, args).stdout)


# ---- protocol costs -------------------------------------------------------------

# The first line of a node's block (jvm/hotspot/share/dso/dsoStatistics.cpp).
# The launcher's covers every program, a thread server's one program.
STATISTICS_LINE = re.compile(
    r"djava statistics of (?P<node>\S+) \((?P<role>launcher|thread server)\)[^:]*: "
    r"threads shipped (?P<threads_shipped>\d+), "
    r"shared objects here (?P<objects>\d+) \(published here (?P<published>\d+)"
    r"(?:, collected \d+)?\); "
    r"cache misses (?P<misses>\d+) \(upgrades (?P<upgrades>\d+)\), "
    r"invalidations (?P<invalidations>\d+), flushes (?P<flushes>\d+), "
    r"bytes in (?P<bytes_in>\d+), out (?P<bytes_out>\d+); "
    r"monitor enters (?P<monitor_enters>\d+) \((?P<monitor_enter_ms>[\d.]+) ms\)"
    # printed only when there were some
    r"(?:\n  flushes put off until an object they reference was unlocked or a fence "
    r"passed: "
    r"(?P<deferred_flushes>\d+))?")
# Every frame the node's connections carried (cache, monitors, thread
# manager), under the first line; absent from older VMs.
WIRE_LINE = re.compile(
    r"^  messages of this node \(every program, every connection\): sent (?P<sent>\d+) "
    r"\((?P<sent_bytes>\d+) bytes\), received (?P<received>\d+) \((?P<received_bytes>\d+) bytes\)$",
    re.M)
COUNTERS = ["threads_shipped", "objects", "published", "misses", "upgrades", "invalidations",
            "flushes", "deferred_flushes", "bytes_in", "bytes_out", "monitor_enters",
            "monitor_enter_ms", "wire_messages", "wire_bytes"]


def parse_statistics(text):
    """Every node's counters in text (a run's stdout and stderr), one block
    a node: a node that printed twice is counted once, by its last."""
    nodes = {}
    matches = list(STATISTICS_LINE.finditer(text))
    for i, m in enumerate(matches):
        node = {"node": m["node"], "role": m["role"]}
        for key in COUNTERS:
            if key.startswith("wire_"):
                continue
            value = m[key] or "0"  # an optional line's counter is 0 when absent
            node[key] = float(value) if key == "monitor_enter_ms" else int(value)
        # The node's own block: up to the next node's first line.
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        wire = WIRE_LINE.search(text, m.end(), end)
        node["wire_messages"] = int(wire["sent"]) + int(wire["received"]) if wire else -1
        node["wire_bytes"] = int(wire["sent_bytes"]) + int(wire["received_bytes"]) if wire else -1
        nodes[m["node"]] = node
    return list(nodes.values())


def estimated_messages(counts):
    """Messages on the wire, from the counters: a miss is a request and its
    grant, an invalidation the server's request and the ack, a flush the
    server's request and the reply with the bytes (publishing sends
    nothing: a new object's first reader's miss makes its owner flush it);
    an enter through the monitor service is a request, its grant and the
    exit. An estimate: a prefetch asks for many chunks in one frame."""
    return (2 * (counts["misses"] + counts["invalidations"] + counts["flushes"]) +
            3 * counts["monitor_enters"])


def summed(nodes):
    """Totals over the nodes. "messages" is what the nodes' connections
    carried, each frame once (every message is between a node and a
    server); the estimate from the cache's counters where a node did not
    count (an older VM)."""
    total = {key: sum(n[key] for n in nodes) for key in COUNTERS}
    total["monitor_enter_ms"] = round(total["monitor_enter_ms"], 3)
    total["bytes"] = total["bytes_in"] + total["bytes_out"]
    total["estimated_messages"] = estimated_messages(total)
    counted = all(n["wire_messages"] >= 0 for n in nodes)
    total["messages"] = total["wire_messages"] if counted else total["estimated_messages"]
    return total


def protocol_costs(app, app_args, nodes, runtime_ms):
    """Totals over the nodes, and per operation, second and thread. The
    counters cover the whole run (set-up and the result check too), the
    thread servers' only what ran there: the timed threads, and the flushes
    the launcher's check asked of them."""
    servers = [n for n in nodes if n["role"] == "thread server"]
    if not any(n["role"] == "launcher" for n in nodes) or not servers:
        raise SystemExit(f"{app}: no statistics of the launcher and the thread servers in the "
                         f"run's output (has dsoStatistics.cpp's format changed?)")
    operation, count = OPERATIONS[app]
    total = summed(nodes)

    def rates(divisor):
        return {key: round(total[key] / divisor, 3)
                for key in ("messages", "bytes", "misses", "flushes", "invalidations",
                            "monitor_enters")}

    operations = count(app_args)
    return {"operation": operation, "operations": operations, "runtime_ms": runtime_ms,
            "threads": THREADS, "nodes": nodes, "servers_reporting": len(servers),
            "total": total, "thread_servers": summed(servers),
            "per_operation": rates(operations), "per_second": rates(runtime_ms / 1000),
            "per_thread": rates(THREADS)}


def measure_protocol(cmd, env, classes, app, app_args):
    p = run_app(cmd, env, classes, app, app_args, options=[STATISTICS])
    return protocol_costs(app, app_args, parse_statistics(p.stdout + p.stderr),
                          program_ms(p.stdout))


# ---- the runs and their tables --------------------------------------------------------

def servers_name(servers):
    return f"{servers} server{'s' if servers > 1 else ''}"


def djava_name(servers):
    return f"djava, {servers_name(servers)}"


# djava's VM options per --vm (every node's: djava gives them to its
# private cluster's thread servers too).
DJAVA_VM_OPTIONS = {"zero": ["-zero"], "server": ["-server"],
                    "server-c2": ["-server", "-XX:+UnlockExperimentalVMOptions",
                                  "-XX:+DjavaCompileWithC2"]}


def configurations(servers, vm="zero"):
    """(name, command, environment, threads) of each VM compared. With vm
    "server" (or "server-c2") djava runs every node on its server VM, and
    stock HotSpot's template interpreter (java -Xint, same threads) is its
    baseline."""
    base = dict(os.environ)
    base.pop("DJAVA_CLUSTER", None)  # a private cluster of the given size each run
    stock = os.path.join(BUILD, "jvm", "base-image", "bin", "java")
    configs = [("java JIT", [stock], base, THREADS)]
    if vm != "zero":
        configs.append(("java -Xint", [stock, "-Xint"], base, THREADS))
    configs.append(("Ref, 1 thread", [os.path.join(BUILD, "jdk-ref", "bin", "java")], base, 1))
    vm_options = DJAVA_VM_OPTIONS[vm]
    for n in servers:
        configs.append((djava_name(n), [os.path.join(BUILD, "bin", "djava"), *vm_options],
                        dict(base, DJAVA_THREAD_SERVERS=str(n)), THREADS))
    return configs


def app_arguments(app, threads, small):
    return [x.format(t=threads) for x in APPS[app][1 if small else 0]]


def times_table(med, names, servers, rounds, small):
    lines = [f"Applications, {THREADS} threads (Ref: 1), ms of each program's parallel part, "
             f"median of {rounds} interleaved rounds{' (smoke sizes)' if small else ''}.",
             "", "| application | " + " | ".join(names) + " |",
             "|---|" + "---|" * len(names)]
    for app in APPS:
        lines.append(f"| {app} | " + " | ".join(f"{med[app][n]:.1f}" for n in names) + " |")
    djava1 = djava_name(servers[0])
    lines += ["", f"Speedup of djava over its own {servers[0]}-server time (the seed's Table 7) "
              "and its overhead over Ref with one server (Table 8):", "",
              "| application | " + " | ".join(servers_name(n) for n in servers) + " | djava/Ref |",
              "|---|" + "---|" * (len(servers) + 1)]
    for app in APPS:
        base = med[app][djava1]
        cells = [f"{base / med[app][djava_name(n)]:.2f}" for n in servers]
        lines.append(f"| {app} | " + " | ".join(cells) +
                     f" | {base / med[app]['Ref, 1 thread']:.2f} |")
    return lines


def protocol_table(protocol, servers):
    lines = ["", "Protocol costs: one run per application and server count with "
             f"`{STATISTICS}`, totals over the launcher and the thread servers (the whole run: "
             "set-up and the result check included). Messages are the frames the nodes' "
             "connections carried (cache, monitors, thread manager), each once. Bytes are the "
             "objects' bytes moved (frame headers not counted). "
             f"Per thread: over the program's {THREADS} threads.", "",
             "| application | servers | operation (count) | misses | invalidations | flushes "
             "| bytes | monitor enters (ms) | messages | messages/op | bytes/op | messages/s "
             "| messages/thread |",
             "|---|" + "---|" * 12]
    for app in APPS:
        for n in servers:
            c = protocol[app][str(n)]
            t = c["total"]
            lines.append(
                f"| {app} | {n} | {c['operation']} ({c['operations']}) | {t['misses']} "
                f"| {t['invalidations']} | {t['flushes']} | {t['bytes']} "
                f"| {t['monitor_enters']} ({t['monitor_enter_ms']:.1f}) | {t['messages']} "
                f"| {c['per_operation']['messages']:.1f} | {c['per_operation']['bytes']:.0f} "
                f"| {c['per_second']['messages']:.0f} | {c['per_thread']['messages']:.1f} |")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--small", action="store_true", help="smoke sizes")
    ap.add_argument("--servers", default="1,2,4")
    ap.add_argument("--vm", choices=tuple(DJAVA_VM_OPTIONS), default="zero",
                    help="the VM of djava's nodes (default zero)")
    ap.add_argument("--out", help="markdown tables")
    ap.add_argument("--json", help="the numbers, for bench/report.py")
    args = ap.parse_args()
    servers = [int(s) for s in args.servers.split(",")]
    configs = configurations(servers, args.vm)
    names = [c[0] for c in configs]
    with tempfile.TemporaryDirectory() as classes:
        subprocess.run([os.path.join(BUILD, "jvm", "base-image", "bin", "javac"), "-d", classes,
                        *[os.path.join(TOP, "bench", "apps", f"{a}.java") for a in APPS]],
                       check=True)
        ms = {app: {name: [] for name in names} for app in APPS}
        for r in range(args.rounds):
            for app in APPS:
                for name, cmd, env, threads in configs:
                    t = timed_run(cmd, env, classes, app, app_arguments(app, threads, args.small))
                    ms[app][name].append(t)
                    print(f"round {r + 1}/{args.rounds}: {app} on {name}: {t:.1f} ms",
                          file=sys.stderr, flush=True)
        # Statistics runs after the timed ones: djava's configurations only.
        djava_servers = {djava_name(n): n for n in servers}
        protocol = {app: {} for app in APPS}
        for app in APPS:
            for name, cmd, env, threads in configs:
                if name not in djava_servers:
                    continue
                app_args = app_arguments(app, threads, args.small)
                c = measure_protocol(cmd, env, classes, app, app_args)
                protocol[app][str(djava_servers[name])] = c
                print(f"protocol: {app} on {name}: {c['total']['messages']} messages, "
                      f"{c['total']['bytes']} bytes, {c['per_operation']['messages']:.1f} "
                      f"messages per {c['operation']}", file=sys.stderr, flush=True)
    med = {app: {name: statistics.median(v) for name, v in by_name.items()}
           for app, by_name in ms.items()}
    text = "\n".join(times_table(med, names, servers, args.rounds, args.small) +
                     protocol_table(protocol, servers)) + "\n"
    emit(text, args.out, args.json,
         {"threads": THREADS, "rounds": args.rounds, "small": args.small, "servers": servers,
          "configs": names, "ms": med, "protocol": protocol})


if __name__ == "__main__":
    main()
