"""Smoke run of bench/micro/block_memory.py (a thread server's memory for a
replica of a large shared array it uses a few blocks of) at smoke size, one
round: every stage is there and positive, and the JSON has its schema.
Nothing about the amounts (that is the benchmark's)."""

from smoke import run_driver


def test_block_memory_has_every_stage(tmp_path):
    text, data = run_driver("block_memory.py", tmp_path, "block_memory")
    assert set(data) == {"rounds", "blocks", "rss_kib"}, data.keys()
    assert data["rounds"] == 1 and data["blocks"] > 0
    assert list(data["rss_kib"]) == ["32"]
    for size, kib in data["rss_kib"].items():
        assert set(kib) == {"before", "touched", "after-gc"}, kib
        assert all(v > 0 for v in kib.values()), kib
        assert f"| {size} MiB |" in text
