"""Smoke run of bench/micro/transports.py (the wire round trip, djava's
uncached read (its mean and its single reads' median), lock hand-off, thread start and an idle cluster's CPU, on TCP
and on UCX) at smoke sizes, one round: every row has a value for each
transport and the JSON has its schema. Nothing about time: bench/ measures
that."""

from smoke import run_driver

ROWS = ["wire-ping-pong", "djava-uncached-read", "djava-uncached-read-p50",
        "djava-lock-handoff", "djava-thread-start", "idle-cluster-cpu"]


def test_transports_table_has_every_row_for_each_transport(tmp_path):
    text, data = run_driver("transports.py", tmp_path, "transports")
    assert set(data) == {"rounds", "rows"} and data["rounds"] == 1, data
    assert [r["name"] for r in data["rows"]] == ROWS
    for row in data["rows"]:
        assert set(row) == {"name", "label", "us"}, row
        assert set(row["us"]) == {"tcp", "ucx"}, row
        assert row["label"] in text, row["label"]
        if row["name"] != "idle-cluster-cpu":
            assert all(v > 0 for v in row["us"].values()), row
        else:
            assert all(v >= 0 for v in row["us"].values()), row
