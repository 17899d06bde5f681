#!/usr/bin/env python3
"""An uncached field read in djava's interpreter against the loopback TCP
round trip of the same machine, measured in one run, interleaved round by
round (these machines are noisy): issue 5's target is a read within 2x of
the round trip (the seed: 20 ms).

Each round runs bench/micro/UncachedRead.java under djava (a private cluster
of 2 thread servers; the read's object is at its home server, this node has
no copy) and sos-bench --ping-pong-only (a framed request and reply between
two processes over loopback TCP, the frame sizes of a load). Prints medians
and their ratio, as a markdown table with --out.

usage: bench/micro/uncached.py [--rounds R] [--objects N] [--out FILE.md]
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


def uncached_reads(classes, objects):
    env = dict(os.environ, DJAVA_THREAD_SERVERS="2")
    env.pop("DJAVA_CLUSTER", None)
    out = subprocess.run([os.path.join(BUILD, "bin", "djava"), "-cp", classes, "UncachedRead",
                          str(objects), "3"], check=True, capture_output=True, text=True,
                         timeout=600, env=env).stdout
    return [float(x) for x in re.findall(r"uncached read ([\d.]+) us", out)]


def ping_pong():
    out = subprocess.run([os.path.join(BUILD, "bin", "sos-bench"), "--ping-pong-only",
                          "--iterations", "3000"], check=True, capture_output=True, text=True,
                         timeout=600).stdout
    return float(re.search(r"p50 ([\d.]+) us", out).group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--objects", type=int, default=2000)
    ap.add_argument("--out")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as classes:
        subprocess.run([os.path.join(BUILD, "jvm", "base-image", "bin", "javac"), "-d", classes,
                        os.path.join(TOP, "bench", "micro", "UncachedRead.java")], check=True)
        reads, pings = [], []
        for r in range(args.rounds):
            pings.append(ping_pong())
            reads.extend(uncached_reads(classes, args.objects))
            print(f"round {r + 1}/{args.rounds}: ping-pong p50 {pings[-1]:.1f} us, "
                  f"uncached reads {', '.join(f'{x:.1f}' for x in reads[-3:])} us",
                  file=sys.stderr, flush=True)
    read, ping = statistics.median(reads), statistics.median(pings)
    table = ("| measurement | median |\n|---|---|\n"
             f"| loopback TCP ping-pong (p50 of 3000 per round, {args.rounds} rounds) | {ping:.1f} us |\n"
             f"| uncached field read in djava ({len(reads)} rounds of {args.objects - 1}) | {read:.1f} us |\n"
             f"\nuncached read / ping-pong: {read / ping:.2f} (issue 5 target: within 2; the seed: 20 ms a read)\n")
    print(table)
    if args.out:
        with open(args.out, "w") as f:
            f.write(table)


if __name__ == "__main__":
    main()
