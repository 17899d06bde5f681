"""Smoke run of bench/monitor/run-bench: it starts real daemons, runs
monitor-bench through the C ABIs and prints every metric with its sample
count; nothing here asserts a time."""

import os
import re
import subprocess

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))

METRICS = [
    "tcp ping-pong (monitor service Ping)",
    "uncontended enter+exit, lease held",
    "uncontended enter+exit, no lease",
    "lock hand-off between two nodes, no lease",
    "lock hand-off between two nodes, leases on",
    "thread start (submit -> assignment at server)",
]


def test_monitor_bench_reports_every_metric():
    p = subprocess.run([os.path.join(TOP, "bench", "monitor", "run-bench")],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    rows = {}
    for line in p.stdout.splitlines():
        m = re.fullmatch(r"\| (.+) \| ([0-9.]+) (ns|µs) \| ([0-9.]+) (ns|µs) \| (\d+) \|", line)
        if m:
            rows[m.group(1)] = (float(m.group(2)), float(m.group(4)), int(m.group(6)))
    assert list(rows) == METRICS
    for name, (p50, p90, samples) in rows.items():
        assert 0 < p50 <= p90 and samples >= 200, name


def test_monitor_bench_refuses_a_missing_build(tmp_path):
    p = subprocess.run([os.path.join(TOP, "bench", "monitor", "run-bench"), "--bin", str(tmp_path)],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode != 0 and "is not built" in p.stderr
