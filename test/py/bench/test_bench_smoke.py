"""Smoke run of the benchmarks at tiny sizes: they run on every VM they
compare and produce their tables. Nothing here asserts anything about time."""

import os
import subprocess

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def test_microbenchmarks_produce_the_table(tmp_path):
    out = tmp_path / "micro.md"
    p = subprocess.run(["/usr/bin/python3", os.path.join(TOP, "bench", "micro", "run.py"),
                        "--rounds", "1", "--iterations", "2000", "--out", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    rows = [l for l in out.read_text().splitlines() if l.startswith("| ") and "---" not in l]
    names = [r.split("|")[1].strip() for r in rows[1:]]
    assert names == ["empty-loop", "new-object", "array-ref-write", "array-ref-read",
                     "int-field-write", "int-field-read", "ref-field-write", "ref-field-read"]
    for row in rows[1:]:
        cells = [c.strip() for c in row.split("|")[2:-1]]
        assert len(cells) == 6 and all(float(c) >= 0 for c in cells), row


def test_uncached_read_benchmark_produces_its_table(tmp_path):
    # UncachedRead checks its own sums; the table has both measurements.
    out = tmp_path / "uncached.md"
    p = subprocess.run(["/usr/bin/python3", os.path.join(TOP, "bench", "micro", "uncached.py"),
                        "--rounds", "1", "--objects", "50", "--out", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    text = out.read_text()
    assert "loopback TCP ping-pong" in text and "uncached field read in djava" in text, text
    assert float(text.split("uncached read / ping-pong: ")[1].split()[0]) > 0, text
