#!/usr/bin/env python3
"""Application benchmarks (bench/apps) in the form of the seed's Tables 7
and 8: each program's own timing of its parallel part (it checks its result
afterwards) on stock HotSpot with its JIT, on the reference Zero VM with one
thread, and on djava with 1, 2 and 4 thread servers (a private cluster per
run; the program's thread count stays the same). Runs are interleaved round
by round (these machines are noisy); medians. djava's speedups are against
its own 1-server time; its overhead against Ref.

This machine has 2 cores: every process of a "cluster" shares them, so the
speedups here are bounded by cores, not by the protocol (docs/BENCHMARKS.md).

usage: bench/apps/run.py [--rounds R] [--small] [--servers 1,2,4] [--out FILE.md]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.join(TOP, "build")
THREADS = 4
# name: (arguments at full size, at smoke size); {t} is the thread count.
APPS = {
    "MatrixMultiply": (["200", "{t}"], ["40", "{t}"]),
    "SOR": (["200", "20", "{t}"], ["40", "4", "{t}"]),
    "TSP": (["11", "{t}", "42"], ["8", "{t}", "42"]),
    "RayTracer": (["120", "{t}"], ["24", "{t}"]),
}


def timed_run(cmd, env, classes, app, args):
    p = subprocess.run([*cmd, "-cp", classes, app, *args], capture_output=True, text=True,
                       timeout=1800, env=env)
    if p.returncode != 0 or "correct" not in p.stdout:
        raise SystemExit(f"{app} {' '.join(args)} on {cmd[0]} failed:\n{p.stdout}{p.stderr}")
    return float(re.search(r"([\d.]+) ms", p.stdout.splitlines()[-1]).group(1))


def djava_name(servers):
    return f"djava, {servers} server{'s' if servers > 1 else ''}"


def configurations(servers):
    base = dict(os.environ)
    base.pop("DJAVA_CLUSTER", None)
    configs = [("java JIT", [os.path.join(BUILD, "jdk", "bin", "java"), "-server"], base, THREADS),
               ("Ref, 1 thread", [os.path.join(BUILD, "jdk-ref", "bin", "java")], base, 1)]
    for n in servers:
        configs.append((djava_name(n), [os.path.join(BUILD, "bin", "djava")],
                        dict(base, DJAVA_THREAD_SERVERS=str(n)), THREADS))
    return configs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--small", action="store_true", help="smoke sizes")
    ap.add_argument("--servers", default="1,2,4")
    ap.add_argument("--out")
    args = ap.parse_args()
    servers = [int(s) for s in args.servers.split(",")]
    configs = configurations(servers)
    with tempfile.TemporaryDirectory() as classes:
        subprocess.run([os.path.join(BUILD, "jvm", "base-image", "bin", "javac"), "-d", classes,
                        *[os.path.join(TOP, "bench", "apps", f"{a}.java") for a in APPS]],
                       check=True)
        ms = {(a, c[0]): [] for a in APPS for c in configs}
        for r in range(args.rounds):
            for app, sizes in APPS.items():
                for name, cmd, env, threads in configs:
                    app_args = [x.format(t=threads) for x in sizes[1 if args.small else 0]]
                    ms[(app, name)].append(timed_run(cmd, env, classes, app, app_args))
                print(f"round {r + 1}/{args.rounds}: {app} done", file=sys.stderr, flush=True)
    med = {k: statistics.median(v) for k, v in ms.items()}
    names = [c[0] for c in configs]
    djava1 = djava_name(servers[0])
    lines = [f"Applications, {THREADS} threads (Ref: 1), ms of each program's parallel part, "
             f"median of {args.rounds} interleaved rounds{' (smoke sizes)' if args.small else ''}.",
             "", "| application | " + " | ".join(names) + " |",
             "|---|" + "---|" * len(names)]
    for app in APPS:
        lines.append(f"| {app} | " + " | ".join(f"{med[(app, n)]:.1f}" for n in names) + " |")
    lines += ["", f"Speedup of djava over its own {servers[0]}-server time (the seed's Table 7) "
              "and its overhead over Ref with one server (Table 8):", "",
              "| application | " + " | ".join(f"{n} servers" for n in servers) + " | djava/Ref |",
              "|---|" + "---|" * (len(servers) + 1)]
    for app in APPS:
        base = med[(app, djava1)]
        cells = [f"{base / med[(app, djava_name(n))]:.2f}" for n in servers]
        lines.append(f"| {app} | " + " | ".join(cells) +
                     f" | {base / med[(app, 'Ref, 1 thread')]:.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
