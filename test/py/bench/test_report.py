"""bench/report.py on small fixtures (no benchmark runs): it draws valid
PNG plots, writes README.md with the commit, the drivers' tables and the
limits paragraph, and says which inputs are missing rather than failing.

The fixtures' protocol costs come from bench/apps/run.py's own parser and
summing, fed a statistics block in dsoStatistics.cpp's format, so they
have the shape the report reads in a real `make bench`."""

import importlib.util
import json
import os
import struct
import subprocess

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
PYTHON = "/usr/bin/python3"  # Debian's, with python3-matplotlib (make deps-test)
REPORT = os.path.join(TOP, "bench", "report.py")


def load_apps_driver():
    spec = importlib.util.spec_from_file_location("apps_run",
                                                  os.path.join(TOP, "bench", "apps", "run.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


apps_run = load_apps_driver()


def statistics_text(scale, wire=(None, None, None)):
    """A launcher's and two thread servers' first lines, as the VM prints
    them (the per-class rows below them are not read); wire: each node's
    (frames sent, frames received), None for a node without that line."""
    def line(node, role, title, misses, frames, deferred=""):
        counted = "" if frames is None else (
            f"  messages of this node (every program, every connection): sent {frames[0]} "
            f"({frames[0] * 50} bytes), received {frames[1]} ({frames[1] * 60} bytes)\n")
        return (f"djava statistics of {node} ({role}){title}: threads shipped "
                f"{4 if role == 'launcher' else 0}, shared objects here 60 (published here 50, collected 3); "
                f"cache misses {misses} (upgrades 3), invalidations {misses // 2}, flushes "
                f"{misses // 3}, bytes in {misses * 100}, out {misses * 90}; monitor enters 5 "
                f"(1.5 ms)\n{deferred}{counted}  class   objects published\n")
    return (line("vm:1", "launcher", "", 40, wire[0], deferred="  flushes put off until an "
                 "object they reference was unlocked or a fence passed: 7\n") +
            line("vm:2", "thread server", ", program 77", 100 * scale, wire[1]) +
            line("vm:3", "thread server", ", program 77", 120 * scale, wire[2]))


def write_fixtures(directory, skip=()):
    servers = [1, 2]
    configs = ["java JIT", "Ref, 1 thread", "djava, 1 server", "djava, 2 servers"]
    apps = {"threads": 4, "rounds": 1, "small": True, "servers": servers, "configs": configs,
            "ms": {}, "protocol": {}}
    for i, app in enumerate(["MatrixMultiply", "SOR"]):
        apps["ms"][app] = {"java JIT": 40.0, "Ref, 1 thread": 150.0, "djava, 1 server": 300.0,
                           "djava, 2 servers": 320.0 + 500 * i}
        args = apps_run.app_arguments(app, 4, True)
        apps["protocol"][app] = {
            str(n): apps_run.protocol_costs(app, args,
                                            apps_run.parse_statistics(statistics_text(n)),
                                            apps["ms"][app][configs[1 + n]])
            for n in servers}
    latency = {"rounds": 1, "rows": [
        {"name": "tcp-ping-pong", "label": "loopback TCP ping-pong", "us": 25.0},
        {"name": "djava-uncached-read", "label": "uncached field read", "us": 42.0},
        {"name": "djava-thread-start", "label": "thread start", "us": 900.0}]}
    table6 = {"rounds": 1, "iterations": 1000, "small": True, "rows": [
        {"name": "int-field-read", "label": "Integer Field Read",
         "ns": {"djava": 29.0, "djava-cached": None, "djava-uncached": None, "ref": 30.0,
                "xint": 12.0, "jit": 0.2},
         "seed_ratio": 1.61, "seed_now_us_per_100": 590, "seed_ref_us_per_100": 366},
        {"name": "uncached-int-field-read", "label": "Uncached Integer Field Read",
         "ns": {"djava": 29.0, "djava-cached": None, "djava-uncached": 42000.0, "ref": 30.0,
                "xint": 12.0, "jit": 0.2},
         "seed_ratio": 12000, "seed_now_us_per_100": 2000000, "seed_ref_us_per_100": 170}]}
    now = {"delays_us": [0, 250, 1000], "measured_rtt_us": {"0": 25, "250": 530, "1000": 2030},
           "servers": servers, "rounds": 1, "small": True,
           "ms": {app: {str(d): {"1": 300 + d * 0.2, "2": 320 + d * 0.4} for d in [0, 250, 1000]}
                  for app in apps["ms"]}}
    inputs = {"apps.json": apps, "latency.json": latency, "table6.json": table6, "now.json": now}
    for name, data in inputs.items():
        if name not in skip:
            (directory / name).write_text(json.dumps(data))
    tables = {"apps.md": "| application | java JIT |\n|---|---|\n| MatrixMultiply | 40.0 |\n",
              "table6.md": "| benchmark | djava/Ref |\n|---|---|\n| Integer Field Read | 0.97 |\n"}
    for name, text in tables.items():
        if name not in skip:
            (directory / name).write_text(text)
    return tables


def run_report(directory):
    p = subprocess.run([PYTHON, REPORT, "--results", str(directory)], capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    return (directory / "README.md").read_text()


def assert_png(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk comes first
    assert data[12:16] == b"IHDR" and width > 0 and height > 0, path


def head_commit():
    return subprocess.run(["git", "-C", TOP, "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()


def test_report_draws_the_plots_and_writes_the_readme(tmp_path):
    tables = write_fixtures(tmp_path)
    readme = run_report(tmp_path)
    for plot in ["speedup.png", "delay.png", "table6.png"]:
        assert_png(tmp_path / plot)
        assert f"![{plot}]({plot})" in readme
    assert head_commit() in readme
    assert "cores" in readme.split("\n\n")[2]  # the summary's machine line
    for text in tables.values():
        assert text.strip() in readme
    limits = readme.split("## What limits the speedups")[1].split("\n## ")[0]
    assert "core-limited" in limits and "estimate" in limits
    # SOR on 2 servers lost 520 ms: a verdict on it, with the estimated wait.
    row = next(l for l in limits.splitlines() if l.startswith("| SOR | 2 |"))
    assert "protocol" in row, row
    assert "from the delay" in limits  # now.json's cross-check


def test_report_says_what_is_missing(tmp_path):
    write_fixtures(tmp_path, skip={"now.json", "latency.json", "table6.md"})
    readme = run_report(tmp_path)
    assert not (tmp_path / "delay.png").exists()
    assert_png(tmp_path / "speedup.png")
    assert "`now.json` (bench/now/run.py did not run)" in readme
    assert "latency.json is missing" in readme
    assert "Missing: bench/micro/table6.py did not write `table6.md`." in readme


def test_report_with_no_results_at_all(tmp_path):
    readme = run_report(tmp_path)
    assert "`apps.json` (bench/apps/run.py did not run)" in readme
    assert "apps.json is missing" in readme
    assert not list(tmp_path.glob("*.png"))


def test_statistics_parser_reads_every_node():
    nodes = apps_run.parse_statistics(statistics_text(1))
    assert [n["role"] for n in nodes] == ["launcher", "thread server", "thread server"]
    costs = apps_run.protocol_costs("SOR", ["40", "4", "4"], nodes, 200.0)
    assert costs["total"]["misses"] == 260 and costs["thread_servers"]["misses"] == 220
    assert costs["total"]["monitor_enter_ms"] == pytest.approx(4.5)
    assert costs["total"]["deferred_flushes"] == 7  # the launcher's optional line
    assert costs["per_operation"]["misses"] == 65  # 4 iterations
    with pytest.raises(SystemExit):  # no thread server's block: not silently zero
        apps_run.protocol_costs("SOR", ["40", "4", "4"], nodes[:1], 200.0)


def test_messages_are_the_frames_every_node_counted():
    counted = apps_run.summed(apps_run.parse_statistics(
        statistics_text(1, wire=((10, 12), (100, 90), (7, 5)))))
    assert counted["messages"] == 10 + 12 + 100 + 90 + 7 + 5
    assert counted["wire_bytes"] == 117 * 50 + 107 * 60
    # A node that did not count (an older VM): the estimate from the counters,
    # never a partial sum. Each node's line is read from its own block only.
    partial = apps_run.parse_statistics(statistics_text(1, wire=((10, 12), None, (7, 5))))
    assert [n["wire_messages"] for n in partial] == [22, -1, 12]
    total = apps_run.summed(partial)
    assert total["messages"] == total["estimated_messages"] == (
        2 * (260 + 130 + 86) + 3 * 15)
