"""Smoke run of bench/micro/latency.py (loopback ping-pong, RMI null call,
djava's uncached read, lock hand-off and thread start) at smoke sizes, one
round: every row is there with a positive time and the JSON has the schema
the plotting script reads. Nothing about time: one round at smoke sizes on a
busy 2-core machine says nothing about how rows compare (a TCP ping-pong of
57 us beside an RMI call of 27 us was seen), and bench/ measures that."""

from smoke import run_driver

ROWS = ["tcp-ping-pong", "rmi-null-call", "djava-uncached-read", "djava-lock-handoff",
        "djava-thread-start", "djava-thread-start-join"]


def test_latency_table_has_every_row(tmp_path):
    text, data = run_driver("latency.py", tmp_path, "latency")
    assert set(data) == {"rounds", "rows"} and data["rounds"] == 1, data
    assert [r["name"] for r in data["rows"]] == ROWS
    for row in data["rows"]:
        assert set(row) == {"name", "label", "us"}, row
        assert row["us"] > 0, row
        assert row["label"] in text, row["label"]
