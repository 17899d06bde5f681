"""What the microbenchmark drivers of bench/micro share: where the VMs and
tools are, compiling the Java programs, running a program under a VM (or
under djava on a private cluster) with a time limit, the loopback TCP
ping-pong, medians, and writing the tables.

Not a program: run.py, uncached.py, table6.py and latency.py import it
(they run as scripts, so this directory is on sys.path).
"""

import json
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD = os.path.join(TOP, "build")
JAVA = os.path.join(BUILD, "jdk", "bin", "java")        # djava's JDK: Zero, and the server VM
JAVA_REF = os.path.join(BUILD, "jdk-ref", "bin", "java")  # Zero from the same source, unpatched
# Stock HotSpot (the class library's own server VM, same class library).
JAVA_STOCK = os.path.join(BUILD, "jvm", "base-image", "bin", "java")
JAVAC = os.path.join(BUILD, "jvm", "base-image", "bin", "javac")
DJAVA = os.path.join(BUILD, "bin", "djava")
SOS_BENCH = os.path.join(BUILD, "bin", "sos-bench")
# Node (djava.runtime) for the programs that run under djava; a VM started
# with -XX:+DistributedJava has it on its boot class path.
RUNTIME_JAR = os.path.join(BUILD, "jdk", "lib", "djava-runtime.jar")

# The VMs that run Micro on local objects: djava's VM (plain, no cluster),
# the reference Zero VM, stock HotSpot's template interpreter and its JIT.
DJAVA_PLAIN = [JAVA]
REF = [JAVA_REF]
XINT = [JAVA_STOCK, "-Xint"]
C1 = [JAVA_STOCK, "-XX:TieredStopAtLevel=1"]
JIT = [JAVA_STOCK]

# Generous: a run that takes this long is hung, not slow.
TIMEOUT = 900

# The seed's Table 6 ("Transparent Distributed Java", 1997): its name in
# Micro's output: (the seed's label, Kaffe-NOW and Kaffe-Ref in µs per 100
# operations, NOW/Ref). The "∞" rows are on uncached data; their Ref is the
# unmodified interpreter's time of a local loop.
SEED_TABLE6 = {
    "empty-loop": ("Empty Loop", 108, 106, 1.01),
    "new-object": ("New Object", 29135, 1750, 16.65),
    "array-ref-write": ("Array Ref Write", 279, 223, 1.25),
    "array-ref-read": ("Array Ref Read", 372, 190, 1.96),
    "int-field-write": ("Integer Field Write", 587, 393, 1.49),
    "int-field-read": ("Integer Field Read", 590, 366, 1.61),
    "ref-field-write": ("Ref Field Write", 597, 281, 2.12),
    "ref-field-read": ("Ref Field Read", 1941, 281, 6.91),
    "uncached-int-field-write": ("∞ Int Field Write", 1999994, 223, 8968.58),
    "uncached-int-field-read": ("∞ Int Field Read", 1979991, 190, 10421.01),
    "uncached-ref-field-write": ("∞ Ref Field Write", 1999952, 282, 7092.02),
    "uncached-ref-field-read": ("∞ Ref Field Read", 1999963, 281, 7117.31),
}
LOCAL_ROWS = [name for name in SEED_TABLE6 if not name.startswith("uncached-")]
UNCACHED_ROWS = [name for name in SEED_TABLE6 if name.startswith("uncached-")]


def progress(message):
    print(message, file=sys.stderr, flush=True)


def compile_java(dest, *names):
    """Compiles bench/micro/NAME.java for each name into dest (with djava's
    runtime on the class path: Node is only linked by the programs that run
    under djava, so the others still run on any VM)."""
    sources = [os.path.join(HERE, f"{name}.java") for name in names]
    run([JAVAC, "-cp", RUNTIME_JAR, "-d", dest, *sources])


def run(cmd, env=None, timeout=TIMEOUT, stdin=None):
    """Runs cmd and returns its stdout; stops the driver with the command's
    output if it fails or outlives timeout (the child is killed then)."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                           stdin=stdin)
    except subprocess.TimeoutExpired as e:
        raise SystemExit(f"timed out after {timeout} s: {' '.join(cmd)}\n{e.stdout or ''}"
                         f"{e.stderr or ''}")
    if p.returncode != 0:
        raise SystemExit(f"exit status {p.returncode}: {' '.join(cmd)}\n{p.stdout}{p.stderr}")
    return p.stdout


def djava_env(servers):
    """The environment for build/bin/djava to start a private cluster of
    `servers` thread servers on loopback (one that stops when djava ends),
    whatever cluster the caller's environment names."""
    env = dict(os.environ, DJAVA_THREAD_SERVERS=str(servers))
    env.pop("DJAVA_CLUSTER", None)
    return env


def run_djava(classes, main, *args, servers=2, vm_options=()):
    """Runs class `main` of `classes` under djava on a private cluster
    (vm_options: e.g. ["-server"], every node on the server VM)."""
    return run([DJAVA, *vm_options, "-cp", classes, main, *map(str, args)],
               env=djava_env(servers))


def run_java(vm, classes, main, *args):
    """Runs class `main` of `classes` on vm (a command: REF, XINT, ...)."""
    return run([*vm, "-cp", classes, main, *map(str, args)])


def ping_pong(iterations=3000):
    """The loopback TCP round trip, in µs: p50 of `iterations` framed
    requests and replies between two processes, a load's frame sizes
    (sos-bench --ping-pong-only; docs/BENCHMARKS.md)."""
    out = run([SOS_BENCH, "--ping-pong-only", "--iterations", str(iterations)])
    return float(re.search(r"p50 ([\d.]+) us", out).group(1))


def name_values(out):
    """{name: float} of a program's "name value" lines."""
    return {name: float(value) for name, value in (line.split() for line in out.splitlines())}


def median(values):
    return statistics.median(values) if values else None


def emit(text, out=None, json_path=None, data=None):
    """Prints the markdown, and writes it to `out` and `data` as JSON to
    `json_path` when those are given."""
    print(text)
    if out:
        with open(out, "w") as f:
            f.write(text)
    if json_path:
        with open(json_path, "w") as f:
            json.dump(data, f, indent=1)
            f.write("\n")
