#!/usr/bin/env python3
"""Arrays in blocks (issue 19): what a cached access to an array kept in
blocks costs against the same loop on a local array, on djava's server VM
(every node compiles with C1, or with C1 and C2: server-c2) and on Zero,
from BlockArrayMicro: an int[]
of 64 Ki elements (32 blocks of 8 KiB) written and read sequentially, local,
shared with every block here (M for writes, S for reads), and a shared
int[1000] kept whole for comparison. Median ns per iteration over rounds;
the target is cached/local <= 1.3 (a cached shared array access stays
within 1.3x of a local one, as Table 6's array rows do).

usage: bench/micro/blocks.py [--rounds R] [--iterations N] [--small]
                             [--out FILE.md] [--json FILE.json]
"""

import argparse
import tempfile

import common

ROWS = ["int-array-write", "int-array-read"]
COLUMNS = ["local", "cached", "whole"]
VMS = {"server": ["-server"],
       "server-c2": ["-server", "-XX:+UnlockExperimentalVMOptions", "-XX:+DjavaCompileWithC2"],
       "zero": ["-zero"]}


def measure(rounds, iterations):
    """{vm: {row: {column: [ns per round]}}}."""
    samples = {vm: {r: {c: [] for c in COLUMNS} for r in ROWS} for vm in VMS}
    with tempfile.TemporaryDirectory() as classes:
        common.compile_java(classes, "BlockArrayMicro")
        for r in range(rounds):
            for vm, options in VMS.items():
                # Zero runs the loops some 20x slower: a tenth of the iterations.
                n = iterations if vm != "zero" else max(iterations // 10, 1000)
                out = common.run_djava(classes, "BlockArrayMicro", n, vm_options=options)
                for line in out.splitlines():
                    row, column, ns = line.split()
                    samples[vm][row][column].append(float(ns))
            common.progress(f"round {r + 1}/{rounds}: " + ", ".join(
                f"{vm} {row} {samples[vm][row]['cached'][-1]:.2f}/"
                f"{samples[vm][row]['local'][-1]:.2f} ns" for vm in VMS for row in ROWS))
    return samples


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=50_000_000)
    parser.add_argument("--small", action="store_true", help="a smoke run")
    parser.add_argument("--out")
    parser.add_argument("--json")
    args = parser.parse_args()
    if args.small:
        args.rounds, args.iterations = 1, 200_000
    samples = measure(args.rounds, args.iterations)
    data = {"rounds": args.rounds, "iterations": args.iterations,
            "ns": {vm: {row: {c: common.median(samples[vm][row][c]) for c in COLUMNS}
                        for row in ROWS} for vm in VMS}}
    lines = [f"Arrays in blocks: ns per iteration, median of {args.rounds} rounds "
             f"({args.iterations:,} iterations on the server VM, a tenth on Zero).", "",
             "| VM | loop | local | cached in blocks | cached whole (int[1000]) "
             "| blocks/local | whole/local |", "|---|---|---:|---:|---:|---:|---:|"]
    for vm in VMS:
        for row in ROWS:
            ns = data["ns"][vm][row]
            lines.append(f"| {vm} | {row} | {ns['local']:.2f} | {ns['cached']:.2f} | "
                         f"{ns['whole']:.2f} | {ns['cached'] / ns['local']:.2f} | "
                         f"{ns['whole'] / ns['local']:.2f} |")
    common.emit("\n".join(lines) + "\n", args.out, args.json, data)


if __name__ == "__main__":
    main()
