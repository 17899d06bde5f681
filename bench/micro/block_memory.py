#!/usr/bin/env python3
"""Arrays in blocks (issue 19): the memory a thread server's replica of a
large shared array costs when the server uses few of its blocks. From
BlockArrayMemory: main fills a byte[] of MiB mebibytes; a thread on each of
2 thread servers reads and writes BLOCKS scattered blocks of its half and
reports its own process's resident memory (VmRSS) before it touches the
array, after its blocks, and after two full collections on its server
(which move the replica). The target: memory per node proportional to the
blocks it uses, not to the array (before issue 19's memory work, each
server's replica was resident whole).

usage: bench/micro/block_memory.py [--sizes MiB,...] [--blocks B] [--rounds R]
                                   [--small] [--out FILE.md] [--json FILE.json]
"""

import argparse
import tempfile

import common

STAGES = ["before", "touched", "after-gc"]


def measure(sizes, blocks, rounds):
    """{size: {stage: [KiB per server per round]}}."""
    samples = {size: {stage: [] for stage in STAGES} for size in sizes}
    with tempfile.TemporaryDirectory() as classes:
        common.compile_java(classes, "BlockArrayMemory")
        for r in range(rounds):
            for size in sizes:
                out = common.run_djava(classes, "BlockArrayMemory", size, blocks)
                if "ok" not in out.split():
                    raise SystemExit(f"BlockArrayMemory {size} {blocks} did not end ok:\n{out}")
                for line in out.splitlines():
                    parts = line.split()
                    if parts and parts[0] == "rss":
                        samples[size][parts[2]].append(int(parts[3]))
                common.progress(f"round {r + 1}/{rounds}, {size} MiB: after-gc "
                                f"{samples[size]['after-gc'][-2:]} KiB")
    return samples


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="256,1024")
    parser.add_argument("--blocks", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--small", action="store_true", help="a smoke run")
    parser.add_argument("--out")
    parser.add_argument("--json")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.small:
        sizes, args.blocks = [32], 100
    samples = measure(sizes, args.blocks, args.rounds)
    data = {"rounds": args.rounds, "blocks": args.blocks,
            "rss_kib": {str(size): {stage: common.median(samples[size][stage])
                                    for stage in STAGES} for size in sizes}}
    lines = [f"A thread server's resident memory (VmRSS, KiB; median over {args.rounds} "
             f"round(s) and both servers) with a replica of a shared byte[] of which it "
             f"uses {args.blocks:,} blocks of 8 KiB ({args.blocks * 8 / 1024:.1f} MiB).", "",
             "| array | before | blocks used | after 2 full GCs | growth | growth / array |",
             "|---:|---:|---:|---:|---:|---:|"]
    for size in sizes:
        kib = data["rss_kib"][str(size)]
        growth = kib["after-gc"] - kib["before"]
        lines.append(f"| {size} MiB | {kib['before']:,.0f} | {kib['touched']:,.0f} | "
                     f"{kib['after-gc']:,.0f} | {growth:,.0f} | {growth / (size * 1024):.3f} |")
    common.emit("\n".join(lines) + "\n", args.out, args.json, data)


if __name__ == "__main__":
    main()
