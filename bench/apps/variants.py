#!/usr/bin/env python3
"""The applications of bench/apps on djava's variants side by side: its
compilers (the server VM with C1 alone, the default, and with C2 too,
-XX:+DjavaCompileWithC2) and its transports (DJAVA_TRANSPORT=tcp, or ucx:
shared memory between the processes of this host), each on a private
cluster of N thread servers, with stock HotSpot's JIT (same threads, one
process) as the reference. Rounds are interleaved, variant by variant
(these machines are noisy); medians of each program's own time of its
parallel part (it checks its result afterwards).

Variants are "COMPILER/TRANSPORT": c1/tcp, c1/ucx, c2/tcp, c2/ucx.

usage: bench/apps/variants.py [--rounds R] [--small | --large] [--servers N]
                              [--variants c1/tcp,c1/ucx,c2/ucx] [--apps A,B]
                              [--out FILE.md] [--json FILE.json]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run as apps  # noqa: E402  (bench/apps/run.py: the programs and their timing)

COMPILERS = {"c1": apps.DJAVA_VM_OPTIONS["server"], "c2": apps.DJAVA_VM_OPTIONS["server-c2"]}
# --large: sizes whose parallel parts take seconds on djava. bench/apps' own
# sizes were set for the Zero VM of the seed's tables, and under a JIT they
# are mostly warm-up. {t} is the thread count.
LARGE = {
    "MatrixMultiply": ["800", "{t}"],
    "SOR": ["1000", "40", "{t}"],
    "TSP": ["13", "{t}", "42"],
    "RayTracer": ["800", "{t}"],
    "ParallelIntegrate": ["32000000", "{t}"],
    "MergeSort": ["16777216", "{t}"],
    "StreamCipher": ["24", "16", "{t}"],
    "VectorUpdate": ["32", "8", "{t}"],
}
TRANSPORTS = ("tcp", "ucx")


def variant(text):
    compiler, _, transport = text.partition("/")
    if compiler not in COMPILERS or transport not in TRANSPORTS:
        raise argparse.ArgumentTypeError(
            f"a variant is COMPILER/TRANSPORT ({'|'.join(COMPILERS)}/{'|'.join(TRANSPORTS)}), "
            f"not '{text}'")
    return compiler, transport


def configurations(servers, variants):
    """(name, command, environment) of stock HotSpot and each variant."""
    base = dict(os.environ)
    base.pop("DJAVA_CLUSTER", None)  # a private cluster of the given size each run
    stock = os.path.join(apps.BUILD, "jvm", "base-image", "bin", "java")
    configs = [("java JIT", [stock], base)]
    djava = os.path.join(apps.BUILD, "bin", "djava")
    for compiler, transport in variants:
        # The launcher and its private cluster's daemons and thread servers
        # all take the transport from the environment.
        env = dict(base, DJAVA_THREAD_SERVERS=str(servers), DJAVA_TRANSPORT=transport)
        configs.append((f"djava {compiler}/{transport}", [djava, *COMPILERS[compiler]], env))
    return configs


def arguments(app, small, large):
    if large:
        return [x.format(t=apps.THREADS) for x in LARGE[app]]
    return apps.app_arguments(app, apps.THREADS, small)


def table(med, names, programs, servers, rounds, small, large=False):
    first = names[1]
    lines = [f"Applications, {apps.THREADS} threads, djava on {servers} thread server(s): ms of "
             f"each program's parallel part, median of {rounds} interleaved rounds"
             f"{' (smoke sizes)' if small else ''}{' (large sizes)' if large else ''}; "
             f"in brackets, the time against "
             f"{first}.", "",
             "| application | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for app in programs:
        cells = [f"{med[app][names[0]]:.1f}"]
        for name in names[1:]:
            cells.append(f"{med[app][name]:.1f} ({med[app][name] / med[app][first]:.2f})")
        lines.append(f"| {app} | " + " | ".join(cells) + " |")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    sizes = ap.add_mutually_exclusive_group()
    sizes.add_argument("--small", action="store_true", help="smoke sizes")
    sizes.add_argument("--large", action="store_true", help="sizes of seconds (LARGE)")
    ap.add_argument("--servers", type=int, default=2)
    ap.add_argument("--variants", default="c1/tcp,c1/ucx,c2/ucx",
                    type=lambda t: [variant(v) for v in t.split(",")])
    ap.add_argument("--apps", help="a comma-separated subset of bench/apps' programs")
    ap.add_argument("--out", help="markdown table")
    ap.add_argument("--json", help="the numbers")
    args = ap.parse_args()
    programs = args.apps.split(",") if args.apps else list(apps.APPS)
    unknown = [a for a in programs if a not in apps.APPS]
    if unknown:
        raise SystemExit(f"no such application: {', '.join(unknown)}")
    configs = configurations(args.servers, args.variants)
    names = [c[0] for c in configs]
    with tempfile.TemporaryDirectory() as classes:
        subprocess.run([os.path.join(apps.BUILD, "jvm", "base-image", "bin", "javac"), "-d",
                        classes, *[os.path.join(HERE, f"{a}.java") for a in programs]],
                       check=True)
        ms = {app: {name: [] for name in names} for app in programs}
        for r in range(args.rounds):
            for app in programs:
                for name, cmd, env in configs:
                    t = apps.timed_run(cmd, env, classes, app,
                                       arguments(app, args.small, args.large))
                    ms[app][name].append(t)
                    print(f"round {r + 1}/{args.rounds}: {app} on {name}: {t:.1f} ms",
                          file=sys.stderr, flush=True)
    med = {app: {name: statistics.median(v) for name, v in by_name.items()}
           for app, by_name in ms.items()}
    text = "\n".join(table(med, names, programs, args.servers, args.rounds, args.small,
                           args.large)) + "\n"
    apps.emit(text, args.out, args.json,
              {"threads": apps.THREADS, "rounds": args.rounds, "small": args.small,
               "large": args.large,
               "servers": args.servers, "configs": names, "ms": med})


if __name__ == "__main__":
    main()
