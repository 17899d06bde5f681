#!/usr/bin/env python3
"""What synchronization costs across nodes (issue 24): the shapes of
bench/micro/Sync.java (a CyclicBarrier trip, a queue hand-off, a
ReentrantLock and a synchronized turn, a wait/notifyAll round, an
uncontended lock) on stock HotSpot and under djava with 2 and 4 thread
servers (private clusters, capacity 2 each; the 2-thread shapes have one
thread on each of 2 servers).

For each shape and configuration: µs per operation (median of --rounds
runs, each timed by the program after a warm-up) and the processes its
threads ran in; under djava the messages per operation, from two runs with
-XX:+PrintDistributedStatistics of N and 2N operations (the counters'
difference over N leaves set-up out; every frame the nodes' connections
carried, bench/apps/run.py's summed).

With --delays (root; bench/now's network namespaces, one per daemon, a
chosen round trip added between any two), each shape also runs on a
cluster whose round trip is each delay: the growth of its time per
operation over the added round trip is the round trips on its critical
path, what carries to a real network (this machine's 2 cores say nothing
about speedups).

With --sos-option (repeatable, e.g. --sos-option=--data-with-locks) the
djava runs share one cluster per number of servers, started by
djava-cluster with those sos-server options, instead of a private cluster
each, and the critical-path runs' sos-servers take them too (before
2026-12-03 those ran with the defaults): a protocol feature measured with
it and without.

usage: bench/micro/sync.py [--small] [--rounds R] [--shapes a,b] [--servers 2,4]
                           [--delays 0,1ms] [--sos-option OPT]... [--out FILE.md]
                           [--json FILE]
"""

import argparse
import contextlib
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

import common

sys.dont_write_bytecode = True

# name: (Sync's arguments with {n} the operations, threads, n, smoke n,
# n on a delayed network: each of its operations may cost tens of round trips)
SHAPES = {
    "barrier 4": (["barrier", "4", "{n}"], 4, 400, 40, 60),
    "abq": (["abq", "{n}"], 2, 2000, 200, 300),
    "lbq": (["lbq", "{n}"], 2, 2000, 200, 300),
    "reentrant": (["reentrant", "{n}"], 2, 500, 50, 60),
    "monitor": (["monitor", "{n}"], 2, 500, 50, 100),
    "locked": (["locked", "{n}"], 2, 500, 50, 100),
    "spin": (["spin", "{n}"], 2, 500, 50, 100),
    "round 4": (["round", "4", "{n}"], 4, 400, 40, 60),
    "uncontended": (["uncontended", "{n}"], 1, 20000, 2000, 2000),
    "interrupt": (["interrupt", "{n}"], 2, 200, 20, 40),
}
LINE = re.compile(r"^(?P<shape>[\w ]+): ops (?P<ops>\d+) us_per_op (?P<us>[\d.]+) "
                  r"nodes (?P<nodes>\d+)$", re.M)


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


apps = load("djava_bench_apps", os.path.join(common.TOP, "bench", "apps", "run.py"))


def arguments(shape, n):
    return [a.format(n=n) for a in SHAPES[shape][0]]


def parse(out, shape):
    m = next((m for m in LINE.finditer(out) if m["shape"] == shape), None)
    if m is None:
        raise SystemExit(f"Sync {shape}: no result line in:\n{out}")
    return float(m["us"]), int(m["nodes"]), int(m["ops"])


def per_operation(cmd, env, classes, shape, n, fresh_cluster=None):
    """Messages (and their kinds) per operation under djava: the counters
    of runs of n and 2n operations, their difference over the operations
    the second run added. fresh_cluster: a context manager giving each run
    a cluster of its own (a thread server's counters are its process's, so
    runs that share one would add up)."""
    counts, ops = [], []
    for k in (n, 2 * n):
        with fresh_cluster() if fresh_cluster else contextlib.nullcontext(env) as run_env:
            out = common.run([*cmd, apps.STATISTICS, "-cp", classes, "Sync",
                              *arguments(shape, k)], env=run_env)
        counts.append(apps.summed(apps.parse_statistics(out)))
        ops.append(parse(out, shape)[2])
    added = ops[1] - ops[0]
    return {key: round((counts[1][key] - counts[0][key]) / added, 2)
            for key in ("messages", "misses", "invalidations", "flushes", "monitor_enters")}


@contextlib.contextmanager
def shared_cluster(servers, sos_options):
    """The environment for djava to run in a cluster of `servers` thread
    servers (capacity 2 each) whose sos-server has `sos_options`; the
    cluster stops when the block ends."""
    cluster_bin = os.path.join(common.BUILD, "bin", "djava-cluster")
    with tempfile.TemporaryDirectory(prefix="djava-sync-cluster-") as d:
        subprocess.run([cluster_bin, "start", "--dir", d, "--workdir", d,
                        "--thread-servers", str(servers), "--threads", "2",
                        *[f"--sos-option={o}" for o in sos_options]],
                       check=True, stdout=subprocess.DEVNULL)
        try:
            with open(os.path.join(d, "cluster.json")) as f:
                cluster = json.load(f)
            yield dict(os.environ, DJAVA_CLUSTER=cluster["cluster"],
                       DJAVA_SECRET_FILE=cluster["secret"])
        finally:
            subprocess.run([cluster_bin, "stop", "--dir", d], stdout=subprocess.DEVNULL)


def local_runs(args, classes):
    rows = {}
    configs = [("java JIT", [common.JAVA_STOCK], None, None)]
    for s in args.servers:
        configs.append((f"djava, {s} servers", [common.DJAVA], common.djava_env(s), s))
    for name, cmd, env, servers in configs:
        with contextlib.ExitStack() as stack:
            fresh = None
            if servers is not None and args.sos_option:
                env = stack.enter_context(shared_cluster(servers, args.sos_option))
                fresh = lambda s=servers: shared_cluster(s, args.sos_option)  # noqa: E731
            shape_runs(args, classes, rows, name, cmd, env, servers, fresh)
    return rows


def shape_runs(args, classes, rows, name, cmd, env, servers, fresh_cluster=None):
    """One configuration's rows: every shape's time and messages per operation."""
    for shape in args.shapes:
        threads = SHAPES[shape][1]
        if servers is not None and threads > 1 and threads < servers:
            continue  # fewer threads than servers: the other rows say it
        n = SHAPES[shape][3 if args.small else 2]
        times, nodes = [], set()
        for _ in range(args.rounds):
            us, k, _ = parse(common.run([*cmd, "-cp", classes, "Sync", *arguments(shape, n)],
                                        env=env), shape)
            times.append(us)
            nodes.add(k)
        row = {"us": statistics.median(times), "nodes": sorted(nodes)}
        if servers is not None:
            row["per_op"] = per_operation(cmd, env, classes, shape, n, fresh_cluster)
        rows.setdefault(shape, {})[name] = row
        common.progress(f"{name}: {shape} {row['us']:.1f} us")


def delay_runs(args, classes):
    """{shape: {servers: {delay_us: us per op}}} on bench/now's network."""
    now = load("djava_bench_now", os.path.join(common.TOP, "bench", "now", "run.py"))
    djava = now.load_module("djnow_djava", os.path.join(now.BIN, "djava"))
    # As bench/now chooses: netem where the kernel has it, else its tap switch.
    link = "netem"
    now.require_tools(link)
    if any(args.delays) and not now.netem_works(os.getpid())[0]:
        link = "tap"
        now.require_tools(link)
    workdir = tempfile.mkdtemp(prefix=f"djnow-{os.getpid()}-")
    net = now.Network(os.getpid(), max(args.servers), link, workdir)
    secret = os.path.join(workdir, "secret")
    djava.write_secret(secret)
    launcher = ["ip", "netns", "exec", None, os.path.join(now.BIN, "djava")]
    env = {k: v for k, v in os.environ.items() if k not in ("DJAVA_CLUSTER", "DJAVA_SECRET_FILE")}
    result, rtts, cluster = {}, {}, None
    try:
        net.create()
        launcher[3] = net.nodes["launch"].namespace
        for d in args.delays:
            net.set_delay(d)
            rtts[d] = net.measure_rtt()[0]
            for s in args.servers:
                logdir = os.path.join(workdir, f"rtt{d}us-{s}servers")
                os.mkdir(logdir)
                cluster = now.Cluster(net, djava, secret, logdir, 2, env, args.sos_option)
                cluster.start(s)
                run_env = dict(env, DJAVA_CLUSTER=cluster.address, DJAVA_SECRET_FILE=secret)
                for shape in args.shapes:
                    threads = SHAPES[shape][1]
                    if threads > 1 and threads < s:
                        continue
                    n = SHAPES[shape][3 if args.small else 4]
                    times = [parse(common.run([*launcher, "-cp", classes, "Sync",
                                               *arguments(shape, n)], env=run_env), shape)[0]
                             for _ in range(args.rounds)]
                    result.setdefault(shape, {}).setdefault(s, {})[d] = statistics.median(times)
                    common.progress(f"{now.delay_name(d)}, {s} servers: {shape} "
                                    f"{result[shape][s][d]:.1f} us")
                cluster.stop()
                cluster = None
    finally:
        if cluster:
            cluster.stop()
        for problem in net.destroy():
            common.progress(problem)
    return result, rtts, link


def report(args, rows, delays):
    lines = [f"Synchronization across nodes (bench/micro/sync.py{' --small' if args.small else ''}, "
             f"median of {args.rounds}): µs per operation, the processes its threads ran in, "
             "and under djava the messages per operation, every frame the nodes' connections "
             "carried (misses / invalidations / flushes / monitor enters per operation in "
             "brackets).", "",
             "| shape | " + " | ".join(next(iter(rows.values())).keys()) + " |",
             "|---|" + "---|" * len(next(iter(rows.values())))]
    names = list(next(iter(rows.values())).keys())
    for shape, per in rows.items():
        cells = []
        for name in names:
            r = per.get(name)
            if r is None:
                cells.append("—")
                continue
            cell = f"{r['us']:.1f} µs, {'/'.join(map(str, r['nodes']))} node(s)"
            if "per_op" in r:
                p = r["per_op"]
                cell += (f", {p['messages']:.1f} msgs ({p['misses']:.1f}/{p['invalidations']:.1f}/"
                         f"{p['flushes']:.1f}/{p['monitor_enters']:.1f})")
            cells.append(cell)
        lines.append(f"| {shape} | " + " | ".join(cells) + " |")
    if delays:
        result, rtts, link = delays
        lo, hi = min(args.delays), max(args.delays)
        lines += ["", f"Critical path (bench/now's namespaces, {link} links; measured round "
                  "trips " + ", ".join(f"{d} µs added: {rtts[d]:.0f} µs" for d in args.delays) +
                  "): µs per operation at each added round trip, and the round trips on the "
                  "critical path, (t(hi) − t(lo)) / (hi − lo).", "",
                  "| shape | servers | " + " | ".join(f"{d} µs" for d in args.delays) +
                  " | round trips per op |", "|---|---|" + "---|" * (len(args.delays) + 1)]
        for shape, per_s in result.items():
            for s, per_d in per_s.items():
                slope = (per_d[hi] - per_d[lo]) / (hi - lo) if hi > lo else float("nan")
                lines.append(f"| {shape} | {s} | " + " | ".join(f"{per_d[d]:.0f}"
                                                               for d in args.delays) +
                             f" | {slope:.1f} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--small", action="store_true", help="smoke sizes")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--shapes", type=lambda s: s.split(","), default=list(SHAPES))
    ap.add_argument("--servers", type=lambda s: [int(x) for x in s.split(",")], default=[2, 4])
    ap.add_argument("--delays", help="e.g. 0,1ms: also the critical-path runs (root)")
    ap.add_argument("--sos-option", action="append", default=[],
                    help="a sos-server option for the djava runs' clusters (repeatable)")
    ap.add_argument("--out")
    ap.add_argument("--json")
    args = ap.parse_args()
    unknown = [s for s in args.shapes if s not in SHAPES]
    if unknown:
        ap.error(f"no such shape: {', '.join(unknown)} (there are: {', '.join(SHAPES)})")
    classes = tempfile.mkdtemp(prefix="djava-sync-")
    common.compile_java(classes, "Sync")
    rows = local_runs(args, classes)
    delays = None
    if args.delays:
        now = load("djava_bench_now_delays", os.path.join(common.TOP, "bench", "now", "run.py"))
        args.delays = sorted(set(now.parse_list(now.parse_delay)(args.delays)))
        delays = delay_runs(args, classes)
    data = {"rows": rows}
    if delays:
        data["critical_path_us"] = {shape: {str(s): {str(d): us for d, us in per_d.items()}
                                            for s, per_d in per_s.items()}
                                    for shape, per_s in delays[0].items()}
        data["measured_rtt_us"] = {str(d): round(v, 1) for d, v in delays[1].items()}
    common.emit(report(args, rows, delays), args.out, args.json, data)


if __name__ == "__main__":
    main()
