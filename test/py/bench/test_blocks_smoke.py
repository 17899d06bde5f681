"""Smoke run of bench/micro/blocks.py (arrays in blocks against local ones)
at smoke sizes, one round: every VM, loop and column is there and positive,
and the JSON has its schema. Nothing about absolute time."""

from smoke import run_driver


def test_blocks_has_every_vm_loop_and_column(tmp_path):
    text, data = run_driver("blocks.py", tmp_path, "blocks")
    assert set(data) == {"rounds", "iterations", "ns"}, data.keys()
    assert data["rounds"] == 1 and data["iterations"] > 0
    assert set(data["ns"]) == {"server", "server-c2", "zero"}
    for vm, rows in data["ns"].items():
        assert set(rows) == {"int-array-write", "int-array-read"}, rows
        for row, ns in rows.items():
            assert set(ns) == {"local", "cached", "whole"}, ns
            assert all(v > 0 for v in ns.values()), (vm, row, ns)
            assert f"| {vm} | {row} |" in text
