"""What the smoke tests of bench/micro's drivers share: one run of a driver
at smoke sizes, one round, with its markdown and JSON written to tmp_path."""

import json
import os
import subprocess

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def run_driver(script, tmp_path, stem, *options):
    """Runs bench/micro/<script> --small --rounds 1 [options]; returns
    (markdown, JSON)."""
    out, js = tmp_path / f"{stem}.md", tmp_path / f"{stem}.json"
    p = subprocess.run(["/usr/bin/python3", os.path.join(TOP, "bench", "micro", script),
                        "--small", "--rounds", "1", "--out", str(out), "--json", str(js),
                        *options],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    return out.read_text(), json.loads(js.read_text())
