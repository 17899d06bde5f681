"""Smoke runs of the application benchmarks (bench/apps) under djava at tiny
sizes, on a private cluster of 2 thread servers: each program checks its
own result against a single-threaded run and says "correct". Nothing here
asserts anything about time."""

import json
import os
import subprocess

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
JAVAC = os.path.join(TOP, "build", "jvm", "base-image", "bin", "javac")
DJAVA = os.path.join(TOP, "build", "bin", "djava")

APPS = {
    "MatrixMultiply": ["40", "4"],
    "SOR": ["40", "4", "4"],
    "RayTracer": ["24", "4"],
    "TSP": ["8", "4"],
    "ParallelIntegrate": ["20000", "4"],
    "MergeSort": ["16384", "4"],
    "StreamCipher": ["1", "1", "4"],
    "VectorUpdate": ["1", "1", "4"],
}


@pytest.fixture(scope="module")
def classes(tmp_path_factory):
    out = tmp_path_factory.mktemp("apps")
    sources = [os.path.join(TOP, "bench", "apps", f"{name}.java") for name in APPS]
    subprocess.run([JAVAC, "-d", str(out), *sources], check=True)
    return str(out)


@pytest.mark.parametrize("app", sorted(APPS))
def test_application_runs_distributed_and_is_correct(classes, app):
    env = dict(os.environ, DJAVA_THREAD_SERVERS="2")
    env.pop("DJAVA_CLUSTER", None)
    p = subprocess.run([DJAVA, "-cp", classes, app, *APPS[app]], capture_output=True, text=True,
                       timeout=300, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "correct" in p.stdout, p.stdout + p.stderr
    assert "WRONG" not in p.stdout


def test_application_table_has_every_configuration(tmp_path):
    # The driver of make bench, at smoke sizes: every application on every
    # VM it compares (it stops on any run that is not "correct"), then its
    # statistics runs; the JSON bench/report.py reads.
    out, numbers = tmp_path / "apps.md", tmp_path / "apps.json"
    p = subprocess.run(["/usr/bin/python3", os.path.join(TOP, "bench", "apps", "run.py"),
                        "--rounds", "1", "--small", "--servers", "1,2", "--out", str(out),
                        "--json", str(numbers)],
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout + p.stderr
    text = out.read_text()
    for app in APPS:
        rows = [l for l in text.splitlines() if l.startswith(f"| {app} |")]
        assert len(rows) == 4, text  # times, speedups, protocol costs on 1 and 2 servers
        assert all(float(c) > 0 for c in rows[0].split("|")[2:-1]), rows[0]
        assert [r.split("|")[2].strip() for r in rows[2:]] == ["1", "2"], rows

    results = json.loads(numbers.read_text())
    assert set(results) == {"threads", "rounds", "small", "servers", "configs", "ms", "protocol"}
    assert results["servers"] == [1, 2] and results["small"] is True
    assert results["configs"] == ["java JIT", "Ref, 1 thread", "djava, 1 server",
                                  "djava, 2 servers"]
    for app in APPS:
        assert all(results["ms"][app][c] > 0 for c in results["configs"]), results["ms"][app]
        assert set(results["protocol"][app]) == {"1", "2"}
    # The statistics were found and parsed: with 2 servers objects move
    # between nodes (a parser that matched nothing would stop the driver;
    # one that read the wrong fields would give zeros here).
    two = [results["protocol"][app]["2"] for app in APPS]
    assert all(c["servers_reporting"] >= 1 for c in two)
    assert any(c["total"]["misses"] > 0 and c["total"]["bytes"] > 0 and
               c["thread_servers"]["misses"] > 0 and c["per_operation"]["messages"] > 0
               for c in two), two


def test_variants_table_has_every_variant(tmp_path):
    """bench/apps/variants.py at smoke sizes, two programs: a time for stock
    HotSpot and each variant named, every djava process of a variant on its
    transport; a variant it does not know is refused with the forms it takes."""
    out, numbers = tmp_path / "variants.md", tmp_path / "variants.json"
    driver = os.path.join(TOP, "bench", "apps", "variants.py")
    p = subprocess.run(["/usr/bin/python3", driver, "--rounds", "1", "--small",
                        "--variants", "c1/tcp,c2/ucx", "--apps", "SOR,MergeSort",
                        "--out", str(out), "--json", str(numbers)],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    results = json.loads(numbers.read_text())
    assert results["configs"] == ["java JIT", "djava c1/tcp", "djava c2/ucx"]
    assert set(results["ms"]) == {"SOR", "MergeSort"}
    for app, by_config in results["ms"].items():
        assert all(by_config[c] > 0 for c in results["configs"]), by_config
        assert f"| {app} |" in out.read_text()
    p = subprocess.run(["/usr/bin/python3", driver, "--variants", "c3/tcp"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode != 0 and "a variant is COMPILER/TRANSPORT" in p.stderr
