#!/usr/bin/env python3
"""The seed's Table 6 for djava: its Appendix A microbenchmarks (Empty Loop,
New Object, Array Ref Write/Read, Integer Field Write/Read, Ref Field
Write/Read) and its uncached ("∞") Int/Ref Field Write/Read, in nanoseconds
per operation (one loop iteration), on

  djava local     djava (build/bin/djava, a private cluster of 2 thread
                  servers), objects that never escape (SharedMicro);
  djava cached    the same loops on shared objects this node holds: in M
                  for the write loops, in S for the read loops;
  djava uncached  the ∞ rows: every access a miss (reads: the bytes are at
                  their home sos-server; writes: another node holds the
                  object modified), over OBJECTS - 1 objects;
  Ref             the reference Zero VM, built from the same source without
                  djava's patches (the seed's Kaffe-Ref) (Micro);
  -Xint, JIT      HotSpot's template interpreter and its JIT (Micro).

The seed's Kaffe-NOW shared every object, so its rows 3-8 were accesses to
cached shared objects (compare its ratio with cached/Ref); djava publishes
objects only when they escape (local/Ref). The ∞ rows run the seed's ∞ loop
bodies (a[i].var1 = j, ...); their Ref, -Xint and JIT columns (and djava
local and cached) are the same loop on local or cached objects. The seed's
∞ ratios too divide by a Ref time on local data (its 223 and 190 are its
Array Ref Write and Read times).

Each round runs every VM once (Ref, djava, -Xint, JIT: interleaved, since
these machines are noisy); the table has medians over rounds and ratios of
medians against Ref, with the seed's ratio and absolute µs per 100
operations beside. Progress on stderr; markdown on stdout (and --out);
--json writes the numbers for plotting:

  {"rounds": R, "iterations": N, "small": bool,
   "rows": [{"name": "int-field-read", "label": "Integer Field Read",
             "ns": {"djava": .., "djava-cached": .. or null, "djava-uncached": .. or null,
                    "ref": .., "xint": .., "jit": ..},
             "seed_ratio": 1.61, "seed_now_us_per_100": 590, "seed_ref_us_per_100": 366}, ...]}

With --vm server the djava columns run on djava's server VM (every node
compiles with C1, whose code carries the barrier set's checks), Ref is not
run, and the ratios are against stock HotSpot's C1 (-XX:TieredStopAtLevel=1),
the same compiler without the checks, and its full JIT (issue 21). With
--vm server-c2 every node compiles with C2 as well (-XX:+DjavaCompileWithC2,
dso/c2: C2's code carries the checks too); compare local/JIT.

usage: bench/micro/table6.py [--rounds R] [--iterations N] [--objects M] [--small]
                             [--vm zero|server|server-c2] [--out FILE.md] [--json FILE.json]
"""

import argparse
import sys
import tempfile

import common

COLUMNS = ["djava", "djava-cached", "djava-uncached", "ref", "xint", "c1", "jit"]
# SharedMicro's column names in its output -> this table's.
DJAVA_COLUMNS = {"local": "djava", "cached": "djava-cached", "uncached": "djava-uncached"}
MICRO_VMS = {"ref": common.REF, "xint": common.XINT, "c1": common.C1, "jit": common.JIT}
# Ref beside djava, then HotSpot's (C1 alone only against the server VM)
ROUND_ORDER = ["ref", "djava", "xint", "c1", "jit"]
SIZES = {False: (2_000_000, 2000), True: (20_000, 50)}  # small: (iterations, objects)


def seed_column(name):
    """The djava column the seed's Kaffe-NOW number is comparable with."""
    if name in common.UNCACHED_ROWS:
        return "djava-uncached"
    return "djava" if name in ("empty-loop", "new-object") else "djava-cached"


# djava's VM options per --vm.
DJAVA_VM_OPTIONS = {"zero": ["-zero"], "server": ["-server"],
                    "server-c2": ["-server", "-XX:+UnlockExperimentalVMOptions",
                                  "-XX:+DjavaCompileWithC2"]}


def measure(rounds, iterations, objects, djava_vm="zero"):
    """{row: {column: [ns per round]}}."""
    server = djava_vm != "zero"
    samples = {name: {c: [] for c in COLUMNS} for name in common.SEED_TABLE6}
    base = "c1" if server else "ref"
    with tempfile.TemporaryDirectory() as classes:
        common.compile_java(classes, "Micro", "UncachedRead", "SharedMicro")
        for r in range(rounds):
            for vm in ROUND_ORDER:
                if (vm == "ref" and server) or (vm == "c1" and not server):
                    continue
                if vm == "djava":
                    out = common.run_djava(classes, "SharedMicro", iterations, objects,
                                           vm_options=DJAVA_VM_OPTIONS[djava_vm])
                    for line in out.splitlines():
                        name, column, ns = line.split()
                        samples[name][DJAVA_COLUMNS[column]].append(float(ns))
                else:
                    out = common.run_java(MICRO_VMS[vm], classes, "Micro", iterations)
                    for name, ns in common.name_values(out).items():
                        samples[name][vm].append(ns)
            common.progress(f"round {r + 1}/{rounds}: " + ", ".join(
                f"{name} {samples[name][seed_column(name)][-1]:.1f}/"
                f"{samples[name][base][-1]:.1f} ns"
                for name in ("int-field-write", "int-field-read", "uncached-int-field-read")))
    return samples


def table_data(samples, rounds, iterations, small, vm="zero"):
    rows = []
    for name, (label, seed_now, seed_ref, seed_ratio) in common.SEED_TABLE6.items():
        ns = {c: common.median(samples[name][c]) for c in COLUMNS}
        rows.append({"name": name, "label": label,
                     "ns": {c: None if v is None else round(v, 4) for c, v in ns.items()},
                     "seed_ratio": seed_ratio, "seed_now_us_per_100": seed_now,
                     "seed_ref_us_per_100": seed_ref})
    return {"rounds": rounds, "iterations": iterations, "small": small,
            "vm": vm, "rows": rows}


def fmt_ns(x):
    if x is None:
        return "–"
    return f"{x:,.0f}" if x >= 1000 else f"{x:.2f}"


def fmt_ratio(x, ref):
    if x is None:
        return "–"
    r = x / ref
    return f"{r:,.0f}" if r >= 100 else f"{r:.3f}" if r < 10 else f"{r:.1f}"


def markdown_server(data, objects):
    """The table of a --vm server run: djava's C1 code against stock
    HotSpot's C1 and JIT."""
    compilers = "C1 and C2, whose code carries" if data["vm"] == "server-c2" else \
        "C1, whose code carries"
    lines = [f"djava's server VM (every node of a private cluster of 2 thread servers "
             f"compiling with {compilers} the checks) against stock HotSpot's C1 "
             f"(-XX:TieredStopAtLevel=1), JIT (C1 and C2) and template interpreter (-Xint): "
             f"ns per operation, median of {data['rounds']} interleaved rounds of "
             f"{data['iterations']:,} iterations (∞ rows: {objects - 1:,} uncached objects)"
             f"{' (smoke sizes)' if data['small'] else ''}. Local: objects that never escape; "
             "cached: shared objects this node holds (M for writes, S for reads); uncached: "
             "each access a miss.", "",
             "| benchmark | djava local | djava cached | djava uncached | stock C1 | stock JIT "
             "| stock -Xint | local/C1 | cached/C1 | cached/local | local/JIT |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in data["rows"]:
        ns = row["ns"]
        lines.append(f"| {row['label']} | {fmt_ns(ns['djava'])} | {fmt_ns(ns['djava-cached'])} | "
                     f"{fmt_ns(ns['djava-uncached'])} | {fmt_ns(ns['c1'])} | {fmt_ns(ns['jit'])} | "
                     f"{fmt_ns(ns['xint'])} | {fmt_ratio(ns['djava'], ns['c1'])} | "
                     f"{fmt_ratio(ns['djava-cached'], ns['c1'])} | "
                     f"{fmt_ratio(ns['djava-cached'], ns['djava'])} | "
                     f"{fmt_ratio(ns['djava'], ns['jit'])} |")
    return "\n".join(lines) + "\n"


def markdown(data, objects):
    lines = [f"The seed's Table 6 on djava: ns per operation (loop iteration), median of "
             f"{data['rounds']} interleaved rounds of {data['iterations']:,} iterations "
             f"(∞ rows: {objects - 1:,} uncached objects){' (smoke sizes)' if data['small'] else ''}. "
             "Local: objects that never escape; cached: shared objects this node holds "
             "(M for writes, S for reads); uncached: each access a miss (reads: bytes at home; "
             "writes: another node holds the object modified). In the ∞ rows the other columns "
             "run the same loop (the seed's a[i].var1 = j, ...) on local or cached objects. "
             "Ref is Zero without djava's patches; -Xint and JIT are HotSpot's.", "",
             "| benchmark | djava local | djava cached | djava uncached | Ref | -Xint | JIT |",
             "|---|---|---|---|---|---|---|"]
    for row in data["rows"]:
        lines.append(f"| {row['label']} | " + " | ".join(fmt_ns(row["ns"][c]) for c in COLUMNS)
                     + " |")
    lines += ["", "Ratios against Ref (∞ rows: against Ref's time of the same loop on local "
              "objects, as the seed's). The seed's Kaffe-NOW shared every object, so its rows "
              "3–8 compare with cached/Ref; \"ours\" is djava in that column, in the seed's "
              "units (µs per 100 operations).", "",
              "| benchmark | local/Ref | cached/Ref | uncached/Ref | seed NOW/Ref "
              "| seed NOW, Ref µs/100 | ours djava, Ref µs/100 |",
              "|---|---|---|---|---|---|---|"]
    for row in data["rows"]:
        ns, ref = row["ns"], row["ns"]["ref"]
        ours = ns[seed_column(row["name"])]
        lines.append(f"| {row['label']} | {fmt_ratio(ns['djava'], ref)} | "
                     f"{fmt_ratio(ns['djava-cached'], ref)} | "
                     f"{fmt_ratio(ns['djava-uncached'], ref)} | {row['seed_ratio']:,} | "
                     f"{row['seed_now_us_per_100']:,}, {row['seed_ref_us_per_100']:,} | "
                     f"{fmt_ns(ours / 10)}, {fmt_ns(ref / 10)} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iterations", type=int, help="per loop (default 2,000,000; small 20,000)")
    ap.add_argument("--objects", type=int, help="uncached objects per ∞ row (default 2000; "
                                                "small 50)")
    ap.add_argument("--small", action="store_true", help="smoke sizes")
    ap.add_argument("--vm", choices=tuple(DJAVA_VM_OPTIONS), default="zero",
                    help="the VM of djava's columns (default zero)")
    ap.add_argument("--out", help="also write the markdown here")
    ap.add_argument("--json", help="write the numbers here")
    args = ap.parse_args()
    iterations = args.iterations or SIZES[args.small][0]
    objects = args.objects or SIZES[args.small][1]
    samples = measure(args.rounds, iterations, objects, args.vm)
    data = table_data(samples, args.rounds, iterations, args.small, args.vm)
    text = markdown_server(data, objects) if args.vm != "zero" else markdown(data, objects)
    common.emit(text, args.out, args.json, data)


if __name__ == "__main__":
    sys.exit(main())
