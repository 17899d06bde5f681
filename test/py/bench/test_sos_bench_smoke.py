"""Smoke run of sos-bench (bench/sos) at a tiny iteration count against a real
sos-server child: the table's structure and the summary lines, never the
timings."""

import os
import re
import subprocess

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BENCH = os.path.join(TOP, "build", "bin", "sos-bench")
SERVER = os.path.join(TOP, "build", "bin", "sos-server")


def bench(*args, timeout=120):
    if not os.access(BENCH, os.X_OK):
        pytest.fail(f"{BENCH} is not built: `make native` builds it")
    return subprocess.run([BENCH] + list(args), capture_output=True, text=True, timeout=timeout)


def test_sos_bench_prints_the_table_and_the_ratios():
    p = bench("--iterations", "20", "--server", SERVER)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    header = lines.index("| measurement | mean | p50 | p99 |")
    assert lines[header + 1] == "|---|---|---|---|"
    rows = [l for l in lines[header + 2:] if l.startswith("| ")]
    labels = [r.split("|")[1].strip() for r in rows]
    assert [l.split()[0] for l in labels] == ["(a)", "(b)", "(c)", "(c)", "(c)", "(d)", "(e)", "(e)", "(e)"]
    assert "0 sharers" in labels[2] and "1 sharer" in labels[3] and "4 sharers" in labels[4]
    for row in rows:
        cells = [c.strip() for c in row.split("|")[2:-1]]
        assert len(cells) == 3, row
        assert re.fullmatch(r"[0-9.]+( (us|ns))?", cells[0]), row
    for row in rows[:5]:  # latencies: mean, p50, p99 all present, p50 <= p99
        mean, p50, p99 = (float(c.split()[0]) for c in row.split("|")[2:5])
        assert 0 < p50 <= p99, row
    assert re.search(r"^uncached load / ping-pong \(p50\): [0-9.]+ \(target <= 1\.5\)$", p.stdout, re.M)
    assert re.search(r"^cached load\+release: [0-9.]+ ns \(target <= 50\)$", p.stdout, re.M)
    assert re.search(r"uncached load / that \(p50\): [0-9.]+$", p.stdout, re.M)


def test_sos_bench_rejects_unknown_options_and_a_missing_server():
    p = bench("--bogus", "1")
    assert p.returncode != 0 and "usage: sos-bench" in p.stderr
    p = bench("--iterations", "10", "--server", "/nonexistent/sos-server")
    assert p.returncode != 0 and "sos-server" in p.stderr


LOAD = os.path.join(TOP, "build", "bin", "sos-load")


def test_sos_load_prints_a_row_per_load_shard_and_client_count():
    """sos-load (bench/sos): every client's operations are counted, on one
    sos-server and on shards splitting the directory, and the servers' CPU
    time is read (never asserted: bench/ measures)."""
    if not os.access(LOAD, os.X_OK):
        pytest.fail(f"{LOAD} is not built: `make native` builds it")
    p = subprocess.run([LOAD, "--server", SERVER, "--clients", "1,3", "--shards", "1,2",
                        "--ops", "200"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    rows = re.findall(r"^\| (misses|locks) \| (\d+) \| (\d+) \| (\d+) \| ([0-9.]+) \| (\d+) "
                      r"\| (\d+) \| ([0-9.]+) us \| (\d+) % \|$", p.stdout, re.M)
    assert [(r[0], int(r[1]), int(r[2]), int(r[3])) for r in rows] == [
        (load, shards, clients, 200 * clients)
        for load in ("misses", "locks") for shards in (1, 2) for clients in (1, 3)], p.stdout
    # One shard carries everything; of two, the busier carries at least half.
    assert all(int(r[8]) == 100 for r in rows if r[1] == "1"), p.stdout
    assert all(50 <= int(r[8]) <= 100 for r in rows if r[1] == "2"), p.stdout
    p = subprocess.run([LOAD, "--clients", "0"], capture_output=True, text=True, timeout=30)
    assert p.returncode != 0 and "--clients takes counts from 1 to 64" in p.stderr
    p = subprocess.run([LOAD, "--shards", "17"], capture_output=True, text=True, timeout=30)
    assert p.returncode != 0 and "--shards takes counts from 1 to 16" in p.stderr
    p = subprocess.run([LOAD, "--load", "bogus"], capture_output=True, text=True, timeout=30)
    assert p.returncode != 0 and "usage: sos-load" in p.stderr
