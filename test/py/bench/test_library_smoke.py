"""Smoke run of bench/micro/library.py (library calls in hot loops on djava's
C1 and C2 against stock HotSpot) at smoke sizes, one round: every call has
every VM's number, the rows on shareable objects have a cached one, and the
JSON has its schema. Nothing about absolute time."""

from smoke import run_driver

CACHED = {"atomic-increment", "atomic-compare-and-set", "atomic-get-acquire", "hashmap-get",
          "concurrent-map-get", "concurrent-map-put", "arraylist-add", "arraycopy-16"}


def test_library_has_every_call_and_vm(tmp_path):
    text, data = run_driver("library.py", tmp_path, "library")
    assert set(data) == {"rounds", "iterations", "small", "ns"}, data.keys()
    assert data["rounds"] == 1 and data["small"] and data["iterations"] > 0
    assert len(data["ns"]) == 15
    assert CACHED < set(data["ns"])
    for row, ns in data["ns"].items():
        assert set(ns) == {"djava-c1", "djava-c2", "djava-c2-cached", "c1", "jit"}, ns
        for column, value in ns.items():
            if column == "djava-c2-cached" and row not in CACHED:
                assert value is None, (row, ns)
            else:
                assert value is not None and value > 0, (row, column, ns)
    assert text.count("\n| ") == 16  # the header and a line per call
    assert "| AtomicInteger.incrementAndGet |" in text
