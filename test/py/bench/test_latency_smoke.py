"""Smoke run of bench/micro/latency.py (loopback ping-pong, RMI null call,
djava's uncached read, lock hand-off and thread start) at smoke sizes, one
round: every row is there with a positive time, the JSON has the schema the
plotting script reads, and what holds on any machine holds (nothing that
crosses processes beats half a TCP round trip). Nothing about absolute time."""

from smoke import run_driver

ROWS = ["tcp-ping-pong", "rmi-null-call", "djava-uncached-read", "djava-lock-handoff",
        "djava-thread-start", "djava-thread-start-join"]


def test_latency_table_has_every_row(tmp_path):
    text, data = run_driver("latency.py", tmp_path, "latency")
    assert set(data) == {"rounds", "rows"} and data["rounds"] == 1, data
    assert [r["name"] for r in data["rows"]] == ROWS
    us = {}
    for row in data["rows"]:
        assert set(row) == {"name", "label", "us"}, row
        assert row["us"] > 0, row
        assert row["label"] in text, row["label"]
        us[row["name"]] = row["us"]
    # Each of these is at least one request and its answer between processes.
    for name in ROWS[1:]:
        assert us[name] > 0.5 * us["tcp-ping-pong"], (name, us)
