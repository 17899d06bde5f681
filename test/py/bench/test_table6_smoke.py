"""Smoke run of bench/micro/table6.py (the seed's Table 6 on djava) at smoke
sizes, one round: every row and column it must fill is there and positive,
the JSON has the schema the plotting script reads, and what holds on any
machine holds (a miss costs more than a cached access). Nothing about
absolute time."""

import pytest

from smoke import run_driver

ROWS = ["empty-loop", "new-object", "array-ref-write", "array-ref-read", "int-field-write",
        "int-field-read", "ref-field-write", "ref-field-read", "uncached-int-field-write",
        "uncached-int-field-read", "uncached-ref-field-write", "uncached-ref-field-read"]
COLUMNS = {"djava", "djava-cached", "djava-uncached", "ref", "xint", "c1", "jit"}
# What the seed printed (Table 6): NOW/Ref, and NOW and Ref in µs per 100 operations.
SEED = {"int-field-read": (1.61, 590, 366), "uncached-ref-field-read": (7117.31, 1999963, 281)}


def test_table6_has_every_row_and_column(tmp_path):
    text, data = run_driver("table6.py", tmp_path, "table6")
    assert set(data) == {"rounds", "iterations", "small", "vm", "rows"}, data.keys()
    assert data["rounds"] == 1 and data["small"] is True and data["iterations"] > 0
    assert data["vm"] == "zero"
    assert [r["name"] for r in data["rows"]] == ROWS
    rows = {r["name"]: r for r in data["rows"]}
    for name, row in rows.items():
        assert set(row) == {"name", "label", "ns", "seed_ratio", "seed_now_us_per_100",
                            "seed_ref_us_per_100"}, row
        assert set(row["ns"]) == COLUMNS, row
        ns = row["ns"]
        # Every loop runs on local objects on every VM (the ∞ rows: the same loop body).
        assert all(ns[c] > 0 for c in ("djava", "ref", "xint", "jit")), row
        assert ns["c1"] is None, row  # stock C1 only against the server VM
        if name in ("empty-loop", "new-object"):  # no object to share
            assert ns["djava-cached"] is None, row
        else:
            assert ns["djava-cached"] > 0, row
        if name.startswith("uncached-"):
            # A miss is a round trip to other processes; a cached access is a load.
            assert ns["djava-uncached"] > 10 * ns["djava-cached"], row
            assert ns["djava-uncached"] > 10 * ns["ref"], row
        else:
            assert ns["djava-uncached"] is None, row
        assert row["label"] in text, row["label"]
    for name, (ratio, now, ref) in SEED.items():
        assert (rows[name]["seed_ratio"], rows[name]["seed_now_us_per_100"],
                rows[name]["seed_ref_us_per_100"]) == (ratio, now, ref)
    # An uncached read costs more than a cached one of the same field kind.
    assert (rows["uncached-int-field-read"]["ns"]["djava-uncached"]
            > rows["int-field-read"]["ns"]["djava-cached"])


@pytest.mark.parametrize("vm", ["server", "server-c2"])
def test_table6_on_the_server_vm(tmp_path, vm):
    """--vm server: djava's columns on its server VM (C1 on every node),
    compared with stock HotSpot's C1 and JIT; Ref is not run. --vm
    server-c2: the same with every node compiling with C2 as well."""
    text, data = run_driver("table6.py", tmp_path, "table6-" + vm, "--vm", vm)
    assert data["vm"] == vm
    rows = {r["name"]: r for r in data["rows"]}
    assert list(rows) == ROWS
    for name, row in rows.items():
        ns = row["ns"]
        assert ns["ref"] is None, row
        assert all(ns[c] > 0 for c in ("djava", "xint", "c1", "jit")), row
        if name.startswith("uncached-"):
            assert ns["djava-uncached"] > 10 * ns["djava-cached"], row
        elif name not in ("empty-loop", "new-object"):
            assert ns["djava-cached"] > 0, row
        assert row["label"] in text, row["label"]
    assert "stock C1" in text and "local/C1" in text
