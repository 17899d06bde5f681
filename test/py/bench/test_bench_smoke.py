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


def test_sos_bench_measures_every_row_against_a_real_server():
    p = subprocess.run([os.path.join(TOP, "build", "bin", "sos-bench"), "--iterations", "50"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    rows = [l for l in p.stdout.splitlines() if l.startswith("| (")]
    labels = [r.split("|")[1].strip() for r in rows]
    assert [l[:3] for l in labels] == ["(a)", "(b)", "(c)", "(c)", "(c)", "(d)", "(e)", "(e)", "(e)"]
    for row in rows:
        value = row.split("|")[2].split()[0]
        assert float(value) > 0, row
    assert "uncached load / ping-pong (p50):" in p.stdout
