#!/usr/bin/env python3
"""The latency floor of this machine beside djava's remote operations, in
one run, interleaved round by round (these machines are noisy), medians:

  tcp-ping-pong           a framed request and reply between two processes
                          over loopback TCP (sos-bench --ping-pong-only, p50):
                          the floor of anything that crosses nodes here;
  rmi-null-call           Java RMI's void ping() between two processes of
                          the stock JIT VM (RmiNullCall, p50 after warm-up):
                          the JDK's own remote call, the seeds' usual
                          comparison;
  djava-uncached-read     a getfield of an object whose bytes are at their
                          home sos-server (UncachedRead: mean per read);
  djava-lock-handoff      a shared monitor taken alternately by threads on
                          two thread servers (LockHandoff: µs per hand-off,
                          with the turn field it guards and wait/notifyAll);
  djava-thread-start      Thread.start() of a trivial thread to a thread
                          server until the starter sees that it ran, and
  djava-thread-start-join start() then join() (ThreadStart: medians).

djava runs on a private cluster of 2 thread servers per program. Markdown
on stdout (and --out); --json writes

  {"rounds": R, "rows": [{"name": "tcp-ping-pong", "label": "...", "us": median}, ...]}

usage: bench/micro/latency.py [--rounds R] [--small] [--out FILE.md] [--json FILE.json]
"""

import argparse
import re
import select
import subprocess
import sys
import tempfile

import common
from uncached import uncached_reads

ROWS = [
    ("tcp-ping-pong", "loopback TCP ping-pong (sos-bench, p50)"),
    ("rmi-null-call", "Java RMI null call, JIT VM (p50)"),
    ("djava-uncached-read", "djava uncached field read (bytes at home)"),
    ("djava-lock-handoff", "djava lock hand-off between two thread servers"),
    ("djava-thread-start", "djava Thread.start() until it has run"),
    ("djava-thread-start-join", "djava Thread.start() + join()"),
]


class Sizes:
    def __init__(self, small):
        self.pings = 300 if small else 3000            # ping-pong round trips per round
        self.rmi_warmup, self.rmi_calls = (1000, 500) if small else (20000, 5000)
        self.objects, self.read_rounds = (50, 1) if small else (2000, 3)
        self.turns, self.turn_warmup = (40, 6) if small else (600, 50)
        self.starts, self.start_warmup = (5, 2) if small else (40, 4)


def rmi_null_call(classes, sizes):
    """µs per RMI null call (p50 of the timed calls): a server process and a
    client process of the JIT VM; the server ends when its stdin closes."""
    with tempfile.TemporaryFile(mode="w+") as server_err:
        server = subprocess.Popen([*common.JIT, "-cp", classes, "RmiNullCall", "server"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=server_err, text=True)
        try:
            ready, _, _ = select.select([server.stdout], [], [], 60)
            stub = server.stdout.readline().strip() if ready else ""
            if not stub:
                server_err.seek(0)
                raise SystemExit(f"the RMI server printed no stub:\n{server_err.read()}")
            out = common.run_java(common.JIT, classes, "RmiNullCall", "client", stub,
                                  sizes.rmi_warmup, sizes.rmi_calls)
            server.stdin.close()
            server.wait(timeout=60)
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()
    return float(re.search(r"p50 ([\d.]+) us", out).group(1))


def lock_handoff(classes, sizes):
    out = common.run_djava(classes, "LockHandoff", sizes.turns, sizes.turn_warmup)
    return float(re.search(r"lock hand-off ([\d.]+) us", out).group(1))


def thread_starts(classes, sizes):
    """(median µs of start until run, of start+join) over one program's starts."""
    out = common.run_djava(classes, "ThreadStart", sizes.starts, sizes.start_warmup)
    ran = [float(x) for x in re.findall(r"thread start ([\d.]+) us", out)]
    joined = [float(x) for x in re.findall(r"thread start\+join ([\d.]+) us", out)]
    return common.median(ran), common.median(joined)


def measure(rounds, sizes):
    """{row: [µs per round]}."""
    samples = {name: [] for name, _ in ROWS}
    with tempfile.TemporaryDirectory() as classes:
        common.compile_java(classes, "Micro", "UncachedRead", "RmiNullCall", "LockHandoff",
                            "ThreadStart")
        for r in range(rounds):
            samples["tcp-ping-pong"].append(common.ping_pong(sizes.pings))
            samples["rmi-null-call"].append(rmi_null_call(classes, sizes))
            samples["djava-uncached-read"].append(
                common.median(uncached_reads(classes, sizes.objects, sizes.read_rounds)))
            samples["djava-lock-handoff"].append(lock_handoff(classes, sizes))
            ran, joined = thread_starts(classes, sizes)
            samples["djava-thread-start"].append(ran)
            samples["djava-thread-start-join"].append(joined)
            common.progress(f"round {r + 1}/{rounds}: " +
                            ", ".join(f"{name} {v[-1]:.1f} us" for name, v in samples.items()))
    return samples


def markdown(data, samples, small):
    ping = data["rows"][0]["us"]
    lines = [f"Latencies in µs, median of {data['rounds']} interleaved rounds"
             f"{' (smoke sizes)' if small else ''}; djava on a private cluster of 2 thread "
             "servers, loopback.", "",
             "| measurement | median | rounds' range | / ping-pong |", "|---|---|---|---|"]
    for row in data["rows"]:
        values = samples[row["name"]]
        lines.append(f"| {row['label']} | {row['us']:.1f} µs | {min(values):.1f}–{max(values):.1f}"
                     f" | {row['us'] / ping:.2f} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--small", action="store_true", help="smoke sizes")
    ap.add_argument("--out", help="also write the markdown here")
    ap.add_argument("--json", help="write the numbers here")
    args = ap.parse_args()
    samples = measure(args.rounds, Sizes(args.small))
    data = {"rounds": args.rounds,
            "rows": [{"name": name, "label": label, "us": round(common.median(samples[name]), 3)}
                     for name, label in ROWS]}
    common.emit(markdown(data, samples, args.small), args.out, args.json, data)


if __name__ == "__main__":
    sys.exit(main())
