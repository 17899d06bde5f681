#!/usr/bin/python3
"""bench/results/README.md and its plots, from what the benchmark drivers
of `make bench` wrote there: a summary (machine, date, commit), what limits
the applications' speedups on this machine, every driver's table, and

- speedup.png: djava's speedup over its own 1-server time per application,
  against the ideal line and this machine's core ceiling (apps.json);
- delay.png: time against the network's added delay, per application, one
  line per server count (now.json);
- table6.png: the microbenchmarks' ratios to Ref, ours next to the seed's
  Table 6, on a log scale (the seed's uncached ratios are ~10^4) (table6.json).

A driver that did not run leaves its part out, and the README says which
(a partial `make bench` still gets a report).

The estimate of the protocol's share of each application's time multiplies
the counters of `bench/apps/run.py`'s statistics run by the round trips
bench/micro/latency.py measured; the report says it is an estimate, and
what it leaves out.

usage: bench/report.py [--results DIR]     (default: bench/results)

Debian's python3-matplotlib (make deps-bench), hence /usr/bin/python3.
"""

import argparse
import datetime
import json
import os
import platform
import subprocess

import matplotlib

matplotlib.use("Agg")  # files only: no display on these machines
import matplotlib.pyplot as plt  # noqa: E402 (after the backend is chosen)

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
# The drivers' tables, in the README's order: file, heading, the driver that
# writes it, and the plot shown under it.
SECTIONS = [
    ("apps.md", "Applications (the seed's Tables 7 and 8) and protocol costs",
     "bench/apps/run.py", "speedup.png"),
    ("now.md", "A network of workstations: time against network delay", "bench/now/run.py",
     "delay.png"),
    ("table6.md", "Microbenchmarks against the seed's Table 6", "bench/micro/table6.py",
     "table6.png"),
    ("latency.md", "Latencies", "bench/micro/latency.py", None),
    ("micro.md", "Local objects: the cost of the shared-object checks", "bench/micro/run.py",
     None),
    ("uncached.md", "Uncached field read against a TCP round trip", "bench/micro/uncached.py",
     None),
    ("sos.md", "Shared-object system (sos-bench)", "build/bin/sos-bench", None),
    ("monitor.md", "Monitor service and thread manager", "bench/monitor/run-bench", None),
]
# Drivers with numbers for the plots and the limits write NAME.json beside NAME.md.
DRIVERS = {table[:-len(".md")] + ".json": driver for table, _, driver, _ in SECTIONS}
# A speedup within this fraction of what the cores allow counts as at the
# cores' limit: these machines' runs vary by about that much.
AT_CEILING = 0.9


# ---- inputs -------------------------------------------------------------------------

class Results:
    """The results directory: the JSON and tables present, and what is
    missing (a file, and why), for the README to say."""

    def __init__(self, directory):
        self.dir = directory
        self.missing = []

    def json(self, name):
        path = os.path.join(self.dir, name)
        try:
            with open(path) as f:
                return json.load(f)
        except FileNotFoundError:
            self.missing.append(f"`{name}` ({DRIVERS[name]} did not run)")
        except (OSError, ValueError) as e:
            self.missing.append(f"`{name}` (unreadable: {e})")
        return None

    def table(self, name):
        path = os.path.join(self.dir, name)
        if not os.path.exists(path):
            return None
        with open(path) as f:
            return f.read().strip()


def read_first(path, prefix):
    """The value of the first line of a /proc file that starts with prefix."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(prefix):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def machine():
    cpu = read_first("/proc/cpuinfo", "model name") or platform.processor() or "unknown CPU"
    mem = read_first("/proc/meminfo", "MemTotal")
    ram = f"{int(mem.split()[0]) / 2**20:.1f} GiB RAM" if mem else "RAM unknown"
    return (f"{cpu}, {os.cpu_count()} cores, {ram}, "
            f"{platform.system()} {platform.release()} ({platform.machine()})")


def commit():
    """HEAD's short hash, "-dirty" when tracked files differ from it. The
    results directory is left out of the test: make bench rewrites it
    before the report runs."""
    def git(*args):
        return subprocess.run(["git", "-C", TOP, *args], capture_output=True, text=True)
    head = git("rev-parse", "--short", "HEAD")
    if head.returncode != 0:
        return "unknown (not a git work tree)"
    changed = git("status", "--porcelain", "--untracked-files=no", "--", ".",
                  ":(exclude)bench/results").stdout.strip()
    return head.stdout.strip() + ("-dirty" if changed else "")


# ---- plots --------------------------------------------------------------------------

def djava_config(apps, n):
    """The apps.json configuration name of djava on n thread servers."""
    return next(c for c in apps["configs"]
                if c.startswith("djava, ") and c.split()[1] == str(n))


def plot_speedup(apps, cores, path):
    servers = apps["servers"]
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    for app, ms in apps["ms"].items():
        base = ms[djava_config(apps, servers[0])]
        ax.plot(servers, [base / ms[djava_config(apps, n)] for n in servers], marker="o",
                label=app)
    ax.plot(servers, [n / servers[0] for n in servers], "k--", linewidth=1,
            label="ideal (one machine a server)")
    ax.axhline(core_ceiling(apps["threads"], cores), color="grey", linestyle=":",
               label=f"cores' limit on this machine ({cores} cores)")
    ax.set_xticks(servers)
    ax.set_xlabel("thread servers")
    ax.set_ylabel(f"speedup over djava on {servers[0]} server")
    ax.set_title(f"djava, {apps['threads']} threads" +
                 (" (smoke sizes)" if apps["small"] else ""))
    ax.set_ylim(bottom=0)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_delay(now, path):
    apps = list(now["ms"])
    cols = 2 if len(apps) > 1 else 1
    rows = (len(apps) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 3.6 * rows), squeeze=False)
    delays = now["delays_us"]
    for ax, app in zip(axes.flat, apps):
        for n in now["servers"]:
            points = [(d, now["ms"][app][str(d)][str(n)]) for d in delays
                      if str(n) in now["ms"][app].get(str(d), {})]
            ax.plot([d for d, _ in points], [t for _, t in points], marker="o",
                    label=f"{n} server{'s' if n > 1 else ''}")
        ax.set_title(app)
        ax.set_xlabel("added network delay (µs)")
        ax.set_ylabel("ms")
        ax.set_ylim(bottom=0)
        ax.legend(fontsize="small")
    for ax in list(axes.flat)[len(apps):]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# The bars of table6.png: a ratio to Ref for each time a row has.
TABLE6_SERIES = [("djava", "djava, local object"), ("djava-cached", "djava, shared and cached"),
                 ("djava-uncached", "djava, uncached")]


def plot_table6(table6, path):
    rows = table6["rows"]
    series = [(key, label) for key, label in TABLE6_SERIES
              if any(r["ns"].get(key) is not None for r in rows)]
    bars = len(series) + 1  # and the seed's
    height = 0.8 / bars
    fig, ax = plt.subplots(figsize=(7.5, 0.5 * len(rows) * bars / 2 + 1.5))
    for i, (key, label) in enumerate(series):
        ys, ratios = [], []
        for y, r in enumerate(rows):
            if r["ns"].get(key) is not None and r["ns"].get("ref"):
                ys.append(y + i * height)
                ratios.append(r["ns"][key] / r["ns"]["ref"])
        ax.barh(ys, ratios, height=height, label=f"{label} / Ref (here)")
    seeded = [(y, r["seed_ratio"]) for y, r in enumerate(rows) if r.get("seed_ratio")]
    ax.barh([y + len(series) * height for y, _ in seeded], [s for _, s in seeded],
            height=height, color="grey", label="seed NOW / Ref (Table 6)")
    ax.set_xscale("log")
    ax.axvline(1, color="k", linewidth=0.8)
    ax.set_yticks([y + (bars - 1) * height / 2 for y in range(len(rows))])
    ax.set_yticklabels([r.get("label", r["name"]) for r in rows])
    ax.invert_yaxis()
    ax.set_xlabel("time / Ref's time (log scale)")
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# ---- what limits the speedups -------------------------------------------------------------

def core_ceiling(threads, cores):
    """The speedup over one server the cores allow when every server runs on
    this one machine: one server's threads already use min(threads, cores)
    cores, and more servers add no cores. (On one machine per server it
    would be the server count, up to the thread count.)"""
    return min(threads, cores) / min(threads, cores)


def latency_us(latency, name):
    row = next((r for r in (latency or {}).get("rows", []) if r["name"] == name), None)
    return row["us"] if row else None


class ProtocolTime:
    """An estimate of the protocol's time on a program's critical path,
    from the counters of a statistics run and the measured latencies:
    each miss at the thread servers (where the timed threads run) costs an
    uncached read, each flush and invalidation there one more round trip
    (the node asking waits for it), the monitor enters their measured time,
    all spread evenly over the threads (no wait overlapping another); the
    launcher starts the threads one after another, each a measured remote
    start. Without the latencies there is no estimate."""

    def __init__(self, latency):
        self.read_us = latency_us(latency, "djava-uncached-read")
        self.rtt_us = latency_us(latency, "tcp-ping-pong")
        self.start_us = latency_us(latency, "djava-thread-start") or 0.0
        self.known = self.read_us is not None and self.rtt_us is not None

    def describe(self, threads):
        start = (f", and {self.start_us / 1000:.1f} ms a thread start (djava-thread-start) for "
                 "each thread the launcher ships" if self.start_us else "")
        return (f"{self.read_us:.1f} µs an uncached read (djava-uncached-read) per miss, "
                f"{self.rtt_us:.1f} µs a TCP round trip (tcp-ping-pong) per flush and "
                "invalidation, plus the monitor enters' measured time, spread evenly over the "
                f"{threads} threads{start}")

    def ms(self, costs, threads):
        if not self.known or costs is None:
            return None
        c = costs["thread_servers"]
        waits = ((c["misses"] * self.read_us + (c["flushes"] + c["invalidations"]) * self.rtt_us)
                 / 1000 + c["monitor_enter_ms"])
        return waits / threads + costs["total"]["threads_shipped"] * self.start_us / 1000


def verdict_of(speedup, ceiling, lost, added_ms):
    """What limits one configuration, and the share of its loss below the
    cores' limit that the protocol's estimated added time explains."""
    if speedup >= AT_CEILING * ceiling:
        return "cores", None
    explained = max(0.0, added_ms) / lost if added_ms is not None and lost > 0 else None
    if explained is not None and explained >= 0.5:
        return "protocol: round trips", explained
    return "protocol: beyond the counted round trips", explained


def cores_paragraph(servers, threads, cores, ceiling):
    crowded = [n for n in servers if n + 3 > cores]
    text = (f"This machine has {cores} cores. A djava run on n thread servers is n + 3 processes "
            "(the launcher, a sos-server, a thread-manager and the servers).")
    if crowded:
        text += (" With more processes than cores, these configurations are **core-limited**: "
                 f"{', '.join(f'{n} server' + ('s' if n > 1 else '') for n in crowded)}.")
    return text + (
        f" And all servers share this one machine: one server's {threads} threads already keep "
        f"{min(threads, cores)} cores busy and more servers add none, so the cores allow no "
        f"speedup over one server beyond {ceiling:.1f}× here (on one machine per server the "
        f"limit would be the server count, up to the thread count, {threads}). A speedup below "
        "that is the protocol's doing: its round trips, the waits it imposes that its counters "
        "do not show, and the CPU time of its processes on the shared cores.")


def limits_section(apps, latency, now, cores):
    threads, servers = apps["threads"], apps["servers"]
    ceiling = core_ceiling(threads, cores)
    protocol = ProtocolTime(latency)
    out = [cores_paragraph(servers, threads, cores, ceiling), ""]
    if protocol.known:
        out += [
            "Estimated protocol time (**an estimate**): the thread servers' counters (the "
            "statistics run of bench/apps/run.py) × the measured latencies: "
            f"{protocol.describe(threads)}. \"Explained\" compares the time it adds over "
            f"{servers[0]} server with the time lost below the cores' limit.", ""]
    else:
        out += ["latency.json is missing: the protocol's share of time is not estimated "
                "(it needs the measured round trips).", ""]
    out += ["| application | servers | ms | speedup | cores' limit | est. protocol time (ms) "
            "| est. share of time | lost below the limit (ms) | explained by the protocol time "
            "| limited by |", "|---|" + "---|" * 9]
    verdicts = {}
    for app, ms in apps["ms"].items():
        base_ms = ms[djava_config(apps, servers[0])]
        costs = apps.get("protocol", {}).get(app, {})
        base_protocol = protocol.ms(costs.get(str(servers[0])), threads)
        for n in servers:
            t = ms[djava_config(apps, n)]
            spent = protocol.ms(costs.get(str(n)), threads)
            speedup, lost = base_ms / t, t - base_ms / ceiling
            verdict, explained = "(the base)", None
            if n != servers[0]:
                added = None if spent is None or base_protocol is None else spent - base_protocol
                verdict, explained = verdict_of(speedup, ceiling, lost, added)
                verdicts.setdefault(verdict, []).append(f"{app} on {n}")
            out.append(
                f"| {app} | {n} | {t:.1f} | {speedup:.2f} | {ceiling:.1f} "
                f"| {'–' if spent is None else f'{spent:.1f}'} "
                f"| {'–' if spent is None else f'{100 * spent / t:.0f}%'} "
                f"| {max(lost, 0):.1f} "
                f"| {'–' if explained is None else f'{100 * min(explained, 1):.0f}%'} "
                f"| {verdict} |")
    out.append("")
    if verdicts.get("cores"):
        out.append(f"At the cores' limit (within {100 * (1 - AT_CEILING):.0f}%): "
                   f"{', '.join(verdicts['cores'])}.")
    if verdicts.get("protocol: round trips"):
        out.append("Below it, and the protocol's estimated time explains at least half the "
                   f"loss: {', '.join(verdicts['protocol: round trips'])}.")
    if verdicts.get("protocol: beyond the counted round trips"):
        out.append(
            "Below it, and the protocol's estimated time explains less than half the loss: "
            f"{', '.join(verdicts['protocol: beyond the counted round trips'])}. The rest is "
            "outside what the statistics count. Candidates: waits for a wake-up from another "
            "node (a java.util.concurrent park ended by an unpark relayed through the thread "
            "manager, a round trip or two plus the event pumps; barriers and contended locks "
            "park); each server's own first work for the program (attaching the shipped "
            "threads, loading the program's classes: the more servers, the more of it); and "
            "the CPU the extra processes take from the program on these cores.")
    out += [""] + delay_cross_check(apps, now)
    return out


def delay_slope(points):
    """Least-squares slope of (x, y) points."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else None


def delay_cross_check(apps, now):
    """The round trips on a program's critical path as the network delay
    shows them (the slope of its time against the measured round trip),
    beside the statistics' round trips per thread: where they agree, the
    counters predict the program on a slower network."""
    if now is None:
        return []
    if now.get("small") != apps.get("small"):
        return ["now.json and apps.json ran at different sizes: their round trips are not "
                "compared."]
    rtts = {d: now["measured_rtt_us"].get(str(d)) for d in now["delays_us"]}
    out = ["Round trips on the critical path, from the delay runs (now.json: the slope of the "
           "time against the measured round trip, ms per µs × 1000) beside the statistics' "
           "round trips per thread (misses, flushes, invalidations and monitor enters at the "
           "thread servers over the threads):", "",
           "| application | servers | from the delay | from the statistics |", "|---|---|---|---|"]
    for app, by_delay in now["ms"].items():
        for n in now["servers"]:
            points = [(rtts[d], by_delay[str(d)][str(n)]) for d in now["delays_us"]
                      if rtts[d] is not None and str(n) in by_delay.get(str(d), {})]
            slope = delay_slope(points) if len(points) > 1 else None
            costs = apps.get("protocol", {}).get(app, {}).get(str(n))
            counted = None
            if costs:
                c = costs["thread_servers"]
                counted = (c["misses"] + c["flushes"] + c["invalidations"] +
                           c["monitor_enters"]) / apps["threads"]
            out.append(f"| {app} | {n} | {'–' if slope is None else f'{slope * 1000:.0f}'} "
                       f"| {'–' if counted is None else f'{counted:.0f}'} |")
    return out


# ---- the README ----------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", default=os.path.join(TOP, "bench", "results"),
                    help="where the drivers wrote their tables and JSON; the report goes there")
    args = ap.parse_args()
    results = Results(args.results)
    cores = os.cpu_count()
    apps, now = results.json("apps.json"), results.json("now.json")
    table6, latency = results.json("table6.json"), results.json("latency.json")

    plots = {}
    for name, data, draw in [("speedup.png", apps, lambda p: plot_speedup(apps, cores, p)),
                             ("delay.png", now, lambda p: plot_delay(now, p)),
                             ("table6.png", table6, lambda p: plot_table6(table6, p))]:
        if data is not None:
            draw(os.path.join(args.results, name))
            plots[name] = True

    lines = ["# djava benchmark results", "",
             f"Written by bench/report.py (`make bench`) on "
             f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC at commit "
             f"{commit()}.", "", f"Machine: {machine()}.", ""]
    tables = {name: results.table(name) for name, *_ in SECTIONS}
    absent = [f"`{name}` ({driver})" for name, _, driver, _ in SECTIONS if tables[name] is None]
    if results.missing or absent:
        lines += ["Missing, so left out: " + "; ".join(results.missing + absent) + ".", ""]
    lines += ["## What limits the speedups", ""]
    lines += (limits_section(apps, latency, now, cores) if apps is not None else
              ["apps.json is missing: no application numbers to judge."])
    for name, heading, driver, plot in SECTIONS:
        lines += ["", f"## {heading}", "", f"From {driver} (`{name}`).", ""]
        lines.append(tables[name] if tables[name] is not None else
                     f"Missing: {driver} did not write `{name}`.")
        if plot and plots.get(plot):
            lines += ["", f"![{plot}]({plot})"]
    with open(os.path.join(args.results, "README.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {os.path.join(args.results, 'README.md')} and "
          f"{', '.join(plots) or 'no plots'}")


if __name__ == "__main__":
    main()
