"""Smoke run of bench/micro/sync.py (synchronization across nodes, issue
24) at smoke sizes, one round, on 2 thread servers: every shape has a row
on stock HotSpot and on djava, the 2- and 4-thread shapes ran their threads
in more than one process (else they measure nothing across nodes), and
djava's rows say how many messages an operation took. Nothing about time:
bench/ measures that."""

from smoke import run_driver

SHAPES = ["barrier 4", "abq", "lbq", "reentrant", "monitor", "locked", "spin", "round 4",
          "uncontended", "interrupt"]


def test_every_shape_runs_across_nodes(tmp_path):
    text, data = run_driver("sync.py", tmp_path, "sync", "--servers", "2")
    assert list(data["rows"]) == SHAPES, data
    for shape in SHAPES:
        rows = data["rows"][shape]
        assert set(rows) == {"java JIT", "djava, 2 servers"}, rows
        assert rows["java JIT"]["us"] > 0 and rows["java JIT"]["nodes"] == [1], rows
        djava = rows["djava, 2 servers"]
        assert djava["us"] > 0, djava
        assert djava["nodes"] == ([1] if shape == "uncontended" else [2]), (shape, djava)
        assert djava["per_op"]["messages"] >= 0, djava
        assert shape in text
