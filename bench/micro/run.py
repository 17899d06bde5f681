#!/usr/bin/env python3
"""Runs the Appendix A microbenchmarks on djava's VM (local objects, no
cluster), the reference Zero VM, HotSpot's template interpreter (-Xint) and
HotSpot's JIT, interleaved round by round (these machines are noisy), and
prints medians and ratios against the reference VM next to the seed's
Kaffe-NOW/Kaffe-Ref ratios. table6.py is the full table (cached and
uncached shared objects too, djava on a cluster); this is the quick check
of the local-object overhead (docs/BENCHMARKS.md).

usage: bench/micro/run.py [--rounds R] [--iterations N] [--out FILE.md]
"""

import argparse
import sys
import tempfile

import common

VMS = [("djava", common.DJAVA_PLAIN), ("ref", common.REF), ("xint", common.XINT),
       ("jit", common.JIT)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--iterations", type=int, default=2_000_000)
    ap.add_argument("--out")
    args = ap.parse_args()
    samples = {vm: {} for vm, _ in VMS}
    with tempfile.TemporaryDirectory() as classes:
        common.compile_java(classes, "Micro")
        for r in range(args.rounds):
            for vm, cmd in VMS:  # interleaved: one run of each VM per round
                out = common.run_java(cmd, classes, "Micro", args.iterations)
                for name, ns in common.name_values(out).items():
                    samples[vm].setdefault(name, []).append(ns)
            common.progress(f"round {r + 1}/{args.rounds} done")

    med = {vm: {n: common.median(v) for n, v in s.items()} for vm, s in samples.items()}
    lines = [f"Appendix A microbenchmarks, local objects: ns per loop iteration, median of "
             f"{args.rounds} interleaved runs of {args.iterations:,} iterations.", "",
             "| benchmark | djava | Ref (Zero, unpatched) | djava/Ref | seed NOW/Ref | -Xint | JIT |",
             "|---|---|---|---|---|---|---|"]
    for name in common.LOCAL_ROWS:
        d, r = med["djava"][name], med["ref"][name]
        lines.append(f"| {name} | {d:.2f} | {r:.2f} | {d / r:.3f} | "
                     f"{common.SEED_TABLE6[name][3]} | "
                     f"{med['xint'][name]:.2f} | {med['jit'][name]:.2f} |")
    common.emit("\n".join(lines) + "\n", args.out)


if __name__ == "__main__":
    sys.exit(main())
