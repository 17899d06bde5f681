#!/usr/bin/env python3
"""Memory while a program keeps sharing short-lived objects (issue 20): the
distributed garbage collector must keep every daemon bounded. Runs
bench/gc/Stream.java on a cluster of its own (2 thread servers):

  messages  a producer passes N messages (an object with an int[16]) through
            an ArrayBlockingQueue to a consumer on the other thread server;
  pool      a thread pool's tasks make shared results main consumes and
            drops, for S seconds.

Every second it samples each process's RSS (sos-server, thread manager,
both thread servers, the launcher) and the sos-server's counters (live
chunks, chunks released and collected, collections and their pauses). The
target: every daemon's RSS within +64 MB of its value after the first
10,000 messages (the pool: after its first 2,000 tasks), and the live
chunk count bounded. --no-collection runs the same with the collector off
(the server keeps every chunk until the program ends), for comparison.

usage: bench/gc/stream.py [--messages N] [--pool-seconds S] [--small]
                          [--no-collection] [--out FILE.md] [--json FILE.json]
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "micro"))
import common  # noqa: E402

CLUSTER = os.path.join(common.BUILD, "bin", "djava-cluster")
BOUND_MB = 64
STATS = ("live", "released", "collections", "collected", "holds")


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def children(pid):
    """The pids of pid's child processes."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def server_stats(cluster_dir, pid):
    """The sos-server's latest statistics line (SIGUSR1), as numbers."""
    log = os.path.join(cluster_dir, "sos-server.log")
    before = os.path.getsize(log)
    os.kill(pid, signal.SIGUSR1)
    for _ in range(50):
        time.sleep(0.02)
        with open(log, errors="replace") as f:
            f.seek(before)
            text = f.read()
        if "statistics:" in text:
            break
    stats = {}
    for key in STATS:
        m = re.findall(rf"\b{key} (\d+)", text)
        if m:
            stats[key] = int(m[-1])
    m = re.findall(r"released \d+ in (\d+) messages", text)
    if m:
        stats["release_messages"] = int(m[-1])
    m = re.findall(r"pause last \d+ us, max (\d+) us", text)
    if m:
        stats["max_pause_us"] = int(m[-1])
    return stats


def run(classes, workload, amount, no_collection, partial=None):
    """Samples over one run: [{t, progress, rss: {name: kB}, stats}]. With
    partial, the samples so far are written there every 30 s (a long run
    stopped early still says how far it got)."""
    with tempfile.TemporaryDirectory() as cluster_dir:
        start = [CLUSTER, "start", "--dir", cluster_dir, "--workdir", cluster_dir,
                 "--thread-servers", "2"]
        if no_collection:
            start += ["--sos-option=--no-collection"]
        subprocess.run(start, check=True, stdout=subprocess.DEVNULL)
        try:
            with open(os.path.join(cluster_dir, "cluster.json")) as f:
                cluster = json.load(f)
            pids = {d["name"]: d["pid"] for d in cluster["daemons"]}
            env = dict(os.environ, DJAVA_CLUSTER=cluster["cluster"],
                       DJAVA_SECRET_FILE=cluster["secret"])
            proc = subprocess.Popen([common.DJAVA, "-cp", classes, "Stream", workload, str(amount)],
                                    env=env, stdout=subprocess.PIPE)
            os.set_blocking(proc.stdout.fileno(), False)
            samples, progress, began, out = [], 0, time.monotonic(), ""
            while True:
                done = proc.poll() is not None
                chunk = (proc.stdout.read() or b"").decode(errors="replace")
                out += chunk
                for m in re.finditer(r"progress (\d+)", chunk):
                    progress = int(m.group(1))
                launcher = [p for p in children(proc.pid)] or [proc.pid]
                rss = {name: rss_kb(pid) for name, pid in pids.items()}
                rss["launcher"] = rss_kb(launcher[0])
                samples.append({"t": time.monotonic() - began, "progress": progress, "rss": rss,
                                "stats": server_stats(cluster_dir, pids["sos-server"])})
                if done:
                    break
                if partial and len(samples) % 30 == 0:
                    with open(partial, "w") as f:
                        json.dump({"workload": workload, "samples": samples}, f)
                time.sleep(1.0)
            if proc.returncode != 0 or "done" not in out:
                logs = ""
                for d in cluster["daemons"]:
                    with open(d["log"], errors="replace") as f:
                        logs += f"--- {d['name']}\n" + f.read()[-1500:]
                kept = tempfile.mkdtemp(prefix="stream-failed-")
                subprocess.run(["cp", "-r", cluster_dir, kept])
                raise SystemExit(f"Stream {workload} failed ({proc.returncode}): {out[-2000:]}\n{logs}"
                                 f"\n(the cluster's logs: {kept})")
            return samples
        finally:
            subprocess.run([CLUSTER, "stop", "--dir", cluster_dir], stdout=subprocess.DEVNULL)


def summarize(samples, baseline_progress):
    """RSS at the baseline (the first sample at or past baseline_progress),
    the largest after it and at the end, per process; live chunks likewise."""
    base = next((s for s in samples if s["progress"] >= baseline_progress), samples[0])
    after = [s for s in samples if s["t"] >= base["t"]]
    names = sorted(base["rss"])
    rows = {}
    for name in names:
        values = [s["rss"][name] for s in after if s["rss"].get(name) is not None]
        if not values or base["rss"][name] is None:
            continue
        rows[name] = {"base_mb": base["rss"][name] / 1024, "max_mb": max(values) / 1024,
                      "end_mb": values[-1] / 1024,
                      "growth_mb": (max(values) - base["rss"][name]) / 1024}
    live = [s["stats"].get("live", 0) for s in after]
    last = samples[-1]["stats"]
    return {"baseline_progress": base["progress"], "seconds": samples[-1]["t"],
            "progress": samples[-1]["progress"], "rss": rows,
            "live_at_baseline": base["stats"].get("live", 0), "live_max": max(live),
            "server": last}


def table(title, summary):
    lines = [f"{title}: {summary['progress']:,} done in {summary['seconds']:.0f} s; baseline "
             f"after {summary['baseline_progress']:,}.", "",
             "| process | RSS at baseline (MB) | max after (MB) | growth (MB) | at end (MB) |",
             "|---|---:|---:|---:|---:|"]
    for name, r in summary["rss"].items():
        lines.append(f"| {name} | {r['base_mb']:.1f} | {r['max_mb']:.1f} | {r['growth_mb']:+.1f} | "
                     f"{r['end_mb']:.1f} |")
    s = summary["server"]
    lines += ["", f"sos-server: live chunks at baseline {summary['live_at_baseline']:,}, at most "
              f"{summary['live_max']:,} after; released {s.get('released', 0):,} (in "
              f"{s.get('release_messages', 0):,} messages), collected "
              f"{s.get('collected', 0):,} in {s.get('collections', 0):,} collections (longest pause "
              f"{s.get('max_pause_us', 0) / 1000:.1f} ms).", ""]
    daemons = [n for n in summary["rss"] if n != "launcher"]
    worst = max(summary["rss"][n]["growth_mb"] for n in daemons)
    lines.append(f"Largest daemon growth {worst:+.1f} MB (target within +{BOUND_MB} MB): "
                 f"{'met' if worst <= BOUND_MB else 'missed'}.")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--pool-seconds", type=int, default=600)
    parser.add_argument("--small", action="store_true", help="a smoke run")
    parser.add_argument("--no-collection", action="store_true")
    parser.add_argument("--out")
    parser.add_argument("--json")
    args = parser.parse_args()
    if args.small:
        args.messages, args.pool_seconds = 20_000, 15
    with tempfile.TemporaryDirectory() as classes:
        common.compile_java(classes, "../gc/Stream")
        text, data = "", {}
        if args.messages > 0:
            samples = run(classes, "messages", args.messages, args.no_collection,
                          args.json + ".partial" if args.json else None)
            data["messages"] = summarize(samples, 10_000)
            text += table(f"Producer/consumer, {args.messages:,} messages", data["messages"]) + "\n"
        if args.pool_seconds > 0:
            samples = run(classes, "pool", args.pool_seconds, args.no_collection,
                          args.json + ".partial" if args.json else None)
            data["pool"] = summarize(samples, 2_000)
            text += table(f"Work queue, {args.pool_seconds} s", data["pool"])
    common.emit(text, args.out, args.json, data)


if __name__ == "__main__":
    main()
