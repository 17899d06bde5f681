#!/usr/bin/env python3
"""What a steal costs in the ForkJoin common pool when its workers are
spread over thread servers (issue 26): bench/micro/Steal.java on stock
HotSpot (-XX:ActiveProcessorCount=4, so its pool has the 3 workers a
2-server djava cluster gives) and under djava with 1, 2 and 4 thread
servers (private clusters, capacity 2 each; the pool's parallelism is the
cluster's processors less one).

For each kind of task (Steal.java says what each times) the median and
90th percentile of the time from its submission or fork to its start, and
for external tasks until main hears it finished; and the messages per task:
two more runs with -XX:+PrintDistributedStatistics, of N and 2N tasks of
that kind, whose difference over N leaves set-up out (every node's
counters, the estimate of bench/apps/run.py: 2 a miss, invalidation or
flush, 3 a monitor enter).

This machine has 2 cores shared by every process of a cluster: what
carries to more machines is the messages per task; the times are this
host's (a message through a thread woken from a blocking read costs tens
of µs here).

usage: bench/micro/steal.py [--tasks N] [--servers 1,2,4] [--out FILE.md] [--json FILE]
"""

import argparse
import importlib.util
import os
import re
import tempfile

import common


def load_apps():
    """bench/apps/run.py (its statistics parser), by path: bench/micro has a run.py too."""
    spec = importlib.util.spec_from_file_location(
        "djava_bench_apps", os.path.join(common.TOP, "bench", "apps", "run.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


apps = load_apps()

KINDS = ("external-busy", "external-idle", "worker")
LINE = {
    "external-busy": re.compile(r"external busy: tasks (\d+) elsewhere (\d+) start_us (\S+) (\S+) "
                                r"done_us (\S+) (\S+)"),
    "external-idle": re.compile(r"external idle: tasks (\d+) elsewhere (\d+) start_us (\S+) (\S+) "
                                r"done_us (\S+) (\S+)"),
    "worker": re.compile(r"worker: tasks (\d+) same (\d+) start_us (\S+) (\S+) other (\d+) "
                         r"start_us (\S+) (\S+) never_stolen (\d+)"),
}


def number(text):
    return None if text == "-" else float(text)


def parse(out, kind):
    """The numbers of one kind's line (the last: the warm-up's comes first)."""
    found = LINE[kind].findall(out)
    if not found:
        return None
    g = found[-1]
    if kind == "worker":
        return {"tasks": int(g[0]), "same": int(g[1]), "same_start_us": number(g[2]),
                "same_start_p90_us": number(g[3]), "other": int(g[4]),
                "other_start_us": number(g[5]), "other_start_p90_us": number(g[6]),
                "never_stolen": int(g[7])}
    return {"tasks": int(g[0]), "elsewhere": int(g[1]), "start_us": number(g[2]),
            "start_p90_us": number(g[3]), "done_us": number(g[4]), "done_p90_us": number(g[5])}


def messages(classes, servers, kind, tasks):
    """Messages per task of `kind` on `servers` servers: runs of tasks and
    2 tasks with statistics, the difference over tasks."""
    counts = []
    for n in (tasks, 2 * tasks):
        p = apps.run_app([common.DJAVA], common.djava_env(servers), classes, "Steal",
                         [str(n), kind], options=[apps.STATISTICS])
        counts.append(apps.summed(apps.parse_statistics(p.stdout + p.stderr)))
    return {key: round((counts[1][key] - counts[0][key]) / tasks, 2)
            for key in ("messages", "misses", "flushes", "invalidations", "monitor_enters")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", type=int, default=200)
    ap.add_argument("--servers", default="1,2,4")
    ap.add_argument("--out")
    ap.add_argument("--json")
    args = ap.parse_args()
    servers = [int(s) for s in args.servers.split(",")]
    classes = tempfile.mkdtemp(prefix="djava-steal-")
    common.compile_java(classes, "Steal")
    rows = {}
    common.progress("stock HotSpot")
    out = common.run([common.JAVA_STOCK, "-XX:ActiveProcessorCount=4", "-cp", classes, "Steal",
                      str(args.tasks)])
    rows["java JIT"] = {kind: parse(out, kind) for kind in KINDS}
    for n in servers:
        name = f"djava, {n} server{'s' if n > 1 else ''}"
        common.progress(name)
        out = common.run_djava(classes, "Steal", args.tasks, servers=n)
        row = {kind: parse(out, kind) for kind in KINDS}
        for kind in KINDS:
            if row[kind] is not None:
                row[kind]["per_task"] = messages(classes, n, kind, args.tasks)
        rows[name] = row
    lines = [f"What a steal costs (bench/micro/steal.py, {args.tasks} tasks of each kind; "
             "µs, median / 90th percentile; messages per task from the counters' difference "
             "between runs of N and 2N tasks):", "",
             "| VM | external, busy: start | done | msgs | external, idle: start | done | msgs "
             "| worker→worker, same process: tasks, start | other process: tasks, start | msgs "
             "| never stolen |",
             "|---|---|---|---:|---|---|---:|---|---|---:|---:|"]

    def pair(a, b):
        return "—" if a is None else f"{a:.0f} / {b:.0f}"

    for name, row in rows.items():
        cells = [name]
        for kind in ("external-busy", "external-idle"):
            r = row[kind]
            cells += [pair(r["start_us"], r["start_p90_us"]), pair(r["done_us"], r["done_p90_us"]),
                      str(r.get("per_task", {}).get("messages", "—"))]
        w = row["worker"]
        if w is None:
            cells += ["—", "—", "—", "—"]
        else:
            cells += [f"{w['same']}: {pair(w['same_start_us'], w['same_start_p90_us'])}",
                      f"{w['other']}: {pair(w['other_start_us'], w['other_start_p90_us'])}",
                      str(w.get("per_task", {}).get("messages", "—")), str(w["never_stolen"])]
        lines.append("| " + " | ".join(cells) + " |")
    common.emit("\n".join(lines) + "\n", args.out, args.json, {"tasks": args.tasks, "rows": rows})


if __name__ == "__main__":
    main()
