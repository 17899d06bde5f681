"""A bounded soak of bench/gc/stream.py (issue 20), in make test: a
producer/consumer of 20,000 messages across the two thread servers and a
thread pool for 15 s, each on a cluster of its own. While they run, the
nodes release what their GCs collected and the sos-server frees it: the
live chunk count stays well below what the program made. Memory bounds
are the benchmark's to measure (docs/BENCHMARKS.md), not this test's."""

import json
import os
import subprocess

from smoke import TOP


def test_a_streaming_program_lets_the_cluster_free_its_objects(tmp_path):
    out, js = tmp_path / "stream.md", tmp_path / "stream.json"
    p = subprocess.run(["/usr/bin/python3", os.path.join(TOP, "bench", "gc", "stream.py"), "--small",
                        "--out", str(out), "--json", str(js)],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    data = json.loads(js.read_text())
    messages = data["messages"]
    # Each message is two chunks (the message and its int[16]).
    made = 2 * messages["progress"]
    assert messages["progress"] == 20_000, messages
    server = messages["server"]
    assert server["released"] > made // 2, server
    assert server["collected"] > made // 4, server
    # Nodes let go after their collections (each asks for one per 16,384
    # replicas made), so the live count stays under what was made.
    assert messages["live_max"] < made * 3 // 4, messages
    pool = data["pool"]
    assert pool["progress"] >= 2_000, pool
    assert pool["server"]["collected"] > 0, pool
    for name in ("sos-server", "thread-server-1", "thread-server-2", "launcher"):
        assert name in messages["rss"], messages["rss"]
    assert "Largest daemon growth" in out.read_text()
