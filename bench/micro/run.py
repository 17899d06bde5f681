#!/usr/bin/env python3
"""Runs the Appendix A microbenchmarks on djava (local objects), the reference
Zero VM, HotSpot's template interpreter (-Xint) and HotSpot's JIT, interleaved
round by round (these machines are noisy), and prints medians and ratios
against the reference VM next to the seed's Kaffe-NOW/Kaffe-Ref ratios.

usage: bench/micro/run.py [--rounds R] [--iterations N] [--out FILE.md]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.join(TOP, "build")
VMS = [
    ("djava", [os.path.join(BUILD, "jdk", "bin", "java")]),
    ("ref", [os.path.join(BUILD, "jdk-ref", "bin", "java")]),
    ("xint", [os.path.join(BUILD, "jdk", "bin", "java"), "-server", "-Xint"]),
    ("jit", [os.path.join(BUILD, "jdk", "bin", "java"), "-server"]),
]
# Table 6 of the seed: Kaffe-NOW / Kaffe-Ref on local data.
SEED_RATIO = {"empty-loop": 1.01, "new-object": 16.65, "array-ref-write": 1.25,
              "array-ref-read": 1.96, "int-field-write": 1.49, "int-field-read": 1.61,
              "ref-field-write": 2.12, "ref-field-read": 6.91}


def run_once(cmd, classes, iterations):
    out = subprocess.run([*cmd, "-cp", classes, "Micro", str(iterations)], check=True,
                         capture_output=True, text=True, timeout=600).stdout
    return {name: float(ns) for name, ns in (line.split() for line in out.splitlines())}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--iterations", type=int, default=2_000_000)
    ap.add_argument("--out")
    args = ap.parse_args()
    classes = tempfile.mkdtemp()
    javac = os.path.join(BUILD, "jvm", "base-image", "bin", "javac")
    subprocess.run([javac, "-d", classes, os.path.join(os.path.dirname(__file__), "Micro.java")],
                   check=True)
    samples = {vm: {} for vm, _ in VMS}
    for r in range(args.rounds):
        for vm, cmd in VMS:  # interleaved: one run of each VM per round
            for name, ns in run_once(cmd, classes, args.iterations).items():
                samples[vm].setdefault(name, []).append(ns)
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr, flush=True)

    med = {vm: {n: statistics.median(v) for n, v in s.items()} for vm, s in samples.items()}
    lines = [f"Appendix A microbenchmarks, local objects: ns per loop iteration, median of "
             f"{args.rounds} interleaved runs of {args.iterations:,} iterations.", "",
             "| benchmark | djava | Ref (Zero, unpatched) | djava/Ref | seed NOW/Ref | -Xint | JIT |",
             "|---|---|---|---|---|---|---|"]
    for name in SEED_RATIO:
        d, r = med["djava"][name], med["ref"][name]
        lines.append(f"| {name} | {d:.2f} | {r:.2f} | {d / r:.3f} | {SEED_RATIO[name]} | "
                     f"{med['xint'][name]:.2f} | {med['jit'][name]:.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
