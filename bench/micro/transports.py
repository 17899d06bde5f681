#!/usr/bin/env python3
"""djava's remote operations on each transport (issue 22), in one run,
interleaved round by round and transport by transport (these machines are
noisy), medians:

  wire-ping-pong        a 64-byte message and its reply between two
                        processes on an authenticated wire Connection
                        (bench/wire's wire-ping-pong, p50): the floor;
  djava-uncached-read   a getfield of an object whose bytes are at their
                        home sos-server (UncachedRead: mean per read);
  djava-uncached-read-p50  the median of the same reads (each is timed on
                        its own; on a host with fewer cores than busy
                        threads the mean is mostly its tail);
  djava-lock-handoff    a shared monitor taken alternately by threads on two
                        thread servers (LockHandoff: µs per hand-off);
  djava-thread-start    Thread.start() to a thread server until it has run
                        (ThreadStart: median);
  idle-cluster-cpu      the CPU a cluster of a sos-server, a thread manager
                        and 2 thread servers uses at rest, in % of one core
                        (its daemons' user+system time over --idle-seconds).

Each djava row runs on a private cluster of 2 thread servers whose every
process (daemons and JVMs) has DJAVA_TRANSPORT set to the transport: tcp,
or ucx (shared memory between the processes of this host). Markdown on
stdout (and --out); --json writes

  {"rounds": R, "rows": [{"name": ..., "label": ..., "us": {"tcp": x, "ucx": y}}, ...]}

(idle-cluster-cpu's values are percentages, not µs).

usage: bench/micro/transports.py [--rounds R] [--small] [--idle-seconds S]
                                 [--out FILE.md] [--json FILE.json]
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import common
from latency import Sizes, lock_handoff, thread_starts
from uncached import uncached_runs

TRANSPORTS = ("tcp", "ucx")
ROWS = [
    ("wire-ping-pong", "wire round trip, 64 B (wire-ping-pong, p50)"),
    ("djava-uncached-read", "djava uncached field read (bytes at home)"),
    ("djava-uncached-read-p50", "... its median read"),
    ("djava-lock-handoff", "djava lock hand-off between two thread servers"),
    ("djava-thread-start", "djava Thread.start() until it has run"),
    ("idle-cluster-cpu", "idle cluster's CPU, % of one core"),
]
WIRE_PING_PONG = os.path.join(common.BUILD, "bin", "wire-ping-pong")
CLUSTER = os.path.join(common.BUILD, "bin", "djava-cluster")


def wire_ping_pong(iterations):
    out = common.run([WIRE_PING_PONG, "--iterations", str(iterations)], env=dict(os.environ))
    return float(re.search(r"p50 ([\d.]+) us", out).group(1))


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime


def idle_cluster_cpu(seconds):
    """% of one core the daemons of a fresh cluster use while nothing runs."""
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ)
        env.pop("DJAVA_CLUSTER", None)
        common.run([CLUSTER, "start", "--thread-servers", "2", "--dir", d], env=env)
        try:
            pids = []
            for name in os.listdir(d):
                if name.endswith(".pid"):
                    with open(os.path.join(d, name)) as f:
                        pids.append(int(f.read()))
            time.sleep(2)  # start-up's last messages
            before = sum(cpu_ticks(p) for p in pids)
            t0 = time.monotonic()
            time.sleep(seconds)
            used = sum(cpu_ticks(p) for p in pids) - before
            elapsed = time.monotonic() - t0
        finally:
            subprocess.run([CLUSTER, "stop", "--dir", d], capture_output=True, timeout=120)
    return 100.0 * used / os.sysconf("SC_CLK_TCK") / elapsed


def measure(rounds, sizes, idle_seconds, pings):
    """{row: {transport: [values per round]}}."""
    samples = {name: {t: [] for t in TRANSPORTS} for name, _ in ROWS}
    saved = os.environ.get("DJAVA_TRANSPORT")
    with tempfile.TemporaryDirectory() as classes:
        common.compile_java(classes, "Micro", "UncachedRead", "LockHandoff", "ThreadStart")
        try:
            for r in range(rounds):
                for t in TRANSPORTS:
                    os.environ["DJAVA_TRANSPORT"] = t
                    s = {name: samples[name][t] for name, _ in ROWS}
                    s["wire-ping-pong"].append(wire_ping_pong(pings))
                    means, p50s = uncached_runs(classes, sizes.objects, sizes.read_rounds)
                    s["djava-uncached-read"].append(common.median(means))
                    s["djava-uncached-read-p50"].append(common.median(p50s))
                    s["djava-lock-handoff"].append(lock_handoff(classes, sizes))
                    s["djava-thread-start"].append(thread_starts(classes, sizes)[0])
                    s["idle-cluster-cpu"].append(idle_cluster_cpu(idle_seconds))
                    common.progress(f"round {r + 1}/{rounds}, {t}: " +
                                    ", ".join(f"{n} {v[-1]:.2f}" for n, v in s.items()))
        finally:
            if saved is None:
                os.environ.pop("DJAVA_TRANSPORT", None)
            else:
                os.environ["DJAVA_TRANSPORT"] = saved
    return samples


def markdown(data, samples, small):
    lines = [f"Medians of {data['rounds']} interleaved rounds{' (smoke sizes)' if small else ''};"
             " µs unless said; djava on a private cluster of 2 thread servers, one host.", "",
             "| measurement | tcp | ucx (shared memory) | tcp / ucx |", "|---|---|---|---|"]
    for row in data["rows"]:
        v = row["us"]
        ranges = {t: samples[row["name"]][t] for t in TRANSPORTS}
        cells = [f"{v[t]:.2f} ({min(ranges[t]):.2f}–{max(ranges[t]):.2f})" for t in TRANSPORTS]
        ratio = f"{v['tcp'] / v['ucx']:.1f}" if v["ucx"] > 0 else "–"
        lines.append(f"| {row['label']} | {cells[0]} | {cells[1]} | {ratio} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--small", action="store_true", help="smoke sizes")
    ap.add_argument("--idle-seconds", type=float, default=10.0)
    ap.add_argument("--out", help="also write the markdown here")
    ap.add_argument("--json", help="write the numbers here")
    args = ap.parse_args()
    sizes = Sizes(args.small)
    idle = min(args.idle_seconds, 2.0) if args.small else args.idle_seconds
    samples = measure(args.rounds, sizes, idle, 2000 if args.small else 20000)
    data = {"rounds": args.rounds,
            "rows": [{"name": name, "label": label,
                      "us": {t: round(common.median(samples[name][t]), 3) for t in TRANSPORTS}}
                     for name, label in ROWS]}
    common.emit(markdown(data, samples, args.small), args.out, args.json, data)


if __name__ == "__main__":
    sys.exit(main())
