#!/usr/bin/env python3
"""Library calls in hot loops (LibraryMicro: atomics and VarHandles over
Unsafe, ConcurrentHashMap, String's and arrays' loops, copies, locks), in
ns per call, on

  djava C1        djava's server VM, every node of a private cluster of 2
                  thread servers compiling with C1 (the default);
  djava C2        the same with C2 too (-XX:+DjavaCompileWithC2, dso/c2);
  djava C2 cached the rows whose objects can be shared, on shared objects
                  this node holds (it published them: M), under C2;
  stock C1, JIT   stock HotSpot from the same image: C1 alone
                  (-XX:TieredStopAtLevel=1) and its full JIT.

Most of these calls are intrinsics in HotSpot's JIT; on a node C2 expands
only those whose heap accesses it checks (docs/HEAP.md), so local/JIT says
what the checks and the intrinsics left off cost (issue 21's target: the
JIT's local rows within 1.2x of stock).

Each round runs every VM once (interleaved: these machines are noisy); the
table has medians over rounds. Progress on stderr; markdown on stdout (and
--out); --json writes the numbers:

  {"rounds": R, "iterations": N, "small": bool,
   "ns": {row: {"djava-c1": .., "djava-c2": .., "djava-c2-cached": .. or null,
                "c1": .., "jit": ..}}}

usage: bench/micro/library.py [--rounds R] [--iterations N] [--small]
                              [--out FILE.md] [--json FILE.json]
"""

import argparse
import sys
import tempfile

import common

COLUMNS = ["djava-c1", "djava-c2", "djava-c2-cached", "c1", "jit"]
ROWS = {
    "atomic-increment": "AtomicInteger.incrementAndGet",
    "atomic-compare-and-set": "AtomicLong get + compareAndSet",
    "atomic-get-acquire": "AtomicInteger.getAcquire",
    "hashmap-get": "HashMap.get (1,024 keys)",
    "concurrent-map-get": "ConcurrentHashMap.get (1,024 keys)",
    "concurrent-map-put": "ConcurrentHashMap.put (1,024 keys)",
    "arraylist-add": "ArrayList.add (clear at 64)",
    "arraycopy-16": "System.arraycopy (16 ints)",
    "string-equals": "String.equals (27 characters)",
    "string-index-of": "String.indexOf(char)",
    "arrays-copy-of-16": "Arrays.copyOf (16 ints)",
    "string-builder": "StringBuilder: 3 appends, length",
    "long-adder-increment": "LongAdder.increment",
    "reentrant-lock": "ReentrantLock lock/unlock",
    "synchronized": "synchronized block",
}
DJAVA_VMS = {"djava-c1": ["-server"],
             "djava-c2": ["-server", "-XX:+UnlockExperimentalVMOptions",
                          "-XX:+DjavaCompileWithC2"]}
STOCK_VMS = {"c1": common.C1, "jit": common.JIT}
SIZES = {False: 2_000_000, True: 20_000}


def measure(rounds, iterations):
    """{row: {column: [ns per round]}}."""
    samples = {row: {c: [] for c in COLUMNS} for row in ROWS}
    with tempfile.TemporaryDirectory() as classes:
        common.compile_java(classes, "LibraryMicro")
        for r in range(rounds):
            for vm in ("djava-c1", "c1", "djava-c2", "jit"):
                if vm in DJAVA_VMS:
                    # The cached rows under C2 only: C1's are its own table's
                    # (docs/BENCHMARKS.md, issue 21's second stage).
                    shared = ["shared"] if vm == "djava-c2" else []
                    out = common.run_djava(classes, "LibraryMicro", iterations, *shared,
                                           vm_options=DJAVA_VMS[vm])
                else:
                    out = common.run_java(STOCK_VMS[vm], classes, "LibraryMicro", iterations)
                for line in out.splitlines():
                    row, column, ns = line.split()
                    samples[row][vm if column == "local" else f"{vm}-cached"].append(float(ns))
            common.progress(f"round {r + 1}/{rounds}: " + ", ".join(
                f"{row} {samples[row]['djava-c2'][-1]:.1f}/{samples[row]['jit'][-1]:.1f} ns"
                for row in ("atomic-increment", "concurrent-map-get", "arraycopy-16")))
    return samples


def fmt(x):
    return "–" if x is None else f"{x:,.0f}" if x >= 1000 else f"{x:.2f}"


def ratio(x, y):
    return "–" if x is None or y is None else f"{x / y:.2f}"


def markdown(data):
    lines = [f"Library calls in hot loops: ns per call, median of {data['rounds']} interleaved "
             f"rounds of {data['iterations']:,} calls (best of 3 timed passes after one warm-up "
             f"pass){' (smoke sizes)' if data['small'] else ''}. djava: every node of a private "
             "cluster of 2 thread servers on the server VM compiling with C1, or with C1 and C2; "
             "local objects, and (C2 cached) shared objects this node holds. Stock: HotSpot from "
             "the same image, C1 alone and its JIT.", "",
             "| call | djava C1 | djava C2 | djava C2 cached | stock C1 | stock JIT "
             "| C2/JIT | C2 cached/C2 |",
             "|---|---|---|---|---|---|---|---|"]
    for row, label in ROWS.items():
        ns = data["ns"][row]
        lines.append(f"| {label} | {fmt(ns['djava-c1'])} | {fmt(ns['djava-c2'])} | "
                     f"{fmt(ns['djava-c2-cached'])} | {fmt(ns['c1'])} | {fmt(ns['jit'])} | "
                     f"{ratio(ns['djava-c2'], ns['jit'])} | "
                     f"{ratio(ns['djava-c2-cached'], ns['djava-c2'])} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iterations", type=int, help="calls per loop (default 2,000,000; "
                                                   "small 20,000)")
    ap.add_argument("--small", action="store_true", help="smoke sizes")
    ap.add_argument("--out", help="also write the markdown here")
    ap.add_argument("--json", help="write the numbers here")
    args = ap.parse_args()
    iterations = args.iterations or SIZES[args.small]
    samples = measure(args.rounds, iterations)
    ns = {row: {c: (None if common.median(v) is None else round(common.median(v), 4))
                for c, v in columns.items()} for row, columns in samples.items()}
    data = {"rounds": args.rounds, "iterations": iterations, "small": args.small, "ns": ns}
    common.emit(markdown(data), args.out, args.json, data)


if __name__ == "__main__":
    sys.exit(main())
